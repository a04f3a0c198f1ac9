package cuda

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// gemmMatmulStep is the matmul example on cuBLAS alone.
func gemmMatmulStep(t testing.TB, n int) backendtest.Step {
	s := backendtest.MatmulStep(t, n)
	s.Program.RemoveVariant(driver.FormatCUDA)
	return s
}

// kernelVaddStep is the vadd example on its CUDA C kernel.
func kernelVaddStep(t testing.TB, n int) backendtest.Step {
	s := backendtest.VaddStep(t, n)
	s.Program.RemoveVariant(driver.FormatGEMM)
	return s
}

// The event contract (docs/api.md, "Events") on every GPU, for the NVRTC
// kernel and for the cuBLAS executable.
func TestEvents(t *testing.T) {
	for _, d := range gpus(t) {
		t.Run(d.Name()+"/kernel", func(t *testing.T) {
			backendtest.RunEventConformance(t, d, kernelVaddStep(t, 1<<16))
		})
		t.Run(d.Name()+"/gemm", func(t *testing.T) {
			backendtest.RunEventConformance(t, d, gemmMatmulStep(t, 64))
		})
	}
}

// Work on one GPU waits for another's through a host-pool buffer and events
// only; with one GPU, the chain runs from the GPU to itself.
func TestCrossDeviceEvents(t *testing.T) {
	ds := gpus(t)
	a, b := ds[0], ds[0]
	if len(ds) > 1 {
		b = ds[1]
	}
	t.Logf("%s -> host -> %s", a.Name(), b.Name())
	host, err := backends.HostPool()
	require.NoError(t, err)
	backendtest.RunCrossDeviceEvents(t, a, b, kernelVaddStep(t, 1<<16), gemmMatmulStep(t, 256), backends.PoolOf(host))
}

// Transfers of one buffer keep their submission order without events (the
// write and the read run on different streams), and so do a launch and a
// transfer on one buffer; ordinary and host-pool memory, small and larger
// than the bounce budget.
func TestTransfersKeepOrderOnABuffer(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	eachHostMemory(t, []int{4096, 3 << 20, int(d.bounceBudget()) + 4096}, func(t *testing.T, n int, mem func() []byte) {
		first, second, back1, back2 := mem(), mem(), mem(), mem()
		for i := range first {
			first[i], second[i] = byte(i*7+1), byte(i*5+3)
		}
		id, err := d.Pool().Alloc(ctx, int64(n))
		require.NoError(t, err)
		defer d.Pool().Release(id)
		w1, err := d.Pool().WriteAsync(ctx, id, 0, first)
		require.NoError(t, err)
		r1, err := d.Pool().ReadAsync(ctx, id, 0, back1)
		require.NoError(t, err)
		w2, err := d.Pool().WriteAsync(ctx, id, 0, second)
		require.NoError(t, err)
		r2, err := d.Pool().ReadAsync(ctx, id, 0, back2)
		require.NoError(t, err)
		require.NoError(t, driver.WaitAll(ctx, w1, r1, w2, r2))
		require.True(t, string(first) == string(back1), "the first read sees the first write, not the second")
		require.True(t, string(second) == string(back2), "the second read sees the second write")
	})

	// A launch's output read back without an event, and a write of its input
	// submitted after it without one.
	exe := mustCompile(t, d, vaddProgram())
	defer exe.Release()
	const n = 1 << 20
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i)
	}
	bx := backendtest.Upload(t, backends.PoolOf(d.Pool()), backendtest.F32Bytes(x))
	bz := backendtest.Upload(t, backends.PoolOf(d.Pool()), make([]byte, 4*n))
	run, err := exe.Submit(ctx, []driver.LaunchArg{driver.BufArg(bx), driver.BufArg(bx), driver.BufArg(bz), u32(n)})
	require.NoError(t, err)
	over, err := d.Pool().WriteAsync(ctx, bx, 0, make([]byte, 4*n)) // after the launch has read bx
	require.NoError(t, err)
	out := make([]byte, 4*n)
	down, err := d.Pool().ReadAsync(ctx, bz, 0, out) // after the launch has written bz
	require.NoError(t, err)
	require.NoError(t, driver.WaitAll(ctx, run, over, down))
	z := backendtest.BytesF32(out)
	for i := range z {
		if z[i] != 2*x[i] {
			t.Fatalf("z[%d] = %g, want %g", i, z[i], 2*x[i])
		}
	}
}

// A write of Go memory submitted after the read that fills that memory
// copies what the read brought, not what the memory held before: the host
// copies it into the bounce buffer only once the read has ended. The same
// with host-pool memory, where the GPU orders the two.
func TestWriteWaitsForTheReadThatFillsItsSource(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	eachHostMemory(t, []int{4096, 8 << 20, int(d.bounceBudget()) + 4096}, func(t *testing.T, n int, mem func() []byte) {
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i*11 + 5)
		}
		a := backendtest.Upload(t, backends.PoolOf(d.Pool()), want)
		b := backendtest.Upload(t, backends.PoolOf(d.Pool()), make([]byte, n))
		mid := mem()                  // zeros until the read
		gate := driver.NewHostEvent() // holds the read back so the write is submitted first
		read, err := d.Pool().ReadAsync(ctx, a, 0, mid, gate)
		require.NoError(t, err)
		write, err := d.Pool().WriteAsync(ctx, b, 0, mid, read)
		require.NoError(t, err)
		out := make([]byte, n)
		back, err := d.Pool().ReadAsync(ctx, b, 0, out, write)
		require.NoError(t, err)
		gate.Complete(nil)
		require.NoError(t, back.Wait(ctx))
		require.True(t, string(want) == string(out), "the write copied its source before the read had filled it")
	})
}

// eachHostMemory runs f in a subtest for each size n in sizes and each
// kind of host memory, "go" (Go slices) and "hostpool" (host-pool
// buffers); mem gives a new zeroed buffer of n bytes of that kind, released
// when the subtest ends.
func eachHostMemory(t *testing.T, sizes []int, f func(t *testing.T, n int, mem func() []byte)) {
	host, err := backends.HostPool()
	require.NoError(t, err)
	for _, n := range sizes {
		for _, where := range []string{"go", "hostpool"} {
			t.Run(fmt.Sprintf("%s/%d", where, n), func(t *testing.T) {
				f(t, n, func() []byte {
					if where == "go" {
						return make([]byte, n)
					}
					hid, err := host.Alloc(context.Background(), int64(n))
					require.NoError(t, err)
					t.Cleanup(func() { _ = host.Release(hid) })
					b, _ := host.Bytes(hid)
					clear(b)
					return b
				})
			})
		}
	}
}

// LaunchTimed measures the kernel alone, not the wait for the work queued
// before it.
func TestLaunchTimedAfterQueuedWork(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	spin := mustCompile(t, d, spinProgram(20_000_000))
	defer spin.Release()
	buf := backendtest.Upload(t, backends.PoolOf(d.Pool()), make([]byte, 4))
	args := []driver.LaunchArg{driver.BufArg(buf)}
	alone, err := spin.LaunchTimed(ctx, args)
	require.NoError(t, err)
	pending := backendtest.SubmitN(t, ctx, spin, args, 5)
	behind, err := spin.LaunchTimed(ctx, args)
	require.NoError(t, err)
	require.NoError(t, driver.WaitAll(ctx, pending...))
	t.Logf("spin kernel: %v alone, %v behind 5 queued", alone, behind)
	require.Less(t, behind, 3*alone, "the timed launch waited for the queue")
}

// spinProgram is a kernel that spins for about cycles GPU clock cycles.
func spinProgram(cycles int64) *driver.Program {
	return &driver.Program{
		Name:   "spin",
		Params: []driver.Param{backendtest.GlobalMut("p", driver.U32)},
		Grid:   []driver.GwsDim{driver.ConstDim(1)},
		Variants: []driver.Variant{{Format: driver.FormatCUDA, Code: &driver.SourceVariant{Entry: "spin", Local: [3]uint32{32},
			Source: fmt.Sprintf(`extern "C" __global__ void spin(unsigned int *p) {
	long long start = clock64();
	while (clock64() - start < %dLL) {}
	if (threadIdx.x == 0) p[0] += 1;
}`, cycles)}}},
	}
}

// A fault with work pending fails every event after it with ErrDeviceLost:
// work on the streams and work still waiting for a host event.
func TestFaultFailsPendingEvents(t *testing.T) {
	runFaultHelper(t, "fault-pending", "FAULT-PENDING-OK")
}

// faultPendingHelper queues a long kernel, a kernel that writes through a
// wild pointer, more launches and a read behind it, and a launch waiting for
// a host event; it checks that each of them fails with ErrDeviceLost. It
// runs in its own process: a fault poisons the primary context.
func faultPendingHelper() int {
	ctx := context.Background()
	fail := helperFail("FAULT-PENDING-FAIL")
	d, err := helperDevice(ctx)
	if err != nil {
		return fail("no cuda backend: %v", err)
	}
	spin, err := d.Compile(ctx, spinProgram(100_000_000))
	if err != nil {
		return fail("compile spin: %v", err)
	}
	wild, err := d.Compile(ctx, wildProgram())
	if err != nil {
		return fail("compile wild: %v", err)
	}
	vadd, err := d.Compile(ctx, vaddProgram())
	if err != nil {
		return fail("compile vadd: %v", err)
	}
	buf, err := d.Pool().Alloc(ctx, 4096)
	if err != nil {
		return fail("alloc: %v", err)
	}
	if err := d.Pool().Write(ctx, buf, 0, make([]byte, 4096)); err != nil {
		return fail("write: %v", err)
	}
	one := []driver.LaunchArg{driver.BufArg(buf)}
	vargs := []driver.LaunchArg{driver.BufArg(buf), driver.BufArg(buf), driver.BufArg(buf), u32(256)}
	if _, err := spin.Submit(ctx, one); err != nil {
		return fail("submit spin: %v", err)
	}
	var after []driver.Event
	ev, err := wild.Submit(ctx, one)
	if err != nil {
		return fail("submit wild: %v", err)
	}
	after = append(after, ev)
	for range 4 {
		ev, err := vadd.Submit(ctx, vargs)
		if err != nil {
			return fail("submit vadd behind the fault: %v", err)
		}
		after = append(after, ev)
	}
	read, err := d.Pool().ReadAsync(ctx, buf, 0, make([]byte, 1024))
	if err != nil {
		return fail("submit read: %v", err)
	}
	after = append(after, read)
	gate := driver.NewHostEvent()
	gated, err := vadd.Submit(ctx, vargs, gate)
	if err != nil {
		return fail("submit gated: %v", err)
	}
	after = append(after, gated)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for i, ev := range after {
		err := ev.Wait(wctx)
		if !errors.Is(err, driver.ErrDeviceLost) {
			return fail("event %d after the fault: %v, want ErrDeviceLost", i, err)
		}
		fmt.Printf("event %d: %v\n", i, err)
	}
	gate.Complete(nil)
	if _, err := vadd.Submit(ctx, vargs); !errors.Is(err, driver.ErrDeviceLost) {
		return fail("submit after the fault: %v, want ErrDeviceLost", err)
	}
	if err := d.Close(); err != nil {
		fmt.Println("close after the fault:", err)
	}
	fmt.Println("FAULT-PENDING-OK")
	return 0
}

func wildProgram() *driver.Program {
	return &driver.Program{
		Name:   "wild_write",
		Params: []driver.Param{{Name: "p", Kind: driver.GlobalMut, DType: driver.U32}},
		Grid:   []driver.GwsDim{driver.ConstDim(1)},
		Variants: []driver.Variant{{Format: driver.FormatCUDA, Code: &driver.SourceVariant{Entry: "wild_write", Local: [3]uint32{32},
			Source: `extern "C" __global__ void wild_write(unsigned int *p) {
				volatile unsigned int *wild = (unsigned int *)0xdead0000ull;
				*wild = p[threadIdx.x];
			}`}}},
	}
}

// emptyProgram does nothing over one block: its launch is all cost.
func emptyProgram() *driver.Program {
	return backendtest.EmptyProgram(driver.Variant{Format: driver.FormatCUDA,
		Code: &driver.SourceVariant{Entry: "empty", Local: [3]uint32{32}, Source: `extern "C" __global__ void empty(float *x) {}`}})
}

// The launch path allocates little: the event and the argument check's
// launch and sizes (the count includes what the reaper allocates
// meanwhile).
func TestSubmitAllocations(t *testing.T) {
	d := gpu(t)
	ctx := context.Background()
	exe := mustCompile(t, d, emptyProgram())
	defer exe.Release()
	args := backendtest.MakeArgs(t, backends.PoolOf(d.Pool()), []backendtest.Arg{backendtest.BufferArg(4)})
	var last driver.Event
	allocs := testing.AllocsPerRun(2000, func() {
		ev, err := exe.Submit(ctx, args)
		if err != nil {
			t.Fatal(err)
		}
		last = ev
	})
	require.NoError(t, last.Wait(ctx))
	t.Logf("%.1f allocations per queued launch", allocs)
	require.LessOrEqual(t, allocs, 8.0)
}

// BenchmarkQueuedLaunches: 10,000 empty launches, each waited for, against
// 10,000 queued with one wait (sync-µs/launch, queued-µs/launch,
// sync/queued).
func BenchmarkQueuedLaunches(b *testing.B) {
	backendtest.BenchmarkQueuedLaunches(b, gpu(b), emptyProgram(), []backendtest.Arg{backendtest.BufferArg(4)}, 10000)
}

// BenchmarkQueuedLaunchesFastReaper is BenchmarkQueuedLaunches with the
// reaper at its fast pace while nobody waits (as it was before the idle
// pace): what the reaper's rounds cost a submitter queueing back to back.
func BenchmarkQueuedLaunchesFastReaper(b *testing.B) {
	was := reaperIdleSleep
	reaperIdleSleep = reaperMinSleep
	defer func() { reaperIdleSleep = was }()
	BenchmarkQueuedLaunches(b)
}

// BenchmarkQueuedLaunchesSlowReaper is BenchmarkQueuedLaunches with the
// reaper waking every 50 ms while nobody waits, about once a batch: what
// is left of the queued launch's cost without the reaper's rounds.
func BenchmarkQueuedLaunchesSlowReaper(b *testing.B) {
	was := reaperIdleSleep
	reaperIdleSleep = 50 * time.Millisecond
	defer func() { reaperIdleSleep = was }()
	BenchmarkQueuedLaunches(b)
}

// BenchmarkPipeline: 1 GiB per input through vadd in 64 MiB chunks,
// pipelined with events on two buffer sets against the same steps one after
// another.
func BenchmarkPipeline(b *testing.B) {
	d := gpu(b)
	backendtest.BenchmarkPipeline(b, d, vaddProgram(), gib, 64<<20)
}

// eachHostMemory names its subtests kind/size and gives zeroed buffers of
// that size, Go memory or host-pool memory.
func TestEachHostMemory(t *testing.T) {
	var names []string
	eachHostMemory(t, []int{16, 4096}, func(t *testing.T, n int, mem func() []byte) {
		names = append(names, strings.TrimPrefix(t.Name(), "TestEachHostMemory/"))
		b := mem()
		require.Len(t, b, n)
		require.Equal(t, make([]byte, n), b)
		b[0] = 1 // writable
	})
	require.Equal(t, []string{"go/16", "hostpool/16", "go/4096", "hostpool/4096"}, names)
}
