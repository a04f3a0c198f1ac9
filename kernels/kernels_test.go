package kernels_test

import (
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
		src := string(data)
		require.True(t, strings.Contains(src, "void kernel_main()") || strings.Contains(src, "void MAIN"), "%s has an entry point", n)
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
			}
		})
	}
}
