//go:build darwin || freebsd || linux || netbsd

package cblas

import (
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zyxtt/zyxtt/backends"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
)

var shared backendtest.Once[*Device]

// device opens the default CBLAS once; without one the test is skipped,
// naming what was tried.
func device(t testing.TB) *Device {
	t.Helper()
	return shared.Get(t, func() (*Device, string, error) {
		d, err := Open(context.Background(), Config{})
		if err != nil {
			return nil, "no CBLAS library: " + err.Error(), nil
		}
		return d, "", nil
	})
}

func dim(v uint64) driver.GwsDim   { return driver.ConstDim(v) }
func pdim(v uint64) *driver.GwsDim { d := driver.ConstDim(v); return &d }

// gemmCase is one GEMM and its storage.
type gemmCase struct {
	name             string
	dtype            driver.DType
	m, n, k, batch   uint64
	transA, transB   bool
	lda, ldb, ldc    uint64 // 0: packed
	strideA, strideB uint64 // 0: packed; stride of 0 is asked for with broadcastA
	broadcastA       bool
	alpha, beta      float64
}

func (c gemmCase) program() *driver.Program {
	g := &driver.GEMMVariant{DType: c.dtype, TransA: c.transA, TransB: c.transB,
		M: driver.ParamDim(3), N: dim(c.n), K: dim(c.k), Alpha: c.alpha, Beta: c.beta, A: 0, B: 1, C: 2}
	if c.batch != 1 {
		g.Batch = pdim(c.batch)
	}
	if c.lda != 0 {
		g.LdA = pdim(c.lda)
	}
	if c.ldb != 0 {
		g.LdB = pdim(c.ldb)
	}
	if c.ldc != 0 {
		g.LdC = pdim(c.ldc)
	}
	if c.broadcastA {
		g.StrideA = pdim(0)
	} else if c.strideA != 0 {
		g.StrideA = pdim(c.strideA)
	}
	if c.strideB != 0 {
		g.StrideB = pdim(c.strideB)
	}
	return &driver.Program{
		Name:     "gemm-" + c.name,
		Params:   []driver.Param{backendtest.Global("a", c.dtype), backendtest.Global("b", c.dtype), backendtest.GlobalMut("c", c.dtype), backendtest.Variable("m", driver.U32)},
		Variants: []driver.Variant{{Format: driver.FormatGEMM, Code: g}},
	}
}

// layout is the storage geometry the case implies, in elements.
func (c gemmCase) layout() (rowsA, colsA, lda, sa, rowsB, colsB, ldb, sb, ldc, sc uint64) {
	rowsA, colsA = c.m, c.k
	if c.transA {
		rowsA, colsA = c.k, c.m
	}
	rowsB, colsB = c.k, c.n
	if c.transB {
		rowsB, colsB = c.n, c.k
	}
	lda, ldb, ldc = orDefault(c.lda, colsA), orDefault(c.ldb, colsB), orDefault(c.ldc, c.n)
	sa, sb, sc = orDefault(c.strideA, rowsA*lda), orDefault(c.strideB, rowsB*ldb), c.m*ldc
	if c.broadcastA {
		sa = 0
	}
	return
}

func orDefault(v, def uint64) uint64 {
	if v == 0 {
		return def
	}
	return v
}

type hostArray struct {
	id    driver.BufferID
	dtype driver.DType
	mem   []byte
}

func (h hostArray) get(i uint64) float64 {
	if h.dtype == driver.F64 {
		return math.Float64frombits(binary.LittleEndian.Uint64(h.mem[8*i:]))
	}
	return float64(math.Float32frombits(binary.LittleEndian.Uint32(h.mem[4*i:])))
}

func (h hostArray) set(i uint64, v float64) {
	if h.dtype == driver.F64 {
		binary.LittleEndian.PutUint64(h.mem[8*i:], math.Float64bits(v))
		return
	}
	binary.LittleEndian.PutUint32(h.mem[4*i:], math.Float32bits(float32(v)))
}

func newArray(t testing.TB, d *Device, dtype driver.DType, n uint64, seed float64) hostArray {
	t.Helper()
	id, err := d.pool.Alloc(context.Background(), int64(max(n, 1))*int64(dtype.Size()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.pool.Release(id) })
	mem, err := d.pool.Bytes(id)
	require.NoError(t, err)
	h := hostArray{id: id, dtype: dtype, mem: mem}
	for i := uint64(0); i < n; i++ {
		h.set(i, math.Sin(float64(i)*seed+seed))
	}
	return h
}

func TestGEMM(t *testing.T) {
	d := device(t)
	ctx := context.Background()
	for _, c := range []gemmCase{
		{name: "f32", dtype: driver.F32, m: 33, n: 47, k: 19, batch: 1, alpha: 1},
		{name: "f64", dtype: driver.F64, m: 33, n: 47, k: 19, batch: 1, alpha: 1},
		{name: "transA", dtype: driver.F32, m: 20, n: 9, k: 31, batch: 1, transA: true, alpha: 1},
		{name: "transB", dtype: driver.F64, m: 20, n: 9, k: 31, batch: 1, transB: true, alpha: 1},
		{name: "both transposed", dtype: driver.F32, m: 17, n: 23, k: 5, batch: 1, transA: true, transB: true, alpha: 1},
		{name: "leading dims", dtype: driver.F32, m: 12, n: 10, k: 7, batch: 1, lda: 9, ldb: 16, ldc: 13, alpha: 1},
		{name: "alpha beta", dtype: driver.F64, m: 8, n: 8, k: 8, batch: 1, alpha: -0.5, beta: 2},
		{name: "batched", dtype: driver.F32, m: 6, n: 5, k: 4, batch: 7, alpha: 1.5, beta: 0.25},
		{name: "batched strided transposed", dtype: driver.F64, m: 6, n: 5, k: 4, batch: 3, transA: true, lda: 8, strideA: 40, strideB: 25, alpha: 1},
		{name: "batched broadcast A", dtype: driver.F32, m: 4, n: 3, k: 2, batch: 5, broadcastA: true, alpha: 1},
		{name: "k zero scales C", dtype: driver.F32, m: 3, n: 4, k: 0, batch: 1, alpha: 1, beta: 3},
		{name: "m zero", dtype: driver.F64, m: 0, n: 4, k: 3, batch: 1, alpha: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rowsA, colsA, lda, sa, rowsB, colsB, ldb, sb, ldc, sc := c.layout()
			extent := func(stride, rows, ld, cols uint64) uint64 {
				if rows == 0 || cols == 0 {
					return 0
				}
				return (c.batch-1)*stride + (rows-1)*ld + cols
			}
			a := newArray(t, d, c.dtype, extent(sa, rowsA, lda, colsA), 0.37)
			b := newArray(t, d, c.dtype, extent(sb, rowsB, ldb, colsB), 0.71)
			cc := newArray(t, d, c.dtype, extent(sc, c.m, ldc, c.n), 0.13)
			// Expected values in float64 from the original contents.
			want := map[uint64]float64{}
			for bt := uint64(0); bt < c.batch; bt++ {
				for i := uint64(0); i < c.m; i++ {
					for j := uint64(0); j < c.n; j++ {
						sum := 0.0
						for l := uint64(0); l < c.k; l++ {
							ai := bt*sa + i*lda + l
							if c.transA {
								ai = bt*sa + l*lda + i
							}
							bi := bt*sb + l*ldb + j
							if c.transB {
								bi = bt*sb + j*ldb + l
							}
							sum += a.get(ai) * b.get(bi)
						}
						ci := bt*sc + i*ldc + j
						want[ci] = c.alpha*sum + c.beta*cc.get(ci)
					}
				}
			}
			untouched := map[uint64]float64{}
			for i := uint64(0); i < uint64(len(cc.mem))/uint64(c.dtype.Size()); i++ {
				if _, ok := want[i]; !ok {
					untouched[i] = cc.get(i)
				}
			}
			exe, err := backends.DeviceOf(d).Compile(ctx, c.program())
			require.NoError(t, err)
			defer exe.Release()
			dur, err := exe.LaunchTimed(ctx, []driver.LaunchArg{driver.BufArg(a.id), driver.BufArg(b.id), driver.BufArg(cc.id),
				driver.VarArg(driver.UintConst(driver.U32, c.m))})
			require.NoError(t, err)
			require.GreaterOrEqual(t, int64(dur), int64(0))
			tol := 1e-12
			if c.dtype == driver.F32 {
				tol = 1e-5 * math.Sqrt(float64(max(c.k, 1))) * 4
			}
			for i, w := range want {
				require.InDelta(t, w, cc.get(i), tol*(1+math.Abs(w)), "element %d", i)
			}
			for i, w := range untouched {
				require.Equal(t, w, cc.get(i), "padding element %d changed", i)
			}
		})
	}
}

func TestGEMMBadInput(t *testing.T) {
	d := device(t)
	ctx := context.Background()
	base := gemmCase{name: "base", dtype: driver.F32, m: 4, n: 5, k: 6, batch: 1, alpha: 1}

	t.Run("compile", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			edit     func(p *driver.Program)
			sentinel error
		}{
			{"no gemm variant", func(p *driver.Program) {
				p.RemoveVariant(driver.FormatGEMM)
				p.SetVariant(driver.Variant{Format: driver.FormatC, Code: &driver.SourceVariant{Source: "x", Entry: "x"}})
			}, driver.ErrNoVariant},
			{"bf16", func(p *driver.Program) { p.GEMM().DType = driver.BF16 }, driver.ErrUnsupported},
			{"f16", func(p *driver.Program) { p.GEMM().DType = driver.F16 }, driver.ErrUnsupported},
			{"i32", func(p *driver.Program) { p.GEMM().DType = driver.I32 }, driver.ErrUnsupported},
			{"unknown compute", func(p *driver.Program) { p.GEMM().Compute = "fp8" }, driver.ErrUnsupported},
			{"operand dtype mismatch", func(p *driver.Program) { p.Params[1].DType = driver.F64 }, driver.ErrInvalidArgument},
			{"c is an input", func(p *driver.Program) { p.GEMM().A = 2 }, driver.ErrInvalidArgument},
			{"operand not a buffer", func(p *driver.Program) { p.GEMM().B = 3 }, driver.ErrInvalidArgument},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := base.program()
				tc.edit(p)
				exe, err := backends.DeviceOf(d).Compile(ctx, p)
				require.ErrorIs(t, err, tc.sentinel)
				require.Nil(t, exe)
			})
		}
		_, err := backends.DeviceOf(d).Compile(ctx, nil)
		require.ErrorIs(t, err, driver.ErrNoVariant)
	})

	t.Run("launch", func(t *testing.T) {
		a := newArray(t, d, driver.F32, 4*6, 1)
		b := newArray(t, d, driver.F32, 6*5, 2)
		c := newArray(t, d, driver.F32, 4*5, 3)
		small := newArray(t, d, driver.F32, 4*5-1, 4)
		args := func(a, b, c driver.BufferID, m uint64) []driver.LaunchArg {
			return []driver.LaunchArg{driver.BufArg(a), driver.BufArg(b), driver.BufArg(c), driver.VarArg(driver.UintConst(driver.U32, m))}
		}
		for _, tc := range []struct {
			name string
			edit func(g *driver.GEMMVariant)
			args []driver.LaunchArg
			says string
		}{
			{"C too small", nil, args(a.id, b.id, small.id, 4), "operand c (param 2) needs 20 elements"},
			{"m larger than A holds", nil, args(a.id, b.id, c.id, 5), "operand a (param 0) needs 30 elements"},
			{"k mismatches B", func(g *driver.GEMMVariant) { g.K = dim(7) }, args(a.id, b.id, c.id, 4), "needs"},
			{"lda below columns", func(g *driver.GEMMVariant) { g.LdA = pdim(5) }, args(a.id, b.id, c.id, 4), "lda = 5 is less than the 6 columns"},
			{"ldc below columns", func(g *driver.GEMMVariant) { g.LdC = pdim(4) }, args(a.id, b.id, c.id, 4), "ldc = 4"},
			{"m beyond int32", nil, args(a.id, b.id, c.id, math.MaxUint32), "exceeds the CBLAS int range"},
			{"batch overlapping C", func(g *driver.GEMMVariant) { g.Batch = pdim(2); g.StrideC = pdim(1) }, args(a.id, b.id, c.id, 1), "overwrite each other"},
			{"C aliases A", nil, args(c.id, b.id, c.id, 1), "same buffer"},
			{"wrong arg count", nil, args(a.id, b.id, c.id, 4)[:3], "3 args for 4 params"},
			{"grid expression error", func(g *driver.GEMMVariant) { g.N = driver.BinaryDim(driver.GwsDiv, dim(1), dim(0)) }, args(a.id, b.id, c.id, 4), "division by zero"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := base.program()
				if tc.edit != nil {
					tc.edit(p.GEMM())
				}
				exe, err := backends.DeviceOf(d).Compile(ctx, p)
				require.NoError(t, err)
				defer exe.Release()
				before := append([]byte(nil), c.mem...)
				err = exe.Launch(ctx, tc.args)
				require.ErrorIs(t, err, driver.ErrInvalidArgument)
				require.Contains(t, err.Error(), tc.says)
				require.Equal(t, before, c.mem, "a rejected launch wrote C")
			})
		}
	})

	t.Run("released", func(t *testing.T) {
		exe, err := backends.DeviceOf(d).Compile(ctx, base.program())
		require.NoError(t, err)
		require.NoError(t, exe.Release())
		require.ErrorIs(t, exe.Launch(ctx, nil), driver.ErrClosed)
		require.NoError(t, exe.Release(), "a second Release does nothing")
	})
}

func TestLoadLibrary(t *testing.T) {
	t.Run("not a cblas", func(t *testing.T) {
		_, err := loadLibrary([]string{"libm.so.6"})
		require.Error(t, err)
		require.Contains(t, err.Error(), "libm.so.6: loads but has no")
		require.Contains(t, err.Error(), "not a CBLAS")
	})
	t.Run("every failure is reported", func(t *testing.T) {
		_, err := loadLibrary([]string{"libzyx-no-such-blas.so.1", "libm.so.6"})
		require.Error(t, err)
		require.Contains(t, err.Error(), "libzyx-no-such-blas.so.1")
		require.Contains(t, err.Error(), "libm.so.6")
	})
	t.Run("configured library falls back", func(t *testing.T) {
		device(t) // skips without any CBLAS
		d, err := Open(context.Background(), Config{Library: "/nonexistent/libzyxblas.so"})
		require.NoError(t, err)
		require.NotEqual(t, "/nonexistent/libzyxblas.so", d.Info().Extra["library"])
	})
	t.Run("configured library first", func(t *testing.T) {
		def := device(t)
		d, err := Open(context.Background(), Config{Library: def.lib.path})
		require.NoError(t, err)
		require.Equal(t, def.lib.path, d.Info().Extra["library"])
	})
}

func TestThreads(t *testing.T) {
	d := device(t)
	if d.lib.setThreads == nil || d.lib.getThreads == nil {
		t.Skipf("%s has no thread control", d.lib.path)
	}
	before := d.Threads()
	defer d.lib.setThreads(before)
	for _, n := range []int{1, 2} {
		dev, err := Open(context.Background(), Config{Threads: n})
		require.NoError(t, err)
		require.Equal(t, n, dev.Threads())
		require.Equal(t, map[int]string{1: "1", 2: "2"}[n], dev.Info().Extra["threads"])
	}
	_, err := Open(context.Background(), Config{Threads: -1})
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
}

func TestInfoAndRegistry(t *testing.T) {
	d := device(t)
	info := d.Info()
	require.Equal(t, driver.KindCPU, info.Kind)
	require.Positive(t, info.Compute)
	require.Equal(t, "true", info.Extra["aot_only"])
	require.NotEmpty(t, info.Extra["library"])
	require.Equal(t, "cblas", d.Name())
	backendtest.RequireHostPools(t, d, "cblas")
	if strings.Contains(filepath.Base(d.lib.path), "openblas") {
		// OpenBLAS's optional functions are bound: its vendor name and
		// build configuration are reported.
		require.Equal(t, "OpenBLAS", info.Extra["vendor"])
		require.NotEmpty(t, info.Extra["library_config"])
		require.NotEmpty(t, info.Extra["library_core"])
	}
}
