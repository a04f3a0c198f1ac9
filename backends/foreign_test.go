package backends_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
)

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
	backendtest.RunReadOnlyPoolConformance(t, disk, func(content []byte) backends.BufferID {
		path := filepath.Join(dir, "slice.bin")
		require.NoError(t, os.WriteFile(path, append([]byte("header"), content...), 0o600))
		id, err := disk.Map(path, 6, int64(len(content)))
		require.NoError(t, err)
		return id
	})
	require.Zero(t, disk.Live())
}
