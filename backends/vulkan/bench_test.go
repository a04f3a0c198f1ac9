package vulkan

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zyxtt/zyxtt/backends"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// BenchmarkVaddBandwidth measures, in one run on each device, vadd's
// bandwidth (12 bytes moved per element) and the device's own
// buffer-to-buffer copy bandwidth (vkCmdCopyBuffer of the same 4·N
// bytes, counted read plus write), all timed by timestamp queries, and
// reports their ratio. A compute-shader copy of the same bytes
// (testdata/copy.comp) is a second reference, "shader_ratio": drivers
// may run vkCmdCopyBuffer on a copy engine slower than the shader cores.
func BenchmarkVaddBandwidth(b *testing.B) {
	ctx := context.Background()
	backendtest.EachDevice(b, vkDevices, func(b *testing.B, d *device) {
		n := backendtest.BenchElems(d.info)
		cx, err := backends.DeviceOf(d).Compile(ctx, copyProgram(b))
		require.NoError(b, err)
		defer cx.Release()
		backendtest.VaddBandwidth(b, d, vaddProgram(b),
			backendtest.CopyReference{
				Label: "vkCmdCopyBuffer", Metric: "copy", Ratio: "ratio",
				Time: func(ctx context.Context, src, dst driver.BufferID, bytes int64) (time.Duration, error) {
					return d.pool.copyBuffer(ctx, dst, 0, src, 0, bytes, true)
				},
			},
			backendtest.CopyReference{
				Label: "shader copy", Metric: "shader_copy", Ratio: "shader_ratio",
				Time: func(ctx context.Context, src, dst driver.BufferID, _ int64) (time.Duration, error) {
					return cx.LaunchTimed(ctx, []driver.LaunchArg{driver.BufArg(src), driver.BufArg(dst), driver.VarArg(driver.UintConst(driver.U32, uint64(n)))})
				},
			})
	})
}

// copyProgram is the compute-shader copy the benchmark compares with.
func copyProgram(t testing.TB) *driver.Program {
	code, err := os.ReadFile(filepath.Join("testdata", "copy.spv"))
	require.NoError(t, err)
	grid, err := driver.ParseGws("min(ceil_div(n, 256), 65535)", func(name string) (int, bool) { return 2, name == "n" })
	require.NoError(t, err)
	return &driver.Program{
		Name:     "copy",
		Params:   []driver.Param{backendtest.Global("src", driver.F32), backendtest.GlobalMut("dst", driver.F32), backendtest.Variable("n", driver.U32)},
		Grid:     []driver.GwsDim{grid},
		Variants: []driver.Variant{{Format: driver.FormatSPIRV, Code: &driver.SPIRVVariant{Code: code, Entry: "main", Local: [3]uint32{256, 1, 1}}}},
	}
}
