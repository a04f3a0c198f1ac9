package diskcache_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/internal/diskcache"
)

// otherUID is a uid that is not the test's: chown to it needs root.
const otherUID = 65534

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test gives files to another user (uid 65534) with chown")
	}
}

func TestOpenResolvesTheDirectory(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	d, err := diskcache.Open("off", "opencl")
	require.NoError(t, err)
	require.Nil(t, d, "off: no disk cache")

	d, err = diskcache.Open("", "opencl")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(home, "zyx", "opencl"), d.Path())
	st, err := os.Stat(d.Path())
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o700), st.Mode().Perm(), "made private")

	mine := filepath.Join(t.TempDir(), "mine")
	d, err = diskcache.Open(mine, "vulkan")
	require.NoError(t, err)
	require.Equal(t, mine, d.Path())

	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	d, err = diskcache.Open("", "cuda")
	require.NoError(t, err)
	require.Nil(t, d, "no user cache directory: no cache, never a shared one")
}

// Directories others own or can write are refused, whether the cache itself
// or a directory above it; a link to a private directory resolves to it.
func TestOpenRefusesDirectoriesOthersControl(t *testing.T) {
	base := t.TempDir()
	writable := filepath.Join(base, "writable")
	require.NoError(t, os.Mkdir(writable, 0o700))
	require.NoError(t, os.Chmod(writable, 0o777))
	_, err := diskcache.Open(writable, "c")
	require.ErrorContains(t, err, "writable by its group or by others")
	require.ErrorContains(t, err, "must be private")

	_, err = diskcache.Open(filepath.Join(writable, "below"), "c")
	require.ErrorContains(t, err, writable+" is writable by its group or by others and not sticky")

	sticky := filepath.Join(base, "sticky")
	require.NoError(t, os.Mkdir(sticky, 0o700))
	require.NoError(t, os.Chmod(sticky, 0o777|fs.ModeSticky))
	_, err = diskcache.Open(filepath.Join(sticky, "below"), "c")
	require.NoError(t, err, "a sticky directory (as /tmp) may lie above a cache")

	private := filepath.Join(base, "private")
	link := filepath.Join(base, "link")
	require.NoError(t, os.Mkdir(private, 0o700))
	require.NoError(t, os.Symlink(private, link))
	d, err := diskcache.Open(link, "c")
	require.NoError(t, err)
	require.Equal(t, private, d.Path(), "the resolved path, so the link cannot be repointed later")

	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = diskcache.Open(file, "c")
	require.Error(t, err)

	t.Run("owned by another user", func(t *testing.T) {
		requireRoot(t)
		other := filepath.Join(base, "other")
		require.NoError(t, os.Mkdir(other, 0o700))
		require.NoError(t, os.Chown(other, otherUID, otherUID))
		_, err := diskcache.Open(other, "c")
		require.ErrorContains(t, err, "owned by uid 65534")
		_, err = diskcache.Open(filepath.Join(other, "sub"), "c")
		require.Error(t, err, "nor below a directory another user owns")
	})
}

// A file is used only when it is a regular file of ours that no one else
// can write; a symbolic link is never followed, and a FIFO cannot block.
func TestFilesOthersControlAreRefused(t *testing.T) {
	d, err := diskcache.OpenPath(filepath.Join(t.TempDir(), "c"))
	require.NoError(t, err)
	require.NoError(t, d.WriteFile("good", []byte("object")))
	require.NoError(t, d.Check("good"))
	got, err := d.ReadFile("good", 100)
	require.NoError(t, err)
	require.Equal(t, "object", string(got))

	_, err = d.ReadFile("good", 3)
	require.ErrorContains(t, err, "more than the 3")

	require.ErrorIs(t, d.Check("absent"), fs.ErrNotExist)
	_, err = d.ReadFile("absent", 100)
	require.ErrorIs(t, err, fs.ErrNotExist)

	outside := filepath.Join(t.TempDir(), "planted")
	require.NoError(t, os.WriteFile(outside, []byte("planted"), 0o600))
	require.NoError(t, os.Symlink(outside, d.File("link")))
	require.ErrorIs(t, d.Check("link"), diskcache.ErrUntrusted)
	_, err = d.ReadFile("link", 100)
	require.ErrorIs(t, err, diskcache.ErrUntrusted)

	require.NoError(t, os.WriteFile(d.File("shared"), []byte("x"), 0o600))
	require.NoError(t, os.Chmod(d.File("shared"), 0o666))
	require.ErrorIs(t, d.Check("shared"), diskcache.ErrUntrusted)
	_, err = d.ReadFile("shared", 100)
	require.ErrorIs(t, err, diskcache.ErrUntrusted)

	require.NoError(t, syscall.Mkfifo(d.File("fifo"), 0o600))
	_, err = d.ReadFile("fifo", 100)
	require.ErrorIs(t, err, diskcache.ErrUntrusted, "a FIFO is not a regular file, and opening it does not block")

	t.Run("owned by another user", func(t *testing.T) {
		requireRoot(t)
		require.NoError(t, os.WriteFile(d.File("theirs"), []byte("x"), 0o600))
		require.NoError(t, os.Chown(d.File("theirs"), otherUID, otherUID))
		require.ErrorIs(t, d.Check("theirs"), diskcache.ErrUntrusted)
		_, err := d.ReadFile("theirs", 100)
		require.ErrorContains(t, err, "owned by uid 65534")
	})
}

func TestWriteFile(t *testing.T) {
	d, err := diskcache.OpenPath(filepath.Join(t.TempDir(), "made", "on", "demand"))
	require.NoError(t, err)
	require.NoError(t, d.WriteFile("entry.bin", []byte("first")))
	require.NoError(t, d.WriteFile("entry.bin", []byte("second, longer")))
	got, err := d.ReadFile("entry.bin", 1<<20)
	require.NoError(t, err)
	require.Equal(t, "second, longer", string(got))
	st, err := os.Stat(d.File("entry.bin"))
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o600), st.Mode().Perm())
	ents, err := os.ReadDir(d.Path())
	require.NoError(t, err)
	require.Len(t, ents, 1, "no temporary file is left behind")
}

func TestWriteFileFailureKeepsTheOldFile(t *testing.T) {
	d, err := diskcache.OpenPath(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, d.WriteFile("entry.bin", []byte("old")))
	// A directory where the file should go: the rename fails.
	require.NoError(t, os.MkdirAll(d.File("blocked/x"), 0o700))
	require.Error(t, d.WriteFile("blocked", []byte("new")))
	ents, err := os.ReadDir(d.Path())
	require.NoError(t, err)
	require.Len(t, ents, 2, "the temporary file was removed")
	got, err := d.ReadFile("entry.bin", 100)
	require.NoError(t, err)
	require.Equal(t, "old", string(got))
	require.NoError(t, d.Remove("entry.bin"))
	require.NoError(t, d.Remove("entry.bin"), "removing an absent entry is no error")
}

// Readers racing writers see one whole version, never a mix.
func TestConcurrentWritersAndReaders(t *testing.T) {
	d, err := diskcache.OpenPath(t.TempDir())
	require.NoError(t, err)
	versions := [][]byte{make([]byte, 1<<16), make([]byte, 1<<16)}
	for i := range versions[1] {
		versions[0][i], versions[1][i] = 'a', 'b'
	}
	require.NoError(t, d.WriteFile("entry.bin", versions[0]))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for range 20 {
				if err := d.WriteFile("entry.bin", versions[w%2]); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for range 20 {
				got, err := d.ReadFile("entry.bin", 1<<20)
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
