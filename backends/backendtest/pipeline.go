package backendtest

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// BenchmarkPipeline measures, on dev, a chunked upload → vadd → download of
// total bytes per input (x and y in, z = x + y out, f32) in chunks of chunk
// bytes, two ways in the same run:
//
//   - sequential: per chunk a Write of x and of y, a Launch and a Read of z,
//     each waited for, on one set of device buffers;
//   - pipelined: the same steps submitted with events on two sets of device
//     buffers (the worked example of docs/api.md, "Events"), so that chunk
//     i's upload can overlap chunk i−1's kernel and chunk i−2's download;
//     one wait at the end.
//
// prog is dev's vadd (the vadd example's params: x, y, z, n). The host
// arrays lie in the host pool, as a program that wants bandwidth keeps
// them. Each pass's output is checked against host arithmetic before the
// next. It reports seq_GB/s and pipelined_GB/s (3·total bytes moved over
// the pass's wall time) and their ratio pipelined/seq.
func BenchmarkPipeline(b *testing.B, devDriver driver.Device, prog *driver.Program, total, chunk int64) {
	dev := backends.DeviceOf(devDriver)
	b.Helper()
	if chunk <= 0 || chunk%4 != 0 || total <= 0 || total%chunk != 0 {
		b.Fatalf("BenchmarkPipeline: total %d must be a positive multiple of chunk %d, itself a positive multiple of 4", total, chunk)
	}
	ctx := context.Background()
	host, err := backends.HostPool()
	require.NoError(b, err)
	var mem [3][]byte // x, y, z
	for i := range mem {
		id, err := host.Alloc(ctx, total)
		require.NoError(b, err)
		defer func() { require.NoError(b, host.Release(id)) }()
		mem[i], err = host.Bytes(id)
		require.NoError(b, err)
	}
	hostX, hostY, hostZ := mem[0], mem[1], mem[2]
	parallelFill(hostX, func(i int64) float32 { return pipelineX(i) })
	parallelFill(hostY, func(i int64) float32 { return pipelineY(i) })

	exe, err := dev.Compile(ctx, prog)
	require.NoError(b, err)
	defer exe.Release()
	pool := dev.Pool()
	var sets [2][3]driver.BufferID
	for s := range sets {
		for j := range sets[s] {
			id, err := pool.Alloc(ctx, chunk)
			require.NoError(b, err)
			defer func() { require.NoError(b, pool.Release(id)) }()
			sets[s][j] = id
		}
	}
	n := chunk / 4
	args := [2][]driver.LaunchArg{vaddArgs(sets[0], n), vaddArgs(sets[1], n)}
	chunks := total / chunk

	sequential := func() error {
		x, y, z := sets[0][0], sets[0][1], sets[0][2]
		for i := range chunks {
			lo, hi := i*chunk, (i+1)*chunk
			if err := pool.Write(ctx, x, 0, hostX[lo:hi]); err != nil {
				return err
			}
			if err := pool.Write(ctx, y, 0, hostY[lo:hi]); err != nil {
				return err
			}
			if err := exe.Launch(ctx, args[0]); err != nil {
				return err
			}
			if err := pool.Read(ctx, z, 0, hostZ[lo:hi]); err != nil {
				return err
			}
		}
		return nil
	}
	pipelined := func() error {
		var runs, reads [2]driver.Event // the last kernel and read of each set
		for i := range chunks {
			s, lo, hi := i%2, i*chunk, (i+1)*chunk
			// Set s was last used by chunk i−2: its kernel read x and y,
			// its read-back read z.
			upX, err := pool.WriteAsync(ctx, sets[s][0], 0, hostX[lo:hi], runs[s])
			if err != nil {
				return err
			}
			upY, err := pool.WriteAsync(ctx, sets[s][1], 0, hostY[lo:hi], runs[s])
			if err != nil {
				return err
			}
			if runs[s], err = exe.Submit(ctx, args[s], upX, upY, reads[s]); err != nil {
				return err
			}
			if reads[s], err = pool.ReadAsync(ctx, sets[s][2], 0, hostZ[lo:hi], runs[s]); err != nil {
				return err
			}
		}
		return driver.WaitAll(ctx, reads[0], reads[1])
	}
	pass := func(name string, f func() error) time.Duration {
		clear(hostZ)
		start := time.Now()
		require.NoError(b, f(), name)
		elapsed := time.Since(start)
		requirePipelineOutput(b, name, hostZ)
		return elapsed
	}
	// Warm up both ways (the first use of host memory pins it on a GPU).
	pass("sequential warm-up", sequential)
	pass("pipelined warm-up", pipelined)

	var seqT, pipeT time.Duration
	passes := 0
	for b.Loop() {
		seqT += pass("sequential", sequential)
		pipeT += pass("pipelined", pipelined)
		passes++
	}
	moved := float64(3*total) * float64(passes)
	seqGBs := moved / seqT.Seconds() / 1e9
	pipeGBs := moved / pipeT.Seconds() / 1e9
	b.ReportMetric(seqGBs, "seq_GB/s")
	b.ReportMetric(pipeGBs, "pipelined_GB/s")
	b.ReportMetric(pipeGBs/seqGBs, "pipelined/seq")
	b.ReportMetric(0, "ns/op")
	b.Logf("%s: %d MiB per input in %d MiB chunks: sequential %.2f GB/s, pipelined %.2f GB/s, ratio %.2f",
		dev.Name(), total>>20, chunk>>20, seqGBs, pipeGBs, pipeGBs/seqGBs)
}

// pipelineX and pipelineY are the inputs: small integers and halves, so
// every sum is exact in f32.
func pipelineX(i int64) float32 { return float32(i % 4096) }
func pipelineY(i int64) float32 { return float32((3*i)%1000) / 2 }

// parallelFill writes f(i) as f32 into element i of mem.
func parallelFill(mem []byte, f func(i int64) float32) {
	parallelRange(int64(len(mem)/4), func(lo, hi int64) {
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint32(mem[4*i:], math.Float32bits(f(i)))
		}
	})
}

// requirePipelineOutput checks every element of z against x + y computed
// on the host.
func requirePipelineOutput(b *testing.B, name string, z []byte) {
	b.Helper()
	var mu sync.Mutex
	var bad error
	parallelRange(int64(len(z)/4), func(lo, hi int64) {
		for i := lo; i < hi; i++ {
			got := math.Float32frombits(binary.LittleEndian.Uint32(z[4*i:]))
			if want := pipelineX(i) + pipelineY(i); got != want {
				mu.Lock()
				if bad == nil {
					bad = fmt.Errorf("%s: z[%d] = %g, want %g", name, i, got, want)
				}
				mu.Unlock()
				return
			}
		}
	})
	require.NoError(b, bad)
}

// parallelRange calls f on pieces of [0, n) from a few goroutines.
func parallelRange(n int64, f func(lo, hi int64)) {
	workers := int64(max(runtime.GOMAXPROCS(0), 1))
	step := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := int64(0); lo < n; lo += step {
		wg.Go(func() { f(lo, min(lo+step, n)) })
	}
	wg.Wait()
}
