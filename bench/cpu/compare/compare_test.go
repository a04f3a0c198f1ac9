//go:build linux

// Package compare holds the CPU backends' benchmarks: each one measures a
// program through the zyx-tt runtime and the same work in a native C
// program built here, in the same run, and reports the ratio
// native time / runtime time (1.0 means the runtime adds nothing).
//
//	go test -run '^$' -bench . -benchtime 1x ./bench/cpu/compare
package compare

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/c"
	"github.com/zyxtt/zyxtt/backends/cblas"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/bundle"
)

var (
	vaddN = flag.Uint64("vadd-n", 64<<20, "vadd elements")
	gemmN = flag.Int("gemm-n", 2048, "sgemm m = n = k")
	reps  = flag.Int("reps", 5, "timed runs per side, alternating native and runtime; the best of each counts")
)

// loadProgram builds an example bundle's program for backend with vars set
// and allocates and fills its buffers in the device's pool.
func loadProgram(b *testing.B, dev *backends.Device, name string, set map[string]string) (*backends.Program, []backends.LaunchArg) {
	b.Helper()
	bd, err := bundle.Load(filepath.Join("..", "..", "..", "examples", name))
	must(b, err)
	vals, err := bd.VarValues(set)
	must(b, err)
	p, err := bd.Program(vals)
	must(b, err)
	shapes, err := bd.Shapes(vals)
	must(b, err)
	pool := dev.Pool()
	host := pool // host memory: Bytes reads it in place
	args := make([]backends.LaunchArg, len(bd.Params))
	for i, prm := range bd.Params {
		if !prm.Kind.IsBuffer() {
			vi, _ := bd.VarIndex(prm.Name)
			args[i] = backends.VarArg(vals[vi])
			continue
		}
		id, err := pool.Alloc(context.Background(), bundle.Elems(shapes[i])*int64(prm.DType.Size()))
		must(b, err)
		b.Cleanup(func() { _ = pool.Release(id) })
		mem, err := host.Bytes(id)
		must(b, err)
		must(b, bundle.Fill(mem, prm.DType, bundle.Gen{Kind: bundle.GenRandom}, uint64(i)))
		args[i] = backends.BufArg(id)
	}
	return p, args
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// nativeReps is how many timed runs one native process makes (after its
// warm-up run); its best counts as that process's time.
const nativeReps = 3

// compare compiles p and launches it once to warm up; then, *reps times,
// it runs the native program (one process, nativeReps timed runs) and then
// nativeReps timed launches, alternating so that both sides see the same
// machine load, and returns the best time of each side.
func compare(b *testing.B, dev *backends.Device, p *backends.Program, args []backends.LaunchArg, native func() time.Duration) (runtime, nat time.Duration) {
	b.Helper()
	ctx := context.Background()
	exe, err := dev.Compile(ctx, p)
	must(b, err)
	defer exe.Release()
	must(b, exe.Launch(ctx, args))
	runtime, nat = time.Duration(1<<63-1), time.Duration(1<<63-1)
	for range *reps {
		nat = min(nat, native())
		for range nativeReps {
			d, err := exe.LaunchTimed(ctx, args)
			must(b, err)
			runtime = min(runtime, d)
		}
	}
	return runtime, nat
}

// runNative runs a native benchmark program and reads the nanoseconds it
// prints.
func runNative(b *testing.B, env []string, name string, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s %v: %v: %s", name, args, err, stderr.String())
	}
	ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	must(b, err)
	return time.Duration(ns)
}

func report(b *testing.B, runtime, native time.Duration) {
	ratio := native.Seconds() / runtime.Seconds()
	b.ReportMetric(float64(runtime.Microseconds())/1e3, "runtime-ms")
	b.ReportMetric(float64(native.Microseconds())/1e3, "native-ms")
	b.ReportMetric(ratio, "ratio")
	b.Logf("runtime %v, native %v, ratio native/runtime %.3f", runtime, native, ratio)
}

// BenchmarkVaddC: examples/vadd through the C device against the same loop
// in vadd_native.c built with the device's flags and thread count.
func BenchmarkVaddC(b *testing.B) {
	dev, err := c.Open(context.Background(), c.Config{})
	if err != nil {
		b.Skipf("no C device: %v", err)
	}
	info := dev.Info()
	var flags []string
	for _, f := range strings.Fields(info.Extra["flags"]) {
		if f != "-shared" {
			flags = append(flags, f)
		}
	}
	native := filepath.Join(b.TempDir(), "vadd_native")
	cmd := exec.Command(info.Extra["compiler"], append(flags, "-o", native, filepath.Join("..", "vadd_native.c"))...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building vadd_native: %v: %s", err, out)
	}
	n := strconv.FormatUint(*vaddN, 10)
	p, args := loadProgram(b, backends.DeviceOf(dev), "vadd", map[string]string{"n": n})
	env := []string{"OMP_NUM_THREADS=" + info.Extra["threads"]}
	for range b.N {
		rt, nat := compare(b, backends.DeviceOf(dev), p, args, func() time.Duration { return runNative(b, env, native, n, strconv.Itoa(nativeReps)) })
		report(b, rt, nat)
	}
	// The timed launches must have done the whole job.
	host := dev.Pool().(driver.HostMemory)
	mem := make([][]byte, 3)
	for i := range mem {
		var err error
		mem[i], err = host.Bytes(args[i].Buffer)
		must(b, err)
	}
	for i := 0; i+4 <= len(mem[2]); i += 4 {
		x := math.Float32frombits(binary.LittleEndian.Uint32(mem[0][i:]))
		y := math.Float32frombits(binary.LittleEndian.Uint32(mem[1][i:]))
		if z := math.Float32frombits(binary.LittleEndian.Uint32(mem[2][i:])); z != x+y {
			b.Fatalf("z[%d] = %g, want %g", i/4, z, x+y)
		}
	}
}

// BenchmarkSGEMMCBLAS: examples/matmul's GEMM variant through the CBLAS
// device against cblas_sgemm called from sgemm_native.c in the same
// library with the same thread count.
func BenchmarkSGEMMCBLAS(b *testing.B) {
	dev, err := cblas.Open(context.Background(), cblas.Config{})
	if err != nil {
		b.Skipf("no CBLAS: %v", err)
	}
	info := dev.Info()
	native := filepath.Join(b.TempDir(), "sgemm_native")
	cmd := exec.Command("cc", "-O2", "-o", native, filepath.Join("..", "sgemm_native.c"), "-ldl")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building sgemm_native: %v: %s", err, out)
	}
	n := strconv.Itoa(*gemmN)
	p, args := loadProgram(b, backends.DeviceOf(dev), "matmul", map[string]string{"m": n, "n": n, "k": n})
	threads := strconv.Itoa(dev.Threads())
	for range b.N {
		rt, nat := compare(b, backends.DeviceOf(dev), p, args, func() time.Duration {
			return runNative(b, nil, native, info.Extra["library"], n, strconv.Itoa(nativeReps), threads)
		})
		report(b, rt, nat)
	}
	// Spot-check the product against float64 dot products.
	host := dev.Pool().(driver.HostMemory)
	a, err := host.Bytes(args[0].Buffer)
	must(b, err)
	bm, err := host.Bytes(args[1].Buffer)
	must(b, err)
	c, err := host.Bytes(args[2].Buffer)
	must(b, err)
	f := func(mem []byte, i int) float64 {
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(mem[4*i:])))
	}
	dim := *gemmN
	for s := 0; s < 16; s++ {
		i, j := (s*7919)%dim, (s*104729)%dim
		want := 0.0
		for l := 0; l < dim; l++ {
			want += f(a, i*dim+l) * f(bm, l*dim+j)
		}
		if got := f(c, i*dim+j); math.Abs(got-want) > 1e-4*math.Sqrt(float64(dim))*(1+math.Abs(want)) {
			b.Fatalf("c[%d][%d] = %g, want %g", i, j, got, want)
		}
	}
}
