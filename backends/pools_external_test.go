package backends_test

// Pool tests that need backendtest or the dummy backend, which import this
// package: copies through dummy devices and from the disk pool, and the
// disk pool's conformance and refusal of other pools' ids.

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/dummy"
	"github.com/zyxtt/zyxtt/hostpool"
)

var ctx = context.Background()

func fill(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13) + seed
	}
	return b
}

func dummyPool(t *testing.T, memory int64) *backends.Pool {
	t.Helper()
	d, err := dummy.New(dummy.Config{Enabled: true, Memory: memory})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return backends.DeviceOf(d).Pool()
}

func TestCopyThroughDummyDevices(t *testing.T) {
	host, err := backends.HostPool()
	require.NoError(t, err)
	const n = 3<<20 + 123
	data := fill(n, 1)
	h := backendtest.Upload(t, host, data)
	d1, d2 := dummyPool(t, 16<<20), dummyPool(t, 16<<20)
	a := backendtest.Upload(t, d1, make([]byte, n))
	b := backendtest.Upload(t, d2, make([]byte, n))
	back := backendtest.Upload(t, host, make([]byte, n))

	steps := []struct {
		name     string
		dst      *backends.Pool
		dstID    backends.BufferID
		src      *backends.Pool
		srcID    backends.BufferID
		hostLive int // host buffers a copy may add (the cached staging pair)
	}{
		{"host to dummy", d1, a, host, h, 0},
		{"dummy to dummy", d2, b, d1, a, 2},
		{"dummy to host", host, back, d2, b, 0},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			before := host.Driver().(*hostpool.Pool).Live()
			var calls []int64
			err := backends.Copy(ctx, s.dst, s.dstID, 0, s.src, s.srcID, 0, n, backends.WithChunk(1<<20),
				backends.WithProgress(func(done, total int64) {
					require.EqualValues(t, n, total)
					calls = append(calls, done)
				}))
			require.NoError(t, err)
			require.Len(t, calls, 4, "one progress call per 1 MiB chunk")
			require.EqualValues(t, n, calls[3])
			require.Equal(t, data, backendtest.Download(t, s.dst, s.dstID))
			require.LessOrEqual(t, host.Driver().(*hostpool.Pool).Live(), before+s.hostLive, "no whole-tensor host copy")
		})
	}

	// Repeated device to device copies keep reusing the same staging pair.
	live := host.Driver().(*hostpool.Pool).Live()
	for range 5 {
		require.NoError(t, backends.Copy(ctx, d2, b, 0, d1, a, 0, n, backends.WithChunk(1<<20)))
	}
	require.Equal(t, live, host.Driver().(*hostpool.Pool).Live())

	_, err = d1.Alloc(ctx, 16<<20)
	require.ErrorIs(t, err, backends.ErrOutOfMemory, "the dummy pool's size is enforced")
	err = backends.Copy(ctx, d2, b, 1, d1, a, 0, n)
	require.ErrorIs(t, err, backends.ErrInvalidArgument)
}

func TestCopyDiskIntoDummy(t *testing.T) {
	data := fill(70_000, 2)
	path := filepath.Join(t.TempDir(), "weights.bin")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	disk := backends.NewDiskPool()
	defer disk.Close()
	src, err := disk.Map(path, 5, 60_000)
	require.NoError(t, err)
	dev := dummyPool(t, 1<<20)
	dst := backendtest.Upload(t, dev, make([]byte, 60_000))
	require.NoError(t, backends.Copy(ctx, dev, dst, 0, disk.Pool(), src, 0, 60_000, backends.WithChunk(8<<10)))
	require.Equal(t, data[5:60_005], backendtest.Download(t, dev, dst))
}

// Every pool keeps its buffers in the one buffer table, so an id another pool
// issued is ErrUnknownBuffer, as docs/api.md promises.
func TestDiskPoolRefusesForeignIDs(t *testing.T) {
	ctx := t.Context()
	host, err := backends.HostPool()
	require.NoError(t, err)
	hid, err := host.Alloc(ctx, 64)
	require.NoError(t, err)
	defer host.Release(hid)

	path := filepath.Join(t.TempDir(), "data.bin")
	require.NoError(t, os.WriteFile(path, make([]byte, 4096), 0o600))
	disk := backends.NewDiskPool()
	defer disk.Close()
	did, err := disk.Map(path, 0, 4096)
	require.NoError(t, err)
	defer disk.Release(did)
	other := backends.NewDiskPool()
	defer other.Close()

	require.ErrorIs(t, disk.Retain(hid), backends.ErrUnknownBuffer, "a host-pool id in the disk pool")
	_, err = disk.Size(hid)
	require.ErrorIs(t, err, backends.ErrUnknownBuffer)
	require.ErrorIs(t, other.Retain(did), backends.ErrUnknownBuffer, "one disk pool's id in another")
	require.ErrorIs(t, host.Retain(did), backends.ErrUnknownBuffer, "a disk id in the host pool")
}

func TestDiskPoolConformance(t *testing.T) {
	disk := backends.NewDiskPool()
	defer disk.Close()
	dir := t.TempDir()
	backendtest.RunReadOnlyPoolConformance(t, disk.Pool(), func(content []byte) backends.BufferID {
		path := filepath.Join(dir, "slice.bin")
		require.NoError(t, os.WriteFile(path, append([]byte("header"), content...), 0o600))
		id, err := disk.Map(path, 6, int64(len(content)))
		require.NoError(t, err)
		return id
	})
	require.Zero(t, disk.Live())
}
