package testfiles_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/internal/testfiles"
)

func TestDir(t *testing.T) {
	dir := testfiles.Dir(t, map[string]string{"a.txt": "one", "sub/deeper/b.txt": "two", "empty": ""})
	for name, want := range map[string]string{"a.txt": "one", "sub/deeper/b.txt": "two", "empty": ""} {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		require.NoError(t, err)
		require.Equal(t, want, string(got), name)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 3, "only the files given, and the directory above b.txt")
	require.NotEqual(t, dir, testfiles.Dir(t, nil), "each call makes a new directory")
}
