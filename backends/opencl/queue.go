package opencl

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/internal/gpuqueue"
	"github.com/zyxtt/zyxtt/internal/core"
)

// The device's work goes to its in-order command queue as non-blocking
// enqueues. The queue runs its commands in order, so work that waits for
// an event of the same device already on the queue needs no wait list.
// Work that waits for an event the queue cannot see (another device's, a
// HostEvent, or one of this device's that is itself held back) is held
// back in a deferred list, and a goroutine enqueues it once that event has
// succeeded (or fails it, enqueueing nothing, when the event fails, its
// ctx ends or the device closes). Launches keep their submission order:
// every launch after a held-back one is held back behind it. Held-back
// transfers keep their order among themselves, but a transfer that waits
// for nothing is enqueued at once, ahead of them, as the host pool does: a
// Write that follows a WriteAsync gated on a host event does not wait for
// that event. Order between transfers and launches comes from the queue.
//
// A command asks the driver for a cl_event only when it is timed (its
// profiling counters are read from it). On NVIDIA's driver an event costs
// about 2 µs a command, and 6-9 µs on the profiling queue the device
// keeps (bench/gpu/cl_launch_native.c "profiling"). Commands without one
// end when a later command's event says so: since the queue is in order,
// the completer, settling a run of them, waits for the next command that
// has an event or, where none follows, for a marker it enqueues then (one
// per batch of up to completerBatch commands); a waiter for the newest
// command uses clFinish, as a native program does. A failed status at the
// end of such a run is every command's of it: the driver does not say
// which one failed (on NVIDIA a fault loses the context, and PoCL fails
// every command behind a failed one).
//
// User events with a negative status are not used for foreign events:
// implementations terminate every command queued behind the terminated
// one (PoCL does, whatever its wait list), which would fail work that does
// not depend on the failure. One completer goroutine per device waits for
// the enqueued commands in order, reads their status, gives back what
// they hold (buffers, the kernel, pinned memory, the cl_event) and ends
// their events, whether or not anyone waits.

// completerBatch is how many enqueued commands the completer takes at a
// time (one clFlush for them all).
const completerBatch = 256

// pendingDepth is how many enqueued commands wait to be settled before a
// submission waits for room.
const pendingDepth = 4096

// completerIdle is how long the completer lets commands gather before it
// settles fewer than completerBatch of them while nobody waits for one
// (device.watched): its driver calls (a flush, a status read, a wait and a
// release per command) would otherwise compete, command by command, with a
// submitter enqueueing back to back. A waiter settles its own commands
// (settleThrough) or marks the device watched, so no wait is delayed.
const completerIdle = time.Millisecond

// While nobody waits and commands keep arriving, the completer pauses
// (completerIdle each) until they stop, up to completerPauses pauses or
// completerGather commands, before it settles them: on the H200's NVIDIA
// driver its status reads and releases (about 5 µs of driver time per
// command in a CPU profile) interleaved with a submitter enqueueing back to
// back, which then waited in clEnqueueNDRangeKernel for about as long as it
// ran.
const (
	completerPauses = 16
	completerGather = pendingDepth * 3 / 4
)

// The kinds of work, each with its deferred list.
const (
	launches  = gpuqueue.Launches
	transfers = gpuqueue.Transfers
)

// event is the completion of one command of a device. Its Go side is a
// HostEvent that the completer ends; onQueue is set once its command is on
// the device's queue, which then orders the commands after it.
type event struct {
	*core.HostEvent
	dev     *device
	onQueue atomic.Bool
	seq     uint64 // its command's number (cmd.seq); 0 until enqueued, under inqMu
}

// Wait waits for the work to end. A caller whose ctx cannot end settles
// the commands up to its own itself when no one else is settling (a
// blocking clWaitForEvents on its own thread, as a native program waits),
// so that a launch and its wait hand nothing between goroutines; any
// other waits for the completer.
func (e *event) Wait(ctx context.Context) error {
	if ctx.Done() == nil {
		e.dev.settleThrough(e)
	} else {
		e.watch()
	}
	return e.HostEvent.Wait(ctx)
}

// Done is closed once the work has ended; asking for it while the work is
// pending has the completer settle at once (completerIdle).
func (e *event) Done() <-chan struct{} {
	e.watch()
	return e.HostEvent.Done()
}

// watch marks the device watched while e's command is pending.
func (e *event) watch() {
	if e.dev == nil || e.dev.watched.Load() {
		return
	}
	select {
	case <-e.HostEvent.Done():
	default:
		e.dev.watched.Store(true) // a pacing completer looks every tenth of completerIdle
	}
}

// settleThrough settles the enqueued commands up to e's when no one else
// is settling and e's command is still waiting to be.
func (d *device) settleThrough(e *event) {
	d.inqMu.Lock()
	seq := e.seq // set by issue under inqMu
	if d.settling || seq == 0 || len(d.inq) == 0 || seq < d.inq[0].seq {
		d.inqMu.Unlock()
		return
	}
	k := int(seq-d.inq[0].seq) + 1
	if k > len(d.inq) {
		d.inqMu.Unlock()
		return
	}
	batch := append(d.waiterBatch[:0], d.inq[:k]...)
	newest := seq == d.seq
	d.takeLocked(k)
	d.settling = true
	d.inqMu.Unlock()
	if newest && d.q.LostErr() == nil {
		// The newest command: clFinish waits for it as a native program
		// would, and the batch has ended when it returns.
		err := d.l.Finish(d.queue)
		res, _ := d.lost(err)
		for _, c := range batch {
			if c.cl != 0 {
				d.settle(c, err)
			} else {
				d.settleRun([]*cmd{c}, res)
			}
		}
	} else {
		d.settleBatch(batch)
	}
	clear(batch)
	d.waiterBatch = batch[:0]
	d.inqMu.Lock()
	d.settling = false
	if len(d.inq) > 0 || d.stopping {
		d.compCond.Signal()
	}
	d.inqMu.Unlock()
}

// takeLocked drops the k oldest commands from inq, which the caller now
// settles. inqMu is held.
func (d *device) takeLocked(k int) {
	n := copy(d.inq, d.inq[k:])
	clear(d.inq[n:])
	d.inq = d.inq[:n]
	d.roomCond.Broadcast()
}

// cmd is one piece of device work on its way to the queue.
type cmd struct {
	gpuqueue.Item        // ctx, events, and the hold that Release gives back
	seq           uint64 // its place among the device's enqueued commands
	op            string
	kind          int // launches or transfers
	ev            *event
	// enqueue puts the work on the queue and, when out is not nil, writes
	// the command's event to *out. Nil is no native work (an empty
	// launch): it ends with the commands before it.
	enqueue func(out *clEvent) error
	// timed: the completer reads the command's profiling counters into ns.
	timed bool
	// waited: the submitter waits for it with a ctx that cannot end, and
	// its Wait settles it (settleThrough). inline is set while the
	// submitter's own call may enqueue it (under q.Mu): such an enqueue
	// does not wake the completer, which would take the command from the
	// waiter about to settle it.
	waited, inline bool
	ns             float64
	cl             clEvent // the command's event; the completer's reference
}

func (c *cmd) End(err error) { c.ev.Complete(err) }

// own reports whether e is an event of a command of d.
func (d *device) own(e driver.Event) (*event, bool) {
	o, ok := e.(*event)
	return o, ok && o.dev == d
}

// enqueued reports whether e is an event of a command of d that is on the
// queue: the queue runs what comes after it in order.
func (d *device) enqueued(e driver.Event) bool {
	o, ok := d.own(e)
	return ok && o.onQueue.Load()
}

// ownEnded is the queue's Own hook: the end of an event of d.
func (d *device) ownEnded(e driver.Event) (<-chan struct{}, bool) {
	o, ok := d.own(e)
	if !ok {
		return nil, false
	}
	return o.Done(), true
}

// submit hands c to the queue, or to the deferred list when it waits for
// an event the wait list cannot hold or (a launch) an earlier launch is
// held back, and returns its event.
// An error (the device closed or lost, an enqueue refused) means nothing
// was queued; c's hold has been given back either way.
func (d *device) submit(c *cmd) (driver.Event, error) {
	c.ev = &event{HostEvent: core.NewHostEvent(), dev: d}
	c.inline = c.waited
	if err := d.q.Submit(c, c.kind, c.op); err != nil {
		return nil, err
	}
	if c.inline {
		// Held back and enqueued later by another goroutine: that enqueue
		// wakes the completer (the wait may have looked for it already).
		d.q.Mu.Lock()
		c.inline = false
		d.q.Mu.Unlock()
	}
	return c.ev, nil
}

// issue enqueues c and hands it to the completer. Its own events are on
// the queue already (gpuqueue holds c back until they are), which orders
// c after them. The caller holds d.q.Mu. On an error c's hold is given
// back and nothing was queued.
func (d *device) issue(c *cmd) error {
	if c.enqueue != nil {
		var out *clEvent
		if c.timed {
			out = &c.cl
		}
		if err := c.enqueue(out); err != nil {
			c.Release()
			return err
		}
	}
	// Work that runs nothing (an empty launch) has no command: it ends
	// with the commands before it, as the next event says.
	c.ev.onQueue.Store(true)
	d.q.Cond.Broadcast() // for work waiting for it to be enqueued
	d.inqMu.Lock()
	for len(d.inq) >= pendingDepth {
		d.roomCond.Wait()
	}
	d.seq++
	c.seq, c.ev.seq = d.seq, d.seq
	d.inq = append(d.inq, c)
	if !d.settling && !c.inline {
		d.compCond.Signal()
	}
	d.inqMu.Unlock()
	return nil
}

// complete is the device's completer: it settles the enqueued commands in
// order, those a waiter settles itself aside, until the device closes (its
// queue finished).
func (d *device) complete() {
	defer close(d.completerDone)
	batch := make([]*cmd, 0, completerBatch)
	// seen is len(inq) at the completer's last look; pauses counts the
	// pauses since it last settled.
	seen, pauses := 0, 0
	for {
		d.inqMu.Lock()
		for (len(d.inq) == 0 || d.settling) && !(d.stopping && len(d.inq) == 0 && !d.settling) {
			d.compCond.Wait()
		}
		if len(d.inq) == 0 {
			d.inqMu.Unlock()
			return
		}
		if n := len(d.inq); n > seen && n < completerGather && pauses < completerPauses && !d.stopping && !d.watched.Load() {
			// Nobody waits and commands keep coming: let the burst
			// gather, and settle it once it stops growing.
			seen = n
			pauses++
			d.inqMu.Unlock()
			for i := 0; i < 10 && !d.watched.Load(); i++ {
				time.Sleep(completerIdle / 10)
			}
			continue
		}
		pauses = 0
		k := min(len(d.inq), completerBatch)
		batch = append(batch[:0], d.inq[:k]...)
		d.takeLocked(k)
		seen = len(d.inq)
		d.settling = true
		d.inqMu.Unlock()
		d.settleBatch(batch)
		clear(batch)
		d.inqMu.Lock()
		d.settling = false
		if len(d.inq) == 0 {
			d.watched.Store(false)
		}
		d.inqMu.Unlock()
	}
}

// settleBatch flushes the queue and settles each command of batch in
// order, each run of commands without an event as soon as the next event
// (a later command's, or a marker enqueued for the batch's tail) says it
// has ended, so that an early command's event does not wait for the later
// ones.
func (d *device) settleBatch(batch []*cmd) {
	var flushErr error
	if d.q.LostErr() == nil {
		flushErr = d.l.Flush(d.queue)
	}
	start := 0
	for i, c := range batch {
		if c.cl == 0 {
			continue
		}
		// c's event ends after the commands before it: its status is
		// theirs too.
		err := d.runResult(c.cl, flushErr)
		d.settleRun(batch[start:i], err)
		d.settle(c, flushErr)
		start = i + 1
	}
	if start < len(batch) {
		d.settleRun(batch[start:], d.tailResult(flushErr))
	}
}

// settleRun ends commands without an event with the outcome of the event
// after them: nil, a lost device, or a failed status, which is each one's.
func (d *device) settleRun(run []*cmd, res runOutcome) {
	for _, c := range run {
		err := res.err
		if err == nil && res.status < 0 {
			err = d.execError(c, res.status)
		}
		c.Release()
		c.ev.Complete(err)
	}
}

// runOutcome is what an event says of the commands before it: the
// device's loss (err), or its status.
type runOutcome struct {
	err    error
	status int32
}

// lost is the outcome when the device is lost or the flush before the
// run failed (which loses it); ok is false otherwise.
func (d *device) lost(flushErr error) (runOutcome, bool) {
	switch {
	case d.q.LostErr() != nil:
		return runOutcome{err: d.q.LostErr()}, true
	case flushErr != nil:
		return runOutcome{err: d.q.MarkLost(flushErr)}, true
	}
	return runOutcome{}, false
}

// runResult waits for the command of ev and returns its outcome.
func (d *device) runResult(ev clEvent, flushErr error) runOutcome {
	if res, ok := d.lost(flushErr); ok {
		return res
	}
	st, _, err := d.eventResult(ev, false, &d.prof)
	if err != nil {
		return runOutcome{err: d.q.MarkLost(err)}
	}
	return runOutcome{status: st}
}

// tailResult waits for everything enqueued so far: through a marker's
// event (OpenCL 1.2), or clFinish.
func (d *device) tailResult(flushErr error) runOutcome {
	if res, ok := d.lost(flushErr); ok {
		return res
	}
	if !d.l.HasMarkerWithWaitList() {
		res, _ := d.lost(d.l.Finish(d.queue))
		return res
	}
	var ev clEvent
	if err := d.l.EnqueueMarkerWithWaitList(d.queue, nil, &ev); err != nil {
		return runOutcome{err: d.q.MarkLost(err)}
	}
	res := d.runResult(ev, nil)
	_ = d.l.ReleaseEvent(ev)
	return res
}

// waitFor blocks until the command of ev has ended. The completer calls
// it; the event array is its own.
func (d *device) waitFor(ev clEvent) error {
	d.waitOne[0] = ev
	return d.l.WaitForEvents(d.waitOne[:])
}

func isExecStatusError(err error) bool {
	var be *driver.Error
	return errors.As(err, &be) && be.Native == statusName(clExecStatusErrorForEvents)
}

// settle waits for one enqueued command with an event and ends it: its
// status (or the device's loss) becomes the event's error, its hold is
// given back, then the event ends and the cl_event is released. flushErr
// is the failure of the flush before it, which loses the device.
func (d *device) settle(c *cmd, flushErr error) {
	var err error
	switch {
	case d.q.LostErr() != nil:
		err = d.q.LostErr()
	case flushErr != nil:
		err = d.q.MarkLost(flushErr)
	default:
		err = d.result(c)
	}
	c.Release()
	c.ev.Complete(err)
	_ = d.l.ReleaseEvent(c.cl)
	c.cl = 0
}

// result reads an ended command's status and, when timed, its run time.
func (d *device) result(c *cmd) error {
	st, ns, err := d.eventResult(c.cl, c.timed, &d.prof)
	if err != nil {
		return d.q.MarkLost(err)
	}
	if st < 0 {
		return d.execError(c, st)
	}
	c.ns = ns
	return nil
}

// profile is the memory an event's status and profiling counters are read
// into: the completer's own, on the heap, so that reading them allocates
// nothing.
type profile struct {
	status     int32
	start, end uint64
}

// eventResult waits for the command of ev unless it has ended, and
// returns its status and, when timed and it succeeded, its device run
// time in nanoseconds.
func (d *device) eventResult(ev clEvent, timed bool, p *profile) (int32, float64, error) {
	l := d.l
	if err := l.EventStatus(ev, &p.status); err != nil {
		return 0, 0, err
	}
	if p.status > clComplete { // not ended yet: wait
		switch err := d.waitFor(ev); {
		case err == nil:
			p.status = clComplete // a successful wait means it completed
		case !isExecStatusError(err):
			return 0, 0, err
		default:
			if err := l.EventStatus(ev, &p.status); err != nil {
				return 0, 0, err
			}
		}
	}
	if p.status < 0 || !timed {
		return p.status, 0, nil
	}
	if err := l.GetEventProfilingInfo(ev, clProfilingCommandStart, &p.start); err != nil {
		return 0, 0, err
	}
	if err := l.GetEventProfilingInfo(ev, clProfilingCommandEnd, &p.end); err != nil {
		return 0, 0, err
	}
	if p.end < p.start {
		return 0, 0, fmt.Errorf("%s: profiling end %d before start %d", Name, p.end, p.start)
	}
	return p.status, float64(p.end - p.start), nil
}

// errExecution is the sentinel of a command the device ran and failed.
var errExecution = errors.New("the command failed on the device")

// execError is the error of a command whose status is negative: the
// failure of an event of this device it waited for, or its own. A
// CL_OUT_OF_RESOURCES or CL_DEVICE_NOT_AVAILABLE status is how drivers
// report a context that can run nothing more: the device is lost.
func (d *device) execError(c *cmd, st int32) error {
	for i, e := range c.After {
		if o, ok := d.own(e); ok {
			if err := o.Err(); err != nil {
				return core.DependencyFailed(i, err)
			}
		}
	}
	if st == clOutOfResources || st == clDeviceNotAvailable {
		return d.q.MarkLost(&driver.Error{Backend: Name, Op: c.op, Native: statusName(status(st)), Err: errExecution})
	}
	return &driver.Error{Backend: Name, Op: c.op, Native: statusName(status(st)), Err: errExecution}
}
