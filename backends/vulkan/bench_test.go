package vulkan

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
)

// benchElems is the vadd size: 256M f32 elements on GPUs, 16M on CPU
// implementations (lavapipe), or ZYX_BENCH_ELEMS.
func benchElems(info *backends.DeviceInfo) int64 {
	if s := os.Getenv("ZYX_BENCH_ELEMS"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
			return n
		}
	}
	if info.Kind == backends.KindCPU {
		return 16 << 20
	}
	return 256 << 20
}

// BenchmarkVaddBandwidth measures, in one run on each device, vadd's
// bandwidth (12 bytes moved per element) and the device's own
// buffer-to-buffer copy bandwidth (vkCmdCopyBuffer of the same 4·N
// bytes, counted read plus write), all timed by timestamp queries, and
// reports their ratio. A compute-shader copy of the same bytes
// (testdata/copy.comp) is a second reference, "shader_ratio": drivers
// may run vkCmdCopyBuffer on a copy engine slower than the shader cores.
func BenchmarkVaddBandwidth(b *testing.B) {
	ctx := context.Background()
	for _, d := range openAll(b) {
		b.Run(d.name, func(b *testing.B) {
			n := benchElems(d.info)
			bytes := 4 * n
			x, err := d.Compile(ctx, vaddProgram(b))
			require.NoError(b, err)
			defer x.Release()
			var ids [3]backends.BufferID
			for i := range ids {
				ids[i], err = d.pool.Alloc(ctx, bytes)
				require.NoError(b, err)
				defer d.pool.Release(ids[i])
			}
			args := []backends.LaunchArg{backends.BufArg(ids[0]), backends.BufArg(ids[1]), backends.BufArg(ids[2]), backends.VarArg(backends.UintConst(backends.U32, uint64(n)))}
			// Warm up both paths once.
			_, err = x.LaunchTimed(ctx, args)
			require.NoError(b, err)
			_, err = d.pool.copyBuffer(ctx, ids[2], 0, ids[0], 0, bytes, true)
			require.NoError(b, err)

			cpProg := copyProgram(b)
			cx, err := d.Compile(ctx, cpProg)
			require.NoError(b, err)
			defer cx.Release()
			cpArgs := []backends.LaunchArg{backends.BufArg(ids[0]), backends.BufArg(ids[2]), backends.VarArg(backends.UintConst(backends.U32, uint64(n)))}
			_, err = cx.LaunchTimed(ctx, cpArgs)
			require.NoError(b, err)

			var vadd, cp, shader time.Duration
			b.ResetTimer()
			for range b.N {
				t, err := x.LaunchTimed(ctx, args)
				require.NoError(b, err)
				vadd += t
				ns, err := d.pool.copyBuffer(ctx, ids[2], 0, ids[0], 0, bytes, true)
				require.NoError(b, err)
				cp += ns
				t, err = cx.LaunchTimed(ctx, cpArgs)
				require.NoError(b, err)
				shader += t
			}
			vaddGBs := float64(3*bytes) * float64(b.N) / vadd.Seconds() / 1e9
			copyGBs := float64(2*bytes) * float64(b.N) / cp.Seconds() / 1e9
			b.ReportMetric(vaddGBs, "vadd_GB/s")
			b.ReportMetric(copyGBs, "copy_GB/s")
			shaderGBs := float64(2*bytes) * float64(b.N) / shader.Seconds() / 1e9
			b.ReportMetric(vaddGBs/copyGBs, "ratio")
			b.ReportMetric(shaderGBs, "shader_copy_GB/s")
			b.ReportMetric(vaddGBs/shaderGBs, "shader_ratio")
			b.ReportMetric(float64(n), "elems")
			b.Logf("%s (%s, %s): n=%d vadd %.1f GB/s, vkCmdCopyBuffer %.1f GB/s, ratio %.3f; shader copy %.1f GB/s, ratio %.3f",
				d.name, d.info.Name, d.info.Kind, n, vaddGBs, copyGBs, vaddGBs/copyGBs, shaderGBs, vaddGBs/shaderGBs)
		})
	}
}

// copyProgram is the compute-shader copy the benchmark compares with.
func copyProgram(t testing.TB) *backends.Program {
	code, err := os.ReadFile(filepath.Join("testdata", "copy.spv"))
	require.NoError(t, err)
	return &backends.Program{
		Name: "copy",
		Params: []backends.Param{
			{Name: "src", Kind: backends.Global, DType: backends.F32},
			{Name: "dst", Kind: backends.GlobalMut, DType: backends.F32},
			{Name: "n", Kind: backends.Variable, DType: backends.U32},
		},
		Grid:   []backends.GwsDim{gridDim(t, "min(ceil_div(n, 256), 65535)", "src", "dst", "n")},
		Vulkan: &backends.SPIRVVariant{Code: code, Entry: "main", Local: [3]uint32{256, 1, 1}},
	}
}
