package tt_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/zyxtt/zyxtt/backends"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/rtbin"
	"github.com/zyxtt/zyxtt/tt"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// The event contract on the emulator, with the vadd example's Tenstorrent
// variant computing every step (n = 4 whole tiles).
func TestEvents(t *testing.T) {
	d := openEmu(t, "n150")[0]
	backendtest.RunEventConformance(t, d.Driver(), backendtest.VaddStep(t, 4096))
}

// emptyKernel is one core whose kernel returns at once: a launch that is
// all cost.
func emptyKernel() *driver.Program {
	return oneKernel(tt.Kernel{Name: "empty", Cores: rng(0, 0, 0, 0),
		Source: "#include \"api/dataflow/dataflow_api.h\"\nvoid kernel_main() {}\n"})
}

// BenchmarkQueuedLaunches: 10,000 empty launches on the emulator, each
// waited for, against 10,000 queued with one wait (sync-µs/launch,
// queued-µs/launch).
func BenchmarkQueuedLaunches(b *testing.B) {
	backendtest.BenchmarkQueuedLaunches(b, openEmu(b, "n150")[0].Driver(), emptyKernel(), nil, 10000)
}

// Pipelined writes and reads of one buffer, from Go memory (staged) and
// from host-pool memory (in place), run in submission order: each read
// holds the write before it, with several requests in flight (the runtime
// holds the first write, request 3 after init and the alloc, until the
// read after it is sent).
func TestAsyncTransfersInOrder(t *testing.T) {
	d := open1(t, "hold-at=3")
	ctx := context.Background()
	p := d.Pool()
	const n, k = 4096, 12
	buf, err := p.Alloc(ctx, n)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Release(buf)) }()
	host := p.(*tt.Pool).Host()
	hb, err := host.Alloc(ctx, 2*n)
	require.NoError(t, err)
	defer func() { require.NoError(t, host.Release(hb)) }()
	hmem, err := host.Bytes(hb)
	require.NoError(t, err)

	want := make([][]byte, k)
	got := make([][]byte, k)
	var evs []driver.Event
	peak := 0
	for i := range k {
		want[i] = bytes.Repeat([]byte{byte(i + 1)}, n)
		src := want[i]
		if i%3 == 2 { // from host-pool memory: read in place
			src = hmem[:n]
			copy(src, want[i])
		}
		got[i] = make([]byte, n)
		if i%4 == 3 {
			got[i] = hmem[n : 2*n] // into host-pool memory
		}
		w, err := p.WriteAsync(ctx, buf, 0, src)
		require.NoError(t, err)
		r, err := p.ReadAsync(ctx, buf, 0, got[i])
		require.NoError(t, err)
		peak = max(peak, d.Client().InFlight())
		if i == 0 {
			require.Equal(t, 2, d.Client().InFlight(), "the write is held, the read behind it")
			require.NoError(t, rtbin.Release(d.Client().Pid()))
		}
		require.NoError(t, r.Wait(ctx), "read %d", i) // host-pool memory is reused by the next round
		require.NoError(t, w.Err())
		require.Equal(t, want[i], got[i], "read %d holds the write before it", i)
		evs = append(evs, w, r)
	}
	// Queued without waits in between.
	var last driver.Event
	outs := make([][]byte, k)
	for i := range k {
		_, err := p.WriteAsync(ctx, buf, int64(i), []byte{byte(100 + i)})
		require.NoError(t, err)
		outs[i] = make([]byte, i+1)
		last, err = p.ReadAsync(ctx, buf, 0, outs[i])
		require.NoError(t, err)
		peak = max(peak, d.Client().InFlight())
	}
	require.NoError(t, last.Wait(ctx))
	require.Greater(t, peak, 1, "transfers were in flight together")
	for i := range k {
		for j := range i + 1 {
			require.Equal(t, byte(100+j), outs[i][j], "read %d byte %d", i, j)
		}
	}
	require.NoError(t, driver.WaitAll(ctx, evs...))
}

// Asynchronous transfers of tile-layout buffers tilize (and pack block
// floats) at submission and untilize into dst when the reply comes: the
// device holds what the synchronous path puts there, and reading back
// gives the host data.
func TestAsyncTransfersOfTileLayouts(t *testing.T) {
	d := open1(t, "")
	ctx := context.Background()
	p := d.Pool()
	const rows, cols = 64, 96
	r := rand.New(rand.NewPCG(5, 6))
	for _, format := range []string{"", tt.Bfp8b.String(), tt.Bfp4b.String()} {
		dt := driver.F32
		exe := compileOne(t, d, tileProgram(dt, rows, cols, format))
		host := make([]byte, rows*cols*4)
		for i := range rows * cols {
			binary.LittleEndian.PutUint32(host[4*i:], math.Float32bits(float32(r.NormFloat64())))
		}
		if format == "" {
			for i := range host { // any bytes survive a plain tile layout
				host[i] = byte(r.Uint32())
			}
		}
		async, sync := allocParam(t, exe, 0, int64(len(host))), allocParam(t, exe, 0, int64(len(host)))
		w, err := p.WriteAsync(ctx, async, 0, host)
		require.NoError(t, err)
		back := make([]byte, len(host))
		rd, err := p.ReadAsync(ctx, async, 0, back, w)
		require.NoError(t, err)
		require.NoError(t, rd.Wait(ctx))
		require.NoError(t, p.Write(ctx, sync, 0, host))
		devBytes := rows * cols * 4
		for _, f := range []tt.BlockFloatFormat{tt.Bfp8b, tt.Bfp4b} {
			if format == f.String() {
				devBytes = (rows / 32) * (cols / 32) * f.TileBytes()
			}
		}
		require.Equal(t, rawDevice(t, d, sync, devBytes), rawDevice(t, d, async, devBytes), "%q: the device holds the same bytes", format)
		syncBack := make([]byte, len(host))
		require.NoError(t, p.Read(ctx, sync, 0, syncBack))
		require.Equal(t, syncBack, back, "%q: read back as the synchronous read does", format)
		if format == "" {
			require.Equal(t, host, back, "a plain tile layout is lossless")
			dev := rawDevice(t, d, async, devBytes)
			for rr := range rows {
				for c := range cols {
					h, v := (rr*cols+c)*4, tiledAt(rr, c, cols)*4
					require.Equal(t, host[h:h+4], dev[v:v+4], "element (%d,%d) is at its tile position", rr, c)
				}
			}
		}
		_, err = p.WriteAsync(ctx, async, 1, host[:32*cols*4])
		require.ErrorIs(t, err, driver.ErrInvalidArgument, "a range that is not whole tile rows is refused at submission")
	}
}

// An error reply in the middle of queued runs fails that run's event only:
// the runs around it succeed, and the device goes on.
func TestAsyncRunErrorInTheMiddle(t *testing.T) {
	// init 1, allocs 2-4, the first launch compiles (5), runs 6-10: 8 fails
	d := open1(t, "error-at=8,error-code=run_error")
	args := vaddArgs(t, d)
	exe := compileOne(t, d, vaddProgram())
	ctx := context.Background()
	rtbin.RequireRunErrorAt(t, ctx, backendtest.SubmitN(t, ctx, exe, args, 5), 2)
	require.NoError(t, exe.Launch(ctx, args))
}

// A buffer and a program released while queued runs use them stay alive
// in the runtime until those runs have run, and are freed after.
func TestAsyncReleaseWaitsForQueuedWork(t *testing.T) {
	d := open1(t, "")
	ctx := context.Background()
	args := vaddArgs(t, d)
	exe, err := backends.DeviceOf(d).Compile(ctx, vaddProgram())
	require.NoError(t, err)
	require.NoError(t, exe.Launch(ctx, args)) // builds the runtime program
	rids := make([]uint64, 3)
	for i := range rids {
		rids[i], err = d.Pool().(*tt.Pool).RuntimeBuffer(args[1+i].Buffer)
		require.NoError(t, err)
	}
	gate := driver.NewHostEvent()
	evs := backendtest.SubmitN(t, ctx, exe, args, 4, gate)
	require.NoError(t, exe.Release(), "returns at once: the release is queued behind the runs")
	for _, a := range args[1:] {
		require.NoError(t, d.Pool().Release(a.Buffer))
	}
	require.Zero(t, d.Pool().(*tt.Pool).Live())
	gate.Complete(nil)
	require.NoError(t, driver.WaitAll(ctx, evs...), "the runs found their program and buffers")
	// The runtime has freed them since: they are unknown to it now.
	require.Eventually(t, func() bool {
		err := d.Client().Free(ctx, ttruntime.BufferRequest{Buffer: rids[0]})
		var re *ttruntime.RemoteError
		return errors.As(err, &re) && re.Code == ttruntime.CodeUnknownBuffer
	}, time.Minute, 5*time.Millisecond)
	_, err = exe.Submit(ctx, args)
	require.ErrorIs(t, err, driver.ErrClosed)
}

// Through the mock runtime, a crash with 8 requests in flight: every one
// of the 8 events fails with ErrDeviceLost, nothing hangs, and nothing
// leaks; later submissions fail the same way.
func TestAsyncCrashWithEightInFlight(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// init 1, allocs 2-4, compile 5: the runtime holds the first of the
	// runs (6) until all eight are sent, then crashes on it.
	d := open1(t, "hold-at=6,crash-at=6")
	args := vaddArgs(t, d)
	exe := compileOne(t, d, vaddProgram())
	ctx := context.Background()
	evs := backendtest.SubmitN(t, ctx, exe, args, 8)
	require.Equal(t, 8, d.Client().InFlight(), "all eight are in flight")
	require.NoError(t, rtbin.Release(d.Client().Pid()))
	for i, ev := range evs {
		err := ev.Wait(ctx)
		require.ErrorIs(t, err, backends.ErrDeviceLost, "run %d", i)
		require.ErrorContains(t, err, "crashing on request 6", "run %d quotes the runtime's stderr", i)
	}
	ev, err := exe.Submit(ctx, args)
	if err == nil {
		err = ev.Wait(ctx)
	}
	require.ErrorIs(t, err, driver.ErrDeviceLost)
	require.NoError(t, d.Close(), "the runtime is gone: nothing to escalate")
}

// A run's DPRINT lines are delivered before its event ends.
func TestAsyncKernelOutput(t *testing.T) {
	var out lineWriter
	d := openPrinting(t, &out)
	exe := compileOne(t, d, oneKernel(tt.Kernel{Cores: rng(0, 0, 0, 1)}))
	ctx := context.Background()
	for i := range 3 {
		ev, err := exe.Submit(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, ev.Wait(ctx))
		require.Len(t, out.all(), 2*(i+1), "the lines of run %d are out when its event ends", i)
	}
}

// Closing a device cancels what waits for its events (ErrClosed) and
// drains what was sent: those runs are answered (each reply comes 20 ms
// late, so Close finds them in flight).
func TestAsyncCloseDrains(t *testing.T) {
	d := open1(t, "slow=20ms")
	ctx := context.Background()
	args := vaddArgs(t, d)
	exe := compileOne(t, d, vaddProgram())
	sent := backendtest.SubmitN(t, ctx, exe, args, 4)
	waiting, err := exe.Submit(ctx, args, driver.NewHostEvent())
	require.NoError(t, err)
	require.NoError(t, d.Close())
	require.ErrorIs(t, waiting.Err(), driver.ErrClosed)
	rtbin.RequireAnswered(t, sent)
	_, err = exe.Submit(ctx, args)
	require.ErrorIs(t, err, driver.ErrClosed)
	require.NoError(t, exe.Release())
}

// Work after an event of the same device is not held back on the host: a
// write, a run after it and a read after the run are in flight together,
// each naming the one before (protocol `after`). When a run fails, the
// work named after it is not executed (a write after it leaves the buffer
// as it was) and fails with ErrDependency wrapping the run's error; work
// that does not depend on it runs.
func TestAsyncSameDeviceDependencies(t *testing.T) {
	// init 1, allocs 2-4, the first launch compiles (5) and runs (6), then
	// requests 7 (write, held until the three are sent) 8 (run) 9 (read);
	// in the second round 10 (run) fails.
	d := open1(t, "hold-at=7,error-at=10,error-code=run_error")
	args := vaddArgs(t, d)
	exe := compileOne(t, d, vaddProgram())
	ctx := context.Background()
	require.NoError(t, exe.Launch(ctx, args))
	p := d.Pool()
	buf := args[3].Buffer
	data := bytes.Repeat([]byte{7}, 4096)
	w, err := p.WriteAsync(ctx, buf, 0, data)
	require.NoError(t, err)
	run, err := exe.Submit(ctx, args, w)
	require.NoError(t, err)
	out := make([]byte, 4096)
	rd, err := p.ReadAsync(ctx, buf, 0, out, run)
	require.NoError(t, err)
	require.Equal(t, 3, d.Client().InFlight(), "the three are in flight together: nothing waited on the host")
	require.NoError(t, rtbin.Release(d.Client().Pid()))
	require.NoError(t, rd.Wait(ctx))
	require.Equal(t, data, out)

	failed, err := exe.Submit(ctx, args) // request 10: fails
	require.NoError(t, err)
	after, err := p.WriteAsync(ctx, buf, 0, bytes.Repeat([]byte{9}, 4096), failed) // skipped by the runtime
	require.NoError(t, err)
	after2, err := exe.Submit(ctx, args, after) // skipped too: its dependency failed
	require.NoError(t, err)
	independent, err := exe.Submit(ctx, args)
	require.NoError(t, err)
	var re *ttruntime.RemoteError
	require.ErrorAs(t, failed.Wait(ctx), &re)
	require.Equal(t, ttruntime.CodeRunError, re.Code)
	for name, ev := range map[string]driver.Event{"the write after it": after, "the run after that": after2} {
		err := ev.Wait(ctx)
		require.ErrorIs(t, err, driver.ErrDependency, name)
		require.ErrorAs(t, err, &re, name)
		require.Equal(t, ttruntime.CodeRunError, re.Code, "%s keeps the original error", name)
	}
	require.NoError(t, independent.Wait(ctx), "work that does not depend on the failure runs")
	back := make([]byte, 4096)
	require.NoError(t, p.Read(ctx, buf, 0, back))
	require.Equal(t, data, back, "the write after the failed run was not executed")

	// An own event that has already failed decides at submission.
	_, err = p.WriteAsync(ctx, buf, 0, []byte{1}, failed)
	require.NoError(t, err)
	ev, err := p.ReadAsync(ctx, buf, 0, back[:1], failed)
	require.NoError(t, err)
	require.ErrorIs(t, ev.Wait(ctx), driver.ErrDependency)
}

// Work on one device after work on another waits for it on the host: the
// emulator's two chips of a p300c, chained through a host-pool buffer.
func TestCrossDeviceEvents(t *testing.T) {
	devs := openEmu(t, "p300c")
	require.Len(t, devs, 2)
	host := devs[0].Pool().Driver().(*tt.Pool).Host()
	backendtest.RunCrossDeviceEvents(t, devs[0].Driver(), devs[1].Driver(), backendtest.VaddStep(t, 4096), backendtest.VaddStep(t, 4096), backends.PoolOf(host))
}
