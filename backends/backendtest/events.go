package backendtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// Step is one launch of a program that computes an f32 buffer of N
// elements from another, exactly, so that a chain of launches has a known
// result: the event suites chain Steps through buffers and check the end.
type Step struct {
	Program *driver.Program
	N       int
	// Args are the launch args that compute out from in; extra buffers the
	// step needs are made on pool (and released when the test ends).
	Args func(t testing.TB, pool *backends.Pool, in, out driver.BufferID) []driver.LaunchArg
	// Apply is what one launch does to the values.
	Apply func(x float32) float32
}

// VaddStep is the vadd example as out = in + 1 over n elements.
func VaddStep(t testing.TB, n int) Step {
	return Step{Program: Vadd(t), N: n, Apply: func(x float32) float32 { return x + 1 },
		Args: func(t testing.TB, pool *backends.Pool, in, out driver.BufferID) []driver.LaunchArg {
			ones := make([]float32, n)
			for i := range ones {
				ones[i] = 1
			}
			y := UploadF32(t, pool, ones)
			t.Cleanup(func() { _ = pool.Release(y) })
			return vaddArgs([3]driver.BufferID{in, y, out}, int64(n))
		}}
}

// MatmulStep is the matmul example as out = in × 2I, in an n×n matrix.
func MatmulStep(t testing.TB, n int) Step {
	return Step{Program: ExampleProgram(t, "matmul"), N: n * n, Apply: func(x float32) float32 { return 2 * x },
		Args: func(t testing.TB, pool *backends.Pool, in, out driver.BufferID) []driver.LaunchArg {
			twoI := make([]float32, n*n)
			for i := range n {
				twoI[i*n+i] = 2
			}
			b := UploadF32(t, pool, twoI)
			t.Cleanup(func() { _ = pool.Release(b) })
			u32 := func(v int) driver.LaunchArg { return driver.VarArg(driver.UintConst(driver.U32, uint64(v))) }
			return []driver.LaunchArg{driver.BufArg(in), driver.BufArg(b), driver.BufArg(out), u32(n), u32(n), u32(n)}
		}}
}

// chain is a Step compiled on a device with two buffers to ping-pong
// between.
type chain struct {
	s    Step
	dev  *backends.Device
	exe  *backends.Executable
	bufs [2]driver.BufferID
	x    []float32 // the values first written to bufs[0]
}

func newChain(t testing.TB, dev *backends.Device, s Step) *chain {
	t.Helper()
	exe, err := dev.Compile(context.Background(), s.Program)
	require.NoError(t, err)
	t.Cleanup(func() { _ = exe.Release() })
	c := &chain{s: s, dev: dev, exe: exe, x: RandomF32(7, s.N, -4, 4)}
	for i := range c.bufs {
		id, err := dev.Pool().Alloc(context.Background(), int64(4*s.N))
		require.NoError(t, err)
		t.Cleanup(func() { _ = dev.Pool().Release(id) })
		c.bufs[i] = id
	}
	return c
}

// submitGated submits launch 0 behind a new host event, and a read of its
// output into out behind that launch.
func (c *chain) submitGated(t testing.TB, ctx context.Context) (gate *driver.HostEvent, run, down driver.Event, out []byte) {
	t.Helper()
	gate = driver.NewHostEvent()
	run, err := c.exe.Submit(ctx, c.args(t, 0), gate)
	require.NoError(t, err)
	out = make([]byte, 4*c.s.N)
	down, err = c.dev.Pool().ReadAsync(ctx, c.bufs[1], 0, out, run)
	require.NoError(t, err)
	return gate, run, down, out
}

// args are launch k's args: from bufs[k%2] into the other.
func (c *chain) args(t testing.TB, k int) []driver.LaunchArg {
	return c.s.Args(t, c.dev.Pool(), c.bufs[k%2], c.bufs[(k+1)%2])
}

// want is the values after k launches.
func (c *chain) want(k int) []float64 {
	out := make([]float64, len(c.x))
	for i, v := range c.x {
		for range k {
			v = c.s.Apply(v)
		}
		out[i] = float64(v)
	}
	return out
}

// RunEventConformance checks the event contract (docs/api.md, "Events") on
// dev with s: launches submitted to one device run in submission order;
// asynchronous transfers and launches wait for the events they are given,
// a HostEvent's included; a failed event fails what depends on it with
// ErrDependency wrapping its error, and leaves the device usable; buffers
// and the program released while work is pending stay alive until it has
// run; a submission whose ctx ends while it waits is cancelled; Launch and
// Write are Submit and WriteAsync with a wait. It fails on a goroutine the
// checks leave running.
func RunEventConformance(t *testing.T, devDriver driver.Device, s Step) {
	dev := backends.DeviceOf(devDriver)
	t.Helper()
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, c := range []struct {
		name  string
		check func(*testing.T, *backends.Device, Step)
	}{
		{"one queue runs in submission order", eventsInSubmissionOrder},
		{"work waits for a host event", eventsWaitForHostEvent},
		{"a failure propagates and the device goes on", eventsFailurePropagates},
		{"released buffers and program live until pending work ran", eventsKeepReleasedAlive},
		{"cancelling ctx cancels waiting work", eventsCancelWithCtx},
		{"asynchronous transfers check their range at once", eventsCheckRangeAtOnce},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, dev, s) })
	}
}

func eventsInSubmissionOrder(t *testing.T, dev *backends.Device, s Step) {
	ctx := context.Background()
	pool := dev.Pool()
	c := newChain(t, dev, s)
	up, err := pool.WriteAsync(ctx, c.bufs[0], 0, F32Bytes(c.x))
	require.NoError(t, err)
	const k = 16
	args := make([][]driver.LaunchArg, k)
	for i := range args {
		args[i] = c.args(t, i)
	}
	var last driver.Event
	for i := range k {
		after := []driver.Event(nil)
		if i == 0 {
			after = []driver.Event{up}
		}
		// Launches after the first give no events: the queue orders them.
		last, err = c.exe.Submit(ctx, args[i], after...)
		require.NoError(t, err)
	}
	out := make([]byte, 4*s.N)
	down, err := pool.ReadAsync(ctx, c.bufs[k%2], 0, out, last)
	require.NoError(t, err)
	require.NoError(t, down.Wait(ctx))
	require.NoError(t, last.Err(), "an event that a successful one waited for has succeeded")
	RequireClose(t, c.want(k), BytesF32(out), 0, 0)
}

func eventsWaitForHostEvent(t *testing.T, dev *backends.Device, s Step) {
	ctx := context.Background()
	pool := dev.Pool()
	c := newChain(t, dev, s)
	require.NoError(t, pool.Write(ctx, c.bufs[0], 0, F32Bytes(c.x)))
	gate, run, down, out := c.submitGated(t, ctx)
	time.Sleep(20 * time.Millisecond)
	RequirePending(t, run, "a launch after a pending host event")
	RequirePending(t, down, "a read after that launch")
	gate.Complete(nil)
	require.NoError(t, down.Wait(ctx))
	RequireClose(t, c.want(1), BytesF32(out), 0, 0)
}

func eventsFailurePropagates(t *testing.T, dev *backends.Device, s Step) {
	ctx := context.Background()
	pool := dev.Pool()
	c := newChain(t, dev, s)
	require.NoError(t, pool.Write(ctx, c.bufs[0], 0, F32Bytes(c.x)))
	boom := errors.New("the host step failed")
	gate, run, down, _ := c.submitGated(t, ctx)
	gate.Complete(boom)
	for name, ev := range map[string]driver.Event{"the launch": run, "the read after it": down} {
		err := ev.Wait(ctx)
		require.ErrorIs(t, err, driver.ErrDependency, name)
		require.ErrorIs(t, err, boom, "%s keeps the original error", name)
	}
	// Already failed: decided at submission or soon after, never run.
	again, err := c.exe.Submit(ctx, c.args(t, 0), driver.Completed(boom))
	if err == nil {
		require.ErrorIs(t, again.Wait(ctx), boom)
	} else {
		require.ErrorIs(t, err, boom)
	}
	require.NoError(t, c.exe.Launch(ctx, c.args(t, 0)), "the device still runs work that does not depend on the failure")
	RequireClose(t, c.want(1), DownloadF32(t, pool, c.bufs[1], s.N), 0, 0)
}

func eventsKeepReleasedAlive(t *testing.T, dev *backends.Device, s Step) {
	ctx := context.Background()
	pool := dev.Pool()
	exe, err := dev.Compile(ctx, s.Program)
	require.NoError(t, err)
	c := &chain{s: s, dev: dev, exe: exe, x: RandomF32(9, s.N, -4, 4)}
	for i := range c.bufs {
		c.bufs[i], err = pool.Alloc(ctx, int64(4*s.N))
		require.NoError(t, err)
	}
	require.NoError(t, pool.Write(ctx, c.bufs[0], 0, F32Bytes(c.x)))
	gate, _, down, out := c.submitGated(t, ctx)
	// Drop every reference the caller holds while the work waits.
	require.NoError(t, exe.Release())
	for _, id := range c.bufs {
		require.NoError(t, pool.Release(id))
	}
	gate.Complete(nil)
	require.NoError(t, down.Wait(ctx))
	RequireClose(t, c.want(1), BytesF32(out), 0, 0)
	for _, id := range c.bufs {
		require.Eventually(t, func() bool {
			_, err := pool.Size(id)
			return errors.Is(err, driver.ErrUnknownBuffer)
		}, 5*time.Second, time.Millisecond, "buffer %d is freed once the work that held it has ended", id)
	}
	_, err = exe.Submit(ctx, c.args(t, 0))
	require.ErrorIs(t, err, driver.ErrClosed, "a released program takes no more work")
}

func eventsCancelWithCtx(t *testing.T, dev *backends.Device, s Step) {
	ctx := context.Background()
	pool := dev.Pool()
	c := newChain(t, dev, s)
	require.NoError(t, pool.Write(ctx, c.bufs[0], 0, F32Bytes(c.x)))
	gate := driver.NewHostEvent()
	cctx, cancel := context.WithCancel(ctx)
	run, err := c.exe.Submit(cctx, c.args(t, 0), gate)
	require.NoError(t, err)
	cancel()
	err = run.Wait(ctx)
	require.ErrorIs(t, err, context.Canceled, "work that had not started when its ctx ended is cancelled")
	gate.Complete(nil)

	// A wait given up is not the work given up.
	gate = driver.NewHostEvent()
	run, err = c.exe.Submit(ctx, c.args(t, 0), gate)
	require.NoError(t, err)
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer wcancel()
	require.ErrorIs(t, run.Wait(wctx), context.DeadlineExceeded)
	gate.Complete(nil)
	require.NoError(t, run.Wait(ctx))
	RequireClose(t, c.want(1), DownloadF32(t, pool, c.bufs[1], s.N), 0, 0)
}

func eventsCheckRangeAtOnce(t *testing.T, dev *backends.Device, s Step) {
	ctx := context.Background()
	pool := dev.Pool()
	c := newChain(t, dev, s)
	_, err := pool.WriteAsync(ctx, c.bufs[0], 4, make([]byte, 4*s.N))
	require.ErrorIs(t, err, backends.ErrInvalidArgument)
	_, err = pool.ReadAsync(ctx, c.bufs[0], -1, make([]byte, 4))
	require.ErrorIs(t, err, backends.ErrInvalidArgument)
}

// RunFailureIsolation checks that a failure reaches only the work that
// depends on it (docs/api.md, "Errors"): a launch after a host event that
// fails does not run and fails with ErrDependency, while a launch
// submitted right after it with no dependency, queued behind it on the
// same device, runs and succeeds. It fails on a goroutine the checks leave
// running.
func RunFailureIsolation(t *testing.T, devDriver driver.Device, s Step) {
	dev := backends.DeviceOf(devDriver)
	t.Helper()
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	pool := dev.Pool()
	failing, independent := newChain(t, dev, s), newChain(t, dev, s)
	for _, c := range []*chain{failing, independent} {
		require.NoError(t, pool.Write(ctx, c.bufs[0], 0, F32Bytes(c.x)))
		require.NoError(t, pool.Write(ctx, c.bufs[1], 0, make([]byte, 4*s.N)))
	}
	// The args upload operands synchronously, so they are made before
	// anything waits on the gate: on an in-order queue a synchronous
	// transfer waits behind gated work.
	failingArgs, independentArgs := failing.args(t, 0), independent.args(t, 0)
	gate := driver.NewHostEvent()
	failed, err := failing.exe.Submit(ctx, failingArgs, gate)
	require.NoError(t, err)
	ran, err := independent.exe.Submit(ctx, independentArgs)
	require.NoError(t, err)
	boom := errors.New("the host step failed")
	gate.Complete(boom)
	err = failed.Wait(ctx)
	require.ErrorIs(t, err, driver.ErrDependency)
	require.ErrorIs(t, err, boom)
	require.NoError(t, ran.Wait(ctx), "work queued after a failed launch that does not depend on it runs")
	RequireClose(t, independent.want(1), DownloadF32(t, pool, independent.bufs[1], s.N), 0, 0)
	RequireClose(t, make([]float64, s.N), DownloadF32(t, pool, failing.bufs[1], s.N), 0, 0)
}

// RunCrossDeviceEvents checks that work on b waits for work on a through
// events only: a's chain of launches, a read into a host-pool buffer after
// it, a write of that buffer to b after the read, and b's launch after the
// write, with no waits between them. host is the host pool.
func RunCrossDeviceEvents(t *testing.T, aDriver, bDriver driver.Device, sa, sb Step, host *backends.Pool) {
	a, b := backends.DeviceOf(aDriver), backends.DeviceOf(bDriver)
	t.Helper()
	require.Equal(t, sa.N, sb.N, "the steps move the same number of elements")
	ctx := context.Background()
	ca, cb := newChain(t, a, sa), newChain(t, b, sb)
	// Made before the gate holds a's queue: the args upload synchronously,
	// and a and b may be one device (one GPU: the chain runs to itself).
	argsA, argsB := ca.args(t, 0), cb.args(t, 0)
	gate := driver.NewHostEvent()
	up, err := a.Pool().WriteAsync(ctx, ca.bufs[0], 0, F32Bytes(ca.x), gate)
	require.NoError(t, err)
	runA, err := ca.exe.Submit(ctx, argsA, up)
	require.NoError(t, err)
	staging, err := host.Alloc(ctx, int64(4*sa.N))
	require.NoError(t, err)
	defer func() { require.NoError(t, host.Release(staging)) }()
	mem, err := host.Bytes(staging)
	require.NoError(t, err)
	toHost, err := a.Pool().ReadAsync(ctx, ca.bufs[1], 0, mem, runA)
	require.NoError(t, err)
	toB, err := b.Pool().WriteAsync(ctx, cb.bufs[0], 0, mem, toHost)
	require.NoError(t, err)
	runB, err := cb.exe.Submit(ctx, argsB, toB)
	require.NoError(t, err)
	out := make([]byte, 4*sb.N)
	down, err := b.Pool().ReadAsync(ctx, cb.bufs[1], 0, out, runB)
	require.NoError(t, err)
	RequirePending(t, down, "the end of a chain that waits for a host event")
	gate.Complete(nil)
	require.NoError(t, down.Wait(ctx))
	want := ca.want(1)
	for i, v := range want {
		want[i] = float64(sb.Apply(float32(v)))
	}
	RequireClose(t, want, BytesF32(out), 0, 0)
}

// RequirePending fails t when ev has already ended: what it waits for has
// not, so it ran too early. what names ev in the failure.
func RequirePending(t testing.TB, ev driver.Event, what string) {
	t.Helper()
	select {
	case <-ev.Done():
		require.Failf(t, "ran too early", "%s is done (err %v) before what it waits for", what, ev.Err())
	default:
	}
}

// EmptyProgram is a program that does nothing, for timing launches alone
// (BenchmarkQueuedLaunches): one f32 buffer parameter x, a grid of one,
// and v, the backend's variant of an empty kernel over x.
func EmptyProgram(v driver.Variant) *driver.Program {
	return &driver.Program{
		Name:     "empty",
		Params:   []driver.Param{GlobalMut("x", driver.F32)},
		Grid:     []driver.GwsDim{driver.ConstDim(1)},
		Variants: []driver.Variant{v},
	}
}

// BenchmarkQueuedLaunches compiles prog on dev and times n back-to-back
// launches of it with args (made by MakeArgs), each submitted and waited
// for (sync) against all submitted before one wait for the last (queued),
// in the same run, and reports µs per launch of each and their ratio. prog
// should do next to nothing (an empty kernel), so that the figures are the
// cost of a launch.
func BenchmarkQueuedLaunches(b *testing.B, devDriver driver.Device, prog *driver.Program, argSpec []Arg, n int) {
	dev := backends.DeviceOf(devDriver)
	ctx := context.Background()
	exe, err := dev.Compile(ctx, prog)
	require.NoError(b, err)
	defer exe.Release()
	args := MakeArgs(b, dev.Pool(), argSpec)
	require.NoError(b, exe.Launch(ctx, args)) // warm up
	var syncT, queuedT time.Duration
	for b.Loop() {
		start := time.Now()
		for range n {
			if err := exe.Launch(ctx, args); err != nil {
				b.Fatal(err)
			}
		}
		syncT += time.Since(start)
		start = time.Now()
		var last driver.Event
		for range n {
			ev, err := exe.Submit(ctx, args)
			if err != nil {
				b.Fatal(err)
			}
			last = ev
		}
		if err := last.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		queuedT += time.Since(start)
	}
	launches := float64(b.N) * float64(n)
	b.ReportMetric(float64(syncT.Nanoseconds())/1e3/launches, "sync-µs/launch")
	b.ReportMetric(float64(queuedT.Nanoseconds())/1e3/launches, "queued-µs/launch")
	b.ReportMetric(float64(syncT)/float64(queuedT), "sync/queued")
	b.ReportMetric(0, "ns/op")
}

// SubmitN submits exe n times with args, each after the events in after,
// and returns the n events in order.
func SubmitN(t testing.TB, ctx context.Context, exe *backends.Executable, args []driver.LaunchArg, n int, after ...driver.Event) []driver.Event {
	t.Helper()
	evs := make([]driver.Event, 0, n)
	for range n {
		ev, err := exe.Submit(ctx, args, after...)
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	return evs
}

// compileVadd compiles vadd on dev and makes its args for 4096 elements;
// the caller releases the executable.
func compileVadd(t testing.TB, dev *backends.Device) (*backends.Executable, []driver.LaunchArg) {
	t.Helper()
	exe, err := dev.Compile(context.Background(), Vadd(t))
	require.NoError(t, err)
	return exe, MakeArgs(t, dev.Pool(), VaddArgs(4096))
}

// RunCloseCancelsDeferred checks that closing dev fails its work that waits
// for a host event with ErrClosed, and that the work submitted before it,
// waiting for nothing, runs. It closes dev.
func RunCloseCancelsDeferred(t *testing.T, devDriver driver.Device) {
	dev := backends.DeviceOf(devDriver)
	t.Helper()
	ctx := context.Background()
	exe, args := compileVadd(t, dev)
	ran, err := exe.Submit(ctx, args)
	require.NoError(t, err)
	gate := driver.NewHostEvent()
	waiting, err := exe.Submit(ctx, args, gate)
	require.NoError(t, err)
	require.NoError(t, dev.Close())
	require.NoError(t, ran.Err(), "work submitted before Close, waiting for nothing, ran")
	require.ErrorIs(t, waiting.Err(), driver.ErrClosed, "work that waited for a host event is cancelled")
	gate.Complete(nil)
	require.NoError(t, exe.Release())
}

// RunLostDeviceFailsPendingWork checks that once lose(cause) has marked dev
// lost (it returns ErrDeviceLost), dev's pending work, held back for a host
// event included, fails with ErrDeviceLost and cause while that event is
// still pending, and that dev takes no more launches or transfers.
func RunLostDeviceFailsPendingWork(t *testing.T, devDriver driver.Device, lose func(cause error) error, cause error) {
	dev := backends.DeviceOf(devDriver)
	t.Helper()
	ctx := context.Background()
	exe, args := compileVadd(t, dev)
	defer exe.Release()
	gate := driver.NewHostEvent()
	waiting, err := exe.Submit(ctx, args, gate)
	require.NoError(t, err)
	require.ErrorIs(t, lose(cause), driver.ErrDeviceLost)
	err = waiting.Wait(ctx)
	require.ErrorIs(t, err, driver.ErrDeviceLost, "deferred work fails once the device is lost, its host event still pending")
	require.ErrorIs(t, err, cause)
	gate.Complete(nil)
	_, err = exe.Submit(ctx, args)
	require.ErrorIs(t, err, driver.ErrDeviceLost, "a lost device takes no more work")
	require.ErrorIs(t, dev.Pool().Write(ctx, args[0].Buffer, 0, make([]byte, 4)), driver.ErrDeviceLost)
}
