package cuda

import (
	"context"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
)

// The raw launch benchmarks time the driver calls a synchronous launch is
// made of, through the same purego bindings the backend uses but with
// nothing of its queue around them: the floor BenchmarkLaunchEmpty can
// reach, and what each way of waiting costs. Compare with
// bench/cuda/launch_native.cu (bench/run-h200.sh prints the ratios).

// rawEmpty compiles BenchmarkLaunchEmpty's kernel and returns it with the
// device's compute stream; the caller's thread is locked with the context
// current.
func rawEmpty(b *testing.B) (*Device, *kernelExec) {
	d := gpu(b)
	x, err := d.Compile(context.Background(), &driver.Program{
		Name:     "empty",
		Grid:     []driver.GwsDim{driver.ConstDim(1)},
		Variants: []driver.Variant{{Format: driver.FormatCUDA, Code: &driver.SourceVariant{Entry: "empty", Local: [3]uint32{32}, Source: `extern "C" __global__ void empty() {}`}}},
	})
	require.NoError(b, err)
	b.Cleanup(func() { _ = x.Release() })
	k := x.(*kernelExec)
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	require.Equal(b, cudaSuccess, d.drv.cuCtxSetCurrent(d.ctx))
	return d, k
}

// streamSync is a cuStreamSynchronize of d's compute stream that fails b
// on an error.
func streamSync(b *testing.B, d *Device) func() {
	return func() {
		if r := d.drv.cuStreamSynchronize(d.stream); r != cudaSuccess {
			b.Fatal(d.fail("cuStreamSynchronize", r))
		}
	}
}

func rawLaunch(b *testing.B, d *Device, k *kernelExec) {
	if r := d.drv.cuLaunchKernel(k.fn, [3]uint32{1, 1, 1}, k.block, d.stream, 0); r != cudaSuccess {
		b.Fatal(d.fail("cuLaunchKernel", r))
	}
}

// BenchmarkRawLaunchSync: cuLaunchKernel + cuStreamSynchronize.
func BenchmarkRawLaunchSync(b *testing.B) {
	d, k := rawEmpty(b)
	for b.Loop() {
		rawLaunch(b, d, k)
		if r := d.drv.cuStreamSynchronize(d.stream); r != cudaSuccess {
			b.Fatal(d.fail("cuStreamSynchronize", r))
		}
	}
}

// BenchmarkRawLaunchStreamQuery: cuLaunchKernel, then cuStreamQuery until
// the stream is idle.
func BenchmarkRawLaunchStreamQuery(b *testing.B) {
	d, k := rawEmpty(b)
	for b.Loop() {
		rawLaunch(b, d, k)
		for d.drv.cuStreamQuery(d.stream) == cudaErrorNotReady {
		}
	}
}

// BenchmarkRawLaunchEventQuery: cuLaunchKernel, cuEventRecord, then
// cuEventQuery until the event has passed.
func BenchmarkRawLaunchEventQuery(b *testing.B) {
	d, k := rawEmpty(b)
	var ev uintptr
	require.Equal(b, cudaSuccess, d.drv.call(d.drv.eventCreate, uintptr(unsafe.Pointer(&ev)), eventDisableTiming))
	b.Cleanup(func() { d.drv.call(d.drv.eventDestroy, ev) })
	for b.Loop() {
		rawLaunch(b, d, k)
		if r := d.drv.cuEventRecord(ev, d.stream); r != cudaSuccess {
			b.Fatal(d.fail("cuEventRecord", r))
		}
		for d.drv.cuEventQuery(ev) == cudaErrorNotReady {
		}
	}
}

// BenchmarkRawQueued: cuLaunchKernel back to back, with a
// cuStreamSynchronize after every 10,000 and at the end; ns/op is per
// launch.
func BenchmarkRawQueued(b *testing.B) {
	d, k := rawEmpty(b)
	sync := streamSync(b, d)
	for i := range b.N {
		rawLaunch(b, d, k)
		if (i+1)%10000 == 0 {
			sync()
		}
	}
	sync()
}

// The attribution benchmarks add, one at a time, what the backend's
// synchronous launch does around the two driver calls, so that the gap
// between BenchmarkRawLaunchSync and BenchmarkLaunchEmpty can be split on
// the GPU host: a cuCtxSetCurrent per launch, then the thread locked and
// unlocked per launch as well, then the backend's own Launch without
// package backends' checks in front.

// BenchmarkRawLaunchSyncCtx: cuCtxSetCurrent + cuLaunchKernel +
// cuStreamSynchronize.
func BenchmarkRawLaunchSyncCtx(b *testing.B) {
	d, k := rawEmpty(b)
	for b.Loop() {
		d.drv.cuCtxSetCurrent(d.ctx)
		rawLaunch(b, d, k)
		if r := d.drv.cuStreamSynchronize(d.stream); r != cudaSuccess {
			b.Fatal(d.fail("cuStreamSynchronize", r))
		}
	}
}

// BenchmarkRawLaunchSyncRelock: as BenchmarkRawLaunchSyncCtx, with the
// goroutine locked to its thread only for each launch, as the backend's
// submission is.
func BenchmarkRawLaunchSyncRelock(b *testing.B) {
	d, k := rawEmpty(b)
	runtime.UnlockOSThread() // rawEmpty's lock: each launch locks its own
	defer runtime.LockOSThread()
	for b.Loop() {
		runtime.LockOSThread()
		d.drv.cuCtxSetCurrent(d.ctx)
		rawLaunch(b, d, k)
		r := d.drv.cuStreamSynchronize(d.stream)
		runtime.UnlockOSThread()
		if r != cudaSuccess {
			b.Fatal(d.fail("cuStreamSynchronize", r))
		}
	}
}

// BenchmarkLaunchEmptyDriver: the backend's Launch called directly (no
// package backends in front), as BenchmarkLaunchEmpty's kernel.
func BenchmarkLaunchEmptyDriver(b *testing.B) {
	_, k := rawEmpty(b)
	runtime.UnlockOSThread()
	defer runtime.LockOSThread()
	ctx := context.Background()
	l := &driver.Launch{Grid: [3]uint64{1, 1, 1}}
	for range 1000 {
		require.NoError(b, k.Launch(ctx, l))
	}
	for b.Loop() {
		if err := k.Launch(ctx, l); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawQueuedCtx: BenchmarkRawQueued with a cuCtxSetCurrent before
// each launch, as the backend's Submit makes.
func BenchmarkRawQueuedCtx(b *testing.B) {
	d, k := rawEmpty(b)
	sync := streamSync(b, d)
	for i := range b.N {
		d.drv.cuCtxSetCurrent(d.ctx)
		rawLaunch(b, d, k)
		if (i+1)%10000 == 0 {
			sync()
		}
	}
	sync()
}

// BenchmarkRawQueuedParam: BenchmarkRawQueuedCtx with the kernel of
// BenchmarkQueuedLaunches (one pointer parameter) and its parameter block,
// as the backend's Submit launches it.
func BenchmarkRawQueuedParam(b *testing.B) {
	d := gpu(b)
	x, err := d.Compile(context.Background(), emptyProgram())
	require.NoError(b, err)
	b.Cleanup(func() { _ = x.Release() })
	k := x.(*kernelExec)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NoError(b, packSlots(k.params.mem, k.params.addr(0), []uint64{0}))
	sync := streamSync(b, d)
	for i := range b.N {
		d.drv.cuCtxSetCurrent(d.ctx)
		if r := d.drv.cuLaunchKernel(k.fn, [3]uint32{1, 1, 1}, k.block, d.stream, k.params.addr(0)); r != cudaSuccess {
			b.Fatal(d.fail("cuLaunchKernel", r))
		}
		if (i+1)%10000 == 0 {
			sync()
		}
	}
	sync()
}
