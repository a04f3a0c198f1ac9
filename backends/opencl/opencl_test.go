package opencl

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
)

// openAll opens every OpenCL device with a private binary cache, or skips
// naming what is missing.
func openAll(t testing.TB) []*device {
	t.Helper()
	if _, err := load(); err != nil {
		t.Skipf("libOpenCL.so.1 not found: %v", err)
	}
	devs, err := OpenDevices(context.Background(), Config{CacheDir: t.TempDir()})
	if err != nil {
		t.Skipf("no OpenCL device: %v", err)
	}
	out := make([]*device, len(devs))
	for i, d := range devs {
		out[i] = d.(*device)
	}
	t.Cleanup(func() {
		for _, d := range out {
			require.NoError(t, d.Close())
		}
	})
	return out
}

// The example programs, from their bundles under examples/.
func vaddProgram(t testing.TB) *backends.Program {
	return backendtest.ExampleProgram(t, "vadd")
}

func TestDevicesDescribeThemselves(t *testing.T) {
	for _, d := range openAll(t) {
		t.Run(d.name, func(t *testing.T) {
			info := d.Info()
			require.NotEmpty(t, info.Name)
			require.Contains(t, []backends.DeviceKind{backends.KindCPU, backends.KindGPU, backends.KindAccelerator, backends.KindOther}, info.Kind)
			require.Positive(t, info.Cores)
			require.Positive(t, info.Memory)
			require.Positive(t, info.MaxLocalThreads)
			require.Len(t, info.MaxLocalWorkDims, 3)
			require.Len(t, info.MaxGlobalWorkDims, 3)
			require.True(t, info.Supports(backends.F32).Has(backends.CapAdd))
			require.Equal(t, info.Extra["fp64"] == "true", info.Supports(backends.F64).Any())
			require.NotEmpty(t, info.Extra["driver_version"])
			if strings.Contains(info.Extra["platform"], "Portable Computing Language") {
				require.Equal(t, backends.KindCPU, info.Kind, "PoCL is a CPU implementation")
			}
			require.True(t, strings.HasPrefix(d.Name(), "opencl:"))
			require.Equal(t, Name, d.Backend())
		})
	}
}

func TestRegisteredBackendOpens(t *testing.T) {
	if _, err := load(); err != nil {
		t.Skipf("libOpenCL.so.1 not found: %v", err)
	}
	st, err := backends.Backend(context.Background(), Name)
	require.NoError(t, err)
	if st.Err != nil {
		t.Skipf("no OpenCL device: %v", st.Err)
	}
	require.NotEmpty(t, st.Devices)
	require.Equal(t, "opencl:0", st.Devices[0].Name())
}

func TestPoolTransfers(t *testing.T) {
	for _, d := range openAll(t) {
		t.Run(d.name, func(t *testing.T) { backendtest.RunPoolConformance(t, d.pool) })
	}
}

// TestExamples runs vadd, unary and matmul from their bundles against the
// float64 references, at sizes that leave partial work groups.
func TestExamples(t *testing.T) {
	for _, d := range openAll(t) {
		t.Run(d.name, func(t *testing.T) { backendtest.RunExamples(t, d, backendtest.PartialGroupExamples()...) })
	}
}

func TestLaunchTimed(t *testing.T) {
	for _, d := range openAll(t) {
		backendtest.CheckLaunchTimed(t, d, vaddProgram(t))
	}
}

// openOne opens device i with a private binary cache, for a check that
// closes it.
func openOne(i int) backendtest.Opener {
	return func(t testing.TB) backends.Device {
		devs, err := OpenDevices(context.Background(), Config{DeviceIDs: &[]int{i}, CacheDir: t.TempDir()})
		if err != nil {
			t.Skipf("no OpenCL device %d: %v", i, err)
		}
		return devs[0]
	}
}

func TestExecutableConformance(t *testing.T) {
	for i, d := range openAll(t) {
		t.Run(d.name, func(t *testing.T) {
			backendtest.RunExecutableConformance(t, d, openOne(i), vaddProgram(t), backendtest.VaddArgs(1000)...)
		})
	}
}

// TestBadInput feeds each kind of bad input, the shared cases and
// OpenCL's own, and proves the device still runs vadd afterwards.
func TestBadInput(t *testing.T) {
	for _, d := range openAll(t) {
		t.Run(d.name, func(t *testing.T) {
			backendtest.RunBadInputConformance(t, d, backendtest.BadInput{
				Program: vaddProgram,
				Args:    backendtest.VaddArgs(1000),
				Check: func(t testing.TB, dev backends.Device, exe backends.Executable) {
					backendtest.CheckVadd(t, dev.Pool(), exe, 777)
				},
				BuildsCode: true,
				GridLimits: true,
				Cases:      badInputCases(d),
			})
		})
	}
}

func badInputCases(d *device) []backendtest.BadCase {
	local := func(l [3]uint32) func(t testing.TB, e *backendtest.BadEnv) error {
		return func(t testing.TB, e *backendtest.BadEnv) error {
			p := e.Program(t)
			p.Source(backends.FormatOpenCL).Local = l
			return e.Compile(p)
		}
	}
	return []backendtest.BadCase{
		{Name: "build failure", Want: backends.ErrCompile, Run: func(t testing.TB, e *backendtest.BadEnv) error {
			p := e.Program(t)
			p.Source(backends.FormatOpenCL).Source = "__kernel void vadd(__global float *x) { x[0] = undefined_name; }"
			err := e.Compile(p)
			var be *backends.Error
			require.ErrorAs(t, err, &be)
			require.Contains(t, be.Native, "undefined_name", "the build log is returned")
			require.Contains(t, be.Native, "CL_BUILD_PROGRAM_FAILURE", "the status is named")
			require.Equal(t, "clBuildProgram", be.Op)
			return err
		}},
		{Name: "param count differs from kernel", Want: backends.ErrInvalidArgument, Run: func(t testing.TB, e *backendtest.BadEnv) error {
			p := e.Program(t)
			p.Params = append(p.Params, backends.Param{Name: "extra", Kind: backends.Variable, DType: backends.U32})
			return e.Compile(p)
		}},
		{Name: "local size beyond the device", Want: backends.ErrInvalidArgument, Run: local([3]uint32{uint32(min(d.lim.maxItems[0]+1, math.MaxUint32)), 1, 1})},
		{Name: "work group beyond the device", Want: backends.ErrInvalidArgument, Run: local([3]uint32{uint32(d.lim.maxItems[0]), uint32(d.lim.maxItems[1]), 1})},
	}
}

func TestBinaryCache(t *testing.T) {
	ctx := context.Background()
	if _, err := load(); err != nil {
		t.Skipf("libOpenCL.so.1 not found: %v", err)
	}
	dir := t.TempDir()
	devs, err := OpenDevices(ctx, Config{CacheDir: dir, DeviceIDs: &[]int{0}})
	if err != nil {
		t.Skipf("no OpenCL device: %v", err)
	}
	d := devs[0].(*device)
	defer d.Close()
	p := vaddProgram(t)
	x, err := d.Compile(ctx, p)
	require.NoError(t, err)
	require.NoError(t, x.Release())
	path := filepath.Join(dir, d.cacheKey(p.Source(backends.FormatOpenCL).Source, "")+".bin")
	st, err := os.Stat(path)
	require.NoError(t, err, "the binary is cached")
	require.Positive(t, st.Size())

	// A second build loads the binary and runs correctly.
	x, err = d.Compile(ctx, p)
	require.NoError(t, err)
	backendtest.CheckVadd(t, d.pool, x, 4096)
	require.NoError(t, x.Release())

	// A corrupt cache entry falls back to the source.
	require.NoError(t, os.WriteFile(path, []byte("not a binary"), 0o644))
	x, err = d.Compile(ctx, p)
	require.NoError(t, err)
	backendtest.CheckVadd(t, d.pool, x, 4096)
	require.NoError(t, x.Release())

	// The key depends on the source, the options and the device.
	require.NotEqual(t, d.cacheKey("a", ""), d.cacheKey("b", ""))
	require.NotEqual(t, d.cacheKey("a", ""), d.cacheKey("a", "-cl-fast-relaxed-math"))
	other := &device{cacheTag: d.cacheTag + "v2"}
	require.NotEqual(t, d.cacheKey("a", ""), other.cacheKey("a", ""))
}

func TestConfigFilters(t *testing.T) {
	if _, err := load(); err != nil {
		t.Skipf("libOpenCL.so.1 not found: %v", err)
	}
	_, err := OpenDevices(context.Background(), Config{DeviceIDs: &[]int{}, CacheDir: "off"})
	require.ErrorIs(t, err, backends.ErrNoDevice)
	_, err = OpenDevices(context.Background(), Config{PlatformIDs: &[]int{99}, CacheDir: "off"})
	require.ErrorIs(t, err, backends.ErrNoDevice)
}

func TestClosedDevice(t *testing.T) {
	if _, err := load(); err != nil {
		t.Skipf("libOpenCL.so.1 not found: %v", err)
	}
	devs, err := OpenDevices(context.Background(), Config{DeviceIDs: &[]int{0}, CacheDir: "off"})
	if err != nil {
		t.Skipf("no OpenCL device: %v", err)
	}
	d := devs[0]
	require.NoError(t, d.Close())
	require.NoError(t, d.Close())
	_, err = d.Pool().Alloc(context.Background(), 16)
	require.ErrorIs(t, err, backends.ErrClosed)
	_, err = d.Compile(context.Background(), vaddProgram(t))
	require.ErrorIs(t, err, backends.ErrClosed)
}

func TestScalarBytes(t *testing.T) {
	cases := []struct {
		c    backends.Constant
		want []byte
	}{
		{backends.UintConst(backends.U32, 7), []byte{7, 0, 0, 0}},
		{backends.IntConst(backends.I64, -1), []byte{255, 255, 255, 255, 255, 255, 255, 255}},
		{backends.FloatConst(backends.F32, 1), []byte{0, 0, 0x80, 0x3f}},
		{backends.FloatConst(backends.F16, 1), []byte{0, 0x3c}},
		{backends.FloatConst(backends.F16, -2), []byte{0, 0xc0}},
		{backends.FloatConst(backends.BF16, 1), []byte{0x80, 0x3f}},
		{backends.UintConst(backends.U8, 9), []byte{9}},
	}
	for _, c := range cases {
		got, err := scalarBytes(c.c)
		require.NoError(t, err, c.c.String())
		require.Equal(t, c.want, got, c.c.String())
	}
	_, err := scalarBytes(backends.Constant{DType: backends.F8E4M3})
	require.ErrorContains(t, err, "scalars have no OpenCL C type")
}
