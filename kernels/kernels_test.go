package kernels_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/kernels"
)

func TestNamesAreReadableKernels(t *testing.T) {
	names := kernels.Names()
	require.Contains(t, names, "tt/dataflow/write_chunks.cpp")
	require.IsIncreasing(t, names)
	for _, n := range names {
		data, err := kernels.Read(n)
		require.NoError(t, err, n)
		require.True(t, strings.HasPrefix(string(data), "// zyx-tt kernel library: "), "%s starts with its contract", n)
		if src := string(data); strings.HasSuffix(n, ".cpp") {
			require.True(t, strings.Contains(src, "void kernel_main()") || strings.Contains(src, "void MAIN"), "%s has an entry point", n)
		} else {
			require.Contains(t, src, "#pragma once", n)
		}
	}
}

func TestReadRefusesWhatIsNotInTheLibrary(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"tt/dataflow/nope.cpp", "not in the zyx-tt kernel library"},
		{"tt/dataflow", "not in the zyx-tt kernel library"}, // a directory is not a file
		{"../kernels.go", "not a library path"},
		{"/etc/passwd", "not a library path"},
		{"tt/./dataflow/write_chunks.cpp", "not a library path"},
		{"", "not a library path"},
		{"kernels.go", "not in the zyx-tt kernel library"}, // only tt/ is embedded
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kernels.Read(tc.name)
			require.ErrorContains(t, err, tc.want)
			if strings.Contains(tc.want, "not in") {
				require.ErrorIs(t, err, kernels.ErrNotInLibrary)
				require.ErrorContains(t, err, "tt/dataflow/write_chunks.cpp", "the error lists what the library has")
				require.ErrorContains(t, err, `"zyx:`+tc.name+`"`, "the error names the path as the bundle wrote it")
				require.ErrorContains(t, err, "./zyx:"+tc.name, "and how to name a bundle file of that name")
			}
		})
	}
}

func TestFilesOfADirectoryAndOfAFile(t *testing.T) {
	dir, err := kernels.Files("tt/include")
	require.NoError(t, err)
	require.NotEmpty(t, dir)
	var rowMajor kernels.File
	for i, f := range dir {
		require.Equal(t, "tt/include/"+f.Path, f.Name, "a directory's files are named by their path inside it")
		require.True(t, i == 0 || dir[i-1].Path < f.Path, "sorted by path")
		if f.Path == "zyx/row_major.h" {
			rowMajor = f
		}
	}
	require.Equal(t, "tt/include/zyx/row_major.h", rowMajor.Name)
	one, err := kernels.Files("tt/include/zyx/row_major.h")
	require.NoError(t, err)
	require.Equal(t, []kernels.File{{Name: "tt/include/zyx/row_major.h", Path: "row_major.h", Data: rowMajor.Data}}, one, "a file is named by its base name")
	_, err = kernels.Files("tt/include/nope")
	require.ErrorIs(t, err, kernels.ErrNotInLibrary)
	_, err = kernels.Files("tt/../tt")
	require.ErrorContains(t, err, "not a library path")
}

// Every file below kernels/tt on disk is in the library, dot files
// included, and nothing else is.
func TestNamesAreTheFilesOnDisk(t *testing.T) {
	var disk []string
	require.NoError(t, filepath.WalkDir("tt", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			disk = append(disk, filepath.ToSlash(p))
		}
		return err
	}))
	require.Equal(t, disk, kernels.Names())
}
