package cuda

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// These tests need no GPU and run everywhere.

// openFirst opens through the package's dlopen (RTLD_GLOBAL, which tests
// replace) and internal/dl's Loader, named for what it loads; how the
// failures are joined and named is dl's, tested there.
func TestOpenFirstUsesDlopen(t *testing.T) {
	saved := dlopen
	t.Cleanup(func() { dlopen = saved })
	var tried []string
	dlopen = func(p string) (uintptr, error) {
		tried = append(tried, p)
		if p == "second" {
			return 42, nil
		}
		return 0, errors.New(p + ": no")
	}
	lib, err := openFirst("thing", []string{"first", "second", "third"})
	require.NoError(t, err)
	require.Equal(t, library{handle: 42, path: "second"}, lib)
	require.Equal(t, []string{"first", "second"}, tried, "the first that opens wins")

	_, err = openFirst("thing", []string{"first", "", "third", "first"})
	require.EqualError(t, err, "thing not loaded: first: no; third: no", "every failure, once each")
	_, err = openFirst("thing", nil)
	require.ErrorContains(t, err, "no library names")
}

func TestMissingDriverIsAReason(t *testing.T) {
	_, err := openDriver([]string{"libcuda-zyx-absent.so.1"})
	require.Error(t, err)
	require.Contains(t, err.Error(), "libcuda-zyx-absent.so.1")
	require.Contains(t, err.Error(), "CUDA driver not loaded")
}

// A library that loads but is not the driver (libc here) is named with
// every entry point it lacks, and the next candidate is tried.
func TestLibraryWithoutEntryPointsIsAReason(t *testing.T) {
	_, err := openDriver([]string{"libc.so.6", "libcuda-zyx-absent.so.1"})
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, "CUDA driver not loaded")
	require.Contains(t, msg, "libc.so.6: lacks entry points: symbol cuInit:")
	require.Contains(t, msg, "symbol cuEventElapsedTime_v2:", "the versioned name is tried")
	require.Contains(t, msg, "symbol cuEventElapsedTime:", "and then the legacy one")
	require.Contains(t, msg, "libcuda-zyx-absent.so.1", "the next candidate is tried too")
}

func TestToolkitCandidatesOrder(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"libnvrtc.so.11.2", "libnvrtc.so.12", "libnvrtc.so.13.0.48", "libnvrtc.so", "libnvrtc-builtins.so.12", "libother.so.1"} {
		require.NoError(t, writeFile(dir+"/"+f))
	}
	got := toolkitCandidates("/explicit/libnvrtc.so", "libnvrtc", []string{"libnvrtc.so.13"}, []string{dir, dir + "/missing"})
	require.Equal(t, []string{
		"/explicit/libnvrtc.so",
		"libnvrtc.so.13",
		dir + "/libnvrtc.so.13.0.48",
		dir + "/libnvrtc.so.12",
		dir + "/libnvrtc.so.11.2",
		dir + "/libnvrtc.so",
	}, got)
}

func TestVersionLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		less bool
	}{
		{"libx.so", "libx.so.1", true},
		{"libx.so.11.2", "libx.so.12", true},
		{"libx.so.12", "libx.so.12.1", true},
		{"libx.so.13", "libx.so.12.9", false},
		{"libx.so.12", "libx.so.12", false},
		{"libx.so.1a", "libx.so.1", true}, // a part that is not a number ends the version
	} {
		require.Equal(t, tc.less, versionLess(tc.a, tc.b), "%s < %s", tc.a, tc.b)
	}
}

func TestPackParams(t *testing.T) {
	vals := [][]byte{
		{1, 2, 3, 4, 5, 6, 7, 8},
		driver.UintConst(driver.U32, 77).Bytes(),
		driver.FloatConst(driver.F32, 1.5).Bytes(),
		driver.IntConst(driver.I8, -2).Bytes(),
	}
	mem := make([]byte, paramBlockSize(len(vals)))
	for i := range mem {
		mem[i] = 0xee // stale bytes from an earlier launch must not leak
	}
	base := uintptr(unsafe.Pointer(&mem[0]))
	require.NoError(t, packParams(mem, base, vals))
	for i, v := range vals {
		ptr := uintptr(le64(mem[8*i:]))
		off := int(ptr - base)
		require.Equal(t, 8*len(vals)+paramSlot*i, off, "param %d points at its slot", i)
		slot := mem[off : off+paramSlot]
		require.Equal(t, v, slot[:len(v)])
		require.Equal(t, make([]byte, paramSlot-len(v)), slot[len(v):], "slot %d is zero past the value", i)
	}
	require.Equal(t, uint32(77), uint32(le64(mem[8*4+8:])))
	require.Equal(t, float32(1.5), math.Float32frombits(uint32(le64(mem[8*4+16:]))))

	require.ErrorContains(t, packParams(mem[:10], base, vals), "too small")
	require.ErrorContains(t, packParams(make([]byte, 64), base, [][]byte{make([]byte, 9)}), "at most 8")
	require.NoError(t, packParams(nil, 0, nil))
}

func le64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func TestCStrings(t *testing.T) {
	b, ptrs, arr, err := cStrings("abc", "", "--gpu-architecture=sm_90")
	require.NoError(t, err)
	defer b.free()
	require.Len(t, ptrs, 3)
	require.Equal(t, b.addr(0), arr)
	for i, want := range []string{"abc", "", "--gpu-architecture=sm_90"} {
		require.Equal(t, uint64(ptrs[i]), le64(b.mem[8*i:]))
		off := int(ptrs[i] - b.addr(0))
		require.Equal(t, want, cString(b.mem[off:]))
	}
}

func TestPickTarget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		want      int
		supported []int
		cubin     bool
		out       target
		err       string
	}{
		{"exact arch", 90, []int{75, 80, 86, 89, 90}, true, target{"sm_90", true}, ""},
		{"no list", 90, nil, true, target{"sm_90", true}, ""},
		{"no cubin api", 90, []int{90}, false, target{"compute_90", false}, ""},
		{"newer device", 120, []int{75, 80, 90}, true, target{"compute_90", false}, ""},
		{"too old", 50, []int{75, 80}, true, target{}, "none of the archs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pickTarget(tc.want, tc.supported, tc.cubin)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.out, got)
		})
	}
}

func TestCompileOptions(t *testing.T) {
	tg := target{"sm_90", true}
	require.Equal(t, []string{"--gpu-architecture=sm_90"}, compileOptions(nil, tg))
	require.Equal(t, []string{"-O3", "--gpu-architecture=sm_90"}, compileOptions([]string{"-O3"}, tg))
	require.Equal(t, []string{"-arch=sm_80"}, compileOptions([]string{"-arch=sm_80"}, tg), "a variant's own arch wins")
}

func TestModuleKeyCoversEveryInput(t *testing.T) {
	base := func() (string, string, []string, target, string, int32) {
		return "src", "k", []string{"-O3"}, target{"sm_90", true}, "13.0", 13000
	}
	k0 := moduleKey(base())
	seen := map[string]string{k0: "base"}
	variants := map[string]func() string{
		"source":  func() string { _, e, o, tg, nv, dv := base(); return moduleKey("src2", e, o, tg, nv, dv) },
		"entry":   func() string { s, _, o, tg, nv, dv := base(); return moduleKey(s, "k2", o, tg, nv, dv) },
		"options": func() string { s, e, _, tg, nv, dv := base(); return moduleKey(s, e, []string{"-O2"}, tg, nv, dv) },
		"split": func() string {
			s, e, _, tg, nv, dv := base()
			return moduleKey(s, e, []string{"-O", "3"}, tg, nv, dv)
		},
		"arch":   func() string { s, e, o, _, nv, dv := base(); return moduleKey(s, e, o, target{"sm_80", true}, nv, dv) },
		"kind":   func() string { s, e, o, _, nv, dv := base(); return moduleKey(s, e, o, target{"sm_90", false}, nv, dv) },
		"nvrtc":  func() string { s, e, o, tg, _, dv := base(); return moduleKey(s, e, o, tg, "12.8", dv) },
		"driver": func() string { s, e, o, tg, nv, _ := base(); return moduleKey(s, e, o, tg, nv, 12080) },
	}
	for name, f := range variants {
		k := f()
		require.Len(t, k, 64)
		prev, dup := seen[k]
		require.False(t, dup, "%s collides with %s", name, prev)
		seen[k] = name
	}
	require.Equal(t, k0, moduleKey(base()), "the key is deterministic")
}

func TestModuleFileRoundTrip(t *testing.T) {
	for _, c := range []*compiled{
		{kind: "cubin", symbol: "vadd", image: []byte{0x7f, 'E', 'L', 'F', 0, 1, '\n', 2}},
		{kind: "ptx", symbol: "_Z5scaleIfEvPT_j", image: []byte(".version 8.0\n.target sm_90\n\x00")},
	} {
		got, err := decodeModule(encodeModule(c))
		require.NoError(t, err)
		require.Equal(t, c.kind, got.kind)
		require.Equal(t, c.symbol, got.symbol)
		require.Equal(t, c.image, got.image)
	}
	for name, data := range map[string]string{
		"empty":        "",
		"magic":        "ZYXCUMOD0\ncubin\nk\nxx",
		"kind":         moduleMagic + "sass\nk\nxx",
		"no symbol":    moduleMagic + "cubin\n\nxx",
		"no image":     moduleMagic + "cubin\nk\n",
		"unterminated": moduleMagic + "ptx\nk\n.version",
		"truncated":    moduleMagic + "cubin",
	} {
		_, err := decodeModule([]byte(data))
		require.Error(t, err, name)
	}
}

func FuzzDecodeModule(f *testing.F) {
	f.Add([]byte(moduleMagic + "cubin\nvadd\n\x7fELF"))
	f.Add([]byte(moduleMagic + "ptx\nk\n.version 8.0\x00"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeModule(data)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to the same bytes.
		require.Equal(t, data, encodeModule(c))
		require.NotEmpty(t, c.image)
		require.NotContains(t, c.symbol, "\n")
	})
}

func TestBlockChecks(t *testing.T) {
	d := &Device{name: "cuda:test", limits: limits{maxThreads: 1024, maxBlock: [3]int32{1024, 1024, 64}, maxGrid: [3]int32{math.MaxInt32, 65535, 65535}}}
	require.Equal(t, [3]uint32{256, 1, 1}, blockDims([3]uint32{256, 0, 0}))
	require.NoError(t, d.checkBlock([3]uint32{1024, 1, 1}, 1024))
	require.NoError(t, d.checkBlock([3]uint32{16, 16, 4}, 1024))
	for _, tc := range []struct {
		block [3]uint32
		max   int32
	}{
		{[3]uint32{2048, 1, 1}, 1024},
		{[3]uint32{1024, 2, 1}, 1024},
		{[3]uint32{1, 1, 65}, 1024},
		{[3]uint32{512, 1, 1}, 384}, // the kernel's own register-bound limit
	} {
		err := d.checkBlock(tc.block, tc.max)
		require.ErrorIs(t, err, driver.ErrInvalidArgument, "%v", tc.block)
	}

	// The grid's limits are the user API's check (backends, Executable):
	// the device reports them as MaxGlobalWorkDims.
}

func TestStickyResults(t *testing.T) {
	require.True(t, cudaErrorIllegalAddress.sticky())
	require.True(t, cudaErrorLaunchFailed.sticky())
	require.False(t, cudaErrorOutOfMemory.sticky())
	require.False(t, cudaErrorInvalidValue.sticky())
	require.ErrorIs(t, cudaErrorIllegalAddress.sentinel(), driver.ErrDeviceLost)
	require.ErrorIs(t, cudaErrorOutOfMemory.sentinel(), driver.ErrOutOfMemory)
	require.ErrorIs(t, cudaErrorLaunchOutOfResources.sentinel(), driver.ErrInvalidArgument)
}

// colMajorGemm runs a gemmCall the way cuBLAS defines it: column-major
// operands, op() by the flags, batched by strides.
func colMajorGemm(c gemmCall, a, b, out []float64, alpha, beta float64) {
	at := func(m []float64, base, ld int64, trans bool, i, j int64) float64 {
		if trans {
			return m[base+j+i*ld] // op(X)[i][j] = X[j][i], column-major X
		}
		return m[base+i+j*ld]
	}
	for p := int64(0); p < c.batch; p++ {
		for j := int64(0); j < c.n; j++ {
			for i := int64(0); i < c.m; i++ {
				var s float64
				for l := int64(0); l < c.k; l++ {
					s += at(a, p*c.strideA, c.lda, c.transA == cublasOpT, i, l) * at(b, p*c.strideB, c.ldb, c.transB == cublasOpT, l, j)
				}
				idx := p*c.strideC + i + j*c.ldc
				out[idx] = alpha*s + beta*out[idx]
			}
		}
	}
}

// rowMajorGemm is the program's definition: row-major, op() on the stored
// matrices, batched.
func rowMajorGemm(s gemmShape, a, b, out []float64, alpha, beta float64) {
	for p := int64(0); p < s.batch; p++ {
		for i := int64(0); i < s.m; i++ {
			for j := int64(0); j < s.n; j++ {
				var sum float64
				for l := int64(0); l < s.k; l++ {
					ai, bi := p*s.strideA+i*s.lda+l, p*s.strideB+l*s.ldb+j
					if s.transA {
						ai = p*s.strideA + l*s.lda + i
					}
					if s.transB {
						bi = p*s.strideB + j*s.ldb + l
					}
					av, bv := a[ai], b[bi]
					sum += av * bv
				}
				idx := p*s.strideC + i*s.ldc + j
				out[idx] = alpha*sum + beta*out[idx]
			}
		}
	}
}

func gemmProgram(g driver.GEMMVariant) *driver.Program {
	g.A, g.B, g.C = 0, 1, 2
	return &driver.Program{
		Name:     "gemm",
		Params:   []driver.Param{backendtest.Global("a", g.DType), backendtest.Global("b", g.DType), backendtest.GlobalMut("c", g.DType)},
		Variants: []driver.Variant{{Format: driver.FormatGEMM, Code: &g}},
	}
}

func dimPtr(v uint64) *driver.GwsDim { d := driver.ConstDim(v); return &d }

// The row-major to column-major mapping is checked by running both
// definitions on the host: the cuBLAS call the backend makes must compute
// exactly what the program asks for.
func TestGEMMColumnMajorMapping(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    driver.GEMMVariant
	}{
		{"plain", driver.GEMMVariant{M: driver.ConstDim(3), N: driver.ConstDim(5), K: driver.ConstDim(4)}},
		{"trans a", driver.GEMMVariant{TransA: true, M: driver.ConstDim(3), N: driver.ConstDim(5), K: driver.ConstDim(4)}},
		{"trans b", driver.GEMMVariant{TransB: true, M: driver.ConstDim(3), N: driver.ConstDim(5), K: driver.ConstDim(4)}},
		{"both", driver.GEMMVariant{TransA: true, TransB: true, M: driver.ConstDim(6), N: driver.ConstDim(2), K: driver.ConstDim(7)}},
		{"padded lds", driver.GEMMVariant{M: driver.ConstDim(3), N: driver.ConstDim(5), K: driver.ConstDim(4),
			LdA: dimPtr(6), LdB: dimPtr(9), LdC: dimPtr(7)}},
		{"batched", driver.GEMMVariant{M: driver.ConstDim(3), N: driver.ConstDim(2), K: driver.ConstDim(4), Batch: dimPtr(3)}},
		{"batched strided trans", driver.GEMMVariant{TransA: true, M: driver.ConstDim(2), N: driver.ConstDim(3), K: driver.ConstDim(5),
			Batch: dimPtr(2), StrideA: dimPtr(13), StrideB: dimPtr(17), StrideC: dimPtr(8)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.g.DType = driver.F32
			tc.g.Alpha, tc.g.Beta = 1.5, 0.5
			p := gemmProgram(tc.g)
			s, err := evalGEMM(p.GEMM(), nil)
			require.NoError(t, err)
			na, nb, nc, ok := s.need()
			require.True(t, ok)
			rng := rand.New(rand.NewPCG(1, 2))
			fill := func(n int64) []float64 {
				out := make([]float64, n)
				for i := range out {
					out[i] = float64(rng.IntN(9) - 4)
				}
				return out
			}
			a, b, c0 := fill(na), fill(nb), fill(nc)
			want := append([]float64(nil), c0...)
			rowMajorGemm(s, a, b, want, tc.g.Alpha, tc.g.Beta)
			got := append([]float64(nil), c0...)
			call := s.columnMajor(p.GEMM())
			require.Equal(t, 1, call.first, "cuBLAS's first operand is the program's B")
			require.Equal(t, 0, call.second)
			ops := map[int][]float64{0: a, 1: b}
			colMajorGemm(call, ops[call.first], ops[call.second], got, tc.g.Alpha, tc.g.Beta)
			require.Equal(t, want, got)
		})
	}
}

func TestEvalGEMMRejects(t *testing.T) {
	base := driver.GEMMVariant{DType: driver.F32, M: driver.ConstDim(4), N: driver.ConstDim(4), K: driver.ConstDim(4)}
	for name, mut := range map[string]func(g *driver.GEMMVariant){
		"lda too small": func(g *driver.GEMMVariant) { g.LdA = dimPtr(3) },
		"ldb too small": func(g *driver.GEMMVariant) { g.LdB = dimPtr(2) },
		"ldc too small": func(g *driver.GEMMVariant) { g.LdC = dimPtr(1) },
		"m over int32":  func(g *driver.GEMMVariant) { g.M = driver.ConstDim(1 << 31) },
		"bad expr": func(g *driver.GEMMVariant) {
			g.K = driver.BinaryDim(driver.GwsSub, driver.ConstDim(1), driver.ConstDim(2))
		},
	} {
		g := base
		mut(&g)
		_, err := evalGEMM(&g, nil)
		require.ErrorIs(t, err, driver.ErrInvalidArgument, name)
	}
	s, err := evalGEMM(&driver.GEMMVariant{M: driver.ConstDim(1 << 20), N: driver.ConstDim(1 << 20), K: driver.ConstDim(1 << 20),
		Batch: dimPtr(1 << 30), StrideA: dimPtr(1 << 40)}, nil)
	require.NoError(t, err)
	_, _, _, ok := s.need()
	require.False(t, ok, "extents that overflow int64 are caught")
}

func TestGEMMTypes(t *testing.T) {
	for _, tc := range []struct {
		dt      driver.DType
		compute string
		data    int
		ct      int
		f64     bool
		err     error
	}{
		{driver.F32, "", cudaR32F, cublasCompute32F, false, nil},
		{driver.F32, "tf32", cudaR32F, cublasCompute32FFastTF32, false, nil},
		{driver.BF16, "", cudaR16BF, cublasCompute32F, false, nil},
		{driver.F16, "", cudaR16F, cublasCompute32F, false, nil},
		{driver.F64, "", cudaR64F, cublasCompute64F, true, nil},
		{driver.BF16, "tf32", 0, 0, false, driver.ErrUnsupported},
		{driver.I32, "", 0, 0, false, driver.ErrUnsupported},
		{driver.F32, "fp8", 0, 0, false, driver.ErrUnsupported},
	} {
		dt, ct, f64, err := gemmTypes(&driver.GEMMVariant{DType: tc.dt, Compute: tc.compute})
		if tc.err != nil {
			require.ErrorIs(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, []any{tc.data, tc.ct, tc.f64}, []any{dt, ct, f64}, "%s %q", tc.dt, tc.compute)
	}
}

func TestComputeEstimate(t *testing.T) {
	// An H200: 132 SMs of 128 lanes at 1.98 GHz is about 67 TFLOP/s.
	got := computeEstimate([2]int32{9, 0}, 132, 1980000)
	require.InDelta(t, 66.9e12, float64(got), 0.1e12)
	require.Positive(t, computeEstimate([2]int32{8, 6}, 10, 0), "a missing clock still estimates")
}

func TestBlasStatusNames(t *testing.T) {
	require.Equal(t, "CUBLAS_STATUS_INVALID_VALUE", blasStatusName(7))
	require.True(t, strings.HasPrefix(blasStatusName(99), "cublasStatus 99"))
	require.ErrorIs(t, blasSentinel(3), driver.ErrOutOfMemory)
}

func TestParallelCopy(t *testing.T) {
	for _, n := range []int{0, 1, 5 << 20, 33<<20 + 7} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i * 7)
		}
		dst := make([]byte, n)
		parallelCopy(dst, src)
		require.Equal(t, src, dst)
	}
}

// Every input of an NVRTC build changes the module's key.
func TestModuleKeyCoversInputs(t *testing.T) {
	type input struct {
		src, entry    string
		opts          []string
		t             target
		nvrtc         string
		driverVersion int32
	}
	key := func(in input) string {
		return moduleKey(in.src, in.entry, in.opts, in.t, in.nvrtc, in.driverVersion)
	}
	ref := input{"__global__ void k() {}", "k", []string{"-DX=1", "--gpu-architecture=sm_90"}, target{"sm_90", true}, "12.4", 12040}
	mutations := map[string]func(*input){
		"source":         func(in *input) { in.src = "__global__ void k() { }" },
		"entry":          func(in *input) { in.entry = "k2" },
		"options":        func(in *input) { in.opts = []string{"-DX=2", "--gpu-architecture=sm_90"} },
		"option split":   func(in *input) { in.opts = []string{"-DX=1 --gpu-architecture=sm_90"} },
		"arch":           func(in *input) { in.t.arch = "sm_80" },
		"kind":           func(in *input) { in.t.cubin = false },
		"nvrtc version":  func(in *input) { in.nvrtc = "12.5" },
		"driver version": func(in *input) { in.driverVersion = 12050 },
		"entry in src":   func(in *input) { in.src, in.entry = in.src+"k", "" },
	}
	backendtest.DistinctKeys(t, ref, key, mutations)
}
