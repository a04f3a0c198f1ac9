package rtbin

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPathIsTheRepositorysBin(t *testing.T) {
	p, err := Path()
	require.NoError(t, err)
	require.True(t, filepath.IsAbs(p))
	require.Equal(t, "zyx-tt-runtime", filepath.Base(p))
	require.Equal(t, "bin", filepath.Base(filepath.Dir(p)))
	// The repository root: two levels above this package's directory.
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.Equal(t, filepath.Dir(filepath.Dir(wd)), filepath.Dir(filepath.Dir(p)))
}

func TestCheck(t *testing.T) {
	require.NoError(t, Check(os.Args[0]), "this test binary is an executable file")
	mod, err := filepath.Abs(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	require.ErrorContains(t, Check(mod), mod+" is not an executable file")
	dir := t.TempDir()
	require.ErrorContains(t, Check(dir), dir+" is not an executable file")
	require.ErrorIs(t, Check(filepath.Join(dir, "absent")), os.ErrNotExist)
}
