package opencl

// The command queue: the event contract, own and foreign dependencies,
// failures and close, and what launches, copies and the hot-path bindings
// cost.

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/internal/gpuqueue"
)

// TestEvents runs the event contract's suite on every device.
func TestEvents(t *testing.T) {
	backendtest.EachDevice(t, clDevices, func(t *testing.T, d *device) {
		backendtest.RunEventConformance(t, d, backendtest.VaddStep(t, 4096))
		backendtest.RunFailureIsolation(t, d, backendtest.VaddStep(t, 4096))
	})
}

// emptyProgram does nothing over one work item: its launch is all cost.
var emptyProgram = backendtest.EmptyProgram(driver.Variant{Format: driver.FormatOpenCL,
	Code: &driver.SourceVariant{Entry: "empty", Source: "__kernel void empty(__global float *x) { }"}})

// BenchmarkQueuedLaunches: 10,000 empty launches, each waited for, against
// 10,000 queued with one wait (sync-µs/launch, queued-µs/launch), on every
// device.
func BenchmarkQueuedLaunches(b *testing.B) {
	backendtest.EachDevice(b, clDevices, func(b *testing.B, d *device) {
		backendtest.BenchmarkQueuedLaunches(b, d, emptyProgram, []backendtest.Arg{backendtest.BufferArg(4)}, 10000)
	})
}

// BenchmarkQueuedLaunchesLocked is BenchmarkQueuedLaunches on a goroutine
// locked to its OS thread: whether the driver's calls cost more when the
// launching goroutine moves between threads.
func BenchmarkQueuedLaunchesLocked(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	BenchmarkQueuedLaunches(b)
}

// BenchmarkVaddBandwidth measures, in one run on each device, vadd's
// bandwidth (12 bytes moved per element) and the device's own
// buffer-to-buffer copy bandwidth (clEnqueueCopyBuffer of the same 4·N
// bytes, counted read plus write), both timed by event profiling, and
// reports their ratio.
func BenchmarkVaddBandwidth(b *testing.B) {
	backendtest.EachDevice(b, clDevices, func(b *testing.B, d *device) {
		backendtest.VaddBandwidth(b, d, vaddProgram(b), backendtest.CopyReference{
			Label: "copy", Metric: "copy", Ratio: "ratio",
			Time: func(ctx context.Context, src, dst driver.BufferID, bytes int64) (time.Duration, error) {
				ns, err := d.pool.copyBuffer(ctx, dst, 0, src, 0, bytes, true)
				return time.Duration(ns), err
			},
		})
	})
}

// A device's own event on the queue orders the next command (the queue
// runs in order), a foreign one defers the work and everything submitted
// after it, in order.
func TestOwnAndForeignDependencies(t *testing.T) {
	ctx := context.Background()
	backendtest.EachDevice(t, clDevices, func(t *testing.T, d *device) {
		const n = 1 << 16
		exe, err := backends.DeviceOf(d).Compile(ctx, vaddProgram(t))
		require.NoError(t, err)
		defer exe.Release()
		x := backendtest.RandomF32(3, n, -2, 2)
		args := backendtest.MakeArgs(t, backends.PoolOf(d.pool), backendtest.VaddArgs(n))
		gate := driver.NewHostEvent()
		upX, err := d.pool.WriteAsync(ctx, args[0].Buffer, 0, backendtest.F32Bytes(x), gate)
		require.NoError(t, err)
		upY, err := d.pool.WriteAsync(ctx, args[1].Buffer, 0, backendtest.F32Bytes(x))
		require.NoError(t, err)
		d.q.Mu.Lock()
		require.Equal(t, 1, d.q.Deferred(transfers), "the write after a host event waits; the one after it, waiting for nothing, does not")
		d.q.Mu.Unlock()
		require.NoError(t, upY.Wait(ctx))
		backendtest.RequirePending(t, upX, "the write after a pending host event")
		gate.Complete(nil)
		require.Eventually(t, func() bool {
			d.q.Mu.Lock()
			defer d.q.Mu.Unlock()
			return d.q.Deferred(transfers) == 0
		}, 5*time.Second, time.Millisecond, "the deferred work is enqueued once the host event has ended")
		run, err := exe.Submit(ctx, args, upX, upY)
		require.NoError(t, err)
		out := make([]byte, 4*n)
		down, err := d.pool.ReadAsync(ctx, args[2].Buffer, 0, out, run)
		require.NoError(t, err)
		require.NoError(t, down.Wait(ctx))
		require.NoError(t, run.Err())
		want := make([]float64, n)
		for i, v := range x {
			want[i] = float64(v) + float64(v)
		}
		backendtest.RequireClose(t, want, backendtest.BytesF32(out), 0, 0)
		for _, ev := range []driver.Event{upX, upY, run, down} {
			require.True(t, ev.(*event).onQueue.Load(), "each command went to the queue")
		}
		d.inqMu.Lock()
		require.Empty(t, d.inq, "every command was settled")
		d.inqMu.Unlock()
	})
}

// A lost device fails its pending work, deferred included, with
// ErrDeviceLost, and takes no more.
func TestLostDeviceFailsPendingWork(t *testing.T) {
	d := clDevices.One(0)(t).(*device)
	defer d.Close()
	backendtest.RunLostDeviceFailsPendingWork(t, d, d.q.MarkLost, errors.New("CL_OUT_OF_RESOURCES from the driver"))
}

// A command that fails on the device fails its event with the status it
// ended with, CL_OUT_OF_RESOURCES loses the device, and a command after a
// failed one of the same device fails as its dependent.
func TestExecutionStatusErrors(t *testing.T) {
	d := clDevices.One(0)(t).(*device)
	defer d.Close()
	failed := &event{dev: d, HostEvent: driver.NewHostEvent()}
	boom := errors.New("the kernel faulted")
	failed.Complete(boom)
	err := d.execError(&cmd{Item: gpuqueue.Item{After: []driver.Event{nil, failed}}, op: "launch"}, -9999)
	require.ErrorIs(t, err, driver.ErrDependency)
	require.ErrorIs(t, err, boom)

	err = d.execError(&cmd{op: "launch"}, -9999)
	require.ErrorIs(t, err, errExecution)
	require.Contains(t, err.Error(), "CL_STATUS_-9999")
	require.NoError(t, d.q.LostErr(), "a command's own failure leaves the device usable")

	err = d.execError(&cmd{op: "launch"}, clOutOfResources)
	require.ErrorIs(t, err, driver.ErrDeviceLost)
	require.Contains(t, err.Error(), "CL_OUT_OF_RESOURCES")
	require.ErrorIs(t, d.q.LostErr(), driver.ErrDeviceLost)
}

// Closing a device fails the work that has not reached its queue with
// ErrClosed and settles the rest.
func TestCloseCancelsDeferredWork(t *testing.T) {
	backendtest.RunCloseCancelsDeferred(t, clDevices.One(0)(t))
}

// The bindings on the hot paths (enqueued copies, transfers, kernel
// arguments, the NDRange enqueue with a wait list, flushes, event waits,
// status and profiling reads, event retains and releases) allocate nothing
// when the memory they hand the loader is already on the heap.
func TestHotPathsDoNotAllocate(t *testing.T) {
	backendtest.EachDevice(t, clDevices, func(t *testing.T, d *device) {
		const n = 1024
		args := backendtest.MakeArgs(t, backends.PoolOf(d.pool), backendtest.VaddArgs(n))
		bufs, release, err := d.pool.bufs.Acquire("test", args[0].Buffer, args[1].Buffer, args[2].Buffer)
		require.NoError(t, err)
		defer release()
		exe, err := backends.DeviceOf(d).Compile(context.Background(), vaddProgram(t))
		require.NoError(t, err)
		defer exe.Release()
		x := exe.Driver().(*executable)
		x.globalSize = [3]uintptr{n, 1, 1}
		count := new(uint32)
		*count = n
		host := make([]byte, 4*n)
		// evs[0] is each command's event, evs[1] the one before it
		// in a wait list; prof is what their results are read into.
		evs, prof, l := new([2]clEvent), new(profile), d.l
		wait := func() error {
			defer l.ReleaseEvent(evs[0])
			if err := l.Flush(d.queue); err != nil {
				return err
			}
			if err := l.WaitForEvents(evs[:1]); err != nil {
				return err
			}
			_, _, err := d.eventResult(evs[0], true, prof)
			return err
		}

		backendtest.RequireNoAllocs(t, 50, map[string]func() error{
			"an enqueued copy and its timed wait": func() error {
				if err := l.EnqueueCopyBuffer(d.queue, bufs[0].mem, bufs[1].mem, 0, 0, 4*n, nil, &evs[0]); err != nil {
					return err
				}
				return wait()
			},
			"blocking transfers": func() error {
				if err := l.EnqueueWriteBuffer(d.queue, bufs[0].mem, true, 0, uintptr(len(host)), unsafe.Pointer(&host[0]), nil, nil); err != nil {
					return err
				}
				return l.EnqueueReadBuffer(d.queue, bufs[2].mem, true, 0, uintptr(len(host)), unsafe.Pointer(&host[0]), nil, nil)
			},
			"non-blocking transfers, the second after the first's event": func() error {
				if err := l.EnqueueWriteBuffer(d.queue, bufs[0].mem, false, 0, uintptr(len(host)), unsafe.Pointer(&host[0]), nil, &evs[1]); err != nil {
					return err
				}
				err := l.EnqueueReadBuffer(d.queue, bufs[0].mem, false, 0, uintptr(len(host)), unsafe.Pointer(&host[0]), evs[1:], &evs[0])
				_ = l.ReleaseEvent(evs[1])
				if err != nil {
					return err
				}
				return wait()
			},
			"kernel arguments, the NDRange enqueue after a retained event, and its wait": func() error {
				for i, b := range bufs {
					if err := l.SetKernelArg(x.kernel, uint32(i), unsafe.Sizeof(b.mem), unsafe.Pointer(&b.mem)); err != nil {
						return err
					}
				}
				if err := l.SetKernelArg(x.kernel, 3, 4, unsafe.Pointer(count)); err != nil {
					return err
				}
				if err := l.EnqueueCopyBuffer(d.queue, bufs[2].mem, bufs[1].mem, 0, 0, 4, nil, &evs[1]); err != nil {
					return err
				}
				if err := l.RetainEvent(evs[1]); err != nil {
					return err
				}
				_ = l.ReleaseEvent(evs[1])
				err := l.EnqueueNDRangeKernel(d.queue, x.kernel, 1, &x.globalSize, &x.localSize, evs[1:], &evs[0])
				_ = l.ReleaseEvent(evs[1])
				if err != nil {
					return err
				}
				return wait()
			},
		})
		// The launches ran for real: z = x + y of what was written.
		backendtest.CheckVadd(t, backends.PoolOf(d.pool), exe, n)
	})
}

// Commands without a cl_event end as the event after them says: queued
// launches waited for in the middle (by the completer, whose marker ends
// the batch's tail) and at the end, and a failed status at the end of a
// run fails each command of it with that status.
func TestEventlessCommandsSettleInOrder(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	backendtest.EachDevice(t, clDevices, func(t *testing.T, d *device) {
		const n = 256
		exe, err := backends.DeviceOf(d).Compile(ctx, vaddProgram(t))
		require.NoError(t, err)
		defer exe.Release()
		args := backendtest.MakeArgs(t, backends.PoolOf(d.pool), backendtest.VaddArgs(n))
		evs := make([]driver.Event, 300)
		for i := range evs {
			evs[i], err = exe.Submit(ctx, args)
			require.NoError(t, err)
		}
		require.NoError(t, evs[150].Wait(ctx), "a cancellable wait in the middle: the completer settles it")
		for _, ev := range evs[:151] {
			require.NoError(t, ev.Err(), "every launch before it has ended too")
		}
		require.NoError(t, evs[len(evs)-1].Wait(context.Background()))
		for _, ev := range evs {
			require.NoError(t, ev.Err())
		}
		took, err := exe.Driver().(*executable).LaunchTimed(context.Background(), &driver.Launch{Grid: [3]uint64{n, 1, 1}, Args: args})
		require.NoError(t, err)
		require.Positive(t, took, "a timed launch has its event and its device time")
	})
	d := clDevices.One(0)(t).(*device)
	defer d.Close()
	run := []*cmd{{op: "launch", ev: &event{dev: d, HostEvent: driver.NewHostEvent()}}, {op: "copy", ev: &event{dev: d, HostEvent: driver.NewHostEvent()}}}
	d.settleRun(run, runOutcome{status: -9999})
	for _, c := range run {
		require.ErrorIs(t, c.ev.Err(), errExecution)
		require.Contains(t, c.ev.Err().Error(), "CL_STATUS_-9999")
	}
	lost := errors.New("gone")
	ok := &cmd{op: "launch", ev: &event{dev: d, HostEvent: driver.NewHostEvent()}}
	d.settleRun([]*cmd{ok}, runOutcome{err: lost})
	require.ErrorIs(t, ok.ev.Err(), lost)
}
