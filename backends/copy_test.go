package backends

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/hostpool"
)

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31) ^ seed
	}
	return b
}

// hostRaw is the default runtime's host pool as the driver-level pool the
// fakes below stand beside.
func hostRaw(t *testing.T) *hostpool.Pool {
	t.Helper()
	host, err := HostPool()
	require.NoError(t, err)
	return host.Driver().(*hostpool.Pool)
}

// copyRaw is Copy between driver-level pools.
func copyRaw(ctx context.Context, dst driver.Pool, dstID BufferID, dstOff int64, src driver.Pool, srcID BufferID, srcOff, n int64, opts ...CopyOption) error {
	return Copy(ctx, PoolOf(dst), dstID, dstOff, PoolOf(src), srcID, srcOff, n, opts...)
}

func hostBuffer(t *testing.T, data []byte) (*hostpool.Pool, BufferID) {
	t.Helper()
	host := hostRaw(t)
	id, err := host.Alloc(bg, int64(len(data)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = host.Release(id) })
	require.NoError(t, host.Write(bg, id, 0, data))
	return host, id
}

func fakeBuffer(t *testing.T, p *fakePool, data []byte) BufferID {
	t.Helper()
	id, err := p.Alloc(bg, int64(len(data)))
	require.NoError(t, err)
	require.NoError(t, p.Write(bg, id, 0, data))
	p.writes.Store(0)
	return id
}

func readAll(t *testing.T, p driver.Pool, id BufferID) []byte {
	t.Helper()
	n, err := p.Size(id)
	require.NoError(t, err)
	out := make([]byte, n)
	require.NoError(t, p.Read(bg, id, 0, out))
	return out
}

// progressLog records progress callbacks and checks that they only grow.
type progressLog struct {
	calls []int64
	total int64
}

func (l *progressLog) opt() CopyOption {
	return WithProgress(func(done, total int64) {
		l.calls = append(l.calls, done)
		l.total = total
	})
}

func (l *progressLog) check(t *testing.T, n int64, chunks int) {
	t.Helper()
	require.Equal(t, n, l.total)
	require.Len(t, l.calls, chunks)
	for i := 1; i < len(l.calls); i++ {
		require.Greater(t, l.calls[i], l.calls[i-1], "progress only grows")
	}
	require.Equal(t, n, l.calls[len(l.calls)-1], "the last call reports everything")
}

func TestCopyHostToHost(t *testing.T) {
	src := pattern(10_000, 1)
	host, a := hostBuffer(t, src)
	_, b := hostBuffer(t, make([]byte, 12_000))
	var log progressLog
	require.NoError(t, copyRaw(bg, host, b, 1000, host, a, 500, 9000, WithChunk(1024), log.opt()))
	log.check(t, 9000, 9) // ceil(9000/1024)
	got := readAll(t, host, b)
	require.Equal(t, src[500:9500], got[1000:10000])
	require.Equal(t, make([]byte, 1000), got[:1000], "bytes outside the range are untouched")
}

func TestCopyBetweenHostAndDevice(t *testing.T) {
	data := pattern(5000, 2)
	host, h := hostBuffer(t, data)
	dev := newFakePool("dev", 1<<20)
	d := fakeBuffer(t, dev, make([]byte, 5000))

	var up progressLog
	require.NoError(t, copyRaw(bg, dev, d, 0, host, h, 0, 5000, WithChunk(2000), up.opt()))
	up.check(t, 5000, 3)
	require.EqualValues(t, 3, dev.writes.Load(), "host to device writes straight from host memory, chunk by chunk")
	require.Equal(t, data, readAll(t, dev, d))

	_, back := hostBuffer(t, make([]byte, 5000))
	dev.reads.Store(0)
	var down progressLog
	require.NoError(t, copyRaw(bg, host, back, 0, dev, d, 0, 5000, WithChunk(2000), down.opt()))
	down.check(t, 5000, 3)
	require.EqualValues(t, 3, dev.reads.Load(), "device to host reads straight into host memory")
	require.Equal(t, data, readAll(t, host, back))
}

func TestCopyDeviceToDeviceStagesInBoundedReusedChunks(t *testing.T) {
	host := hostRaw(t)
	const n = 40 << 20 // more than the two staging buffers together
	data := pattern(n, 3)
	a, b := newFakePool("a", 1<<30), newFakePool("b", 1<<30)
	src := fakeBuffer(t, a, data)
	dst := fakeBuffer(t, b, make([]byte, n))

	// A cold copy allocates at most the staging pair; later copies reuse it.
	liveCold := host.Live()
	require.NoError(t, copyRaw(bg, b, dst, 0, a, src, 0, n, WithChunk(1<<20)))
	liveBefore, freeBefore := host.Live(), host.FreeBytes()
	require.LessOrEqual(t, liveBefore, liveCold+2)
	require.LessOrEqual(t, liveBefore, 4, "between copies only the cached staging buffers (at most 4) are live")
	maxLive, minFree := 0, freeBefore
	for range 3 {
		var log progressLog
		err := copyRaw(bg, b, dst, 0, a, src, 0, n, WithChunk(1<<20), WithProgress(func(done, total int64) {
			log.calls = append(log.calls, done)
			log.total = total
			maxLive = max(maxLive, host.Live())
			minFree = min(minFree, host.FreeBytes())
		}))
		require.NoError(t, err)
		log.check(t, n, 40)
	}
	require.Equal(t, data, readAll(t, b, dst))
	require.LessOrEqual(t, maxLive, liveBefore, "staging reuses cached buffers: no new host buffers")
	require.Equal(t, freeBefore, minFree, "no host memory is taken beyond the cached staging pair")
	require.Equal(t, liveBefore, host.Live())
}

func TestCopyRangeErrors(t *testing.T) {
	host, a := hostBuffer(t, pattern(100, 4))
	_, b := hostBuffer(t, make([]byte, 50))
	for _, tc := range []struct {
		name              string
		dstID             BufferID
		dstOff, srcOff, n int64
		srcID             BufferID
		want              error
		side              string
	}{
		{"negative source offset", b, 0, -1, 10, a, ErrInvalidArgument, "copy from host"},
		{"negative length", b, 0, 0, -1, a, ErrInvalidArgument, "copy from host"},
		{"past the source", b, 0, 95, 10, a, ErrInvalidArgument, "copy from host"},
		{"past the destination", b, 45, 0, 10, a, ErrInvalidArgument, "copy to host"},
		{"destination offset past the end", b, 51, 0, 0, a, ErrInvalidArgument, "copy to host"},
		{"unknown source", b, 0, 0, 10, 1 << 40, ErrUnknownBuffer, "copy from host"},
		{"unknown destination", 1 << 40, 0, 0, 10, a, ErrUnknownBuffer, "copy to host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			err := copyRaw(bg, host, tc.dstID, tc.dstOff, host, tc.srcID, tc.srcOff, tc.n,
				WithProgress(func(int64, int64) { called = true }))
			require.ErrorIs(t, err, tc.want)
			require.ErrorContains(t, err, tc.side)
			require.False(t, called)
			require.Equal(t, make([]byte, 50), readAll(t, host, b), "a refused copy writes nothing")
		})
	}
	require.NoError(t, copyRaw(bg, host, b, 50, host, a, 100, 0), "an empty copy at the ends is fine")
}

func TestCopyWithinOneBuffer(t *testing.T) {
	for _, tc := range []struct {
		name              string
		dstOff, srcOff, n int64
	}{
		{"forward overlap", 300, 0, 700},
		{"backward overlap", 0, 300, 700},
		{"same range", 100, 100, 500},
		{"disjoint", 0, 500, 400},
	} {
		want := pattern(1000, 5)
		copy(want[tc.dstOff:tc.dstOff+tc.n], pattern(1000, 5)[tc.srcOff:tc.srcOff+tc.n])
		t.Run("host "+tc.name, func(t *testing.T) {
			host, id := hostBuffer(t, pattern(1000, 5))
			require.NoError(t, copyRaw(bg, host, id, tc.dstOff, host, id, tc.srcOff, tc.n, WithChunk(64)))
			require.Equal(t, want, readAll(t, host, id))
		})
		t.Run("device "+tc.name, func(t *testing.T) {
			dev := newFakePool("dev", 1<<20)
			id := fakeBuffer(t, dev, pattern(1000, 5))
			var log progressLog
			require.NoError(t, copyRaw(bg, dev, id, tc.dstOff, dev, id, tc.srcOff, tc.n, WithChunk(64), log.opt()))
			require.Equal(t, want, readAll(t, dev, id))
			require.Equal(t, tc.n, log.calls[len(log.calls)-1])
		})
	}
}

// peerPool copies natively from pools of its own kind.
type peerPool struct {
	*fakePool
	peers int
	fail  error
}

func (p *peerPool) CopyFrom(ctx context.Context, dst BufferID, dstOff int64, src driver.Pool, srcID BufferID, srcOff, n int64) error {
	if p.fail != nil {
		return p.fail
	}
	other, ok := src.(*peerPool)
	if !ok {
		return fmt.Errorf("peer copy from %s: %w", src.Name(), ErrUnsupported)
	}
	buf := make([]byte, n)
	if err := other.Read(ctx, srcID, srcOff, buf); err != nil {
		return err
	}
	p.peers++
	return p.Write(ctx, dst, dstOff, buf)
}

func TestCopyUsesPeerCopierFirst(t *testing.T) {
	a := &peerPool{fakePool: newFakePool("gpu:0", 1<<20)}
	b := &peerPool{fakePool: newFakePool("gpu:1", 1<<20)}
	data := pattern(3000, 6)
	src := fakeBuffer(t, a.fakePool, data)
	dst := fakeBuffer(t, b.fakePool, make([]byte, 3000))
	var log progressLog
	require.NoError(t, copyRaw(bg, b, dst, 0, a, src, 0, 3000, WithChunk(1000), log.opt()))
	require.Equal(t, 1, b.peers)
	log.check(t, 3000, 1)
	require.Equal(t, data, readAll(t, b, dst))

	// From a pool the peer path does not know: staged instead.
	plain := newFakePool("other", 1<<20)
	other := fakeBuffer(t, plain, pattern(3000, 7))
	require.NoError(t, copyRaw(bg, b, dst, 0, plain, other, 0, 3000, WithChunk(1000)))
	require.Equal(t, 1, b.peers)
	require.Equal(t, pattern(3000, 7), readAll(t, b, dst))

	// Any other peer failure is the copy's failure.
	b.fail = errors.New("link down")
	require.EqualError(t, copyRaw(bg, b, dst, 0, a, src, 0, 3000), "link down")
}

// failingPool fails reads or writes after a number of calls.
type failingPool struct {
	*fakePool
	readsLeft, writesLeft int
}

func (p *failingPool) Read(ctx context.Context, id BufferID, off int64, dst []byte) error {
	if p.readsLeft--; p.readsLeft < 0 {
		return errors.New("read failed")
	}
	return p.fakePool.Read(ctx, id, off, dst)
}

func (p *failingPool) Write(ctx context.Context, id BufferID, off int64, src []byte) error {
	if p.writesLeft--; p.writesLeft < 0 {
		return errors.New("write failed")
	}
	return p.fakePool.Write(ctx, id, off, src)
}

func TestCopyStagedErrorsAndCancellation(t *testing.T) {
	host := hostRaw(t)
	var err error
	live := host.Live()
	a := &failingPool{fakePool: newFakePool("a", 1<<20), readsLeft: 2, writesLeft: 1 << 30}
	b := &failingPool{fakePool: newFakePool("b", 1<<20), readsLeft: 1 << 30, writesLeft: 1 << 30}
	src := fakeBuffer(t, a.fakePool, pattern(10_000, 8))
	dst := fakeBuffer(t, b.fakePool, make([]byte, 10_000))
	require.EqualError(t, copyRaw(bg, b, dst, 0, a, src, 0, 10_000, WithChunk(1000)), "read failed")

	a.readsLeft, b.writesLeft = 1<<30, 3
	require.EqualError(t, copyRaw(bg, b, dst, 0, a, src, 0, 10_000, WithChunk(1000)), "write failed")

	b.writesLeft = 1 << 30
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	var after int
	err = copyRaw(ctx, b, dst, 0, a, src, 0, 10_000, WithChunk(1000), WithProgress(func(done, _ int64) {
		if done >= 3000 {
			cancel()
			after++
		}
	}))
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, after, 10, "the copy stops soon after cancellation")
	require.LessOrEqual(t, host.Live(), max(live, 2), "failed copies give their staging buffers back")

	// Cancellation also stops copies that need no staging.
	_, h := hostBuffer(t, make([]byte, 10_000))
	ctx2, cancel2 := context.WithCancel(bg)
	err = copyRaw(ctx2, host, h, 0, a, src, 0, 10_000, WithChunk(1000), WithProgress(func(int64, int64) { cancel2() }))
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, bytes.Equal(pattern(10_000, 8), readAll(t, host, h)))
}

// unitPool moves its buffers in whole units of unit bytes, as a tile-layout
// Tenstorrent buffer does, and records every transfer's length.
type unitPool struct {
	*fakePool
	unit  int64
	moved []int
}

func (p *unitPool) TransferUnit(BufferID) (int64, error) { return p.unit, nil }

func (p *unitPool) Write(ctx context.Context, id BufferID, off int64, src []byte) error {
	p.moved = append(p.moved, len(src))
	return p.fakePool.Write(ctx, id, off, src)
}

func TestCopyMovesWholeTransferUnits(t *testing.T) {
	dev := &unitPool{fakePool: newFakePool("tt:0", 1<<20), unit: 3000}
	other := &unitPool{fakePool: newFakePool("tt:1", 1<<20), unit: 2000}
	data := pattern(30000, 3)
	src := fakeBuffer(t, other.fakePool, data)
	dst := fakeBuffer(t, dev.fakePool, make([]byte, 30000))
	require.NoError(t, copyRaw(bg, dev, dst, 0, other, src, 0, 30000, WithChunk(10000)))
	require.Equal(t, data, readAll(t, dev, dst))
	for i, n := range dev.moved {
		require.Zero(t, n%6000, "transfer %d of %d bytes is whole units of both pools (6000)", i, n)
	}
	require.Equal(t, []int{6000, 6000, 6000, 6000, 6000}, dev.moved)

	dev.moved = nil
	require.NoError(t, copyRaw(bg, dev, dst, 0, other, src, 0, 30000, WithChunk(100)))
	require.Equal(t, 6000, dev.moved[0], "a chunk smaller than a unit is one unit")
}
