package backends_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	_ "github.com/zyxtt/zyxtt/backends/dummy"
	"github.com/zyxtt/zyxtt/internal/half"
)

func dummyRuntime(t *testing.T) (*backends.Runtime, *backends.Device) {
	t.Helper()
	cfg, err := backends.ParseConfig([]byte(`{"dummy": {"enabled": true, "memory": 1048576}}`))
	require.NoError(t, err)
	ctx := context.Background()
	rt, err := backends.Open(ctx, backends.Options{Config: cfg, Backends: []string{"dummy"}})
	require.NoError(t, err)
	t.Cleanup(func() { rt.Close() })
	dev, err := rt.Lookup(ctx, "dummy")
	require.NoError(t, err)
	return rt, dev
}

func TestTypedAsyncTransfers(t *testing.T) {
	ctx := context.Background()
	_, dev := dummyRuntime(t)
	pool := dev.Pool()
	id, err := pool.Alloc(ctx, 4*8)
	require.NoError(t, err)
	defer pool.Release(id)
	up, err := backends.WriteSliceAsync(ctx, pool, id, 0, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	require.NoError(t, err)
	dst := make([]float32, 3)
	down, err := backends.ReadIntoAsync(ctx, pool, id, 4*5, dst, up)
	require.NoError(t, err)
	require.NoError(t, down.Wait(ctx))
	require.Equal(t, []float32{6, 7, 8}, dst)
	_, err = backends.ReadIntoAsync(ctx, pool, id, 4*6, dst)
	require.ErrorIs(t, err, backends.ErrInvalidArgument, "a range past the buffer is refused at once")
}

func TestTypedBuffer(t *testing.T) {
	ctx := context.Background()
	_, dev := dummyRuntime(t)
	pool := dev.Pool()
	b, err := backends.BufferOf(ctx, pool, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	require.NoError(t, err)
	defer b.Release()
	require.Equal(t, backends.F32, b.DType())
	require.Equal(t, []int{2, 3}, b.Shape())
	require.Equal(t, 6, b.Len())
	got, err := b.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3, 4, 5, 6}, got)

	// A read or write of another length is refused, naming the shape.
	require.ErrorContains(t, b.ReadInto(ctx, make([]float32, 4)), "read 4 elements: buffer")
	require.ErrorContains(t, b.Write(ctx, make([]float32, 7)), "shape [2 3]")
	_, err = b.ReadAsync(ctx, make([]float32, 5))
	require.ErrorIs(t, err, backends.ErrInvalidArgument)
	_, err = backends.BufferOf(ctx, pool, []float32{1, 2, 3}, 2, 2)
	require.ErrorContains(t, err, "shape [2 2] holds 4 elements, the slice 3")
	_, err = backends.NewBuffer[int32](ctx, pool, 0)
	require.ErrorIs(t, err, backends.ErrInvalidArgument)

	// Async round trip through the handle.
	ev, err := b.WriteAsync(ctx, []float32{6, 5, 4, 3, 2, 1})
	require.NoError(t, err)
	dst := make([]float32, 6)
	ev, err = b.ReadAsync(ctx, dst, ev)
	require.NoError(t, err)
	require.NoError(t, ev.Wait(ctx))
	require.Equal(t, []float32{6, 5, 4, 3, 2, 1}, dst)

	// Bits types carry the narrow dtypes; other types do not.
	h, err := backends.NewBuffer[uint16](ctx, pool, 4)
	require.NoError(t, err)
	defer h.Release()
	require.Equal(t, backends.U16, h.DType())
	bf, err := h.As(backends.BF16)
	require.NoError(t, err)
	require.Equal(t, backends.BF16, bf.DType())
	_, err = b.As(backends.BF16)
	require.ErrorContains(t, err, "a buffer of float32 cannot hold bf16")
	_, err = h.As(backends.F8E4M3)
	require.Error(t, err)
}

func TestExecutableArgs(t *testing.T) {
	ctx := context.Background()
	rt, _ := dummyRuntime(t)
	prog := &backends.Program{Name: "scale", Params: []backends.Param{
		{Name: "x", Kind: backends.Global, DType: backends.F32},
		{Name: "n", Kind: backends.Variable, DType: backends.U32},
		{Name: "a", Kind: backends.Variable, DType: backends.F32},
	}, Variants: []backends.Variant{{Format: backends.FormatC, Code: &backends.SourceVariant{Entry: "f", Source: "void f(void) {}"}}}}
	dev, exe, err := rt.CompileOn(ctx, prog, "dummy")
	require.NoError(t, err)
	defer exe.Release()
	x, err := backends.BufferOf(ctx, dev.Pool(), []float32{1, 2})
	require.NoError(t, err)
	defer x.Release()
	i, err := backends.NewBuffer[int32](ctx, dev.Pool(), 2)
	require.NoError(t, err)
	defer i.Release()

	args, err := exe.Args(x, 2, 0.5)
	require.NoError(t, err)
	require.Equal(t, []backends.LaunchArg{backends.BufArg(x.ID()), backends.VarArg(backends.UintConst(backends.U32, 2)),
		backends.VarArg(backends.FloatConst(backends.F32, 0.5))}, args)
	require.NoError(t, exe.Call(ctx, x.ID(), uint8(2), float32(1)))
	args, err = exe.Args(x, uint64(math.MaxUint32), 1)
	require.NoError(t, err)
	require.Equal(t, backends.VarArg(backends.UintConst(backends.U32, math.MaxUint32)), args[1], "the largest u32")
	require.Equal(t, backends.VarArg(backends.FloatConst(backends.F32, 1)), args[2], "a whole number for a float")

	for _, tc := range []struct {
		vals []any
		msg  string
	}{
		{[]any{i, 2, 0.5}, `param 0 "x" is f32, the buffer i32`},
		{[]any{x, 2}, "2 values for 3 params"},
		{[]any{x, -1, 0.5}, "-1 does not fit u32"},
		{[]any{x, int64(math.MaxUint32) + 1, 0.5}, "4294967296 does not fit u32"},
		{[]any{x, uint64(math.MaxUint32) + 1, 0.5}, "4294967296 does not fit u32"},
		{[]any{x, 1.5, 0.5}, "u32 takes a whole number, got 1.5"},
		{[]any{x, 2, "a"}, "want a f32 value, got string"},
		{[]any{2, 2, 0.5}, `param 0 "x" is a buffer, got int`},
	} {
		_, err := exe.Args(tc.vals...)
		require.ErrorIs(t, err, backends.ErrInvalidArgument, "%v", tc.vals)
		require.ErrorContains(t, err, tc.msg)
		require.ErrorContains(t, exe.Call(ctx, tc.vals...), tc.msg)
	}
}

func TestEncodeDecodeFloats(t *testing.T) {
	src := []float32{0, 1, -2.5, 0.15625, 448}
	for _, dt := range []backends.DType{backends.BF16, backends.F16} {
		bits, err := backends.EncodeFloats[uint16](dt, src)
		require.NoError(t, err)
		back, err := backends.DecodeFloats(dt, bits)
		require.NoError(t, err)
		require.Equal(t, src, back, "%s holds these exactly", dt)
		for i, f := range src {
			one := backends.BF16Bits(f)
			if dt == backends.F16 {
				one = backends.F16Bits(f)
			}
			require.Equal(t, one, bits[i], "bulk and one-at-a-time agree")
		}
	}
	for _, dt := range []backends.DType{backends.F8E4M3, backends.F8E5M2} {
		bits, err := backends.EncodeFloats[uint8](dt, src[:4])
		require.NoError(t, err)
		back, err := backends.DecodeFloats(dt, bits)
		require.NoError(t, err)
		require.Equal(t, src[:4], back, "%s holds these exactly", dt)
		for i, f := range src[:4] {
			one := half.F8E4M3FromFloat(float64(f))
			if dt == backends.F8E5M2 {
				one = half.F8E5M2FromFloat(float64(f))
			}
			require.Equal(t, one, bits[i], "bulk and one-at-a-time agree")
		}
	}
	rounded, err := backends.EncodeFloats[uint16](backends.BF16, []float32{1.00390625})
	require.NoError(t, err)
	got, _ := backends.DecodeFloats(backends.BF16, rounded)
	require.Equal(t, float32(1), got[0], "round to nearest even")

	_, err = backends.EncodeFloats[uint8](backends.BF16, src)
	require.ErrorContains(t, err, "bf16 is 2 bytes, its bits go in uint16")
	_, err = backends.DecodeFloats[uint16](backends.F32, nil)
	require.ErrorContains(t, err, "f32 is not a narrow float dtype")
}

func TestParseProgram(t *testing.T) {
	v := backends.Variant{Format: backends.FormatC, Code: &backends.SourceVariant{Entry: "f", Source: "void f(void) {}"}}
	p, err := backends.ParseProgram("vadd(x: f32[], y: bf16[], z: mut f32[], n: u32) grid [ceil_div(n, 256), max(n, 2)]", v)
	require.NoError(t, err)
	require.Equal(t, "vadd", p.Name)
	require.Equal(t, []backends.Param{
		{Name: "x", Kind: backends.Global, DType: backends.F32}, {Name: "y", Kind: backends.Global, DType: backends.BF16},
		{Name: "z", Kind: backends.GlobalMut, DType: backends.F32}, {Name: "n", Kind: backends.Variable, DType: backends.U32},
	}, p.Params)
	want, err := p.ParseGrid("ceil_div(n, 256)", "max(n, 2)")
	require.NoError(t, err)
	require.Equal(t, want, p.Grid, "the grid is the bundles' expression text")
	p, err = backends.ParseProgram("one()", v)
	require.NoError(t, err)
	require.Empty(t, p.Params)
	require.Nil(t, p.Grid)

	for sig, msg := range map[string]string{
		"vadd":                          "want NAME(PARAM, ...)",
		"(x: f32[])":                    "the program has no name",
		"f(x f32[])":                    `param 0 "x f32[]": want NAME: [mut] DTYPE[] or NAME: DTYPE`,
		"f(x: f33[])":                   `param "x"`,
		"f(n: mut u32)":                 "only a buffer (DTYPE[]) is mut",
		"f(n: u32) grid ceil_div(n, 2)": "want grid [EXPR, ...]",
		"f(n: u32) grid [m + 1]":        "grid axis 0",
		"f(n: u32) blocks [1]":          "want grid [EXPR, ...]",
	} {
		_, err := backends.ParseProgram(sig, v)
		require.ErrorContains(t, err, msg, sig)
	}
}
