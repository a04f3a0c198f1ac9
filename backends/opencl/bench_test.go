package opencl

import (
	"context"
	"testing"
	"time"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
)

// BenchmarkVaddBandwidth measures, in one run on each device, vadd's
// bandwidth (12 bytes moved per element) and the device's own
// buffer-to-buffer copy bandwidth (clEnqueueCopyBuffer of the same 4·N
// bytes, counted read plus write), both timed by event profiling, and
// reports their ratio.
func BenchmarkVaddBandwidth(b *testing.B) {
	backendtest.EachDevice(b, clDevices, func(b *testing.B, d *device) {
		backendtest.VaddBandwidth(b, d, vaddProgram(b), backendtest.CopyReference{
			Label: "copy", Metric: "copy", Ratio: "ratio",
			Time: func(ctx context.Context, src, dst backends.BufferID, bytes int64) (time.Duration, error) {
				ns, err := d.pool.copyBuffer(ctx, dst, 0, src, 0, bytes, true)
				return time.Duration(ns), err
			},
		})
	})
}
