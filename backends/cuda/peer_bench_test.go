package cuda

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// peerBuffers are 1 GiB on each of the first two GPUs, made once per
// process (the testing package calls a benchmark more than once).
var peerBuffers struct {
	src, dst driver.BufferID
}

func peerPair(b *testing.B) (src, dst *backends.Pool, a, c driver.BufferID) {
	ds := gpus(b)
	if len(ds) < 2 {
		b.Skipf("needs 2 CUDA devices, have %d", len(ds))
	}
	src, dst = backends.PoolOf(ds[0].Pool()), backends.PoolOf(ds[1].Pool())
	if peerBuffers.src == 0 {
		ctx := context.Background()
		var err error
		peerBuffers.src, err = src.Alloc(ctx, gib)
		require.NoError(b, err)
		peerBuffers.dst, err = dst.Alloc(ctx, gib)
		require.NoError(b, err)
		mem := make([]byte, 64<<20)
		for i := range mem {
			mem[i] = byte(i * 7)
		}
		for off := int64(0); off < gib; off += int64(len(mem)) {
			require.NoError(b, src.Write(ctx, peerBuffers.src, off, mem))
		}
	}
	return src, dst, peerBuffers.src, peerBuffers.dst
}

// BenchmarkPeerCopy1GiB copies 1 GiB from cuda:0 to cuda:1 with
// backends.Copy (a peer copy where the pair allows it); compare with
// bench/cuda/peer_native.cu (bench/cuda/device-x2.sh prints the ratio).
func BenchmarkPeerCopy1GiB(b *testing.B) {
	src, dst, a, c := peerPair(b)
	ctx := context.Background()
	peerCopy := func() error { return backends.Copy(ctx, dst, c, 0, src, a, 0, gib) }
	require.NoError(b, peerCopy())
	timeBytes(b, gib, peerCopy)
}

// BenchmarkPeerCopyStaged1GiB copies the same gigabyte through a host-pool
// buffer (device to host, host to device), the path taken when the pair
// has no peer access: for comparison.
func BenchmarkPeerCopyStaged1GiB(b *testing.B) {
	src, dst, a, c := peerPair(b)
	ctx := context.Background()
	host, err := backends.HostPool()
	require.NoError(b, err)
	stage, err := host.Alloc(ctx, gib)
	require.NoError(b, err)
	defer host.Release(stage)
	copyStaged := func() error {
		if err := backends.Copy(ctx, host, stage, 0, src, a, 0, gib); err != nil {
			return err
		}
		return backends.Copy(ctx, dst, c, 0, host, stage, 0, gib)
	}
	require.NoError(b, copyStaged())
	timeBytes(b, gib, copyStaged)
}
