package cuda

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// attrSink keeps BenchmarkQueuedAttribution's allocations on the heap.
var attrSink *event

// BenchmarkQueuedAttribution splits the cost of a queued launch in one
// process, where the figures of separate processes differ by up to 10%:
// 10,000 launches of BenchmarkQueuedLaunches' kernel and one wait, in
// steps that add what the backend does, each step run once per iteration
// in turn, and each reported as its median µs per launch:
//   - raw: cuCtxSetCurrent + cuLaunchKernel on one locked thread, then
//     cuStreamSynchronize (BenchmarkRawQueuedParam);
//   - relock: the thread locked and unlocked around each launch;
//   - alloc: and an event allocated per launch (the garbage collector);
//   - direct: the backend's Submit without package backends in front,
//     its launches issued by the submitting thread (issueAside off);
//   - driver: the same, its launches issued aside (issuer.go);
//   - backends: Executable.Submit, as BenchmarkQueuedLaunches.
func BenchmarkQueuedAttribution(b *testing.B) { queuedAttribution(b, false) }

// BenchmarkQueuedAttributionQuietReaper is BenchmarkQueuedAttribution with
// the reaper asleep: whether its rounds beside the submitting thread slow
// the driver's launch call.
func BenchmarkQueuedAttributionQuietReaper(b *testing.B) { queuedAttribution(b, true) }

func queuedAttribution(b *testing.B, quiet bool) {
	d := gpu(b)
	ctx := context.Background()
	exe := mustCompile(b, d, emptyProgram())
	defer exe.Release()
	args := backendtest.MakeArgs(b, backends.DeviceOf(d).Pool(), []backendtest.Arg{backendtest.BufferArg(4)})
	k := exe.Driver().(*kernelExec)
	buf, err := d.pool.bufs.Get("bench", args[0].Buffer)
	require.NoError(b, err)
	const n = 10000
	launch := func() {
		if r := d.drv.cuCtxSetCurrent(d.ctx); r != cudaSuccess {
			b.Fatal(d.fail("cuCtxSetCurrent", r))
		}
		if err := packSlots(k.params.mem, k.params.addr(0), []uint64{buf.ptr}); err != nil {
			b.Fatal(err)
		}
		if r := d.drv.cuLaunchKernel(k.fn, [3]uint32{1, 1, 1}, k.block, d.stream, k.params.addr(0)); r != cudaSuccess {
			b.Fatal(d.fail("cuLaunchKernel", r))
		}
	}
	sync := func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		d.drv.cuCtxSetCurrent(d.ctx)
		if r := d.drv.cuStreamSynchronize(d.stream); r != cudaSuccess {
			b.Fatal(d.fail("cuStreamSynchronize", r))
		}
	}
	relocked := func(alloc bool) func() {
		return func() {
			for range n {
				runtime.LockOSThread()
				launch()
				runtime.UnlockOSThread()
				if alloc {
					attrSink = new(event)
				}
			}
			sync()
		}
	}
	submitAll := func(submit func() (driver.Event, error)) func() {
		return func() { perLaunch(b, ctx, n, submit) }
	}
	run := &driver.Launch{Args: args, Grid: [3]uint64{1, 1, 1}}
	steps := []attrStep{
		{"raw", func() {
			runtime.LockOSThread()
			for range n {
				launch()
			}
			runtime.UnlockOSThread()
			sync()
		}},
		{"relock", relocked(false)},
		{"alloc", relocked(true)},
		{"direct", func() {
			issueAside = false
			defer func() { issueAside = true }()
			submitAll(func() (driver.Event, error) { return k.Submit(ctx, run) })()
		}},
		{"driver", submitAll(func() (driver.Event, error) { return k.Submit(ctx, run) })},
		{"backends", submitAll(func() (driver.Event, error) { return exe.Submit(ctx, args) })},
	}
	if quiet {
		// The reaper's first round finds nothing recorded and sleeps
		// for the rest of the run: every wait polls for itself.
		defer func(n int32, d time.Duration) { maxInFlight, reaperIdleSleep = n, d }(maxInFlight, reaperIdleSleep)
		maxInFlight, reaperIdleSleep = 1<<20, 5*time.Second
	}
	defer attrProfile(b)()
	runSteps(b, steps, n)
}

// attrProfile starts a CPU profile at 4 kHz into the file ZYX_ATTR_PROFILE
// names (the testing package's 100 Hz leaves a microsecond per launch in
// the noise; run without -test.cpuprofile) and returns what stops it.
func attrProfile(b *testing.B) func() {
	path := os.Getenv("ZYX_ATTR_PROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	require.NoError(b, err)
	runtime.SetCPUProfileRate(4000)
	require.NoError(b, pprof.StartCPUProfile(f))
	return func() { pprof.StopCPUProfile(); _ = f.Close() }
}
