package tt_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/tt"
)

func TestNamedArgs(t *testing.T) {
	params := []driver.Param{
		{Name: "x", Kind: driver.Global, DType: driver.F32},
		{Name: "z", Kind: driver.GlobalMut, DType: driver.F32},
		{Name: "n", Kind: driver.Variable, DType: driver.U32},
	}
	a := tt.Named(params)
	require.Equal(t, tt.Arg{Kind: tt.ArgBufferAddr, Param: 1}, a.BufferAddr("z"))
	require.Equal(t, tt.Arg{Kind: tt.ArgAccessor, Param: 0}, a.Accessor("x"))
	require.Equal(t, tt.Arg{Kind: tt.ArgPageSize, Param: 0}, a.PageSize("x"))
	require.Equal(t, tt.Arg{Kind: tt.ArgParam, Param: 2}, a.Param("n"))
	v := a.Value("ceil_div(n, 1024) + core_index")
	require.Equal(t, tt.ArgConst, v.Kind)
	want, err := driver.ParseGws("ceil_div($2, 1024) + core_index", nil)
	require.NoError(t, err)
	require.Equal(t, want, v.Value, "the tt.json expression parser, names resolved to params")
	require.NoError(t, a.Err())

	a.BufferAddr("y")
	a.Param("x")
	a.Pages("n")
	a.Value("m + 1")
	err = a.Err()
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	require.ErrorContains(t, err, `buffer_addr arg: no param named "y" ([x z n])`)
	require.ErrorContains(t, err, `param arg: param "x" is not a variable`)
	require.ErrorContains(t, err, `buffer_pages arg: param "n" is not a buffer`)
	require.ErrorContains(t, err, `const arg: grid expression "m + 1"`)

	k, err := tt.LibraryKernel("tt/dataflow/write_chunks.cpp")
	require.NoError(t, err)
	require.Contains(t, k.Source, "kernel_main")
	_, err = tt.LibraryKernel("tt/nope.cpp")
	require.Error(t, err)
}
