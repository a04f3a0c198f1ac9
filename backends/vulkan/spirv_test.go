package vulkan

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
)

func TestParseExampleSPIRV(t *testing.T) {
	cases := []struct {
		name  string
		local [3]uint32
		binds int
	}{
		{"vadd", [3]uint32{256, 1, 1}, 3},
		{"unary", [3]uint32{256, 1, 1}, 2},
		{"matmul", [3]uint32{16, 16, 1}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, err := os.ReadFile(filepath.Join("..", "..", "examples", c.name, c.name+".spv"))
			require.NoError(t, err)
			m, err := parseSPIRV(code)
			require.NoError(t, err)
			require.Equal(t, map[string][3]uint32{"main": c.local}, m.Entries)
			seen := map[uint32]bool{}
			for _, b := range m.Bindings {
				require.Zero(t, b[0], "set 0")
				seen[b[1]] = true
			}
			require.Len(t, seen, c.binds)
		})
	}
}

func words(ws ...uint32) []byte {
	b := make([]byte, 4*len(ws))
	for i, w := range ws {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	return b
}

func TestParseSPIRVRejects(t *testing.T) {
	header := []uint32{spirvMagic, 0x00010000, 0, 10, 0}
	cases := map[string][]byte{
		"empty":              nil,
		"not words":          make([]byte, 21),
		"bad magic":          words(0x03022307, 0x00010000, 0, 10, 0),
		"bad version":        words(spirvMagic, 0x00020000, 0, 10, 0),
		"zero bound":         words(spirvMagic, 0x00010000, 0, 0, 0),
		"zero word count":    words(append(header, 0)...),
		"overlong":           words(append(header, 9<<16|opDecorate, 1)...),
		"short entry point":  words(append(header, 2<<16|opEntryPoint, execModelGLCompute)...),
		"unterminated name":  words(append(header, 4<<16|opEntryPoint, execModelGLCompute, 1, 0x6e69616d)...),
		"entry beyond bound": words(append(header, 5<<16|opEntryPoint, execModelGLCompute, 99, 0x6e69616d, 0)...),
		"cut short":          words(header...)[:16],
	}
	for name, code := range cases {
		_, err := parseSPIRV(code)
		require.ErrorIs(t, err, errSPIRV, name)
	}
	entry := []uint32{5<<16 | opEntryPoint, execModelGLCompute, 1, 0x6e69616d, 0}
	function := []uint32{5<<16 | opFunction, 2, 1, 0, 3, 2<<16 | opLabel, 4, 1<<16 | 253, 1<<16 | opFunctionEnd}
	join := func(parts ...[]uint32) []byte {
		var all []uint32
		for _, p := range parts {
			all = append(all, p...)
		}
		return words(all...)
	}
	bad := map[string][]byte{
		"entry names no function":  join(header, entry),
		"function cut short":       join(header, entry, function[:len(function)-2]),
		"block without terminator": join(header, entry, function[:7], function[8:]),
		"terminator outside block": join(header, entry, []uint32{1<<16 | 253}, function),
		"nested function":          join(header, entry, function[:5], function),
	}
	for name, code := range bad {
		_, err := parseSPIRV(code)
		require.ErrorIs(t, err, errSPIRV, name)
	}
	m, err := parseSPIRV(join(header, entry,
		[]uint32{6<<16 | opExecutionMode, 1, execModeLocalSize, 8, 4, 2, 4<<16 | opDecorate, 3, decorationBinding, 5},
		function))
	require.NoError(t, err)
	require.Equal(t, [3]uint32{8, 4, 2}, m.Entries["main"])
	require.Equal(t, [2]uint32{0, 5}, m.Bindings[3])
}

// FuzzParseSPIRV: any input parses or fails cleanly, never panics, and
// what parses names only ids below the bound.
func FuzzParseSPIRV(f *testing.F) {
	for _, n := range []string{"vadd", "unary", "matmul"} {
		if b, err := os.ReadFile(filepath.Join("..", "..", "examples", n, n+".spv")); err == nil {
			f.Add(b)
		}
	}
	f.Add(words(spirvMagic, 0x00010000, 0, 10, 0, 5<<16|opEntryPoint, execModelGLCompute, 1, 0x6e69616d, 0))
	f.Fuzz(func(t *testing.T, code []byte) {
		m, err := parseSPIRV(code)
		if err != nil {
			require.ErrorIs(t, err, errSPIRV)
			return
		}
		require.NotNil(t, m.Entries)
		require.Zero(t, len(code)%4)
	})
}

func TestPushLayout(t *testing.T) {
	p := func(k driver.ParamKind, d driver.DType) driver.Param { return driver.Param{Kind: k, DType: d} }
	cases := []struct {
		params  []driver.Param
		offsets []int
		size    int
	}{
		{[]driver.Param{p(driver.Global, driver.F32), p(driver.Variable, driver.U32)}, []int{-1, 0}, 4},
		{[]driver.Param{p(driver.Variable, driver.U32), p(driver.Variable, driver.F64), p(driver.Variable, driver.U16)}, []int{0, 8, 16}, 20},
		{[]driver.Param{p(driver.Variable, driver.U8), p(driver.Variable, driver.U32), p(driver.GlobalMut, driver.F32), p(driver.Variable, driver.I64)}, []int{0, 4, -1, 8}, 16},
		{[]driver.Param{p(driver.Global, driver.F32)}, []int{-1}, 0},
	}
	for _, c := range cases {
		pl := layoutPush(c.params)
		require.Equal(t, c.offsets, pl.offsets)
		require.Equal(t, c.size, pl.size)
	}
}
