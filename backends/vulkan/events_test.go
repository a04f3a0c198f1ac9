package vulkan

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zyxtt/zyxtt/backends"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// TestEvents runs the event contract's suite on every device, with
// transfers in place (lavapipe's memory is mapped) and through staging.
func TestEvents(t *testing.T) {
	for _, d := range openAll(t) {
		t.Run(d.name, func(t *testing.T) {
			backendtest.RunEventConformance(t, d, backendtest.VaddStep(t, 4096))
			backendtest.RunFailureIsolation(t, d, backendtest.VaddStep(t, 4096))
		})
		t.Run(d.name+" staged", func(t *testing.T) {
			stageAlways(t, d)
			backendtest.RunEventConformance(t, d, backendtest.VaddStep(t, 4096))
			backendtest.RunFailureIsolation(t, d, backendtest.VaddStep(t, 4096))
		})
	}
}

// waitAll waits for the events (at most a minute) and, when one has not
// ended by then, fails with the state of d's queue.
func waitAll(t testing.TB, d *device, evs ...driver.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := driver.WaitAll(ctx, evs...)
	if errors.Is(err, context.DeadlineExceeded) {
		d.q.Mu.Lock()
		state := fmt.Sprintf("deferred %d/%d/%d, open %v, in flight %d, staging used %d, serials flushed %d ended %d",
			d.q.Deferred(launches), d.q.Deferred(transfers), d.q.Deferred(staged), d.open != nil, len(d.inflight), d.ring.used, d.flushed.Load(), d.completed.Load())
		d.q.Mu.Unlock()
		require.Fail(t, "work never ended", state)
	}
	require.NoError(t, err)
}

// stageAlways sends d's transfers through staging until the test ends.
func stageAlways(t testing.TB, d *device) {
	d.q.Mu.Lock()
	d.stageAlways = true
	d.q.Mu.Unlock()
	t.Cleanup(func() {
		d.q.Mu.Lock()
		d.stageAlways = false
		d.q.Mu.Unlock()
	})
}

//go:embed testdata/empty.spv
var emptySPIRV []byte

// emptyProgram does nothing over one work group: its launch is all cost.
var emptyProgram = backendtest.EmptyProgram(driver.Variant{Format: driver.FormatSPIRV,
	Code: &driver.SPIRVVariant{Code: emptySPIRV, Entry: "main", Local: [3]uint32{1, 1, 1}}})

// BenchmarkQueuedLaunches: 10,000 empty launches, each waited for, against
// 10,000 queued with one wait (sync-µs/launch, queued-µs/launch), on every
// device.
func BenchmarkQueuedLaunches(b *testing.B) {
	backendtest.EachDevice(b, vkDevices, func(b *testing.B, d *device) {
		backendtest.BenchmarkQueuedLaunches(b, d, emptyProgram, []backendtest.Arg{backendtest.BufferArg(4)}, 10000)
	})
}

func (d *device) nextSerialLocked() uint64 {
	d.q.Mu.Lock()
	defer d.q.Mu.Unlock()
	return d.nextSerial
}

// Launches submitted back to back share batches, and the result is that
// of every launch run in order.
func TestQueuedLaunchesShareBatches(t *testing.T) {
	ctx := context.Background()
	backendtest.EachDevice(t, vkDevices, func(t *testing.T, d *device) {
		const n, k = 4096, 200
		step := backendtest.VaddStep(t, n)
		exe, err := backends.DeviceOf(d).Compile(ctx, step.Program)
		require.NoError(t, err)
		defer exe.Release()
		x := backendtest.RandomF32(5, n, -4, 4)
		var bufs [2]driver.BufferID
		for i := range bufs {
			bufs[i] = backendtest.UploadF32(t, backends.PoolOf(d.pool), x)
			defer d.pool.Release(bufs[i])
		}
		args := [2][]driver.LaunchArg{step.Args(t, backends.PoolOf(d.pool), bufs[0], bufs[1]), step.Args(t, backends.PoolOf(d.pool), bufs[1], bufs[0])}
		before := d.nextSerialLocked()
		var last driver.Event
		for i := range k {
			last, err = exe.Submit(ctx, args[i%2])
			require.NoError(t, err)
		}
		require.NoError(t, last.Wait(ctx))
		batches := d.nextSerialLocked() - before
		require.Less(t, batches, uint64(k), "%d launches in %d batches", k, batches)
		t.Logf("%d launches in %d batches", k, batches)
		want := make([]float64, n)
		for i, v := range x {
			for range k {
				v = step.Apply(v) // in float32, as the device adds
			}
			want[i] = float64(v)
		}
		backendtest.RequireClose(t, want, backendtest.DownloadF32(t, backends.PoolOf(d.pool), bufs[k%2], n), 0, 0)
	})
}

// Pipelined staged transfers larger than the staging buffer (1 MiB in
// the tests) reuse its memory only once the work that used it has ended:
// writes, launches and reads queued with no waits between them give the
// right values.
func TestStagedPipelineReusesStaging(t *testing.T) {
	ctx := context.Background()
	backendtest.EachDevice(t, vkDevices, func(t *testing.T, d *device) {
		stageAlways(t, d)
		const n = 3<<17 + 5 // 1.5 MiB a buffer
		exe, err := backends.DeviceOf(d).Compile(ctx, vaddProgram(t))
		require.NoError(t, err)
		defer exe.Release()
		const rounds = 4
		outs := make([][]byte, rounds)
		ins := make([][]float32, rounds)
		var reads []driver.Event
		var run, down driver.Event // the last round's
		args := backendtest.MakeArgs(t, backends.PoolOf(d.pool), backendtest.VaddArgs(n))
		for r := range rounds {
			ins[r] = backendtest.RandomF32(uint64(r+1), n, -4, 4)
			// The inputs are rewritten once the last round's launch
			// has read them, the output once it has been read back.
			upX, err := d.pool.WriteAsync(ctx, args[0].Buffer, 0, backendtest.F32Bytes(ins[r]), run)
			require.NoError(t, err)
			upY, err := d.pool.WriteAsync(ctx, args[1].Buffer, 0, backendtest.F32Bytes(ins[r]), run)
			require.NoError(t, err)
			run, err = exe.Submit(ctx, args, upX, upY, down)
			require.NoError(t, err)
			outs[r] = make([]byte, 4*n)
			down, err = d.pool.ReadAsync(ctx, args[2].Buffer, 0, outs[r], run)
			require.NoError(t, err)
			reads = append(reads, down)
		}
		waitAll(t, d, reads...)
		for r := range rounds {
			want := make([]float64, n)
			for i, v := range ins[r] {
				want[i] = 2 * float64(v)
			}
			backendtest.RequireClose(t, want, backendtest.BytesF32(outs[r]), 0, 0)
		}
		d.q.Mu.Lock()
		defer d.q.Mu.Unlock()
		require.Zero(t, d.ring.used, "every batch gave its staging memory back")
	})
}

// A lost device fails its pending work, deferred included, with
// ErrDeviceLost, and takes no more.
func TestLostDeviceFailsPendingWork(t *testing.T) {
	d := vkDevices.One(0)(t).(*device)
	defer d.Close()
	backendtest.RunLostDeviceFailsPendingWork(t, d, d.q.MarkLost, errors.New("VK_ERROR_DEVICE_LOST from the driver"))
}

// Closing a device fails the work not yet submitted with ErrClosed and
// ends the rest.
func TestCloseCancelsDeferredWork(t *testing.T) {
	backendtest.RunCloseCancelsDeferred(t, vkDevices.One(0)(t))
}

// A batch left open is submitted by a wait for one of its events, or at
// the latest flushDelay after it opened.
func TestOpenBatchIsSubmitted(t *testing.T) {
	ctx := context.Background()
	for _, d := range openAll(t) {
		const n = 4096
		exe, err := backends.DeviceOf(d).Compile(ctx, vaddProgram(t))
		require.NoError(t, err)
		defer exe.Release()
		x := exe.Driver().(*executable)
		args := backendtest.MakeArgs(t, backends.PoolOf(d.pool), backendtest.VaddArgs(n))
		require.NoError(t, exe.Launch(ctx, args)) // nothing in flight now
		// record puts a dispatch into the open batch as Submit does, and
		// leaves the batch open; hold keeps the flush timer off it until
		// the test ends.
		record := func(t *testing.T, hold bool) *event {
			grid, err := exe.Grid(args)
			require.NoError(t, err)
			launch := &driver.Launch{Args: args, Grid: [3]uint64{1, 1, 1}}
			copy(launch.Grid[:], grid)
			l, err := x.prepare(ctx, launch)
			require.NoError(t, err)
			ev := newEvent(d)
			d.q.Mu.Lock()
			defer d.q.Mu.Unlock()
			if hold {
				d.holdOpen = true
				t.Cleanup(func() {
					d.q.Mu.Lock()
					d.holdOpen = false
					d.q.Mu.Unlock()
				})
			}
			bt, err := d.openBatch()
			require.NoError(t, err)
			require.NoError(t, x.recordDispatch(bt, l.bufs, l.push, l.groups))
			ev.serial.Store(bt.serial)
			bt.events = append(bt.events, ev)
			bt.holds = append(bt.holds, l.release)
			return ev
		}
		t.Run(d.name+" by a wait", func(t *testing.T) {
			ev := record(t, true)
			time.Sleep(20 * time.Millisecond)
			select {
			case <-ev.HostEvent.Done():
				require.Fail(t, "an open batch ran before anything submitted it")
			default:
			}
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			require.NoError(t, ev.Wait(wctx), "the wait submitted the batch")
			require.Equal(t, ev.serial.Load(), d.flushed.Load())
		})
		t.Run(d.name+" by the flush timer", func(t *testing.T) {
			ev := record(t, false)
			select {
			case <-ev.HostEvent.Done(): // no kick: only the timer submits it
				require.NoError(t, ev.Err())
			case <-time.After(10 * time.Second):
				require.Fail(t, "a batch no one waits for was never submitted")
			}
		})
	}
}

// A transfer that waits for staging memory holds back the transfers after
// it: a small write after a large one to the same bytes lands last.
func TestStagedTransfersKeepTheirOrder(t *testing.T) {
	ctx := context.Background()
	backendtest.EachDevice(t, vkDevices, func(t *testing.T, d *device) {
		stageAlways(t, d)
		const n = 3 << 18 // 3 MiB: three times the tests' staging buffer
		id, err := d.pool.Alloc(ctx, 4*n)
		require.NoError(t, err)
		defer d.pool.Release(id)
		big := backendtest.RandomF32(11, n, -4, 4)
		small := []float32{100, 200}
		require.Greater(t, int64(4*n), d.ring.size, "the large write cannot fit: it waits for staging memory")
		w1, err := d.pool.WriteAsync(ctx, id, 0, backendtest.F32Bytes(big))
		require.NoError(t, err)
		w2, err := d.pool.WriteAsync(ctx, id, 4, backendtest.F32Bytes(small))
		require.NoError(t, err)
		require.NoError(t, driver.WaitAll(ctx, w1, w2))
		want := make([]float64, n)
		for i, v := range big {
			want[i] = float64(v)
		}
		want[1], want[2] = 100, 200
		backendtest.RequireClose(t, want, backendtest.DownloadF32(t, backends.PoolOf(d.pool), id, n), 0, 0)
	})
}
