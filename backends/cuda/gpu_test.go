package cuda

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/bundle"
	"github.com/zyxtt/zyxtt/hostpool"
)

// gpus returns the CUDA devices, skipping the test where there are none.
func gpus(t testing.TB) []*Device {
	t.Helper()
	if _, err := loadDriver(); err != nil {
		t.Skip("libcuda.so.1 not found: " + err.Error())
	}
	st, err := backends.Backend(context.Background(), Name)
	require.NoError(t, err)
	if st.Err != nil {
		t.Skip("no CUDA device: " + st.Err.Error())
	}
	out := make([]*Device, len(st.Devices))
	for i, d := range st.Devices {
		out[i] = d.Driver().(*Device)
	}
	return out
}

func gpu(t testing.TB) *Device { return gpus(t)[0] }

// mustCompile compiles p on d, failing t on an error; the caller releases
// the executable.
func mustCompile(t testing.TB, d *Device, p *driver.Program) *backends.Executable {
	t.Helper()
	exe, err := backends.DeviceOf(d).Compile(context.Background(), p)
	require.NoError(t, err)
	return exe
}

func u32(v uint32) driver.LaunchArg {
	return driver.VarArg(driver.UintConst(driver.U32, uint64(v)))
}

func vaddProgram() *driver.Program {
	return &driver.Program{
		Name:   "vadd",
		Params: []driver.Param{backendtest.Global("x", driver.F32), backendtest.Global("y", driver.F32), backendtest.GlobalMut("z", driver.F32), backendtest.Variable("n", driver.U32)},
		Grid:   []driver.GwsDim{driver.BinaryDim(driver.GwsCeilDiv, driver.ParamDim(3), driver.ConstDim(256))},
		Variants: []driver.Variant{{Format: driver.FormatCUDA, Code: &driver.SourceVariant{Entry: "vadd", Local: [3]uint32{256}, Source: `
extern "C" __global__ void vadd(const float *x, const float *y, float *z, unsigned int n) {
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) z[i] = x[i] + y[i];
}`}}},
	}
}

func TestBackendStatus(t *testing.T) {
	st, err := backends.Backend(context.Background(), Name)
	require.NoError(t, err)
	if _, lerr := loadDriver(); lerr != nil {
		// No driver: the backend has no devices and says why.
		require.Empty(t, st.Devices)
		require.Error(t, st.Err)
		require.Contains(t, st.Err.Error(), "libcuda.so.1")
		t.Skip("libcuda.so.1 not found: " + lerr.Error())
	}
	require.NoError(t, st.Err)
	require.NotEmpty(t, st.Devices)
	for i, d := range st.Devices {
		require.Equal(t, fmt.Sprintf("cuda:%d", i), d.Name())
		require.Equal(t, "cuda", d.Backend())
		found, err := backends.Lookup(context.Background(), d.Name())
		require.NoError(t, err)
		require.Same(t, d, found)
	}
}

func TestDeviceInfo(t *testing.T) {
	for _, d := range gpus(t) {
		info := d.Info()
		t.Logf("%s: %s cc %d.%d, %d SMs, %.1f GiB (%s free), warp %d, shared %d, grid %v, block %v, %.1f TFLOP/s fp32, driver %s",
			d.Name(), info.Name, info.ComputeCapability[0], info.ComputeCapability[1], info.Cores,
			float64(info.Memory)/(1<<30), info.Extra["memory_free"], info.WarpSize, info.LocalMemSize,
			info.MaxGlobalWorkDims, info.MaxLocalWorkDims, float64(info.Compute)/1e12, info.Extra["driver_version"])
		require.NotEmpty(t, info.Name)
		require.Equal(t, driver.KindGPU, info.Kind)
		require.Positive(t, info.ComputeCapability[0])
		require.Positive(t, info.Cores)
		require.Positive(t, info.Memory)
		require.Equal(t, uint16(32), info.WarpSize)
		require.GreaterOrEqual(t, info.MaxLocalThreads, uint32(512))
		require.Len(t, info.MaxGlobalWorkDims, 3)
		require.Positive(t, info.LocalMemSize)
		require.Equal(t, info.ComputeCapability[0] >= 7, info.TensorCores)
		require.Positive(t, info.Compute)
		free := d.Pool().FreeBytes()
		require.Positive(t, free)
		require.LessOrEqual(t, uint64(free), info.Memory)
	}
}

func TestPoolRoundTrip(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	host, err := backends.HostPool()
	require.NoError(t, err)
	for _, n := range []int{1, 4097, directLimit + 3, 3*defaultStagingChunk + 5} {
		for _, where := range []string{"go", "hostpool"} {
			t.Run(fmt.Sprintf("%s/%d", where, n), func(t *testing.T) {
				var src, dst []byte
				if where == "go" {
					src, dst = make([]byte, n), make([]byte, n)
				} else {
					a, err := host.Alloc(ctx, int64(n))
					require.NoError(t, err)
					defer host.Release(a)
					b, err := host.Alloc(ctx, int64(n))
					require.NoError(t, err)
					defer host.Release(b)
					src, _ = host.Bytes(a)
					dst, _ = host.Bytes(b)
				}
				rng := rand.New(rand.NewPCG(uint64(n), 7))
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				id, err := d.Pool().Alloc(ctx, int64(n)+16)
				require.NoError(t, err)
				defer d.Pool().Release(id)
				require.NoError(t, d.Pool().Write(ctx, id, 16, src))
				clear(dst)
				require.NoError(t, d.Pool().Read(ctx, id, 16, dst))
				require.True(t, string(src) == string(dst), "bytes differ after the round trip")
			})
		}
	}
}

func TestPoolErrors(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	p := d.Pool()
	_, err := p.Alloc(ctx, 0)
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	_, err = p.Alloc(ctx, 1<<50)
	require.ErrorIs(t, err, driver.ErrOutOfMemory)
	t.Logf("out of memory: %v", err)

	id, err := p.Alloc(ctx, 64)
	require.NoError(t, err)
	require.ErrorIs(t, p.Write(ctx, id, 60, make([]byte, 8)), driver.ErrInvalidArgument)
	require.ErrorIs(t, p.Read(ctx, id, -1, make([]byte, 1)), driver.ErrInvalidArgument)
	require.NoError(t, p.Retain(id))
	require.NoError(t, p.Release(id))
	require.NoError(t, p.Release(id))
	for name, f := range map[string]func() error{
		"release": func() error { return p.Release(id) },
		"retain":  func() error { return p.Retain(id) },
		"write":   func() error { return p.Write(ctx, id, 0, make([]byte, 4)) },
		"read":    func() error { return p.Read(ctx, id, 0, make([]byte, 4)) },
		"size":    func() error { _, err := p.Size(id); return err },
	} {
		require.ErrorIs(t, f(), driver.ErrUnknownBuffer, "freed buffer: %s", name)
	}
	// A buffer of the host pool is not one of this pool's.
	host, err := backends.HostPool()
	require.NoError(t, err)
	hid, err := host.Alloc(ctx, 64)
	require.NoError(t, err)
	defer host.Release(hid)
	require.ErrorIs(t, p.Write(ctx, hid, 0, make([]byte, 4)), driver.ErrUnknownBuffer)
	exe := mustCompile(t, d, vaddProgram())
	defer exe.Release()
	err = exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(hid), driver.BufArg(hid), driver.BufArg(hid), u32(4)})
	require.ErrorIs(t, err, driver.ErrUnknownBuffer)
	// Wrong arg kinds and counts.
	require.ErrorIs(t, exe.Launch(ctx, nil), driver.ErrInvalidArgument)
	good := backendtest.Upload(t, backends.PoolOf(d.Pool()), make([]byte, 16))
	require.ErrorIs(t, exe.Launch(ctx, []driver.LaunchArg{u32(1), driver.BufArg(good), driver.BufArg(good), u32(4)}), driver.ErrInvalidArgument)
}

func TestVaddAndTimedLaunch(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	const n = 1<<20 + 3
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i)*0.5, float32(-i)+0.25
	}
	bx, by := backendtest.Upload(t, backends.PoolOf(d.Pool()), backendtest.F32Bytes(x)), backendtest.Upload(t, backends.PoolOf(d.Pool()), backendtest.F32Bytes(y))
	bz := backendtest.Upload(t, backends.PoolOf(d.Pool()), make([]byte, 4*n))
	exe := mustCompile(t, d, vaddProgram())
	defer exe.Release()
	args := []driver.LaunchArg{driver.BufArg(bx), driver.BufArg(by), driver.BufArg(bz), u32(n)}
	require.NoError(t, exe.Launch(ctx, args))
	z := backendtest.BytesF32(backendtest.Download(t, backends.PoolOf(d.Pool()), bz))
	for i := range z {
		if z[i] != x[i]+y[i] {
			t.Fatalf("z[%d] = %g, want %g", i, z[i], x[i]+y[i])
		}
	}
	dur, err := exe.LaunchTimed(ctx, args)
	require.NoError(t, err)
	require.Positive(t, dur)
	t.Logf("vadd of %d elements: %v on the device", n, dur)

	// A zero grid runs nothing and is not an error.
	require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(bx), driver.BufArg(by), driver.BufArg(bz), u32(0)}))
	// A canceled context stops before the launch.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, exe.Launch(cctx, args), context.Canceled)
	require.NoError(t, exe.Release())
	require.ErrorIs(t, exe.Launch(ctx, args), driver.ErrClosed)
}

func TestConcurrentLaunches(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	exe := mustCompile(t, d, vaddProgram())
	defer exe.Release()
	const n = 4096
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(g*n + i)
			}
			bx := backendtest.Upload(t, backends.PoolOf(d.Pool()), backendtest.F32Bytes(x))
			bz := backendtest.Upload(t, backends.PoolOf(d.Pool()), make([]byte, 4*n))
			for range 20 {
				if err := exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(bx), driver.BufArg(bx), driver.BufArg(bz), u32(n)}); err != nil {
					errs <- err
					return
				}
			}
			z := backendtest.BytesF32(backendtest.Download(t, backends.PoolOf(d.Pool()), bz))
			for i := range z {
				if z[i] != 2*x[i] {
					errs <- fmt.Errorf("goroutine %d: z[%d] = %g, want %g", g, i, z[i], 2*x[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestCompileErrors(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	p := vaddProgram()
	p.Source(driver.FormatCUDA).Source = `extern "C" __global__ void vadd(const float *x, const float *y, float *z, unsigned int n) { z[0] = undefined_name; }`
	_, err := backends.DeviceOf(d).Compile(ctx, p)
	require.ErrorIs(t, err, driver.ErrCompile)
	require.Contains(t, err.Error(), "undefined_name", "the error carries NVRTC's log")
	t.Logf("compile error: %v", err)

	p = vaddProgram()
	p.Source(driver.FormatCUDA).Entry = "not_there"
	_, err = backends.DeviceOf(d).Compile(ctx, p)
	require.ErrorIs(t, err, driver.ErrCompile)
	t.Logf("missing entry: %v", err)

	p = vaddProgram()
	p.Source(driver.FormatCUDA).Local = [3]uint32{2048, 1, 1}
	_, err = backends.DeviceOf(d).Compile(ctx, p)
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	t.Logf("block too large: %v", err)

	p = vaddProgram()
	p.RemoveVariant(driver.FormatCUDA)
	_, err = backends.DeviceOf(d).Compile(ctx, p)
	require.ErrorIs(t, err, driver.ErrNoVariant)
}

func TestCppEntryName(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	p := &driver.Program{
		Name:   "scale",
		Params: []driver.Param{backendtest.GlobalMut("x", driver.F32), backendtest.Variable("s", driver.F32), backendtest.Variable("n", driver.U32)},
		Grid:   []driver.GwsDim{driver.ConstDim(1)},
		Variants: []driver.Variant{{Format: driver.FormatCUDA, Code: &driver.SourceVariant{Entry: "scale<float>", Local: [3]uint32{64}, Source: `
template <typename T> __global__ void scale(T *x, float s, unsigned int n) {
	unsigned int i = threadIdx.x;
	if (i < n) x[i] = x[i] * s;
}
template __global__ void scale<float>(float *, float, unsigned int);`}}},
	}
	exe := mustCompile(t, d, p)
	defer exe.Release()
	bx := backendtest.Upload(t, backends.PoolOf(d.Pool()), backendtest.F32Bytes([]float32{1, 2, 3, 4}))
	require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(bx), driver.VarArg(driver.FloatConst(driver.F32, 2.5)), u32(3)}))
	require.Equal(t, []float32{2.5, 5, 7.5, 4}, backendtest.BytesF32(backendtest.Download(t, backends.PoolOf(d.Pool()), bx)))
}

func TestModuleCache(t *testing.T) {
	d0 := gpu(t)
	dir := t.TempDir()
	d, err := openDevice(d0.drv, d0.ordinal, Config{CacheDir: dir, StagingChunk: defaultStagingChunk})
	require.NoError(t, err)
	defer d.Close()
	ctx := context.Background()
	p := vaddProgram()
	p.Source(driver.FormatCUDA).Source += "\n// cache test\n"
	before := compiles.Load()
	e1 := mustCompile(t, d, p)
	require.NoError(t, e1.Release())
	require.Equal(t, before+1, compiles.Load())
	files, _ := filepath.Glob(filepath.Join(dir, "*.mod"))
	require.Len(t, files, 1)
	e2 := mustCompile(t, d, p)
	require.Equal(t, before+1, compiles.Load(), "the second build comes from the cache")
	bx := backendtest.Upload(t, backends.PoolOf(d.Pool()), backendtest.F32Bytes([]float32{1, 2}))
	require.NoError(t, e2.Launch(ctx, []driver.LaunchArg{driver.BufArg(bx), driver.BufArg(bx), driver.BufArg(bx), u32(2)}))
	require.Equal(t, []float32{2, 4}, backendtest.BytesF32(backendtest.Download(t, backends.PoolOf(d.Pool()), bx)))
	require.NoError(t, e2.Release())
	// A damaged cache file is rebuilt, not loaded.
	require.NoError(t, os.WriteFile(files[0], []byte("junk"), 0o644))
	e3 := mustCompile(t, d, p)
	require.NoError(t, e3.Release())
	require.Equal(t, before+2, compiles.Load())
}

func TestBackendsCopy(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	host, err := backends.HostPool()
	require.NoError(t, err)
	const n = 5<<20 + 11
	hid, err := host.Alloc(ctx, n)
	require.NoError(t, err)
	defer host.Release(hid)
	src, _ := host.Bytes(hid)
	for i := range src {
		src[i] = byte(i*13 + 1)
	}
	a := backendtest.Upload(t, backends.PoolOf(d.Pool()), make([]byte, n))
	b := backendtest.Upload(t, backends.PoolOf(d.Pool()), make([]byte, n))
	require.NoError(t, backends.Copy(ctx, backends.PoolOf(d.Pool()), a, 0, host, hid, 0, n))
	require.NoError(t, backends.Copy(ctx, backends.PoolOf(d.Pool()), b, 0, backends.PoolOf(d.Pool()), a, 0, n), "device to device on one GPU")
	back, err := host.Alloc(ctx, n)
	require.NoError(t, err)
	defer host.Release(back)
	require.NoError(t, backends.Copy(ctx, host, back, 0, backends.PoolOf(d.Pool()), b, 0, n))
	got, _ := host.Bytes(back)
	require.True(t, string(src) == string(got))
}

// TestPeerCopy needs two GPUs (nvidia-h200-x2).
func TestPeerCopy(t *testing.T) {
	ds := gpus(t)
	if len(ds) < 2 {
		t.Skipf("needs 2 CUDA devices, have %d", len(ds))
	}
	ctx := context.Background()
	d0, d1 := ds[0], ds[1]
	ok, err := d1.peerReady(d0)
	require.NoError(t, err)
	t.Logf("peer access %s <- %s: %v", d1.Name(), d0.Name(), ok)
	const n = 64<<20 + 5
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i * 31)
	}
	a := backendtest.Upload(t, backends.PoolOf(d0.Pool()), data)
	b := backendtest.Upload(t, backends.PoolOf(d1.Pool()), make([]byte, n))
	err = d1.pool.CopyFrom(ctx, b, 0, d0.Pool(), a, 0, n)
	if ok {
		require.NoError(t, err)
		require.True(t, string(data) == string(backendtest.Download(t, backends.PoolOf(d1.Pool()), b)))
	} else {
		require.ErrorIs(t, err, driver.ErrUnsupported)
	}
	// backends.Copy works either way (peer or host staging).
	c := backendtest.Upload(t, backends.PoolOf(d0.Pool()), make([]byte, n))
	require.NoError(t, backends.Copy(ctx, backends.PoolOf(d0.Pool()), c, 0, backends.PoolOf(d1.Pool()), b, 0, n))
	if ok {
		require.True(t, string(data) == string(backendtest.Download(t, backends.PoolOf(d0.Pool()), c)))
	}
	// A buffer of one GPU is unknown to the other.
	require.ErrorIs(t, d1.Pool().Write(ctx, a, 0, []byte{1}), driver.ErrUnknownBuffer)
}

func TestFaultLosesDevice(t *testing.T) {
	runFaultHelper(t, "fault", "FAULT-HELPER-OK")
}

// gemmCase is one GEMM checked against a float64 reference.
type gemmCase struct {
	name           string
	dt             driver.DType
	compute        string
	m, n, k, batch int
	transA, transB bool
	alpha, beta    float64
	tol            float64 // relative to sqrt(k)·max|c|
}

func encodeElems(dt driver.DType, v []float64) []byte {
	sz := dt.Size()
	out := make([]byte, sz*len(v))
	for i, x := range v {
		switch dt {
		case driver.F32:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(x)))
		case driver.F64:
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
		case driver.BF16:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(math.Float32bits(float32(x))>>16)) // exact for the test values
		case driver.F16:
			binary.LittleEndian.PutUint16(out[2*i:], f16Bits(float32(x)))
		}
	}
	return out
}

// f16Bits converts a value exactly representable in f16.
func f16Bits(f float32) uint16 {
	if f == 0 {
		return 0
	}
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	mant := uint16((b >> 13) & 0x3ff)
	return sign | uint16(exp)<<10 | mant
}

func decodeElems(t *testing.T, dt driver.DType, b []byte) []float64 {
	out, err := bundle.ToFloat64(dt, b)
	require.NoError(t, err)
	return out
}

func TestGEMM(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	for _, tc := range []gemmCase{
		{name: "f32", dt: driver.F32, m: 129, n: 67, k: 95, batch: 1, alpha: 1, tol: 1e-6},
		{name: "f32 trans alpha beta", dt: driver.F32, m: 64, n: 33, k: 70, batch: 1, transA: true, transB: true, alpha: 0.5, beta: 2, tol: 1e-6},
		{name: "f32 batched", dt: driver.F32, m: 31, n: 17, k: 40, batch: 5, transB: true, alpha: 1, tol: 1e-6},
		{name: "tf32", dt: driver.F32, compute: "tf32", m: 256, n: 128, k: 256, batch: 1, alpha: 1, tol: 1e-6},
		{name: "bf16", dt: driver.BF16, m: 128, n: 96, k: 64, batch: 1, alpha: 1, tol: 1e-2},
		{name: "bf16 batched trans", dt: driver.BF16, m: 48, n: 40, k: 32, batch: 3, transA: true, alpha: 1, tol: 1e-2},
		{name: "f16", dt: driver.F16, m: 64, n: 64, k: 64, batch: 1, alpha: 1, tol: 1e-2},
		{name: "f64", dt: driver.F64, m: 50, n: 60, k: 70, batch: 2, transA: true, alpha: 2, beta: -1, tol: 1e-12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := driver.GEMMVariant{DType: tc.dt, Compute: tc.compute, TransA: tc.transA, TransB: tc.transB,
				M: driver.ConstDim(uint64(tc.m)), N: driver.ConstDim(uint64(tc.n)), K: driver.ConstDim(uint64(tc.k)),
				Alpha: tc.alpha, Beta: tc.beta}
			if tc.batch > 1 {
				g.Batch = dimPtr(uint64(tc.batch))
			}
			p := gemmProgram(g)
			s, err := evalGEMM(p.GEMM(), nil)
			require.NoError(t, err)
			na, nb, nc, _ := s.need()
			rng := rand.New(rand.NewPCG(3, uint64(tc.m)))
			// Quarter-integers in [-2, 2): exact in every dtype, so only the
			// accumulation rounds.
			fill := func(n int64) []float64 {
				out := make([]float64, n)
				for i := range out {
					out[i] = float64(rng.IntN(16)-8) / 4
				}
				return out
			}
			a, b, c0 := fill(na), fill(nb), fill(nc)
			want := append([]float64(nil), c0...)
			rowMajorGemm(s, a, b, want, tc.alpha, tc.beta)
			ba, bb := backendtest.Upload(t, backends.PoolOf(d.Pool()), encodeElems(tc.dt, a)), backendtest.Upload(t, backends.PoolOf(d.Pool()), encodeElems(tc.dt, b))
			bc := backendtest.Upload(t, backends.PoolOf(d.Pool()), encodeElems(tc.dt, c0))
			exe := mustCompile(t, d, p)
			defer exe.Release()
			require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(ba), driver.BufArg(bb), driver.BufArg(bc)}))
			got := decodeElems(t, tc.dt, backendtest.Download(t, backends.PoolOf(d.Pool()), bc))
			scale := 0.0
			for _, w := range want {
				scale = max(scale, math.Abs(w))
			}
			lim := tc.tol * math.Sqrt(float64(tc.k)) * max(scale, 1)
			for i := range want {
				if math.Abs(got[i]-want[i]) > lim {
					t.Fatalf("c[%d] = %g, want %g (limit %g)", i, got[i], want[i], lim)
				}
			}
			dur, err := exe.LaunchTimed(ctx, []driver.LaunchArg{driver.BufArg(ba), driver.BufArg(bb), driver.BufArg(bc)})
			require.NoError(t, err)
			require.Positive(t, dur)
		})
	}
}

func TestGEMMBadArgs(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	p := gemmProgram(driver.GEMMVariant{DType: driver.F32, M: driver.ConstDim(64), N: driver.ConstDim(64), K: driver.ConstDim(64), Alpha: 1})
	exe := mustCompile(t, d, p)
	defer exe.Release()
	small := backendtest.Upload(t, backends.PoolOf(d.Pool()), make([]byte, 4*64*63))
	full := backendtest.Upload(t, backends.PoolOf(d.Pool()), make([]byte, 4*64*64))
	err := exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(small), driver.BufArg(full), driver.BufArg(full)})
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	t.Logf("short operand: %v", err)
	bad := gemmProgram(driver.GEMMVariant{DType: driver.I32, M: driver.ConstDim(4), N: driver.ConstDim(4), K: driver.ConstDim(4)})
	_, err = backends.DeviceOf(d).Compile(ctx, bad)
	require.ErrorIs(t, err, driver.ErrUnsupported)
}

// TestExamples runs every example bundle's CUDA variants (the kernel and,
// where the bundle has one, the GEMM through cuBLAS) against the bundle's
// float64 reference.
func TestExamples(t *testing.T) {
	d := gpu(t)
	for _, name := range []string{"vadd", "unary", "matmul"} {
		b := backendtest.LoadExample(t, name)
		if !slices.Contains(b.Formats(), driver.FormatCUDA) {
			t.Errorf("%s has no cuda variant", name)
			continue
		}
		prog, err := b.Program(b.Defaults())
		require.NoError(t, err)
		// Each variant on its own: the other one is dropped before compiling.
		variants := map[string]func(*driver.Program){}
		if prog.Source(driver.FormatCUDA) != nil {
			variants["kernel"] = func(p *driver.Program) { p.RemoveVariant(driver.FormatGEMM) }
		}
		if prog.GEMM() != nil {
			variants["gemm"] = func(p *driver.Program) { p.RemoveVariant(driver.FormatCUDA) }
		}
		for vname, edit := range variants {
			t.Run(name+"/"+vname, func(t *testing.T) {
				cmp := backendtest.RunExample(t, d, backendtest.Example{Name: name, Edit: edit})
				t.Logf("%s/%s: %d elements, max abs err %.3g, max rel err %.3g", name, vname, cmp.Elems, cmp.MaxAbs, cmp.MaxRel)
			})
		}
	}
}

func TestNoDriverNamesLibcuda(t *testing.T) {
	_, err := loadDriver()
	if err == nil {
		t.Skip("libcuda.so.1 is present here")
	}
	require.True(t, strings.Contains(err.Error(), "libcuda.so.1"), err.Error())
}

// A dedicated host-pool segment is unmapped when its buffer is freed; its
// pinned registration must go with it before the driver is used again,
// or memory later mapped at those addresses would be copied wrongly and
// device allocations fail (CUDA_ERROR_ALREADY_MAPPED, seen on the H200).
func TestPinnedSegmentsFollowTheArena(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	host, err := backends.HostPool()
	require.NoError(t, err)
	const n = 200 << 20 // above the arena's chunk: a segment of its own
	for round := range 3 {
		hid, err := host.Alloc(ctx, n)
		require.NoError(t, err)
		mem, _ := host.Bytes(hid)
		for i := range mem {
			mem[i] = byte(i + round)
		}
		dev := backendtest.Upload(t, backends.PoolOf(d.Pool()), mem)
		name, _, ok := host.Driver().(*hostpool.Pool).Arena().Locate(mem)
		require.True(t, ok)
		pins.Lock()
		_, pinned := pins.segs[name]
		pins.Unlock()
		require.True(t, pinned, "the segment is pinned on first use")
		require.NoError(t, host.Release(hid)) // unmaps the segment

		// Ordinary memory, possibly at the same addresses, round-trips.
		plain := make([]byte, n)
		require.NoError(t, d.Pool().Read(ctx, dev, 0, plain))
		for i := 0; i < n; i += 4093 {
			if plain[i] != byte(i+round) {
				t.Fatalf("round %d: byte %d = %d, want %d", round, i, plain[i], byte(i+round))
			}
		}
		pins.Lock()
		_, still := pins.segs[name]
		pins.Unlock()
		require.False(t, still, "the unmapped segment was unregistered")
		other, err := d.Pool().Alloc(ctx, n)
		require.NoError(t, err)
		require.NoError(t, d.Pool().Write(ctx, other, 0, plain))
		require.NoError(t, d.Pool().Release(other))
	}
}
