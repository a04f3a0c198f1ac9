package cuda

import (
	"context"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// nativeRef is bench/cuda/launch_native.cu built as a shared library
// (bench/run-h200.sh: nvcc -shared), loaded into the benchmark's process.
type nativeRef struct {
	setup    func(n int32) int32
	launchNs func(iters int32) float64
	queuedNs func(n, events, param int32) float64
}

func loadNativeRef(b *testing.B) *nativeRef {
	path := os.Getenv("ZYX_CUDA_NATIVE_LIB")
	if path == "" {
		b.Skip("ZYX_CUDA_NATIVE_LIB is not set: no in-process native reference (bench/run-h200.sh builds bench/cuda/launch_native.cu with nvcc -shared)")
	}
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	require.NoError(b, err, "ZYX_CUDA_NATIVE_LIB")
	r := &nativeRef{}
	purego.RegisterLibFunc(&r.setup, lib, "zyx_native_setup")
	purego.RegisterLibFunc(&r.launchNs, lib, "zyx_native_launch_ns")
	purego.RegisterLibFunc(&r.queuedNs, lib, "zyx_native_queued_ns")
	return r
}

// BenchmarkVsNative alternates the launch benchmarks with their native
// references in one process, where figures from separate processes
// differ by up to 10% (where the host puts each process's threads): per
// iteration, 20,000 launches each waited for (Executable.Launch of an
// empty kernel against cudaLaunchKernel + cudaStreamSynchronize), then
// 10,000 queued launches of the one-pointer kernel and one wait
// (Executable.Submit against cudaLaunchKernel + cudaEventRecord of an
// event per launch), the side that goes first alternating. It reports
// each side's median µs per launch and the median of the iterations'
// ratios. Needs ZYX_CUDA_NATIVE_LIB.
func BenchmarkVsNative(b *testing.B) {
	d := gpu(b)
	ref := loadNativeRef(b)
	if w, ok := map[string]aloneWaitMode{"word": aloneWaitWord, "event": aloneWaitEvent, "stream": aloneWaitStream}[os.Getenv("ZYX_BENCH_ALONE_WAIT")]; ok {
		defer func(w aloneWaitMode) { aloneWait = w }(aloneWait)
		aloneWait = w
	}
	const syncN, queuedN = 20000, 10000
	require.Zero(b, ref.setup(queuedN), "the native reference's setup")
	ctx := context.Background()
	dev := backends.DeviceOf(d)
	empty, err := dev.Compile(ctx, &driver.Program{
		Name:     "empty",
		Grid:     []driver.GwsDim{driver.ConstDim(1)},
		Variants: []driver.Variant{{Format: driver.FormatCUDA, Code: &driver.SourceVariant{Entry: "empty", Local: [3]uint32{32}, Source: `extern "C" __global__ void empty() {}`}}},
	})
	require.NoError(b, err)
	defer empty.Release()
	withPtr := mustCompile(b, d, emptyProgram())
	defer withPtr.Release()
	args := backendtest.MakeArgs(b, dev.Pool(), []backendtest.Arg{backendtest.BufferArg(4)})
	for range 1000 {
		require.NoError(b, empty.Launch(ctx, nil))
	}
	zyxSync := func() float64 {
		start := time.Now()
		for range syncN {
			if err := empty.Launch(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
		return float64(time.Since(start).Nanoseconds()) / syncN
	}
	zyxQueued := func() float64 {
		return perLaunch(b, ctx, queuedN, func() (driver.Event, error) { return withPtr.Submit(ctx, args) })
	}
	// Information: the floor of the bindings (the bare driver calls on a
	// locked thread) and the backend without package backends in front.
	k := empty.Driver().(*kernelExec)
	var ev uintptr
	require.Equal(b, cudaSuccess, d.drv.call(d.drv.eventCreate, uintptr(unsafe.Pointer(&ev)), eventDisableTiming))
	defer d.drv.call(d.drv.eventDestroy, ev)
	bare := func(wait func()) func() float64 {
		return func() float64 {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			d.drv.cuCtxSetCurrent(d.ctx)
			start := time.Now()
			for range syncN {
				if r := d.drv.cuLaunchKernel(k.fn, [3]uint32{1, 1, 1}, k.block, d.stream, 0); r != cudaSuccess {
					b.Fatal(d.fail("cuLaunchKernel", r))
				}
				wait()
			}
			return float64(time.Since(start).Nanoseconds()) / syncN
		}
	}
	infos := []struct {
		name string
		run  func() float64
	}{
		{"bare-streamsync", bare(func() { d.drv.cuStreamSynchronize(d.stream) })},
		{"bare-eventspin", bare(func() {
			d.drv.cuEventRecord(ev, d.stream)
			for d.drv.cuEventQuery(ev) == cudaErrorNotReady {
			}
		})},
		{"driver-sync", func() float64 {
			l := &driver.Launch{Grid: [3]uint64{1, 1, 1}}
			start := time.Now()
			for range syncN {
				if err := k.Launch(ctx, l); err != nil {
					b.Fatal(err)
				}
			}
			return float64(time.Since(start).Nanoseconds()) / syncN
		}},
	}
	kp := withPtr.Driver().(*kernelExec)
	buf, err := d.pool.bufs.Get("bench", args[0].Buffer)
	require.NoError(b, err)
	driverQueued := func() float64 {
		l := &driver.Launch{Grid: [3]uint64{1, 1, 1}, Args: args}
		return perLaunch(b, ctx, queuedN, func() (driver.Event, error) { return kp.Submit(ctx, l) })
	}
	queuedInfo := []struct {
		name string
		run  func() float64
	}{
		{"bare-queued", func() float64 {
			// What the issuer does per launch: the parameter block packed,
			// the launch, and an event recorded every recordEvery.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			d.drv.cuCtxSetCurrent(d.ctx)
			start := time.Now()
			for i := range queuedN {
				if err := kp.launch(d.stream, []uint64{buf.ptr}, [3]uint32{1, 1, 1}); err != nil {
					b.Fatal(err)
				}
				if i%recordEvery == recordEvery-1 {
					d.drv.cuEventRecord(ev, d.stream)
				}
			}
			d.drv.cuStreamSynchronize(d.stream)
			return float64(time.Since(start).Nanoseconds()) / queuedN
		}},
		{"driver-queued", driverQueued},
		{"direct-queued", func() float64 {
			issueAside = false
			defer func() { issueAside = true }()
			return driverQueued()
		}},
	}
	infos = append(infos, queuedInfo...)
	infoNs := make([][]float64, len(infos))
	nativeSync := func() float64 { return ref.launchNs(syncN) }
	nativeQueued := func() float64 { return ref.queuedNs(queuedN, 1, 1) }
	var ns [4][]float64 // zyx sync, native sync, zyx queued, native queued
	var ratios [2][]float64
	i := 0
	for b.Loop() {
		pairs := [2][2]func() float64{{zyxSync, nativeSync}, {zyxQueued, nativeQueued}}
		for p, pair := range pairs {
			var v [2]float64
			for _, side := range []int{i % 2, 1 - i%2} {
				v[side] = pair[side]()
				require.Positive(b, v[side], "the native reference failed")
			}
			ns[2*p] = append(ns[2*p], v[0])
			ns[2*p+1] = append(ns[2*p+1], v[1])
			ratios[p] = append(ratios[p], v[0]/v[1])
		}
		for j, info := range infos {
			infoNs[j] = append(infoNs[j], info.run())
		}
		i++
	}
	for j, info := range infos {
		b.ReportMetric(median(infoNs[j])/1e3, info.name+"-µs")
	}
	names := []string{"zyx-sync", "native-sync", "zyx-queued", "native-queued"}
	for k, name := range names {
		b.ReportMetric(median(ns[k])/1e3, name+"-µs")
	}
	b.ReportMetric(median(ratios[0]), "sync-ratio")
	b.ReportMetric(median(ratios[1]), "queued-ratio")
	b.ReportMetric(0, "ns/op")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkSyncAttribution splits a synchronous launch's cost in one
// process: 20,000 launches of an empty kernel per step, the steps run in
// turn each iteration and reported as medians, µs per launch:
//   - bare: cuLaunchKernel, cuEventRecord and a cuEventQuery spin on one
//     locked thread with the context current (waitStream's calls);
//   - ctx: and cuCtxSetCurrent per launch, as enqueueLocked does;
//   - relock: and the thread locked and unlocked per launch;
//   - pooled: and the CUDA event taken from and given back to the device's
//     pool per launch (waitStream);
//   - bare-word: cuLaunchKernel, cuStreamWriteValue32 of the device's
//     completion word and a spin on the word, on one locked thread;
//   - driver: the backend's Launch without package backends in front
//     (a launch that runs alone, waiting on the completion word);
//   - driver-event, driver-streamquery: the same, the launch's wait
//     polling a CUDA event or the stream instead;
//   - driver-setctx: the same, cuCtxSetCurrent made without asking for
//     the current context first (checkCurrent off);
//   - backends: Executable.Launch.
func BenchmarkSyncAttribution(b *testing.B) {
	d := gpu(b)
	ctx := context.Background()
	dev := backends.DeviceOf(d)
	exe, err := dev.Compile(ctx, &driver.Program{
		Name:     "empty",
		Grid:     []driver.GwsDim{driver.ConstDim(1)},
		Variants: []driver.Variant{{Format: driver.FormatCUDA, Code: &driver.SourceVariant{Entry: "empty", Local: [3]uint32{32}, Source: `extern "C" __global__ void empty() {}`}}},
	})
	require.NoError(b, err)
	defer exe.Release()
	k := exe.Driver().(*kernelExec)
	const n = 20000
	for range 1000 {
		require.NoError(b, exe.Launch(ctx, nil))
	}
	var ev uintptr
	require.Equal(b, cudaSuccess, d.drv.call(d.drv.eventCreate, uintptr(unsafe.Pointer(&ev)), eventDisableTiming))
	defer d.drv.call(d.drv.eventDestroy, ev)
	one := func(setCtx, pooled bool) {
		if setCtx {
			d.drv.cuCtxSetCurrent(d.ctx)
		}
		d.drv.cuLaunchKernel(k.fn, [3]uint32{1, 1, 1}, k.block, d.stream, 0)
		e := ev
		if pooled {
			e, _ = d.takeEvent()
			defer d.putEvent(e)
		}
		d.drv.cuEventRecord(e, d.stream)
		for d.drv.cuEventQuery(e) == cudaErrorNotReady {
		}
	}
	locked := func(setCtx, pooled bool) func() {
		return func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			d.drv.cuCtxSetCurrent(d.ctx)
			for range n {
				one(setCtx, pooled)
			}
		}
	}
	relocked := func(pooled bool) func() {
		return func() {
			for range n {
				runtime.LockOSThread()
				one(true, pooled)
				runtime.UnlockOSThread()
			}
		}
	}
	l := &driver.Launch{Grid: [3]uint64{1, 1, 1}}
	// launches is a step of n launches, with flag (when not nil) set
	// meanwhile.
	launches := func(flag *bool, launch func() error) func() {
		return func() {
			if flag != nil {
				*flag = true
				defer func() { *flag = false }()
			}
			for range n {
				if err := launch(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	// withWait runs step with launches that run alone waiting as w says.
	withWait := func(w aloneWaitMode, step func()) func() {
		return func() {
			defer func(w aloneWaitMode) { aloneWait = w }(aloneWait)
			aloneWait = w
			step()
		}
	}
	steps := []attrStep{
		{"bare", locked(false, false)},
		{"ctx", locked(true, false)},
		{"relock", relocked(false)},
		{"pooled", relocked(true)},
		{"driver", launches(nil, func() error { return k.Launch(ctx, l) })},
		{"driver-event", withWait(aloneWaitEvent, launches(nil, func() error { return k.Launch(ctx, l) }))},
		{"driver-streamquery", withWait(aloneWaitStream, launches(nil, func() error { return k.Launch(ctx, l) }))},
		{"bare-word", func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			d.drv.cuCtxSetCurrent(d.ctx)
			d.subMu.Lock()
			defer d.subMu.Unlock()
			if !d.done.ready(d, d.stream) {
				b.Fatal("no completion word: the driver has no stream memory operations")
			}
			for range n {
				d.drv.cuLaunchKernel(k.fn, [3]uint32{1, 1, 1}, k.block, d.stream, 0)
				v, _ := d.done.write(d, d.stream)
				for !d.done.arrived(v) {
				}
			}
		}},
		{"bare-streamquery", func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			d.drv.cuCtxSetCurrent(d.ctx)
			for range n {
				d.drv.cuLaunchKernel(k.fn, [3]uint32{1, 1, 1}, k.block, d.stream, 0)
				for d.drv.cuStreamQuery(d.stream) == cudaErrorNotReady {
				}
			}
		}},
		{"driver-setctx", func() {
			checkCurrent = false
			defer func() { checkCurrent = true }()
			launches(nil, func() error { return k.Launch(ctx, l) })()
		}},
		{"backends", launches(nil, func() error { return exe.Launch(ctx, nil) })},
	}
	defer attrProfile(b)()
	runSteps(b, steps, n)
}

// perLaunch submits n times and waits for the last, and returns the ns per
// launch.
func perLaunch(b *testing.B, ctx context.Context, n int, submit func() (driver.Event, error)) float64 {
	start := time.Now()
	var last driver.Event
	for range n {
		ev, err := submit()
		if err != nil {
			b.Fatal(err)
		}
		last = ev
	}
	if err := last.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// attrStep is a step of an attribution benchmark: n launches done its way.
type attrStep struct {
	name string
	do   func()
}

// runSteps runs the steps in turn each iteration and reports each one's
// median µs per launch (n launches a step).
func runSteps(b *testing.B, steps []attrStep, n int) {
	times := make([][]float64, len(steps))
	for b.Loop() {
		for i, s := range steps {
			start := time.Now()
			s.do()
			times[i] = append(times[i], float64(time.Since(start).Nanoseconds())/1e3/float64(n))
		}
	}
	for i, s := range steps {
		b.ReportMetric(median(times[i]), s.name+"-µs/launch")
	}
	b.ReportMetric(0, "ns/op")
}
