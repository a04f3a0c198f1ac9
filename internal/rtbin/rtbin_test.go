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
	dir := t.TempDir()
	exe := filepath.Join(dir, "exe")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o700))
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, nil, 0o600))
	require.NoError(t, Check(exe))
	require.ErrorContains(t, Check(plain), plain+" is not an executable file")
	require.ErrorContains(t, Check(dir), dir+" is not an executable file")
	require.ErrorIs(t, Check(filepath.Join(dir, "absent")), os.ErrNotExist)
}
