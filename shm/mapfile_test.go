package shm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMapFileSlices(t *testing.T) {
	page := int64(os.Getpagesize())
	content := make([]byte, 3*page+100)
	for i := range content {
		content[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "weights.bin")
	require.NoError(t, os.WriteFile(path, content, 0o600))

	for _, tc := range []struct {
		name   string
		off, n int64
	}{
		{"whole file", 0, int64(len(content))},
		{"first byte", 0, 1},
		{"last byte", int64(len(content)) - 1, 1},
		{"page aligned", page, page},
		{"unaligned start", 13, 2 * page},
		{"straddles pages", page - 1, 2},
		{"tail", 3 * page, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := MapFile(path, tc.off, tc.n)
			require.NoError(t, err)
			require.Equal(t, path, m.Path())
			require.Equal(t, tc.n, m.Len())
			require.Equal(t, content[tc.off:tc.off+tc.n], m.Bytes())
			require.NoError(t, m.Close())
			require.NoError(t, m.Close(), "Close is idempotent")
			require.Nil(t, m.Bytes())
		})
	}
}

func TestMapFileRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "small.bin")
	require.NoError(t, os.WriteFile(path, make([]byte, 100), 0o600))
	for _, tc := range []struct {
		name   string
		path   string
		off, n int64
		want   string
	}{
		{"zero length", path, 0, 0, "length positive"},
		{"negative offset", path, -1, 10, "offset must be non-negative"},
		{"past the end", path, 90, 11, "outside the file's 100 bytes"},
		{"offset past the end", path, 101, 1, "outside the file's 100 bytes"},
		{"huge length", path, 1, 1<<63 - 1, "outside the file's 100 bytes"},
		{"missing file", filepath.Join(dir, "nope"), 0, 1, "no such file"},
		{"directory", dir, 0, 1, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := MapFile(tc.path, tc.off, tc.n)
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, m)
		})
	}
}
