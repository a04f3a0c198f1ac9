package backends

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tensor.bin")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

func TestDiskPoolMapsFileSlices(t *testing.T) {
	page := os.Getpagesize()
	data := pattern(3*page+500, 9)
	path := writeFile(t, data)
	p := NewDiskPool()
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	require.Equal(t, "disk", p.Name())
	require.Zero(t, p.FreeBytes())

	for _, tc := range []struct {
		name   string
		off, n int64
	}{
		{"whole file", 0, int64(len(data))},
		{"unaligned", 17, int64(page)},
		{"tail", int64(3 * page), 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := p.Map(path, tc.off, tc.n)
			require.NoError(t, err)
			size, err := p.Size(id)
			require.NoError(t, err)
			require.Equal(t, tc.n, size)
			mem, err := p.Bytes(id)
			require.NoError(t, err)
			require.Equal(t, data[tc.off:tc.off+tc.n], mem)
			part := make([]byte, 10)
			require.NoError(t, p.Read(bg, id, tc.n-10, part))
			require.Equal(t, data[tc.off+tc.n-10:tc.off+tc.n], part)
			require.ErrorIs(t, p.Read(bg, id, tc.n-9, part), ErrInvalidArgument)
			require.ErrorIs(t, p.Read(bg, id, -1, part), ErrInvalidArgument)
			require.NoError(t, p.Release(id))
		})
	}
	require.Zero(t, p.Live())
}

func TestDiskPoolRefusesWhatItCannotDo(t *testing.T) {
	path := writeFile(t, pattern(100, 1))
	p := NewDiskPool()
	defer p.Close()
	_, err := p.Alloc(bg, 10)
	require.ErrorIs(t, err, ErrUnsupported)
	id, err := p.Map(path, 0, 100)
	require.NoError(t, err)
	require.ErrorIs(t, p.Write(bg, id, 0, []byte{1}), ErrUnsupported)

	for _, tc := range []struct {
		name   string
		path   string
		off, n int64
		want   string
	}{
		{"zero length", path, 0, 0, "invalid argument"},
		{"negative offset", path, -1, 1, "invalid argument"},
		{"past the end", path, 50, 51, "outside the file's 100 bytes"},
		{"missing file", path + ".nope", 0, 1, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Map(tc.path, tc.off, tc.n)
			require.ErrorContains(t, err, tc.want)
		})
	}
	require.Equal(t, 1, p.Live(), "failed maps add nothing")
}

func TestDiskPoolRefcounts(t *testing.T) {
	path := writeFile(t, pattern(4096, 2))
	p := NewDiskPool()
	id, err := p.Map(path, 0, 4096)
	require.NoError(t, err)
	require.NoError(t, p.Retain(id))
	require.NoError(t, p.Release(id))
	_, err = p.Bytes(id)
	require.NoError(t, err, "still referenced")
	require.NoError(t, p.Release(id))
	require.Zero(t, p.Live(), "the last release unmaps")
	require.ErrorIs(t, p.Release(id), ErrUnknownBuffer, "double release")
	require.ErrorIs(t, p.Retain(id), ErrUnknownBuffer)
	_, err = p.Bytes(id)
	require.ErrorIs(t, err, ErrUnknownBuffer)

	kept, err := p.Map(path, 0, 10)
	require.NoError(t, err)
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "Close is idempotent")
	_, err = p.Size(kept)
	require.ErrorIs(t, err, ErrClosed)
	_, err = p.Map(path, 0, 10)
	require.ErrorIs(t, err, ErrClosed)
}

func TestCopyDiskIntoHostPool(t *testing.T) {
	data := pattern(100_000, 3)
	path := writeFile(t, data)
	disk := NewDiskPool()
	defer disk.Close()
	src, err := disk.Map(path, 1000, 90_000)
	require.NoError(t, err)

	host, dst := hostBuffer(t, make([]byte, 90_000))
	var log progressLog
	require.NoError(t, copyRaw(bg, host, dst, 0, disk, src, 0, 90_000, WithChunk(16<<10), log.opt()))
	log.check(t, 90_000, 6)
	require.Equal(t, data[1000:91_000], readAll(t, host, dst))

	err = copyRaw(bg, disk, src, 0, host, dst, 0, 10)
	require.ErrorIs(t, err, ErrUnsupported, "the disk pool is read-only")
}
