//go:build darwin || freebsd || linux || netbsd

package c

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// helperEnv makes the test binary act as a helper process (see TestMain).
const helperEnv = "ZYX_C_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "compile-vadd":
		os.Exit(helperCompileVadd())
	}
	// Keep every object this test binary builds out of the user's cache.
	dir, err := os.MkdirTemp("", "zyx-c-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// helperCompileVadd compiles the vadd example with ZYX_C_TEST_SOURCE_TAG in
// a comment into ZYX_C_TEST_CACHE, runs it and checks the result.
func helperCompileVadd() int {
	ctx := context.Background()
	d, err := Open(ctx, Config{CacheDir: os.Getenv("ZYX_C_TEST_CACHE")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	p, err := vaddProgram("/* " + os.Getenv("ZYX_C_TEST_SOURCE_TAG") + " */\n")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	exe, err := backends.DeviceOf(d).Compile(ctx, p)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compile:", err)
		return 1
	}
	const n = 4099
	x, y, z := f32Buffer(d, n, 1), f32Buffer(d, n, 2), f32Buffer(d, n, 0)
	if err := exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(x), driver.BufArg(y), driver.BufArg(z),
		driver.VarArg(driver.UintConst(driver.U32, n))}); err != nil {
		fmt.Fprintln(os.Stderr, "launch:", err)
		return 1
	}
	got, want := readF32(d, z), readF32(d, x)
	for i := range got {
		if got[i] != want[i]+readF32(d, y)[i] {
			fmt.Fprintln(os.Stderr, "wrong result at", i)
			return 1
		}
	}
	return 0
}

var shared backendtest.Once[*Device]

// device is one C device shared by the tests that need no special config.
func device(t testing.TB) *Device {
	t.Helper()
	return shared.Get(t, func() (*Device, string, error) {
		if _, err := exec.LookPath("cc"); err != nil {
			return nil, "no C compiler (cc) on PATH", nil
		}
		d, err := Open(context.Background(), Config{})
		return d, "", err
	})
}

func exampleSource(t testing.TB, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", name, name+".c"))
	require.NoError(t, err)
	return string(src)
}

func mustParse(t testing.TB, expr string, params []driver.Param) driver.GwsDim {
	t.Helper()
	g, err := driver.ParseGws(expr, func(name string) (int, bool) {
		for i, p := range params {
			if p.Name == name {
				return i, true
			}
		}
		return 0, false
	})
	require.NoError(t, err)
	return g
}

func vaddProgram(prefix string) (*driver.Program, error) {
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "vadd", "vadd.c"))
	if err != nil {
		return nil, err
	}
	return &driver.Program{
		Name:     "vadd",
		Params:   []driver.Param{backendtest.Global("x", driver.F32), backendtest.Global("y", driver.F32), backendtest.GlobalMut("z", driver.F32), backendtest.Variable("n", driver.U32)},
		Grid:     []driver.GwsDim{driver.ParamDim(3)},
		Variants: []driver.Variant{{Format: driver.FormatC, Code: &driver.SourceVariant{Source: prefix + string(src), Entry: "vadd"}}},
	}, nil
}

// compileVadd compiles the vadd example's C variant on d; the test's
// cleanup releases it (a second Release is harmless).
func compileVadd(t *testing.T, d *Device) *backends.Executable {
	t.Helper()
	p, err := vaddProgram("")
	require.NoError(t, err)
	exe, err := backends.DeviceOf(d).Compile(context.Background(), p)
	require.NoError(t, err)
	t.Cleanup(func() { _ = exe.Release() })
	return exe
}

// f32Buffer allocates n f32 elements filled with a repeatable pattern
// (seed 0 means zeros).
func f32Buffer(d *Device, n int, seed int) driver.BufferID {
	id, err := d.pool.Alloc(context.Background(), int64(n*4))
	if err != nil {
		panic(err)
	}
	mem, _ := d.pool.Bytes(id)
	for i := 0; i < n; i++ {
		v := float32(0)
		if seed != 0 {
			v = float32(math.Sin(float64(i*seed+seed))) * 2
		}
		binary.LittleEndian.PutUint32(mem[4*i:], math.Float32bits(v))
	}
	return id
}

func readF32(d *Device, id driver.BufferID) []float32 {
	mem, err := d.pool.Bytes(id)
	if err != nil {
		panic(err)
	}
	out := make([]float32, len(mem)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(mem[4*i:]))
	}
	return out
}

func u32(v uint64) driver.LaunchArg { return driver.VarArg(driver.UintConst(driver.U32, v)) }

func requireClose(t *testing.T, want []float64, got []float32, atol, rtol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > atol+rtol*math.Abs(want[i]) {
			t.Fatalf("element %d: got %g, want %g (|diff| %g)", i, got[i], want[i], d)
		}
	}
}

// TestExamples runs the example programs' C variants against float64
// references computed here.
func TestExamples(t *testing.T) {
	d := device(t)
	ctx := context.Background()
	in, out, scalar := backendtest.Global, backendtest.GlobalMut, backendtest.Variable
	toF64 := func(v []float32) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}

	t.Run("vadd", func(t *testing.T) {
		const n = 100_003
		params := []driver.Param{in("x", driver.F32), in("y", driver.F32), out("z", driver.F32), scalar("n", driver.U32)}
		p := &driver.Program{Name: "vadd", Params: params, Grid: []driver.GwsDim{mustParse(t, "n", params)},
			Variants: []driver.Variant{{Format: driver.FormatC, Code: &driver.SourceVariant{Source: exampleSource(t, "vadd"), Entry: "vadd"}}}}
		exe, err := backends.DeviceOf(d).Compile(ctx, p)
		require.NoError(t, err)
		defer exe.Release()
		x, y, z := f32Buffer(d, n, 3), f32Buffer(d, n, 5), f32Buffer(d, n+1, 0)
		require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(x), driver.BufArg(y), driver.BufArg(z), u32(n)}))
		xs, ys := toF64(readF32(d, x)), toF64(readF32(d, y))
		want := make([]float64, n+1)
		for i := 0; i < n; i++ {
			want[i] = xs[i] + ys[i]
		}
		requireClose(t, want, readF32(d, z), 1e-5, 1e-5) // element n stays 0: the kernel honours n
	})

	t.Run("unary", func(t *testing.T) {
		const n = 10_007
		params := []driver.Param{in("x", driver.F32), out("y", driver.F32), scalar("n", driver.U32)}
		p := &driver.Program{Name: "unary", Params: params, Grid: []driver.GwsDim{mustParse(t, "n", params)},
			Variants: []driver.Variant{{Format: driver.FormatC, Code: &driver.SourceVariant{Source: exampleSource(t, "unary"), Entry: "unary"}}}}
		exe, err := backends.DeviceOf(d).Compile(ctx, p)
		require.NoError(t, err)
		defer exe.Release()
		x, y := f32Buffer(d, n, 7), f32Buffer(d, n, 0)
		require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(x), driver.BufArg(y), u32(n)}))
		want := toF64(readF32(d, x))
		for i := range want {
			want[i] = math.Exp(want[i])
		}
		requireClose(t, want, readF32(d, y), 1e-5, 1e-5)
	})

	t.Run("matmul", func(t *testing.T) {
		const m, n, k = 37, 53, 29
		params := []driver.Param{in("a", driver.F32), in("b", driver.F32), out("c", driver.F32), scalar("m", driver.U32), scalar("n", driver.U32), scalar("k", driver.U32)}
		p := &driver.Program{Name: "matmul", Params: params, Grid: []driver.GwsDim{mustParse(t, "m", params)},
			Variants: []driver.Variant{{Format: driver.FormatC, Code: &driver.SourceVariant{Source: exampleSource(t, "matmul"), Entry: "matmul"}}}}
		exe, err := backends.DeviceOf(d).Compile(ctx, p)
		require.NoError(t, err)
		defer exe.Release()
		a, b, c := f32Buffer(d, m*k, 11), f32Buffer(d, k*n, 13), f32Buffer(d, m*n, 17)
		require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(a), driver.BufArg(b), driver.BufArg(c), u32(m), u32(n), u32(k)}))
		as, bs := toF64(readF32(d, a)), toF64(readF32(d, b))
		want := make([]float64, m*n)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				for l := 0; l < k; l++ {
					want[i*n+j] += as[i*k+l] * bs[l*n+j]
				}
			}
		}
		tol := 1e-5 * math.Sqrt(k)
		requireClose(t, want, readF32(d, c), tol, tol)
	})
}

// gridProgram writes, for every group, g0 + 10·g1 + 100·g2 + 1 into its own
// f32 element and counts the calls in a second buffer.
func gridProgram() *driver.Program {
	return &driver.Program{
		Name:   "grid",
		Params: []driver.Param{backendtest.GlobalMut("out", driver.F32), backendtest.GlobalMut("calls", driver.U32), backendtest.Variable("n0", driver.U64), backendtest.Variable("n1", driver.U64)},
		Grid:   []driver.GwsDim{driver.ParamDim(2), driver.ParamDim(3), driver.ConstDim(3)},
		Variants: []driver.Variant{{Format: driver.FormatC, Code: &driver.SourceVariant{Entry: "grid", Source: `#include <stdint.h>
void grid(float *out, uint32_t *calls, uint64_t n0, uint64_t n1, uint64_t g0, uint64_t g1, uint64_t g2)
{
	uint64_t at = (g2 * n1 + g1) * n0 + g0;
	out[at] = (float)(g0 + 10 * g1 + 100 * g2 + 1);
	__atomic_fetch_add(&calls[at], 1u, __ATOMIC_RELAXED);
}
`}}},
	}
}

func checkGrid(t *testing.T, d *Device, exe *backends.Executable, n0, n1 uint64) {
	t.Helper()
	ctx := context.Background()
	total := int(n0 * n1 * 3)
	out, calls := f32Buffer(d, total, 0), f32Buffer(d, total, 0)
	require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(out), driver.BufArg(calls),
		driver.VarArg(driver.UintConst(driver.U64, n0)), driver.VarArg(driver.UintConst(driver.U64, n1))}))
	got := readF32(d, out)
	cm, _ := d.pool.Bytes(calls)
	for g2 := uint64(0); g2 < 3; g2++ {
		for g1 := uint64(0); g1 < n1; g1++ {
			for g0 := uint64(0); g0 < n0; g0++ {
				at := (g2*n1+g1)*n0 + g0
				require.Equal(t, float32(g0+10*g1+100*g2+1), got[at], "group (%d,%d,%d)", g0, g1, g2)
				require.Equal(t, uint32(1), binary.LittleEndian.Uint32(cm[4*at:]), "calls of group (%d,%d,%d)", g0, g1, g2)
			}
		}
	}
}

// TestGridAxes checks that every group of a 3-D grid runs exactly once with
// its own index, for shapes that split unevenly across threads.
func TestGridAxes(t *testing.T) {
	d := device(t)
	exe, err := backends.DeviceOf(d).Compile(context.Background(), gridProgram())
	require.NoError(t, err)
	defer exe.Release()
	for _, shape := range [][2]uint64{{1, 1}, {7, 5}, {1, 9}, {9, 1}, {3, 1}, {101, 3}} {
		checkGrid(t, d, exe, shape[0], shape[1])
	}
}

// TestPthreadFallback runs the same grid with OpenMP turned off, through
// the launcher's POSIX thread split.
func TestPthreadFallback(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) on PATH")
	}
	off := false
	d, err := Open(context.Background(), Config{OpenMP: &off, Threads: 4, CacheDir: t.TempDir()})
	require.NoError(t, err)
	require.False(t, d.Info().HasOpenMP)
	require.NotContains(t, d.tc.flags, "-fopenmp")
	exe, err := backends.DeviceOf(d).Compile(context.Background(), gridProgram())
	require.NoError(t, err)
	defer exe.Release()
	for _, shape := range [][2]uint64{{1, 1}, {2, 1}, {7, 5}, {101, 3}} {
		checkGrid(t, d, exe, shape[0], shape[1])
	}
}

// TestScalarParams passes one scalar of each C-visible type and checks the
// kernel sees each value.
func TestScalarParams(t *testing.T) {
	d := device(t)
	ctx := context.Background()
	p := &driver.Program{
		Name: "scalars",
		Params: []driver.Param{backendtest.GlobalMut("out", driver.F64),
			backendtest.Variable("a", driver.F64), backendtest.Variable("b", driver.I8), backendtest.Variable("c", driver.F32), backendtest.Variable("d", driver.I64),
			backendtest.Variable("e", driver.Bool), backendtest.Variable("f", driver.U16), backendtest.Variable("g", driver.F16), backendtest.Variable("h", driver.I32)},
		Grid: []driver.GwsDim{driver.ConstDim(1)},
		Variants: []driver.Variant{{Format: driver.FormatC, Code: &driver.SourceVariant{Entry: "scalars", Source: `#include <stdint.h>
void scalars(double *out, double a, int8_t b, float c, int64_t d, uint8_t e, uint16_t f, float g, int32_t h,
             uint64_t g0, uint64_t g1, uint64_t g2)
{
	out[0] = a; out[1] = b; out[2] = c; out[3] = (double)d; out[4] = e; out[5] = f; out[6] = g; out[7] = h;
	out[8] = (double)(g0 + g1 + g2);
}
`}}},
	}
	exe, err := backends.DeviceOf(d).Compile(ctx, p)
	require.NoError(t, err)
	defer exe.Release()
	out, err := d.pool.Alloc(ctx, 9*8)
	require.NoError(t, err)
	defer d.pool.Release(out)
	require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(out),
		driver.VarArg(driver.FloatConst(driver.F64, -2.5e300)),
		driver.VarArg(driver.IntConst(driver.I8, -7)),
		driver.VarArg(driver.FloatConst(driver.F32, 1.25)),
		driver.VarArg(driver.IntConst(driver.I64, -1<<40)),
		driver.VarArg(driver.UintConst(driver.Bool, 1)),
		driver.VarArg(driver.UintConst(driver.U16, 65535)),
		driver.VarArg(driver.FloatConst(driver.F16, 0.5)),
		driver.VarArg(driver.IntConst(driver.I32, -123456)),
	}))
	mem, _ := d.pool.Bytes(out)
	got := make([]float64, 9)
	for i := range got {
		got[i] = math.Float64frombits(binary.LittleEndian.Uint64(mem[8*i:]))
	}
	require.Equal(t, []float64{-2.5e300, -7, 1.25, -(1 << 40), 1, 65535, 0.5, -123456, 0}, got)
}

const vaddOK = `#include <stdint.h>
void vadd(const float *x, const float *y, float *z, uint32_t n, uint64_t i, uint64_t g1, uint64_t g2)
{ if (i < n) z[i] = x[i] + y[i]; }
`

// TestBadSource: every broken C variant is an error that says why, and
// nothing panics.
func TestBadSource(t *testing.T) {
	d := device(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		source   string
		entry    string
		sentinel error
		says     []string
	}{
		{"syntax error", "void vadd(const float *x, { oops }\n", "vadd", driver.ErrCompile, []string{"the C compiler failed", "vadd.c:1"}},
		{"wrong symbol", strings.Replace(vaddOK, "void vadd(", "void vadd2(", 1), "vadd", driver.ErrCompile, []string{`does not define entry "vadd"`}},
		{"too few params", strings.Replace(vaddOK, ", uint64_t g2)", ")", 1), "vadd", driver.ErrCompile, []string{"does not take the program's 4 params plus 3 group indices", "uint64_t gid2"}},
		{"too many params", strings.Replace(vaddOK, "uint64_t g2)", "uint64_t g2, int extra)", 1), "vadd", driver.ErrCompile, []string{"does not take the program's 4 params"}},
		{"wrong pointer type", strings.Replace(vaddOK, "const float *x", "const double *x", 1), "vadd", driver.ErrCompile, []string{"parameter types that do not match", "const float *x"}},
		{"static entry", strings.Replace(vaddOK, "void vadd(", "static void vadd(", 1), "vadd", driver.ErrCompile, []string{`does not export entry "vadd"`}},
		{"declared, not defined", "#include <stdint.h>\nvoid vadd(const float *, const float *, float *, uint32_t, uint64_t, uint64_t, uint64_t);\n", "vadd", driver.ErrCompile, []string{`declares entry "vadd" but does not define it`}},
		{"entry not an identifier", vaddOK, "vadd; int x", driver.ErrInvalidArgument, []string{"not a C identifier"}},
		{"reserved entry", vaddOK, "zyx_c_launch", driver.ErrInvalidArgument, []string{"reserved"}},
		{"bad option", vaddOK, "vadd", driver.ErrCompile, []string{"the C compiler failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := vaddProgram("")
			require.NoError(t, err)
			p.SetVariant(driver.Variant{Format: driver.FormatC, Code: &driver.SourceVariant{Source: tc.source, Entry: tc.entry}})
			if tc.name == "bad option" {
				p.Source(driver.FormatC).Options = []string{"--no-such-compiler-option-zyx"}
			}
			exe, err := backends.DeviceOf(d).Compile(ctx, p)
			require.Error(t, err)
			require.Nil(t, exe)
			require.ErrorIs(t, err, tc.sentinel)
			var be *driver.Error
			require.ErrorAs(t, err, &be)
			require.Equal(t, "c", be.Backend)
			msg := err.Error()
			for _, s := range tc.says {
				require.Contains(t, msg, s)
			}
		})
	}
}

func TestNoVariant(t *testing.T) {
	d := device(t)
	_, err := backends.DeviceOf(d).Compile(context.Background(), &driver.Program{Name: "gemm only", Variants: []driver.Variant{{Format: driver.FormatGEMM, Code: &driver.GEMMVariant{}}}})
	require.ErrorIs(t, err, driver.ErrNoVariant)
	_, err = backends.DeviceOf(d).Compile(context.Background(), nil)
	require.ErrorIs(t, err, driver.ErrNoVariant)
}

// TestBadLaunch: wrong arguments are errors before any C runs.
func TestBadLaunch(t *testing.T) {
	d := device(t)
	ctx := context.Background()
	exe := compileVadd(t, d)
	x := f32Buffer(d, 16, 1)
	defer d.pool.Release(x)
	ok := []driver.LaunchArg{driver.BufArg(x), driver.BufArg(x), driver.BufArg(x), u32(16)}
	for _, tc := range []struct {
		name     string
		args     []driver.LaunchArg
		sentinel error
	}{
		{"too few args", ok[:3], driver.ErrInvalidArgument},
		{"scalar for a buffer", []driver.LaunchArg{u32(1), ok[1], ok[2], ok[3]}, driver.ErrInvalidArgument},
		{"buffer for a scalar", []driver.LaunchArg{ok[0], ok[1], ok[2], driver.BufArg(x)}, driver.ErrInvalidArgument},
		{"wrong scalar dtype", []driver.LaunchArg{ok[0], ok[1], ok[2], driver.VarArg(driver.IntConst(driver.I64, 16))}, driver.ErrInvalidArgument},
		{"unknown buffer", []driver.LaunchArg{driver.BufArg(1 << 60), ok[1], ok[2], ok[3]}, driver.ErrUnknownBuffer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := exe.Launch(ctx, tc.args)
			require.ErrorIs(t, err, tc.sentinel)
		})
	}
	t.Run("grid overflow", func(t *testing.T) {
		q := gridProgram()
		q.Grid = []driver.GwsDim{driver.ParamDim(2), driver.ParamDim(3), driver.ConstDim(1 << 40)}
		gexe, err := backends.DeviceOf(d).Compile(ctx, q)
		require.NoError(t, err)
		defer gexe.Release()
		big := driver.VarArg(driver.UintConst(driver.U64, 1<<40))
		err = gexe.Launch(ctx, []driver.LaunchArg{driver.BufArg(x), driver.BufArg(x), big, big})
		require.ErrorIs(t, err, driver.ErrInvalidArgument)
		require.Contains(t, err.Error(), "2^64")
	})
	t.Run("cancelled context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, exe.Launch(cctx, ok), context.Canceled)
	})
	t.Run("after release", func(t *testing.T) {
		require.NoError(t, exe.Release())
		require.ErrorIs(t, exe.Launch(ctx, ok), driver.ErrClosed)
		require.NoError(t, exe.Release(), "a second Release does nothing")
	})
}

func TestLaunchTimed(t *testing.T) {
	d := device(t)
	ctx := context.Background()
	exe := compileVadd(t, d)
	const n = 1 << 16
	x, z := f32Buffer(d, n, 1), f32Buffer(d, n, 0)
	dur, err := exe.LaunchTimed(ctx, []driver.LaunchArg{driver.BufArg(x), driver.BufArg(x), driver.BufArg(z), u32(n)})
	require.NoError(t, err)
	require.Positive(t, dur)
	xs, zs := readF32(d, x), readF32(d, z)
	for i := range xs {
		require.Equal(t, 2*xs[i], zs[i])
	}
}

// fakeCompiler writes a compiler script that logs every build (not the
// --version query) to log and then runs cc.
func fakeCompiler(t *testing.T) (compiler, log string) {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) on PATH")
	}
	dir := t.TempDir()
	log = filepath.Join(dir, "builds.log")
	compiler = filepath.Join(dir, "logging-cc")
	script := fmt.Sprintf("#!/bin/sh\ncase \"$1\" in --version) ;; *) echo \"$*\" >> %q ;; esac\nexec %q \"$@\"\n", log, cc)
	require.NoError(t, os.WriteFile(compiler, []byte(script), 0o755))
	return compiler, log
}

func buildsInto(t *testing.T, log, cacheDir string) int {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	builds := 0
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, cacheDir) {
			builds++
		}
	}
	return builds
}

// TestCacheReuse: a second compile of the same program, by the same device
// or by a freshly opened one (as another process would), does not run the
// compiler.
func TestCacheReuse(t *testing.T) {
	compiler, log := fakeCompiler(t)
	cache := t.TempDir()
	ctx := context.Background()
	d1, err := Open(ctx, Config{Compiler: compiler, CacheDir: cache})
	require.NoError(t, err)
	p, err := vaddProgram("")
	require.NoError(t, err)

	exe, err := backends.DeviceOf(d1).Compile(ctx, p)
	require.NoError(t, err)
	require.NoError(t, exe.Release())
	require.Equal(t, 1, buildsInto(t, log, cache))

	exe, err = backends.DeviceOf(d1).Compile(ctx, p)
	require.NoError(t, err)
	require.NoError(t, exe.Release())
	d2, err := Open(ctx, Config{Compiler: compiler, CacheDir: cache})
	require.NoError(t, err)
	exe, err = backends.DeviceOf(d2).Compile(ctx, p)
	require.NoError(t, err)
	require.NoError(t, exe.Release())
	require.Equal(t, 1, buildsInto(t, log, cache), "cached compiles ran the compiler")

	// A different source, or different options, is a new object.
	p.Source(driver.FormatC).Options = []string{"-DZYX_TEST_OPTION=1"}
	exe, err = backends.DeviceOf(d2).Compile(ctx, p)
	require.NoError(t, err)
	require.NoError(t, exe.Release())
	require.Equal(t, 2, buildsInto(t, log, cache))

	objs, err := filepath.Glob(filepath.Join(cache, "*.so"))
	require.NoError(t, err)
	require.Len(t, objs, 2)
	leftovers, err := filepath.Glob(filepath.Join(cache, ".build-*"))
	require.NoError(t, err)
	require.Empty(t, leftovers)

	// A damaged cached object is rebuilt, not reported as the program's
	// fault. (A fresh device: the old object may still be mapped here.)
	for _, o := range objs {
		require.NoError(t, os.WriteFile(o, []byte("not an ELF object"), 0o644))
	}
	p.Source(driver.FormatC).Options = []string{"-DZYX_TEST_OPTION=2"}
	exe, err = backends.DeviceOf(d2).Compile(ctx, p) // a new object: built
	require.NoError(t, err)
	require.NoError(t, exe.Release())
	p.Source(driver.FormatC).Options = nil
	exe, err = backends.DeviceOf(d2).Compile(ctx, p) // its object was damaged: rebuilt
	require.NoError(t, err)
	const n = 64
	x, z := f32Buffer(d2, n, 3), f32Buffer(d2, n, 0)
	defer d2.pool.Release(x)
	defer d2.pool.Release(z)
	require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(x), driver.BufArg(x), driver.BufArg(z), u32(n)}))
	require.Equal(t, 2*readF32(d2, x)[5], readF32(d2, z)[5])
	require.NoError(t, exe.Release())
	require.Equal(t, 4, buildsInto(t, log, cache))
}

func uniqueTag(t *testing.T) string {
	var b [8]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	return hex.EncodeToString(b[:])
}

// TestConcurrentCompile: goroutines and separate processes compiling the
// same new program into one cache all get a working object, and the cache
// ends with exactly one object and no temporary files.
func TestConcurrentCompile(t *testing.T) {
	d := device(t)
	ctx := context.Background()

	t.Run("goroutines", func(t *testing.T) {
		compiler, log := fakeCompiler(t)
		cache := t.TempDir()
		dev, err := Open(ctx, Config{Compiler: compiler, CacheDir: cache})
		require.NoError(t, err)
		p, err := vaddProgram("/* " + uniqueTag(t) + " */\n")
		require.NoError(t, err)
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Go(func() {
				exe, err := backends.DeviceOf(dev).Compile(ctx, p)
				if err == nil {
					const n = 257
					x, z := f32Buffer(d, n, i+1), f32Buffer(d, n, 0)
					defer d.pool.Release(x)
					defer d.pool.Release(z)
					err = exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(x), driver.BufArg(x), driver.BufArg(z), u32(n)})
					xs, zs := readF32(d, x), readF32(d, z)
					for j := range xs {
						if err == nil && zs[j] != 2*xs[j] {
							err = fmt.Errorf("goroutine %d: element %d wrong", i, j)
						}
					}
					_ = exe.Release()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, 1, buildsInto(t, log, cache), "one process builds a program once")
		objs, _ := filepath.Glob(filepath.Join(cache, "*.so"))
		require.Len(t, objs, 1)
	})

	t.Run("processes", func(t *testing.T) {
		cache := t.TempDir()
		tag := uniqueTag(t)
		const procs = 3
		cmds := make([]*exec.Cmd, procs)
		outs := make([]strings.Builder, procs)
		for i := range cmds {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"=compile-vadd", "ZYX_C_TEST_CACHE="+cache, "ZYX_C_TEST_SOURCE_TAG="+tag)
			cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
			require.NoError(t, cmd.Start())
			cmds[i] = cmd
		}
		for i, cmd := range cmds {
			require.NoError(t, cmd.Wait(), "helper %d: %s", i, outs[i].String())
		}
		objs, _ := filepath.Glob(filepath.Join(cache, "*.so"))
		require.Len(t, objs, 1)
		leftovers, _ := filepath.Glob(filepath.Join(cache, ".build-*"))
		require.Empty(t, leftovers)
	})
}

func TestInfo(t *testing.T) {
	d := device(t)
	info := d.Info()
	require.Equal(t, driver.KindCPU, info.Kind)
	require.Positive(t, info.Cores)
	require.Positive(t, info.Compute)
	require.NotZero(t, info.PreferredVectorSize)
	require.Equal(t, uint16(1), info.WarpSize)
	require.Equal(t, driver.CapFloatOps, info.Supports(driver.F32))
	require.False(t, info.Supports(driver.BF16).Any())
	require.True(t, info.Supports(driver.I32).Has(driver.CapBitShiftLeft))
	require.False(t, info.Supports(driver.U32).Has(driver.CapNeg))
	for _, k := range []string{"compiler", "compiler_version", "flags", "openmp", "threads", "cache_dir"} {
		require.NotEmpty(t, info.Extra[k], k)
	}
	require.Equal(t, fmt.Sprint(info.HasOpenMP), info.Extra["openmp"])
	require.Equal(t, "c", d.Name())
	require.Equal(t, "c", d.Backend())
}

// TestRegistry opens the backend through the registry, as zyx-tt does.
func TestRegistry(t *testing.T) {
	dev := backendtest.RequireHostPools(t, device(t), "c")
	require.Equal(t, "c", dev.Name())
	p, err := vaddProgram("")
	require.NoError(t, err)
	require.True(t, p.Accepts(dev.Info().Formats))
}

// TestTranslationUnitGolden pins the generated launcher for the vadd
// program; run with -update after an intended change.
func TestTranslationUnitGolden(t *testing.T) {
	p, err := vaddProgram("")
	require.NoError(t, err)
	p.Source(driver.FormatC).Source = "/* user source */\n"
	got := translationUnit(p, p.Source(driver.FormatC)) + "\n/* prototype: " + CPrototype(p, "vadd") + " */\n"
	golden := filepath.Join("testdata", "vadd_tu.c.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), got)
}

// TestOpenErrors: a device that cannot work says why when it is opened.
func TestOpenErrors(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) on PATH")
	}
	ctx := context.Background()
	on := true
	for _, tc := range []struct {
		name     string
		cfg      Config
		sentinel error
		says     string
	}{
		{"missing compiler", Config{Compiler: "zyx-no-such-cc"}, driver.ErrNoDevice, `C compiler "zyx-no-such-cc"`},
		{"compiler without --version", Config{Compiler: "false"}, driver.ErrNoDevice, "--version"},
		{"rejected flags", Config{Flags: &[]string{"-O3", "--zyx-bad-flag"}}, driver.ErrNoDevice, "cannot build a shared object"},
		{"negative threads", Config{Threads: -2}, driver.ErrInvalidArgument, "threads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.CacheDir = t.TempDir()
			d, err := Open(ctx, tc.cfg)
			require.Nil(t, d)
			require.ErrorIs(t, err, tc.sentinel)
			require.Contains(t, err.Error(), tc.says)
		})
	}

	t.Run("compiler without OpenMP", func(t *testing.T) {
		cc, _ := exec.LookPath("cc")
		noOMP := filepath.Join(t.TempDir(), "cc-without-openmp")
		script := fmt.Sprintf("#!/bin/sh\ncase \"$*\" in *-fopenmp*) echo 'unsupported option -fopenmp' >&2; exit 1 ;; esac\nexec %q \"$@\"\n", cc)
		require.NoError(t, os.WriteFile(noOMP, []byte(script), 0o755))

		_, err := Open(ctx, Config{Compiler: noOMP, OpenMP: &on, CacheDir: t.TempDir()})
		require.ErrorIs(t, err, driver.ErrNoDevice)
		require.ErrorContains(t, err, "config asks for OpenMP")

		d, err := Open(ctx, Config{Compiler: noOMP, CacheDir: t.TempDir()})
		require.NoError(t, err)
		require.False(t, d.Info().HasOpenMP, "detection found no OpenMP")
		require.Contains(t, d.tc.flags, "-pthread")
		exe, err := backends.DeviceOf(d).Compile(ctx, gridProgram())
		require.NoError(t, err)
		defer exe.Release()
		checkGrid(t, d, exe, 7, 5)
	})

	t.Run("config section", func(t *testing.T) {
		cfg, err := backends.ParseConfig([]byte(`{"c": {"device_ids": []}}`))
		require.NoError(t, err)
		_, err = openDriver(ctx, backendtest.DriverEnv(t, cfg))
		require.ErrorIs(t, err, driver.ErrNoDevice)

		cfg, err = backends.ParseConfig([]byte(`{"c": {"threads": "many"}}`))
		require.NoError(t, err)
		_, err = openDriver(ctx, backendtest.DriverEnv(t, cfg))
		require.ErrorContains(t, err, `config:1:19: c.threads: want a whole number between 0 and 4096, got "many"`)

		cfg, err = backends.ParseConfig([]byte(`{"c": {"threads": 3, "openmp": false, "cache_dir": "` + t.TempDir() + `"}}`))
		require.NoError(t, err)
		devs, err := openDriver(ctx, backendtest.DriverEnv(t, cfg))
		require.NoError(t, err)
		require.Len(t, devs, 1)
		require.Equal(t, "3", devs[0].Info().Extra["threads"])
		require.False(t, devs[0].Info().HasOpenMP)
	})
}

// TestNoParams: a program with no params still gets its group indices.
func TestNoParams(t *testing.T) {
	d := device(t)
	p := &driver.Program{Name: "empty", Grid: []driver.GwsDim{driver.ConstDim(4)},
		Variants: []driver.Variant{{Format: driver.FormatC, Code: &driver.SourceVariant{Entry: "empty", Source: "void empty(uint64_t a, uint64_t b, uint64_t c) { (void)a; (void)b; (void)c; }\n"}}}}
	require.Contains(t, CPrototype(p, "empty"), "void empty(uint64_t gid0, uint64_t gid1, uint64_t gid2)")
	exe, err := backends.DeviceOf(d).Compile(context.Background(), p)
	require.NoError(t, err)
	require.NoError(t, exe.Launch(context.Background(), nil))
	require.NoError(t, exe.Release())
}

// A kernel that never returns cannot be stopped, but a cancelled launch is
// abandoned at once: the caller gets ctx's error, Release does not wait, and
// the kernel keeps its buffers until it returns.
func TestSpinningKernelIsAbandoned(t *testing.T) {
	d := device(t)
	p := &driver.Program{
		Name:   "spin",
		Params: []driver.Param{{Name: "x", Kind: driver.GlobalMut, DType: driver.U32}},
		Grid:   []driver.GwsDim{driver.ConstDim(1)},
		Variants: []driver.Variant{{Format: driver.FormatC, Code: &driver.SourceVariant{Entry: "spin", Source: `
void spin(uint32_t *x, uint64_t g0, uint64_t g1, uint64_t g2) {
	volatile uint32_t *v = x;
	while (v[0] != 0xdead) { }
	v[1] = 1;
}`}}},
	}
	exe, err := backends.DeviceOf(d).Compile(context.Background(), p)
	require.NoError(t, err)
	pool := d.Pool()
	buf, err := pool.Alloc(context.Background(), 8)
	require.NoError(t, err)
	mem, err := d.pool.Bytes(buf)
	require.NoError(t, err)
	clear(mem)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(buf)})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 5*time.Second, "the cancelled launch returned promptly")
	released := make(chan error, 1)
	go func() { released <- exe.Release() }()
	select {
	case err := <-released:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Release waited for the spinning kernel")
	}
	require.NoError(t, pool.Release(buf))
	_, err = pool.Size(buf)
	require.NoError(t, err, "the running kernel still holds its buffer")
	binary.LittleEndian.PutUint32(mem, 0xdead) // let it return
	require.Eventually(t, func() bool {
		_, err := pool.Size(buf)
		return errors.Is(err, driver.ErrUnknownBuffer)
	}, 5*time.Second, 10*time.Millisecond, "the kernel returned and gave its buffer back")
	require.Equal(t, uint32(1), binary.LittleEndian.Uint32(mem[4:]), "the kernel ran to its end")
}

// Cancelling a compile kills the compiler's whole process tree at once and
// leaves no temp file in the cache.
func TestCancelledCompileLeavesNothing(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) on PATH")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// A compiler that answers the probes like cc, and on a real build
	// starts a long-running child (as gcc starts cc1) and waits for it.
	fake := filepath.Join(dir, "slowcc")
	require.NoError(t, os.WriteFile(fake, []byte(`#!/bin/sh
case "$*" in
*.build-*) sleep 300 & echo $! > `+pidFile+`; wait; exit 1 ;;
*) exec cc "$@" ;;
esac
`), 0o755))
	cache := filepath.Join(dir, "cache")
	d, err := Open(context.Background(), Config{Compiler: fake, CacheDir: cache})
	require.NoError(t, err)
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		p, err := vaddProgram("/* " + uniqueTag(t) + " */\n")
		if err != nil {
			errc <- err
			return
		}
		_, err = backends.DeviceOf(d).Compile(ctx, p)
		errc <- err
	}()
	// The shell creates the file before it writes the pid: wait for a whole
	// line.
	var child int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(pidFile)
		if err != nil || !strings.HasSuffix(string(data), "\n") {
			return false
		}
		child, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case err := <-errc:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled compile did not return")
	}
	require.Less(t, time.Since(start), 5*time.Second)
	require.Eventually(t, func() bool { return syscall.Kill(child, 0) != nil }, 5*time.Second, 10*time.Millisecond,
		"the compiler's child (pid %d) was killed with it", child)
	ents, err := os.ReadDir(cache)
	require.NoError(t, err)
	for _, e := range ents {
		require.False(t, strings.HasPrefix(e.Name(), ".build-"), "temp file %s left in the cache", e.Name())
	}
}

// TestCacheOthersControl: a cache directory another user owns or can write
// is refused when the device opens, and an object another user planted in
// our cache (or a link to one elsewhere) is rebuilt, never loaded.
func TestCacheOthersControl(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test gives files to another user (uid 65534) with chown")
	}
	compiler, log := fakeCompiler(t)
	ctx := context.Background()
	base := t.TempDir()

	theirs := filepath.Join(base, "theirs")
	require.NoError(t, os.Mkdir(theirs, 0o700))
	require.NoError(t, os.Chown(theirs, 65534, 65534))
	_, err := Open(ctx, Config{Compiler: compiler, CacheDir: theirs})
	require.ErrorIs(t, err, driver.ErrNoDevice)
	require.ErrorContains(t, err, "owned by uid 65534")

	shared := filepath.Join(base, "shared")
	require.NoError(t, os.Mkdir(shared, 0o700))
	require.NoError(t, os.Chmod(shared, 0o777))
	_, err = Open(ctx, Config{Compiler: compiler, CacheDir: shared})
	require.ErrorContains(t, err, "writable by its group or by others")

	// Plant, under the key of the program, an object whose constructor
	// leaves a marker: once owned by another user, once as a link.
	cache := filepath.Join(base, "mine")
	d, err := Open(ctx, Config{Compiler: compiler, CacheDir: cache})
	require.NoError(t, err)
	p, err := vaddProgram("")
	require.NoError(t, err)
	key := d.tc.cacheKey(translationUnit(p, p.Source(driver.FormatC)), nil)
	marker := filepath.Join(base, "planted-ran")
	planted := filepath.Join(base, "planted.so")
	src := filepath.Join(base, "planted.c")
	require.NoError(t, os.WriteFile(src, []byte(fmt.Sprintf(
		"#include <stdio.h>\n__attribute__((constructor)) static void planted(void) { FILE *f = fopen(%q, \"w\"); if (f) fclose(f); }\n", marker)), 0o600))
	out, err := exec.Command("cc", "-shared", "-fPIC", "-o", planted, src).CombinedOutput()
	require.NoError(t, err, string(out))

	for _, how := range []string{"owned by another user", "a symbolic link"} {
		obj := filepath.Join(cache, key+".so")
		_ = os.Remove(obj)
		if how == "a symbolic link" {
			require.NoError(t, os.Symlink(planted, obj))
		} else {
			data, err := os.ReadFile(planted)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(obj, data, 0o700))
			require.NoError(t, os.Chown(obj, 65534, 65534))
		}
		builds := buildsInto(t, log, cache)
		d, err := Open(ctx, Config{Compiler: compiler, CacheDir: cache})
		require.NoError(t, err)
		exe, err := backends.DeviceOf(d).Compile(ctx, p)
		require.NoError(t, err, how)
		require.NoError(t, exe.Release())
		require.NoError(t, d.Close())
		require.NoFileExists(t, marker, "%s: the planted object ran", how)
		require.Equal(t, builds+1, buildsInto(t, log, cache), "%s: the object was rebuilt", how)
		st, err := os.Lstat(obj)
		require.NoError(t, err)
		require.True(t, st.Mode().IsRegular(), how)
	}
	require.NoError(t, d.Close())
}

// TestCacheOff: with the cache off, objects live in a private directory of
// the device's own, removed when it closes.
func TestCacheOff(t *testing.T) {
	d, err := Open(context.Background(), Config{CacheDir: "off"})
	require.NoError(t, err)
	dir := d.Info().Extra["cache_dir"]
	require.DirExists(t, dir)
	require.NotEqual(t, "off", filepath.Base(dir))
	p, err := vaddProgram("")
	require.NoError(t, err)
	exe, err := backends.DeviceOf(d).Compile(context.Background(), p)
	require.NoError(t, err)
	require.NoError(t, exe.Release())
	require.NoError(t, d.Close())
	require.NoDirExists(t, dir)
}

// TestCacheKeyCoversInputs: every input of a build changes its key.
func TestCacheKeyCoversInputs(t *testing.T) {
	type input struct {
		compiler, version string
		flags             []string
		tu                string
		options           []string
	}
	key := func(in input) string {
		tc := &toolchain{compiler: in.compiler, version: in.version, flags: in.flags}
		return tc.cacheKey(in.tu, in.options)
	}
	ref := input{"/usr/bin/cc", "cc 12", []string{"-O2", "-fPIC"}, "int f(void) { return 1; }", []string{"-DX=1"}}
	mutations := map[string]func(*input){
		"compiler":       func(in *input) { in.compiler = "/usr/bin/gcc" },
		"version":        func(in *input) { in.version = "cc 13" },
		"flags":          func(in *input) { in.flags = []string{"-O3", "-fPIC"} },
		"flag split":     func(in *input) { in.flags = []string{"-O2 -fPIC"} },
		"source":         func(in *input) { in.tu = "int f(void) { return 2; }" },
		"options":        func(in *input) { in.options = []string{"-DX=2"} },
		"no options":     func(in *input) { in.options = nil },
		"option to flag": func(in *input) { in.flags = append(slices.Clone(in.flags), "-DX=1"); in.options = nil },
	}
	backendtest.DistinctKeys(t, ref, key, mutations)
}
