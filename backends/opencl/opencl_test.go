package opencl

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/zyxtt/zyxtt/backends"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// clDevices opens OpenCL devices with a private binary cache each.
var clDevices = backendtest.NewDevices("libOpenCL.so.1", load, func(t testing.TB, ids *[]int) ([]driver.Device, error) {
	return OpenDevices(context.Background(), Config{DeviceIDs: ids, CacheDir: t.TempDir()})
})

// openAll opens every OpenCL device, or skips naming what is missing.
func openAll(t testing.TB) []*device { return backendtest.As[*device](clDevices.All(t)) }

var vaddProgram = backendtest.Vadd

// TestConformance runs the shared suites on every device (registration,
// DeviceInfo, the pool, the examples at sizes that leave partial work
// groups, timed launches, the executable contract, bad input) with
// OpenCL's own DeviceInfo checks and bad-input cases.
func TestConformance(t *testing.T) {
	backendtest.RunDeviceSuite(t, backendtest.DeviceSuite{
		Devices: clDevices,
		Program: vaddProgram,
		Info: func(t *testing.T, dev driver.Device) {
			info := dev.Info()
			require.Positive(t, info.Cores)
			require.Equal(t, info.Extra["fp64"] == "true", info.Supports(driver.F64).Any())
			require.NotEmpty(t, info.Extra["driver_version"])
			require.Contains(t, sonames, info.Extra["library"], "the loader that opened")
			if strings.Contains(info.Extra["platform"], "Portable Computing Language") {
				require.Equal(t, driver.KindCPU, info.Kind, "PoCL is a CPU implementation")
			}
		},
		Cases: func(dev driver.Device) []backendtest.BadCase { return badInputCases(dev.(*device)) },
	})
}

func badInputCases(d *device) []backendtest.BadCase {
	local := func(l [3]uint32) func(t testing.TB, e *backendtest.BadEnv) error {
		return func(t testing.TB, e *backendtest.BadEnv) error {
			p := e.Program(t)
			p.Source(driver.FormatOpenCL).Local = l
			return e.Compile(p)
		}
	}
	return []backendtest.BadCase{
		{Name: "build failure", Want: driver.ErrCompile, Run: func(t testing.TB, e *backendtest.BadEnv) error {
			p := e.Program(t)
			p.Source(driver.FormatOpenCL).Source = "__kernel void vadd(__global float *x) { x[0] = undefined_name; }"
			err := e.Compile(p)
			var be *driver.Error
			require.ErrorAs(t, err, &be)
			require.Contains(t, be.Native, "undefined_name", "the build log is returned")
			require.Contains(t, be.Native, "CL_BUILD_PROGRAM_FAILURE", "the status is named")
			require.Equal(t, "clBuildProgram", be.Op)
			return err
		}},
		{Name: "param count differs from kernel", Want: driver.ErrInvalidArgument, Run: func(t testing.TB, e *backendtest.BadEnv) error {
			p := e.Program(t)
			p.Params = append(p.Params, driver.Param{Name: "extra", Kind: driver.Variable, DType: driver.U32})
			return e.Compile(p)
		}},
		{Name: "local size beyond the device", Want: driver.ErrInvalidArgument, Run: local([3]uint32{uint32(min(d.lim.maxItems[0]+1, math.MaxUint32)), 1, 1})},
		{Name: "work group beyond the device", Want: driver.ErrInvalidArgument, Run: local([3]uint32{uint32(d.lim.maxItems[0]), uint32(d.lim.maxItems[1]), 1})},
	}
}

func TestBinaryCache(t *testing.T) {
	ctx := context.Background()
	d := clDevices.One(0)(t).(*device) // with a cache directory of its own
	defer d.Close()
	p := vaddProgram(t)
	x, err := backends.DeviceOf(d).Compile(ctx, p)
	require.NoError(t, err)
	require.NoError(t, x.Release())
	path := d.cacheDir.File(d.cacheKey(p.Source(driver.FormatOpenCL).Source, "") + ".bin")
	st, err := os.Stat(path)
	require.NoError(t, err, "the binary is cached")
	require.Positive(t, st.Size())

	// A second build loads the binary and runs correctly.
	x, err = backends.DeviceOf(d).Compile(ctx, p)
	require.NoError(t, err)
	backendtest.CheckVadd(t, backends.PoolOf(d.pool), x, 4096)
	require.NoError(t, x.Release())

	// A corrupt cache entry falls back to the source.
	require.NoError(t, os.WriteFile(path, []byte("not a binary"), 0o644))
	x, err = backends.DeviceOf(d).Compile(ctx, p)
	require.NoError(t, err)
	backendtest.CheckVadd(t, backends.PoolOf(d.pool), x, 4096)
	require.NoError(t, x.Release())

	// The key depends on the source, the options and the device.
	require.NotEqual(t, d.cacheKey("a", ""), d.cacheKey("b", ""))
	require.NotEqual(t, d.cacheKey("a", ""), d.cacheKey("a", "-cl-fast-relaxed-math"))
	other := &device{cacheTag: d.cacheTag + "v2"}
	require.NotEqual(t, d.cacheKey("a", ""), other.cacheKey("a", ""))
}

// A platform filter that keeps none leaves no device (device_ids [] is
// in TestConformance).
func TestPlatformFilter(t *testing.T) {
	if _, err := load(); err != nil {
		t.Skipf("libOpenCL.so.1 not found: %v", err)
	}
	_, err := OpenDevices(context.Background(), Config{PlatformIDs: &[]int{99}, CacheDir: "off"})
	require.ErrorIs(t, err, driver.ErrNoDevice)
}

// TestScalarBytes: a scalar reaches the kernel in its dtype's own encoding
// (Constant.NativeBytes, whose encodings backends' tests pin), except the
// fp8 types, which OpenCL C lacks.
func TestScalarBytes(t *testing.T) {
	for _, c := range []driver.Constant{driver.UintConst(driver.U32, 7), driver.FloatConst(driver.F16, -2), driver.FloatConst(driver.BF16, 1)} {
		got, err := scalarBytes(c)
		require.NoError(t, err, c.String())
		require.Equal(t, c.NativeBytes(), got, c.String())
	}
	for _, dt := range []driver.DType{driver.F8E4M3, driver.F8E5M2} {
		_, err := scalarBytes(driver.Constant{DType: dt})
		require.ErrorContains(t, err, "scalars have no OpenCL C type")
	}
}
