package backendtest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// BenchElems is the vadd size of the bandwidth benchmark: 256M f32
// elements on GPUs, 16M on CPU implementations, or ZYX_BENCH_ELEMS.
func BenchElems(info *driver.DeviceInfo) int64 {
	if s := os.Getenv("ZYX_BENCH_ELEMS"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
			return n
		}
	}
	if info.Kind == driver.KindCPU {
		return 16 << 20
	}
	return 256 << 20
}

// CopyReference is a device-side copy that vadd's bandwidth is measured
// against in the same run.
type CopyReference struct {
	// Label names the copy in the log line ("vkCmdCopyBuffer").
	Label string
	// Metric prefixes the bandwidth metric: Metric+"_GB/s".
	Metric string
	// Ratio names the metric vadd_GB/s ÷ this copy's GB/s.
	Ratio string
	// Time copies bytes from src to dst once and returns the time the
	// device measured.
	Time func(ctx context.Context, src, dst driver.BufferID, bytes int64) (time.Duration, error)
}

// VaddBandwidth measures, on dev, the vadd program prog's bandwidth (12 bytes
// moved per element, BenchElems elements) and each reference copy's
// bandwidth (4·N bytes, counted read plus write), all timed by the device,
// one of each per iteration after one warm-up of each. It reports
// vadd_GB/s, then each reference's GB/s and ratio, then elems.
func VaddBandwidth(b *testing.B, devDriver driver.Device, prog *driver.Program, refs ...CopyReference) {
	dev := backends.DeviceOf(devDriver)
	b.Helper()
	ctx := context.Background()
	info := dev.Info()
	pool := dev.Pool()
	n := BenchElems(info)
	bytes := 4 * n
	x, err := dev.Compile(ctx, prog)
	require.NoError(b, err)
	defer x.Release()
	var ids [3]driver.BufferID
	for i := range ids {
		ids[i], err = pool.Alloc(ctx, bytes)
		require.NoError(b, err)
		defer pool.Release(ids[i])
	}
	args := vaddArgs(ids, n)
	// Warm up every path once.
	_, err = x.LaunchTimed(ctx, args)
	require.NoError(b, err)
	for _, r := range refs {
		_, err = r.Time(ctx, ids[0], ids[2], bytes)
		require.NoError(b, err)
	}

	var vadd time.Duration
	copies := make([]time.Duration, len(refs))
	b.ResetTimer()
	for range b.N {
		t, err := x.LaunchTimed(ctx, args)
		require.NoError(b, err)
		vadd += t
		for i, r := range refs {
			t, err := r.Time(ctx, ids[0], ids[2], bytes)
			require.NoError(b, err)
			copies[i] += t
		}
	}
	vaddGBs := float64(3*bytes) * float64(b.N) / vadd.Seconds() / 1e9
	b.ReportMetric(vaddGBs, "vadd_GB/s")
	var line strings.Builder
	fmt.Fprintf(&line, "%s (%s, %s): n=%d vadd %.1f GB/s", dev.Name(), info.Name, info.Kind, n, vaddGBs)
	for i, r := range refs {
		gbs := float64(2*bytes) * float64(b.N) / copies[i].Seconds() / 1e9
		b.ReportMetric(gbs, r.Metric+"_GB/s")
		b.ReportMetric(vaddGBs/gbs, r.Ratio)
		sep := "; "
		if i == 0 {
			sep = ", "
		}
		fmt.Fprintf(&line, "%s%s %.1f GB/s, ratio %.3f", sep, r.Label, gbs, vaddGBs/gbs)
	}
	b.ReportMetric(float64(n), "elems")
	b.Log(line.String())
}

// BenchTransfers times b.N rounds of an upload and a download of n bytes
// and a memcpy of as many, each timed on its own, and reports each as
// GB/s and the upload and download as ratios to memcpy (above 1 means
// faster than memcpy). The caller has warmed all three up.
func BenchTransfers(b *testing.B, n int64, upload, download func() error, memcpy func()) {
	var up, down, mem time.Duration
	b.SetBytes(n)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := upload(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := download(); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		memcpy()
		t3 := time.Now()
		up += t1.Sub(t0)
		down += t2.Sub(t1)
		mem += t3.Sub(t2)
	}
	b.StopTimer()
	gbs := func(d time.Duration) float64 { return float64(n) * float64(b.N) / d.Seconds() / 1e9 }
	b.ReportMetric(gbs(up), "GB/s-upload")
	b.ReportMetric(gbs(down), "GB/s-download")
	b.ReportMetric(gbs(mem), "GB/s-memcpy")
	b.ReportMetric(float64(mem)/float64(up), "upload/memcpy")
	b.ReportMetric(float64(mem)/float64(down), "download/memcpy")
}
