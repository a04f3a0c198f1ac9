package diskcache_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/internal/diskcache"
)

func TestDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/tmp/zyx-cache-test")
	require.Equal(t, "", diskcache.Dir("off", "opencl"))
	require.Equal(t, "/tmp/zyx-cache-test/zyx/opencl", diskcache.Dir("", "opencl"))
	require.Equal(t, "/var/cache/mine", diskcache.Dir("/var/cache/mine", "vulkan"))
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	require.Equal(t, "", diskcache.Dir("", "cuda"), "no user cache directory: no cache")
}

func TestWriteFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "made", "on", "demand")
	path := filepath.Join(dir, "entry.bin")
	require.NoError(t, diskcache.WriteFile(path, []byte("first")))
	require.NoError(t, diskcache.WriteFile(path, []byte("second, longer")))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "second, longer", string(got))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "no temporary file is left behind")
}

func TestWriteFileFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "entry.bin")
	require.NoError(t, diskcache.WriteFile(path, []byte("old")))
	// A directory where the file should go: the rename fails.
	blocked := filepath.Join(dir, "blocked")
	require.NoError(t, os.MkdirAll(filepath.Join(blocked, "x"), 0o755))
	require.Error(t, diskcache.WriteFile(blocked, []byte("new")))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 2, "the temporary file was removed")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "old", string(got))
	// A file where the directory should be: MkdirAll fails.
	require.Error(t, diskcache.WriteFile(filepath.Join(path, "sub", "f"), []byte("x")))
}

// Readers racing writers see one whole version, never a mix.
func TestConcurrentWritersAndReaders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "entry.bin")
	versions := [][]byte{make([]byte, 1<<16), make([]byte, 1<<16)}
	for i := range versions[1] {
		versions[0][i], versions[1][i] = 'a', 'b'
	}
	require.NoError(t, diskcache.WriteFile(path, versions[0]))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for range 20 {
				if err := diskcache.WriteFile(path, versions[w%2]); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for range 20 {
				got, err := os.ReadFile(path)
				if err != nil {
					t.Error(err)
					return
				}
				if string(got) != string(versions[0]) && string(got) != string(versions[1]) {
					t.Errorf("read %d bytes that are neither version", len(got))
					return
				}
			}
		})
	}
	wg.Wait()
}
