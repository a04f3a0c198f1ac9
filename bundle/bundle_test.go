package bundle

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zyxtt/zyxtt/internal/testfiles"
	"github.com/zyxtt/zyxtt/tt"

	"codeberg.org/sbinet/npyio"
	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/half"
	"github.com/zyxtt/zyxtt/kernels"
)

func args(vals ...backends.Constant) []backends.LaunchArg {
	out := make([]backends.LaunchArg, len(vals))
	for i, v := range vals {
		out[i] = backends.VarArg(v)
	}
	return out
}

func TestLoadVadd(t *testing.T) {
	b, err := Load("testdata/vadd")
	require.NoError(t, err)
	require.Equal(t, "vadd", b.Name)
	require.Equal(t, []backends.Format{backends.FormatC, backends.FormatCUDA, backends.FormatOpenCL, backends.FormatSPIRV, tt.VariantFormat}, b.Formats())
	require.Equal(t, []int{2}, b.Outputs)
	require.Equal(t, 3, b.Vars[0].Param)

	vals, err := b.VarValues(map[string]string{"n": "5000"})
	require.NoError(t, err)
	shapes, err := b.Shapes(vals)
	require.NoError(t, err)
	require.Equal(t, [][]uint64{{5000}, {5000}, {5000}, nil}, shapes)

	n := backends.UintConst(backends.U32, 5000)
	launch := []backends.LaunchArg{backends.BufArg(1), backends.BufArg(2), backends.BufArg(3), backends.VarArg(n)}
	p, err := b.Program(vals)
	require.NoError(t, err)
	require.NotNil(t, p.Variant(tt.VariantFormat))
	require.NotNil(t, p.Variant(backends.FormatC))
	require.NotNil(t, p.Variant(backends.FormatSPIRV))
	require.Nil(t, p.Variant(backends.FormatGEMM))
	for _, tc := range []struct {
		format backends.Format
		grid   []uint64
	}{
		{"", []uint64{20}},                  // manifest: ceil_div(n, 256)
		{backends.FormatC, []uint64{20}},    // no override
		{backends.FormatCUDA, []uint64{40}}, // ceil_div(n, 128)
		{tt.VariantFormat, []uint64{1, 4}},  // [1, min(4, ceil_div(n, 1024))]
	} {
		g, err := evalGrid(p.WithVariant(p.Variant(tc.format)), launch)
		require.NoError(t, err, tc.format)
		require.Equal(t, tc.grid, g, tc.format)
	}

	require.NoError(t, err)
	require.Contains(t, p.Source(backends.FormatC).Source, "void vadd(")
	require.Equal(t, "vadd", p.Source(backends.FormatC).Entry)
	require.Equal(t, []string{"-O2"}, p.Source(backends.FormatC).Options)
	require.Equal(t, [3]uint32{128, 0, 0}, p.Source(backends.FormatCUDA).Local)
	require.Equal(t, uint32(0x07230203), uint32(p.SPIRV().Code[0])|uint32(p.SPIRV().Code[1])<<8|uint32(p.SPIRV().Code[2])<<16|uint32(p.SPIRV().Code[3])<<24)
	tv := tt.ProgramOf(p)
	require.Len(t, tv.Kernels, 3)
	reader, compute := tv.Kernels[0], tv.Kernels[1]
	require.Equal(t, []string{"reader", "compute", "writer"}, []string{reader.Name, compute.Name, tv.Kernels[2].Name})
	require.Equal(t, []tt.Processor{tt.Riscv0, tt.Compute, tt.Riscv1}, []tt.Processor{reader.Processor, compute.Processor, tv.Kernels[2].Processor})
	require.Nil(t, reader.Cores) // the launch grid
	require.Equal(t, "HiFi2", compute.MathFidelity)
	require.True(t, compute.FP32DestAcc)
	require.Equal(t, []tt.Arg{{Kind: tt.ArgAccessor, Param: 0}, {Kind: tt.ArgAccessor, Param: 1}}, reader.CompileArgs)
	require.Equal(t, tt.Const(5), reader.RuntimeArgs[4]) // ceil_div(5000, 1024)
	require.Equal(t, tt.Arg{Kind: tt.ArgParam, Param: 3}, reader.RuntimeArgs[5])
	require.Equal(t, tt.Const(7), compute.CommonArgs[0])
	require.Equal(t, "4096", reader.Defines["TILE_BYTES"])
	require.Equal(t, tt.CB(1, "Float32", 4096, 2), tv.CBs[1])
	// Constants follow the var values: a second Program does not share state.
	vals2, err := b.VarValues(map[string]string{"n": "100000"})
	require.NoError(t, err)
	p2, err := b.Program(vals2)
	require.NoError(t, err)
	require.Equal(t, backends.ConstDim(98), tt.ProgramOf(p2).Kernels[0].RuntimeArgs[4].Value)
	require.Equal(t, backends.ConstDim(5), tt.ProgramOf(p).Kernels[0].RuntimeArgs[4].Value)
}

func TestLoadGEMMWithConstantVars(t *testing.T) {
	b, err := Load("testdata/mm")
	require.NoError(t, err)
	require.Equal(t, []backends.Format{backends.FormatGEMM}, b.Formats())
	vals := b.Defaults()
	p, err := b.Program(vals)
	require.NoError(t, err)
	g := p.GEMM()
	require.NotNil(t, g)
	require.Equal(t, backends.F32, g.DType)
	require.True(t, g.TransB)
	require.Equal(t, 1.0, g.Alpha)
	require.Equal(t, []int{0, 1, 2}, []int{g.A, g.B, g.C})
	// m is a Variable param (ordinal 3) and stays a reference; n, k and
	// batch are not params and become constants.
	require.Equal(t, backends.ParamDim(3), g.M)
	launch := []backends.LaunchArg{backends.BufArg(1), backends.BufArg(2), backends.BufArg(3),
		backends.VarArg(backends.IntConst(backends.I32, 7)), backends.VarArg(backends.FloatConst(backends.F32, 1.5))}
	for _, tc := range []struct {
		d    *backends.GwsDim
		want uint64
	}{{&g.M, 7}, {&g.N, 5}, {&g.K, 4}, {g.Batch, 2}, {g.StrideA, 28}, {g.StrideC, 35}} {
		v, err := tc.d.Eval(launch)
		require.NoError(t, err)
		require.Equal(t, tc.want, v)
	}
	require.Nil(t, g.LdA)
	require.Equal(t, backends.F32, p.Params[4].DType)
	require.Equal(t, backends.I32, p.Params[3].DType) // taken from the var

	// Reference: a = iota, b = 0.5, c[b][i][j] = Σ_l a[b][i][l] * 0.5.
	shapes, err := b.Shapes(vals)
	require.NoError(t, err)
	in := map[int][]float64{}
	for _, i := range []int{0, 1} {
		buf := make([]byte, Elems(shapes[i])*4)
		gen, err := ParseGen(b.Inputs[i])
		require.NoError(t, err)
		require.NoError(t, Fill(buf, backends.F32, gen, uint64(i)))
		in[i], err = ToFloat64(backends.F32, buf)
		require.NoError(t, err)
	}
	want, err := b.Ref.Compute(vals, in)
	require.NoError(t, err)
	require.Len(t, want, 2*3*5)
	// batch 1, row 2: a elements 20..23 → (20+21+22+23)*0.5 = 43.
	require.Equal(t, 43.0, want[1*15+2*5+4])
	require.Equal(t, 0.5*(0+1+2+3), want[0])
}

// writeBundle makes a bundle directory from file contents.
var writeBundle = testfiles.Dir

const goodManifest = `{"name": "t", "vars": [{"name": "n", "dtype": "u32", "default": 8}],
 "params": [{"name": "x", "kind": "global", "dtype": "f32", "shape": ["n"]},
            {"name": "y", "kind": "global_mut", "dtype": "f32", "shape": ["n"]},
            {"name": "n", "kind": "variable"}],
 "grid": ["n"]}`

func TestLoadErrors(t *testing.T) {
	cjson := `{"source": "k.c", "entry": "k"}`
	for _, tc := range []struct {
		name   string
		files  map[string]string
		file   string // the file the error must name
		substr string // the field and what was wrong
	}{
		{"no manifest", map[string]string{"c.json": cjson, "k.c": ""}, "manifest.json", "no such file"},
		{"syntax", map[string]string{"manifest.json": "{\n\"name\": \"t\",,}", "c.json": cjson, "k.c": ""}, "manifest.json", "line 2"},
		{"unknown field", map[string]string{"manifest.json": `{"name": "t", "parms": []}`}, "manifest.json", `parms: unknown field`},
		{"no name", map[string]string{"manifest.json": `{"params": []}`}, "manifest.json", "name: missing"},
		{"bad dtype", map[string]string{"manifest.json": strings.Replace(goodManifest, `"dtype": "f32", "shape": ["n"]}`, `"dtype": "f33", "shape": ["n"]}`, 1)}, "manifest.json", `params[0].dtype: unknown dtype "f33"`},
		{"bad kind", map[string]string{"manifest.json": strings.Replace(goodManifest, `"global_mut"`, `"output_buf"`, 1)}, "manifest.json", `params[1].kind: unknown param kind`},
		{"dtype type", map[string]string{"manifest.json": strings.Replace(goodManifest, `"dtype": "u32"`, `"dtype": 32`, 1)}, "manifest.json", `vars[0].dtype: want a string`},
		{"bad shape", map[string]string{"manifest.json": strings.Replace(goodManifest, `"shape": ["n"]`, `"shape": ["n*q"]`, 1)}, "manifest.json", `params[0].shape[0]: grid expression "n*q": unknown variable "q"`},
		{"no shape", map[string]string{"manifest.json": strings.Replace(goodManifest, `, "shape": ["n"]`, ``, 1)}, "manifest.json", `params[0].shape: missing`},
		{"variable without var", map[string]string{"manifest.json": strings.Replace(goodManifest, `{"name": "n", "kind": "variable"}`, `{"name": "q", "kind": "variable"}`, 1)}, "manifest.json", `params[2].name: variable param "q" has no var`},
		{"variable dtype mismatch", map[string]string{"manifest.json": strings.Replace(goodManifest, `{"name": "n", "kind": "variable"}`, `{"name": "n", "kind": "variable", "dtype": "i64"}`, 1)}, "manifest.json", `params[2].dtype: i64, but var n is u32`},
		{"bad default", map[string]string{"manifest.json": strings.Replace(goodManifest, `"default": 8`, `"default": -8`, 1)}, "manifest.json", `vars[0].default: "-8" is not a u32`},
		{"dup param", map[string]string{"manifest.json": strings.Replace(goodManifest, `"name": "y"`, `"name": "x"`, 1)}, "manifest.json", `params[1].name: param "x" defined twice`},
		{"bad input", map[string]string{"manifest.json": strings.Replace(goodManifest, `"grid"`, `"inputs": {"x": "rand"}, "grid"`, 1)}, "manifest.json", `inputs.x: "rand"`},
		{"input of a var", map[string]string{"manifest.json": strings.Replace(goodManifest, `"grid"`, `"inputs": {"n": "random"}, "grid"`, 1)}, "manifest.json", `inputs.n: no buffer param`},
		{"bad output", map[string]string{"manifest.json": strings.Replace(goodManifest, `"grid"`, `"outputs": ["x"], "grid"`, 1)}, "manifest.json", `outputs[0]: no global_mut param named "x"`},
		{"bad ref op", map[string]string{"manifest.json": strings.Replace(goodManifest, `"grid"`, `"reference": {"op": "unary:cosh", "args": ["x"], "out": "y"}, "grid"`, 1)}, "manifest.json", `reference.op: unknown unary function "cosh"`},
		{"ref arity", map[string]string{"manifest.json": strings.Replace(goodManifest, `"grid"`, `"reference": {"op": "add", "args": ["x"], "out": "y"}, "grid"`, 1)}, "manifest.json", `reference.args: op add takes 2 args`},
		{"ref output too small", map[string]string{"manifest.json": strings.Replace(strings.Replace(goodManifest, `"global_mut", "dtype": "f32", "shape": ["n"]`, `"global_mut", "dtype": "f32", "shape": ["n - 1"]`, 1),
			`"grid"`, `"reference": {"op": "unary:exp", "args": ["x"], "out": "y"}, "grid"`, 1), "c.json": cjson, "k.c": ""}, "manifest.json", `reference: invalid argument: unary:exp: operand x has 8 elements and the output y 7`},
		{"no variants", map[string]string{"manifest.json": goodManifest}, "", "no variant files"},
		{"missing source", map[string]string{"manifest.json": goodManifest, "c.json": cjson}, "c.json", "source: open"},
		{"escaping source", map[string]string{"manifest.json": goodManifest, "c.json": `{"source": "../k.c", "entry": "k"}`}, "c.json", `source: path "../k.c" must be relative`},
		{"unknown library source", map[string]string{"manifest.json": goodManifest, "tt.json": `{"reader": {"source": "zyx:tt/dataflow/nope.cpp"}, "compute": {"source": "r.cpp"}, "writer": {"source": "r.cpp"}}`, "r.cpp": ""}, "tt.json", `reader.source: "zyx:tt/dataflow/nope.cpp": not in the zyx-tt kernel library (it has tt/compute/add_n_tiles.cpp, tt/compute/add_tiles.cpp,`},
		{"library source of another format", map[string]string{"manifest.json": goodManifest, "c.json": `{"source": "zyx:tt/compute/add_tiles.cpp", "entry": "k"}`}, "c.json", `source: "zyx:tt/compute/add_tiles.cpp": a c variant names library files below zyx:c/ (a file of the bundle with this name is ./zyx:tt/compute/add_tiles.cpp)`},
		{"unknown library include", map[string]string{"manifest.json": goodManifest, "tt.json": `{"includes": ["zyx:tt/nope"], "reader": {"source": "r.cpp"}, "compute": {"source": "r.cpp"}, "writer": {"source": "r.cpp"}}`, "r.cpp": ""}, "tt.json", `includes[0]: "zyx:tt/nope": not in the zyx-tt kernel library`},
		{"library include file named twice", map[string]string{"manifest.json": goodManifest, "tt.json": `{"includes": ["zyx:tt/include/zyx/row_major.h", "zyx:tt/include/zyx/row_major.h"], "reader": {"source": "r.cpp"}, "compute": {"source": "r.cpp"}, "writer": {"source": "r.cpp"}}`, "r.cpp": ""}, "tt.json", `includes[1]: two include files named row_major.h (zyx:tt/include/zyx/row_major.h and zyx:tt/include/zyx/row_major.h)`},
		{"library include named twice", map[string]string{"manifest.json": goodManifest, "tt.json": `{"includes": ["inc", "zyx:tt/include"], "reader": {"source": "r.cpp"}, "compute": {"source": "r.cpp"}, "writer": {"source": "r.cpp"}}`, "r.cpp": "", "inc/zyx/row_major.h": "#pragma once"}, "tt.json", `includes[1]: two include files named zyx/row_major.h`},
		{"own header beside a library kernel", map[string]string{"manifest.json": goodManifest, "tt.json": `{"includes": "inc", "reader": {"source": "zyx:tt/dataflow/write_chunks.cpp"}, "compute": {"source": "r.cpp"}, "writer": {"source": "r.cpp"}}`, "r.cpp": "", "inc/zyx/row_major.h": "#pragma once"}, "tt.json", `reader.source: two include files named zyx/row_major.h`},
		{"escaping library source", map[string]string{"manifest.json": goodManifest, "tt.json": `{"reader": {"source": "zyx:tt/../../kernels.go"}, "compute": {"source": "r.cpp"}, "writer": {"source": "r.cpp"}}`, "r.cpp": ""}, "tt.json", `reader.source: "zyx:tt/../../kernels.go" is not a library path`},
		{"no entry", map[string]string{"manifest.json": goodManifest, "c.json": `{"source": "k.c"}`, "k.c": ""}, "c.json", "entry: missing"},
		{"bad variant grid", map[string]string{"manifest.json": goodManifest, "c.json": `{"source": "k.c", "entry": "k", "grid": ["n/"]}`, "k.c": ""}, "c.json", "grid[0]:"},
		{"entry type", map[string]string{"manifest.json": goodManifest, "c.json": `{"source": "k.c", "entry": 7}`, "k.c": ""}, "c.json", "entry: want a string, got a number"},
		{"unknown variant field", map[string]string{"manifest.json": goodManifest, "c.json": `{"source": "k.c", "entry": "k", "locals": [1]}`, "k.c": ""}, "c.json", "locals: unknown field"},
		{"not spirv", map[string]string{"manifest.json": goodManifest, "vulkan.json": `{"spirv": "k.spv"}`, "k.spv": "not spirv at all!!!!"}, "vulkan.json", "spirv: k.spv is not a SPIR-V module"},
		{"gemm param kind", map[string]string{"manifest.json": goodManifest, "gemm.json": `{"dtype": "f32", "m": 1, "n": 1, "k": "n", "a": "x", "b": "x", "c": "n"}`}, "gemm.json", "c: param n is not a buffer"},
		{"gemm dtype", map[string]string{"manifest.json": goodManifest, "gemm.json": `{"dtype": "i32", "m": 1, "n": 1, "k": 1, "a": "x", "b": "x", "c": "y"}`}, "gemm.json", "dtype: i32: GEMM takes"},
		{"gemm output", map[string]string{"manifest.json": goodManifest, "gemm.json": `{"dtype": "f32", "m": 1, "n": 1, "k": 1, "a": "x", "b": "x", "c": "x"}`}, "gemm.json", "c: param x must be global_mut"},
		{"tt missing section", map[string]string{"manifest.json": goodManifest, "tt.json": `{"reader": {"source": "r.cpp"}}`, "r.cpp": ""}, "tt.json", "compute: missing"},
		{"tt bad param", map[string]string{"manifest.json": goodManifest, "tt.json": `{"reader": {"source": "r.cpp", "runtime_args": [{"kind": "buffer_addr", "param": "zz"}]}, "compute": {"source": "r.cpp"}, "writer": {"source": "r.cpp"}}`, "r.cpp": ""}, "tt.json", `reader.runtime_args[0].param: no param named "zz"`},
		{"tt bad kind", map[string]string{"manifest.json": goodManifest, "tt.json": `{"reader": {"source": "r.cpp"}, "compute": {"source": "r.cpp"}, "writer": {"source": "r.cpp", "common_args": [{"kind": "core_z"}]}}`, "r.cpp": ""}, "tt.json", `writer.common_args[0].kind: unknown kind "core_z"`},
		{"tt const overflow", map[string]string{"manifest.json": goodManifest, "tt.json": `{"reader": {"source": "r.cpp", "runtime_args": [{"kind": "const", "value": "n * 1000000000"}]}, "compute": {"source": "r.cpp"}, "writer": {"source": "r.cpp"}}`, "r.cpp": ""}, "tt.json", `reader.runtime_args[0].value: value 8000000000 does not fit in 32 bits`},
		{"float var in grid", map[string]string{"manifest.json": `{"name": "t", "vars": [{"name": "s", "dtype": "f32", "default": 2}],
			"params": [{"name": "y", "kind": "global_mut", "dtype": "f32", "shape": [4]}, {"name": "s", "kind": "variable"}], "grid": ["s"]}`,
			"c.json": cjson, "k.c": ""}, "manifest.json", `grid[0]: var s is f32`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeBundle(t, tc.files)
			_, err := Load(dir)
			require.Error(t, err)
			if tc.file != "" {
				require.Contains(t, err.Error(), filepath.Join(dir, tc.file))
			}
			require.Contains(t, err.Error(), tc.substr)
			if tc.name != "no manifest" {
				require.True(t, errors.Is(err, ErrBundle) || errors.Is(err, backends.ErrInvalidArgument), "%v", err)
			}
		})
	}
}

func TestLoadMissingDir(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestVarValues(t *testing.T) {
	b, err := Load("testdata/mm")
	require.NoError(t, err)
	_, err = b.VarValues(map[string]string{"q": "1"})
	require.ErrorContains(t, err, `no var "q"`)
	_, err = b.VarValues(map[string]string{"k": "-1"})
	require.ErrorContains(t, err, `var k: "-1" is not a u32`)
	_, err = b.VarValues(map[string]string{"m": "4294967296"})
	require.ErrorContains(t, err, "is not a i32")
	v, err := b.VarValues(map[string]string{"alpha": "2.5", "k": "0x10"})
	require.NoError(t, err)
	require.Equal(t, 2.5, v[4].Float())
	k, _ := v[2].Int()
	require.Equal(t, int64(16), k)
	// A shape that overflows is an error, not a wrap-around.
	v, err = b.VarValues(map[string]string{"batch": "4294967295", "m": "2147483647", "k": "4294967295"})
	require.NoError(t, err)
	_, err = b.Shapes(v)
	require.Error(t, err)
}

// TestShapesByteOverflow checks that a shape whose element count fits but
// whose byte size does not is refused rather than wrapped to a small size.
func TestShapesByteOverflow(t *testing.T) {
	const manifest = `{"name": "big", "vars": [{"name": "n", "dtype": "u64", "default": 1}],
		"params": [{"name": "z", "kind": "global_mut", "dtype": "f64", "shape": ["n"]}]}`
	b, err := ParseManifest([]byte(manifest), "big.json")
	require.NoError(t, err)
	for _, tc := range []struct {
		n  string
		ok bool
	}{{"576460752303423488", true}, {"576460752303423489", false}, {"2305843009213693953", false}} {
		v, err := b.VarValues(map[string]string{"n": tc.n})
		require.NoError(t, err)
		_, err = b.Shapes(v)
		if tc.ok {
			require.NoError(t, err, "n=%s", tc.n)
		} else {
			require.ErrorIs(t, err, backends.ErrInvalidArgument, "n=%s", tc.n)
		}
	}
}

func TestGenAndFill(t *testing.T) {
	for _, tc := range []struct {
		spec string
		ok   bool
	}{{"random", true}, {"random:0:1", true}, {"random:1:0", false}, {"random:a:b", false}, {"random:1", false},
		{"const:3.5", true}, {"const:", false}, {"const:nan", false}, {"iota", true}, {"x.npy", false}, {"", false}} {
		_, err := ParseGen(tc.spec)
		require.Equal(t, tc.ok, err == nil, tc.spec)
	}
	require.True(t, IsFileSpec("data/x.npy"))
	require.True(t, IsFileSpec("x.BIN"))
	require.False(t, IsFileSpec("const:1.npy"))

	buf := make([]byte, 4*1000)
	g, _ := ParseGen("random:2:3")
	require.NoError(t, Fill(buf, backends.F32, g, 1))
	f, err := ToFloat64(backends.F32, buf)
	require.NoError(t, err)
	for _, v := range f {
		require.True(t, v >= 2 && v < 3, v)
	}
	buf2 := make([]byte, len(buf))
	require.NoError(t, Fill(buf2, backends.F32, g, 1))
	require.Equal(t, buf, buf2, "same seed, same data")
	require.NoError(t, Fill(buf2, backends.F32, g, 2))
	require.NotEqual(t, buf, buf2)

	ib := make([]byte, 100)
	require.NoError(t, Fill(ib, backends.I8, Gen{Kind: GenRandom}, 3))
	iv, _ := ToFloat64(backends.I8, ib)
	for _, v := range iv {
		require.True(t, v >= 0 && v < 16 && v == math.Trunc(v), v)
	}
	require.NoError(t, Fill(ib, backends.I8, Gen{Kind: GenConst, Value: 1000}, 3))
	require.Equal(t, byte(127), ib[0], "saturates")
}

func TestHalfConversions(t *testing.T) {
	for _, v := range []float32{0, 1, -2.5, 65504, 6.1035156e-05, 5.9604645e-08, 0.333251953125} {
		require.Equal(t, v, half.ToF32(half.FromF32(v)), "%g", v)
	}
	require.True(t, math.IsInf(float64(half.ToF32(half.FromF32(1e6))), 1))
	require.Equal(t, uint16(0x3c00), half.FromF32(1))
	require.Equal(t, uint16(0x3f80), half.BF16FromF32(1))
	require.Equal(t, uint16(0x4049), half.BF16FromF32(3.14159265))
	buf := make([]byte, 2)
	for _, dt := range []backends.DType{backends.F16, backends.BF16} {
		require.NoError(t, encode(buf, dt, -0.5))
		f, err := ToFloat64(dt, buf)
		require.NoError(t, err)
		require.Equal(t, -0.5, f[0])
	}
}

func TestNpyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := make([]byte, 6*4)
	require.NoError(t, Fill(src, backends.F32, Gen{Kind: GenIota}, 0))
	path := filepath.Join(dir, "out.npy")
	require.NoError(t, WriteOutput(path, backends.F32, []uint64{2, 3}, src))

	// npyio reads what we wrote, with shape and dtype.
	f, err := os.Open(path)
	require.NoError(t, err)
	r, err := npyio.NewReader(f)
	require.NoError(t, err)
	require.Equal(t, []int{2, 3}, r.Header.Descr.Shape)
	var got []float32
	require.NoError(t, r.Read(&got))
	f.Close()
	require.Equal(t, []float32{0, 1, 2, 3, 4, 5}, got)

	// And we read npyio's files back.
	np := filepath.Join(dir, "in.npy")
	w, err := os.Create(np)
	require.NoError(t, err)
	require.NoError(t, npyio.Write(w, []float32{9, 8, 7, 6, 5, 4}))
	require.NoError(t, w.Close())
	dst := make([]byte, 24)
	require.NoError(t, ReadInput(np, backends.F32, []uint64{2, 3}, dst))
	v, _ := ToFloat64(backends.F32, dst)
	require.Equal(t, []float64{9, 8, 7, 6, 5, 4}, v)
	require.NoError(t, ReadInput(path, backends.F32, []uint64{2, 3}, dst))

	err = ReadInput(np, backends.I32, []uint64{6}, dst)
	require.ErrorContains(t, err, "holds <f4 elements, the param is i32")
	err = ReadInput(np, backends.F32, []uint64{7}, make([]byte, 28))
	require.ErrorContains(t, err, "has shape [6], the param needs [7]")
	err = ReadInput(path, backends.F32, []uint64{3, 2}, dst)
	require.ErrorContains(t, err, "has shape [2 3], the param needs [3 2]")

	bin := filepath.Join(dir, "in.bin")
	require.NoError(t, os.WriteFile(bin, src[:20], 0o644))
	err = ReadInput(bin, backends.F32, []uint64{6}, dst)
	require.ErrorContains(t, err, "has 20 bytes, the param needs 24")
	require.ErrorIs(t, err, backends.ErrInvalidArgument)

	require.NoError(t, os.WriteFile(np, []byte("\x93NUMPY\x01\x00\x04\x00abcd"), 0o644))
	require.Error(t, ReadInput(np, backends.F32, []uint64{6}, dst))

	// A failed write leaves nothing behind and the old file intact.
	require.NoError(t, os.WriteFile(bin, []byte("old"), 0o644))
	require.Error(t, WriteOutput(filepath.Join(dir, "missing", "x.npy"), backends.F32, []uint64{6}, src))
	require.Error(t, WriteOutput(filepath.Join(dir, "x.txt"), backends.F32, []uint64{6}, src))
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		require.False(t, strings.Contains(e.Name(), ".tmp"), e.Name())
	}
}

func TestCompare(t *testing.T) {
	tol := DefaultTolerance(backends.F32)
	c, err := Compare([]float64{1, 2, 3}, []float64{1, 2, 3.00001}, tol)
	require.NoError(t, err)
	require.True(t, c.OK())
	require.InDelta(t, 1e-5, c.MaxAbs, 1e-9)
	c, err = Compare([]float64{1, 2.1, math.NaN()}, []float64{1, 2, 3}, tol)
	require.NoError(t, err)
	require.False(t, c.OK())
	require.Equal(t, int64(2), c.Mismatches)
	require.True(t, math.IsInf(c.MaxAbs, 1))
	c, err = Compare([]float64{math.NaN(), math.Inf(1)}, []float64{math.NaN(), math.Inf(1)}, tol)
	require.NoError(t, err)
	require.True(t, c.OK())
	// A non-finite reference matches only the same value: not the other
	// infinity, not NaN, not a finite number however large.
	for _, pair := range [][2]float64{
		{math.Inf(-1), math.Inf(1)}, {math.Inf(1), math.Inf(-1)}, {math.NaN(), math.Inf(1)},
		{math.Inf(1), math.NaN()}, {math.MaxFloat64, math.Inf(1)}, {12345, math.NaN()},
	} {
		c, err = Compare([]float64{pair[0]}, []float64{pair[1]}, tol)
		require.NoError(t, err)
		require.False(t, c.OK(), "got %v, want %v", pair[0], pair[1])
		require.Equal(t, int64(1), c.Mismatches, "got %v, want %v", pair[0], pair[1])
	}
	_, err = Compare([]float64{1}, []float64{1, 2}, tol)
	require.Error(t, err)
	require.Equal(t, Tolerance{}, DefaultTolerance(backends.I32))
}

func TestExamplesLoad(t *testing.T) {
	// The example manifests must parse even before any variant lands.
	for _, name := range []string{"vadd", "unary", "matmul"} {
		data, err := os.ReadFile(filepath.Join("..", "examples", name, ManifestFile))
		require.NoError(t, err)
		b, err := ParseManifest(data, name)
		require.NoError(t, err, name)
		require.NotNil(t, b.Ref, name)
		_, err = b.Shapes(b.Defaults())
		require.NoError(t, err)
	}
}

// A bundle file whose name starts with zyx: is reached as ./zyx:…
func TestBundleFileNamedLikeTheLibrary(t *testing.T) {
	dir := writeBundle(t, map[string]string{"manifest.json": goodManifest, "zyx:k.c": "// own", "c.json": `{"source": "./zyx:k.c", "entry": "k"}`})
	_, err := Load(dir)
	require.NoError(t, err)
}

// A kernel named with the zyx: prefix is the kernel library's file, in
// every section that names a source; the bundle's own files still work
// beside it.
func TestLibraryKernels(t *testing.T) {
	b, err := Load(filepath.Join("..", "examples", "unary"))
	require.NoError(t, err)
	p, err := b.Program(b.Defaults())
	require.NoError(t, err)
	tv, ok := p.Variant(tt.VariantFormat).Code.(*tt.Program)
	require.True(t, ok)
	want := map[string]string{"reader": "tt/dataflow/read_chunks_unary.cpp", "writer": "tt/dataflow/write_chunks.cpp"}
	own, err := os.ReadFile(filepath.Join("..", "examples", "unary", "tt", "compute.cpp"))
	require.NoError(t, err)
	require.Len(t, tv.Kernels, 3)
	for _, k := range tv.Kernels {
		if lib, ok := want[k.Name]; ok {
			src, err := kernels.Read(lib)
			require.NoError(t, err)
			require.Equal(t, string(src), k.Source, k.Name)
		} else {
			require.Equal(t, string(own), k.Source, k.Name)
		}
	}
	require.Equal(t, libraryIncludes(t), tv.Includes, "a library kernel brings the library's include directory")
}

// libraryIncludes is what "includes": "zyx:tt/include" sends: every file of
// the library's include directory under its path inside it.
func libraryIncludes(t *testing.T) []tt.Include {
	t.Helper()
	files, err := kernels.Files(kernels.IncludeDir)
	require.NoError(t, err)
	var out []tt.Include
	for _, f := range files {
		out = append(out, tt.Include{Path: f.Path, Source: string(f.Data)})
	}
	return out
}

// An includes entry with the zyx: prefix names a library directory (every
// file below it, under its path inside it) or file (under its base name).
// A kernel from the library brings the library's include directory; naming
// it as well, or a file of it, is no second copy.
func TestLibraryIncludes(t *testing.T) {
	header, err := kernels.Read("tt/include/zyx/row_major.h")
	require.NoError(t, err)
	dirFiles := libraryIncludes(t)
	require.Contains(t, dirFiles, tt.Include{Path: "zyx/row_major.h", Source: string(header)})
	for _, tc := range []struct {
		includes, reader string
		want             []tt.Include
	}{
		{`"zyx:tt/include"`, "r.cpp", dirFiles},
		{`["zyx:tt/include/zyx/row_major.h"]`, "r.cpp", []tt.Include{{Path: "row_major.h", Source: string(header)}}},
		{`null`, "zyx:tt/dataflow/write_chunks.cpp", dirFiles},
		{`"zyx:tt/include"`, "zyx:tt/dataflow/write_chunks.cpp", dirFiles},
		{`["zyx:tt/include/zyx/row_major.h"]`, "zyx:tt/dataflow/write_chunks.cpp",
			append([]tt.Include{{Path: "row_major.h", Source: string(header)}}, dirFiles...)},
	} {
		dir := writeBundle(t, map[string]string{"manifest.json": goodManifest, "r.cpp": "",
			"tt.json": `{"includes": ` + tc.includes + `, "reader": {"source": "` + tc.reader + `"}, "compute": {"source": "r.cpp"}, "writer": {"source": "r.cpp"}}`})
		b, err := Load(dir)
		require.NoError(t, err, tc.includes)
		p, err := b.Program(b.Defaults())
		require.NoError(t, err)
		tv := p.Variant(tt.VariantFormat).Code.(*tt.Program)
		require.Equal(t, tc.want, tv.Includes, "%s with reader %s", tc.includes, tc.reader)
	}
}

func FuzzParseManifest(f *testing.F) {
	for _, name := range []string{"testdata/vadd/manifest.json", "testdata/mm/manifest.json"} {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(goodManifest))
	f.Add([]byte(`{"name": "t", "params": [{"name": "x", "kind": "global", "dtype": "f32", "shape": ["ceil_div(((1", "$0"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseManifest(data, "fuzz.json")
		if err != nil {
			require.NotEmpty(t, err.Error())
			return
		}
		vals := b.Defaults()
		_, _ = b.Shapes(vals)
		_, _ = b.Program(vals)
		if b.Ref != nil && b.Ref.Op != "matmul" { // matmul sizes could ask for any allocation
			in := map[int][]float64{}
			for _, a := range b.Ref.Args {
				in[a] = make([]float64, 4)
			}
			_, _ = b.Ref.Compute(vals, in)
		}
	})
}

func FuzzReadNpy(f *testing.F) {
	f.Add(npyHeader(backends.F32, []uint64{2, 3}))
	f.Add([]byte("\x93NUMPY\x01\x00\x04\x00abcd"))
	for _, tc := range npyCases() {
		f.Add(tc.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.npy")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		dst := make([]byte, 24)
		if ReadInput(path, backends.F32, []uint64{2, 3}, dst) == nil {
			require.GreaterOrEqual(t, len(data), 24)
			require.Equal(t, data[len(data)-24:], dst, "the array read is the file's last 24 bytes: nothing follows it")
		}
	})
}

// mapLeaves replaces the leaves of an expression, keeps the shape of the
// rest (up to three operands), and refuses a tree nested too deep.
func TestMapLeaves(t *testing.T) {
	double := func(d backends.GwsDim) (backends.GwsDim, error) {
		if d.Op == driver.GwsConst {
			return backends.ConstDim(2 * d.Value), nil
		}
		return d, nil
	}
	sum := driver.BinaryDim(driver.GwsAdd, backends.ConstDim(3), backends.ParamDim(1))
	got, err := mapLeaves(sum, double)
	require.NoError(t, err)
	require.Equal(t, driver.BinaryDim(driver.GwsAdd, backends.ConstDim(6), backends.ParamDim(1)), got)
	split := driver.SplitDim(driver.GwsSplitStart, backends.ConstDim(1), backends.ConstDim(2), backends.ConstDim(3))
	got, err = mapLeaves(split, double)
	require.NoError(t, err)
	require.Equal(t, driver.SplitDim(driver.GwsSplitStart, backends.ConstDim(2), backends.ConstDim(4), backends.ConstDim(6)), got)
	deep := backends.ConstDim(1)
	for range 70 {
		deep = driver.BinaryDim(driver.GwsAdd, deep, backends.ConstDim(1))
	}
	_, err = mapLeaves(deep, double)
	require.ErrorContains(t, err, "expression nested too deep")
}

// evalGrid evaluates every grid axis of p from args.
func evalGrid(p *backends.Program, args []backends.LaunchArg) ([]uint64, error) {
	out := make([]uint64, len(p.Grid))
	for i, g := range p.Grid {
		v, err := g.Eval(args)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
