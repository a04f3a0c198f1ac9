package shm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// ZYX_SHM_DIR names a directory on tmpfs by an absolute path; anything else
// is refused with the variable named, never replaced by /dev/shm in silence
// nor used on a disk.
func TestEnvDirIsCheckedNotIgnored(t *testing.T) {
	t.Setenv(EnvDir, "relative/dir")
	_, err := NewArena()
	require.ErrorContains(t, err, `ZYX_SHM_DIR="relative/dir" is not an absolute path`)

	var disk string
	for _, d := range []string{os.TempDir(), "/var/tmp", "."} {
		abs, _ := filepath.Abs(d)
		t.Setenv(EnvDir, abs)
		if checkEnvDir() != nil {
			disk = abs
			break
		}
	}
	if disk == "" {
		t.Skip("no directory off tmpfs to try (every candidate is on tmpfs)")
	}
	t.Setenv(EnvDir, disk)
	_, err = NewArena()
	require.ErrorContains(t, err, "is not on tmpfs")

	if st, err := os.Stat(SystemDir); err == nil && st.IsDir() {
		dir, err := os.MkdirTemp(SystemDir, "envdir-")
		require.NoError(t, err)
		defer os.RemoveAll(dir)
		t.Setenv(EnvDir, dir)
		a, err := NewArena()
		require.NoError(t, err, "a directory on tmpfs is used")
		require.Equal(t, dir, a.Dir())
	}
}
