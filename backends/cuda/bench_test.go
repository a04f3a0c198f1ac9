package cuda

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// The benchmarks compare with the native programs in bench/cuda; run them
// together with bench/run-h200.sh, which prints the ratios.

const gib = 1 << 30

// copyBuffers are the benchmark's 1 GiB host and device buffers, made once
// per process like the native program's: the testing package calls a
// benchmark function more than once, and fresh gigabytes each time measure
// the host's page allocator, not the copy.
var copyBuffers struct {
	sync.Mutex
	host map[bool][]byte
	dev  driver.BufferID
}

func benchBuffers(b *testing.B, d *Device, fromHostPool bool) ([]byte, driver.BufferID) {
	copyBuffers.Lock()
	defer copyBuffers.Unlock()
	ctx := context.Background()
	if copyBuffers.host == nil {
		copyBuffers.host = map[bool][]byte{}
		dev, err := d.Pool().Alloc(ctx, gib)
		require.NoError(b, err)
		copyBuffers.dev = dev
	}
	mem, ok := copyBuffers.host[fromHostPool]
	if !ok {
		if fromHostPool {
			host, err := backends.HostPool()
			require.NoError(b, err)
			id, err := host.Alloc(ctx, gib)
			require.NoError(b, err)
			mem, _ = host.Bytes(id)
		} else {
			mem = make([]byte, gib)
		}
		for i := range mem {
			mem[i] = byte(i)
		}
		copyBuffers.host[fromHostPool] = mem
	}
	return mem, copyBuffers.dev
}

func benchCopy(b *testing.B, toDevice, fromHostPool bool) {
	d := gpu(b)
	ctx := context.Background()
	mem, dev := benchBuffers(b, d, fromHostPool)
	do := func() error {
		if toDevice {
			return d.Pool().Write(ctx, dev, 0, mem)
		}
		return d.Pool().Read(ctx, dev, 0, mem)
	}
	require.NoError(b, do()) // first use pins the host-pool segment
	if fromHostPool {
		pins.Lock()
		b.Logf("host-pool segments pinned: %d", len(pins.segs))
		pins.Unlock()
	}
	timeBytes(b, gib, do)
}

// timeBytes times b.N runs of op, each moving n bytes; the caller has
// warmed op up.
func timeBytes(b *testing.B, n int64, op func() error) {
	b.SetBytes(n)
	b.ResetTimer()
	for range b.N {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkH2D1GiBHostPool(b *testing.B) { benchCopy(b, true, true) }
func BenchmarkD2H1GiBHostPool(b *testing.B) { benchCopy(b, false, true) }
func BenchmarkH2D1GiBGoHeap(b *testing.B)   { benchCopy(b, true, false) }
func BenchmarkD2H1GiBGoHeap(b *testing.B)   { benchCopy(b, false, false) }

func BenchmarkLaunchEmpty(b *testing.B) {
	d := gpu(b)
	ctx := context.Background()
	exe, err := backends.DeviceOf(d).Compile(ctx, &driver.Program{
		Name:     "empty",
		Grid:     []driver.GwsDim{driver.ConstDim(1)},
		Variants: []driver.Variant{{Format: driver.FormatCUDA, Code: &driver.SourceVariant{Entry: "empty", Local: [3]uint32{32}, Source: `extern "C" __global__ void empty() {}`}}},
	})
	require.NoError(b, err)
	defer exe.Release()
	benchLaunches(b, exe, nil, 1000)
}

// benchLaunches times b.N launches of exe with args, after warmup untimed
// ones, and stops the timer.
func benchLaunches(b *testing.B, exe *backends.Executable, args []driver.LaunchArg, warmup int) {
	ctx := context.Background()
	for range warmup {
		require.NoError(b, exe.Launch(ctx, args))
	}
	b.ResetTimer()
	for range b.N {
		if err := exe.Launch(ctx, args); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
}

func benchGEMM(b *testing.B, dt driver.DType, compute string) {
	d := gpu(b)
	ctx := context.Background()
	const n = 8192
	p := gemmProgram(driver.GEMMVariant{DType: dt, Compute: compute, M: driver.ConstDim(n), N: driver.ConstDim(n), K: driver.ConstDim(n), Alpha: 1})
	bytes := int64(n * n * dt.Size())
	host := make([]float64, n*n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range host {
		host[i] = 2*rng.Float64() - 1
	}
	data := encodeElemsRounded(dt, host)
	args := make([]driver.LaunchArg, 3)
	for i := range args {
		id, err := d.Pool().Alloc(ctx, bytes)
		require.NoError(b, err)
		defer d.Pool().Release(id)
		require.NoError(b, d.Pool().Write(ctx, id, 0, data))
		args[i] = driver.BufArg(id)
	}
	exe := mustCompile(b, d, p)
	defer exe.Release()
	benchLaunches(b, exe, args, 3)
	b.ReportMetric(2*float64(n)*n*n*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
}

// encodeElemsRounded encodes arbitrary values (bf16 by truncation, which is
// fine for benchmark data).
func encodeElemsRounded(dt driver.DType, v []float64) []byte { return encodeElems(dt, v) }

func BenchmarkSgemm8192(b *testing.B)    { benchGEMM(b, driver.F32, "") }
func BenchmarkTF32Gemm8192(b *testing.B) { benchGEMM(b, driver.F32, "tf32") }
func BenchmarkBF16Gemm8192(b *testing.B) { benchGEMM(b, driver.BF16, "") }
