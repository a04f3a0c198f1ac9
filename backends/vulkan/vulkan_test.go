package vulkan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zyxtt/zyxtt/backends"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// vkDevices opens Vulkan devices with a private pipeline cache each and a
// small staging buffer, so that transfers are chunked.
var vkDevices = backendtest.NewDevices("libvulkan.so.1", load, func(t testing.TB, ids *[]int) ([]driver.Device, error) {
	return OpenDevices(context.Background(), Config{DeviceIDs: ids, CacheDir: t.TempDir(), StagingBytes: 1 << 20})
})

// openAll opens every Vulkan device, or skips naming what is missing.
func openAll(t testing.TB) []*device { return backendtest.As[*device](vkDevices.All(t)) }

var vaddProgram = backendtest.Vadd

// TestStagedTransfers sends every transfer through the staging buffer,
// as on a discrete GPU whose memory the host cannot map.
func TestStagedTransfers(t *testing.T) {
	ctx := context.Background()
	backendtest.EachDevice(t, vkDevices, func(t *testing.T, d *device) {
		d.q.Mu.Lock()
		d.stageAlways = true
		d.q.Mu.Unlock()
		defer func() {
			d.q.Mu.Lock()
			d.stageAlways = false
			d.q.Mu.Unlock()
		}()
		backendtest.RunPoolConformance(t, backends.PoolOf(d.pool))
		x, err := backends.DeviceOf(d).Compile(ctx, vaddProgram(t))
		require.NoError(t, err)
		backendtest.CheckVadd(t, backends.PoolOf(d.pool), x, 3<<18+11) // 3 MiB a buffer: three staging chunks
		require.NoError(t, x.Release())
	})
}

// TestConformance runs the shared suites on every device (as OpenCL's
// does) with Vulkan's own DeviceInfo checks and bad-input cases.
func TestConformance(t *testing.T) {
	backendtest.RunDeviceSuite(t, backendtest.DeviceSuite{
		Devices: vkDevices, Program: vaddProgram,
		Info: func(t *testing.T, dev driver.Device) {
			info := dev.Info()
			require.Equal(t, info.Extra["shader_float64"] == "true", info.Supports(driver.F64).Any())
			require.NotEmpty(t, info.Extra["device_type"])
			require.Contains(t, sonames, info.Extra["library"], "the loader that opened")
			if info.Extra["device_type"] == "cpu" {
				require.Equal(t, driver.KindCPU, info.Kind, "a CPU implementation is labelled cpu")
			}
			if strings.Contains(info.Name, "llvmpipe") {
				require.Equal(t, "cpu", info.Extra["device_type"], "lavapipe reports a CPU device")
			}
		},
		Cases: func(dev driver.Device) []backendtest.BadCase { return badInputCases(dev.(*device)) },
	})
}

func badInputCases(d *device) []backendtest.BadCase {
	spirv := func(edit func(v *driver.SPIRVVariant)) func(t testing.TB, e *backendtest.BadEnv) error {
		return func(t testing.TB, e *backendtest.BadEnv) error {
			p := e.Program(t)
			edit(p.SPIRV())
			return e.Compile(p)
		}
	}
	limits := d.props.Limits.MaxComputeWorkGroupSize
	return []backendtest.BadCase{
		{Name: "invalid SPIR-V", Want: driver.ErrCompile, Run: spirv(func(v *driver.SPIRVVariant) { v.Code = []byte("this is not a SPIR-V module at all") })},
		{Name: "truncated SPIR-V", Want: driver.ErrCompile, Run: spirv(func(v *driver.SPIRVVariant) { v.Code = v.Code[:len(v.Code)-8] })},
		{Name: "local disagrees with the shader", Want: driver.ErrInvalidArgument, Run: spirv(func(v *driver.SPIRVVariant) { v.Local = [3]uint32{128, 1, 1} })},
		{Name: "shader binds more buffers than the params", Want: driver.ErrInvalidArgument, Run: func(t testing.TB, e *backendtest.BadEnv) error {
			p := e.Program(t)
			p.Params = append(p.Params[:2:2], p.Params[3])
			p.Grid = []driver.GwsDim{driver.ConstDim(1)}
			p.Variant(driver.FormatSPIRV).Grid = nil // the manifest's one-axis grid
			return e.Compile(p)
		}},
		{Name: "local size beyond the device", Want: driver.ErrInvalidArgument, Run: func(testing.TB, *backendtest.BadEnv) error {
			return d.checkLocal("big", [3]uint32{limits[0] + 1, 1, 1}, [3]uint32{})
		}},
		{Name: "work group beyond the device", Want: driver.ErrInvalidArgument, Run: func(testing.TB, *backendtest.BadEnv) error {
			return d.checkLocal("big", [3]uint32{limits[0], limits[1], 1}, [3]uint32{})
		}},
	}
}

func TestPipelineCacheOnDisk(t *testing.T) {
	ctx := context.Background()
	if _, err := load(); err != nil {
		t.Skipf("libvulkan.so.1 not found: %v", err)
	}
	dir := t.TempDir()
	devs, err := OpenDevices(ctx, Config{CacheDir: dir, DeviceIDs: &[]int{0}})
	if err != nil {
		t.Skipf("no Vulkan device: %v", err)
	}
	d := devs[0].(*device)
	x, err := backends.DeviceOf(d).Compile(ctx, vaddProgram(t))
	require.NoError(t, err)
	require.NoError(t, x.Release())
	require.NoError(t, d.Close())
	cachePath := d.cacheDir.File(d.cacheName)
	st, err := os.Stat(cachePath)
	require.NoError(t, err, "the pipeline cache is saved")
	require.Positive(t, st.Size())
	require.Equal(t, dir, filepath.Dir(cachePath))

	// A device opened later seeds its cache from the file and still
	// builds working pipelines; a corrupt file is ignored.
	for _, corrupt := range []bool{false, true} {
		if corrupt {
			require.NoError(t, os.WriteFile(cachePath, []byte("garbage"), 0o600))
		}
		devs, err = OpenDevices(ctx, Config{CacheDir: dir, DeviceIDs: &[]int{0}})
		require.NoError(t, err)
		d2 := devs[0].(*device)
		x, err = backends.DeviceOf(d2).Compile(ctx, vaddProgram(t))
		require.NoError(t, err)
		backendtest.CheckVadd(t, backends.PoolOf(d2.pool), x, 4096)
		require.NoError(t, x.Release())
		require.NoError(t, d2.Close())
	}
}

// Close destroys the pipelines of executables not yet released (children
// of the device), and a Compile racing Close either builds on the open
// device or reports ErrClosed, never uses the destroyed one.
func TestCloseWithExecutables(t *testing.T) {
	if _, err := load(); err != nil {
		t.Skipf("libvulkan.so.1 not found: %v", err)
	}
	ctx := context.Background()
	for range 3 {
		devs, err := OpenDevices(ctx, Config{DeviceIDs: &[]int{0}, CacheDir: "off"})
		if err != nil {
			t.Skipf("no Vulkan device: %v", err)
		}
		d := devs[0].(*device)
		live, err := backends.DeviceOf(d).Compile(ctx, vaddProgram(t))
		require.NoError(t, err)

		var wg sync.WaitGroup
		results := make([]error, 8)
		exes := make([]*backends.Executable, len(results))
		for i := range results {
			wg.Go(func() { exes[i], results[i] = backends.DeviceOf(d).Compile(ctx, vaddProgram(t)) })
		}
		require.NoError(t, d.Close())
		wg.Wait()
		for i, err := range results {
			if err != nil {
				require.ErrorIs(t, err, driver.ErrClosed)
				continue
			}
			require.NoError(t, exes[i].Release())
		}
		require.Nil(t, d.execs, "Close took the executables")
		require.NoError(t, live.Release())
	}
}

// TestScalarBytes: a push constant holds a scalar in its dtype's own
// encoding (Constant.NativeBytes, whose encodings backends' tests pin:
// bf16 rounding and NaNs among them), except the fp8 types, which SPIR-V
// lacks.
func TestScalarBytes(t *testing.T) {
	for _, c := range []driver.Constant{driver.IntConst(driver.I64, -1), driver.FloatConst(driver.F64, 0.5), driver.FloatConst(driver.BF16, 1+3.0/256)} {
		got, err := scalarBytes(c)
		require.NoError(t, err, c.String())
		require.Equal(t, c.NativeBytes(), got, c.String())
	}
	_, err := scalarBytes(driver.Constant{DType: driver.F8E5M2})
	require.ErrorContains(t, err, "scalars have no SPIR-V type")
}
