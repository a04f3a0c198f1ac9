package cuda

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/core"
)

// How work reaches a GPU (docs/cuda.md, "Asynchronous execution").
//
// A device has three non-blocking streams: launches (kernels, cuBLAS) and
// device-to-device copies on the compute stream, writes on the h2d stream,
// reads on the d2h stream, so that a kernel, an upload and a download run
// at once on the GPU's engines. Every submission (a launch, a transfer) is
// an event: the work is put on its stream under the device's submission
// lock, and the Go event stands for a CUDA event (CU_EVENT_DISABLE_TIMING,
// from the device's pool of reusable ones) recorded on that stream after
// the work. Since a stream runs in order, one CUDA event recorded later
// marks the end of everything before it, so events are recorded lazily,
// never on the submission path: when the work is waited for, when work on
// another stream must wait for it, or by the reaper (once per wake, for
// everything submitted since the last record).
//
// Order on the GPU comes from the streams and from cuStreamWaitEvent:
//   - a dependency that is an event of this device already on a stream is
//     a cuStreamWaitEvent (none when it is on the same stream);
//   - work that touches a device buffer waits for the last work that wrote
//     it and, when it writes, for the work that read it since, where that
//     work runs on another stream (so transfers of one buffer, and a
//     transfer and a launch on one buffer, run in submission order without
//     events);
//   - a dependency that is not decided yet and cannot be waited for on the
//     GPU (a host event, another device's event, an event of this device
//     still waiting itself) is waited for on the host: the submission goes
//     to the device's gate, a FIFO that one worker goroutine (running only
//     while the gate holds work) empties in order, waiting for each entry's
//     host-side dependencies and then putting it on its stream. While the
//     gate holds anything every later submission joins it, so submission
//     order is kept and the caller never blocks. The GPU itself never waits
//     for the host: everything on a stream completes on its own, so a
//     synchronising driver call (a free, a stream synchronise at Close)
//     cannot deadlock.
//
// Completion: a reaper goroutine, running only while work is on a stream,
// polls the oldest CUDA event of each stream (cuEventQuery, sleeping
// between rounds),
// and for each one that has ended completes the Go event, gives back what
// the work held (buffer references, the executable, a bounce buffer) and
// returns the CUDA event to the pool. Event.Wait polls the CUDA event
// itself, so a waiter sees the end within microseconds whatever the reaper
// is doing; whichever of them claims the event first completes it (running
// a read's copy out of its bounce buffer first).

// The streams of a device.
const (
	streamCompute = iota
	streamH2D
	streamD2H
	numStreams
)

// Event states.
const (
	evGated    int32 = iota // in the gate, not on a stream yet
	evEnqueued              // on a stream; cu marks its end
	evDone
)

// Claims on a gated event: the worker that puts it on a stream, or a
// cancellation (ctx, Close) that ends it first.
const (
	claimFree int32 = iota
	claimTaken
	claimCancelled
)

// maxInFlight bounds the work on a device's streams: a submission beyond it
// waits until the oldest has ended. It bounds the CUDA events made. A
// variable so that a benchmark can hold the reaper off.
var maxInFlight int32 = 4096

// recordEvery is how many submissions that nobody waits for yet may share
// one CUDA event before the submitter records it itself (enqueueLocked),
// under the submission lock it already holds: then the reaper, polling
// those events, takes no lock that a submitter queueing back to back
// needs. At a launch every few microseconds that is one cuEventRecord
// about every half millisecond, under the reaper's idle pause.
const recordEvery = 128

// Polling. Event.Wait spins for spinFor, as cuStreamSynchronize spins, so
// that a wait of up to a few milliseconds ends within a microsecond of the
// work. It yields only every yieldEvery polls: runtime.Gosched wakes an
// idle thread to look for work (a futex call, microseconds) each time.
// After spinFor it sleeps 1/128 of the time it has waited so far (at least
// minSleep, at most its cap) in a nanosleep, which wakes within tens of
// microseconds (a Go timer shorter than a millisecond may wait for the
// netpoller's millisecond), so a long wait costs few polls and overshoots
// by under 1%. The reaper never spins and sleeps a sixteenth of its idle
// time (at least reaperMinSleep) on a Go timer: its driver calls compete
// with the submitting thread's.
const (
	spinFor        = 2 * time.Millisecond
	minSleep       = 10 * time.Microsecond
	reaperMinSleep = 50 * time.Microsecond
	yieldEvery     = 64
	waitMaxSleep   = time.Millisecond
	reaperMaxSleep = 200 * time.Microsecond
	reaperLinger   = 200 * time.Microsecond // an idle reaper's wait for more work before it exits
)

// reaperIdleSleep is the reaper's pause between rounds while work is
// pending that nobody waits for through Done: at a launch every few
// microseconds, a round then retires some hundreds of launches at once.
// A variable so that a benchmark can compare the fast pace.
var reaperIdleSleep = time.Millisecond

// pause waits before poll number polls of something waited for since
// waited.
func pause(waited time.Duration, polls int, maxSleep time.Duration) {
	if waited < spinFor {
		if polls%yieldEvery == 0 {
			runtime.Gosched()
		}
		return
	}
	nap(min(max(waited/128, minSleep), maxSleep))
}

// nap sleeps for d in the kernel (nanosleep), not on a Go timer.
func nap(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil)
}

// sleepFor is the sleep between polls after a wait of waited.
func sleepFor(waited, maxSleep time.Duration) time.Duration {
	return min(max(waited/16, minSleep), maxSleep)
}

// event is the Event of work submitted to a CUDA device.
type event struct {
	dev    *Device
	stream int
	// cu is the CUDA event recorded after the work, 0 until one is (under
	// the submission lock; never changed after). Several events of one
	// stream may share one; the last of them owns it (returns it to the
	// pool when retired, after the others: the reaper retires in order).
	cu     atomic.Uintptr
	ownsCU bool // set before cu
	// seq is the event's place on its stream (1, 2, …), set when it is put
	// on the stream: the device's tailSeq of the stream is the newest.
	seq uint64

	state     atomic.Int32
	claim     atomic.Int32 // gated events only
	finishing atomic.Bool  // claimed by whoever completes an enqueued event

	mu   sync.Mutex
	done chan struct{} // made by Done, closed at completion
	enq  chan struct{} // gated events only: closed when the state leaves evGated
	err  error

	// kind and detail name the work in errors ("launch", "vadd"); they
	// outlive op.
	kind, detail string
	// op is what the work is and holds, from opPool; back there once the
	// work has ended and been retired (nothing reads it after that), so
	// that an event the caller keeps is small: a queued launch allocates
	// only the event.
	op *op

	// synced: a synchronous launch's event that its submitter waits for
	// on the stream itself (submit: syncTail). Such an event never leaves
	// the package, so once syncTail has retired it, Launch gives it back
	// to eventPool (Device.recycle); its retirement keeps op.acc for that.
	synced bool
	// alone: a synchronous launch that ran alone (runAloneLocked): nothing
	// of the device refers to it, and Launch pools it at once.
	alone bool
}

// eventPool holds the events of synchronous launches that have ended, for
// the next submission: a launch that is waited for allocates no event.
var eventPool = sync.Pool{New: func() any { return new(event) }}

// pooledEvents counts the events put in eventPool and not taken since (an
// upper bound: the pool may drop some at a collection). While it is zero
// newEvent allocates without asking the pool: a Get from an empty pool
// looks through every P's share first, which on the H200 host (16 Ps) was
// a tenth of a queued launch's Go time, and queued events never come back.
var pooledEvents atomic.Int32

// opPool holds the ops of retired work, for the next submission.
var opPool = sync.Pool{New: func() any { return new(op) }}

// op is a submission's work.
type op struct {
	ctx        context.Context
	after      []driver.Event
	acc        []access // device buffers the work touches
	accInline  [3]access
	vals       []uint64 // a launch's parameter values
	valsInline [6]uint64
	// issue puts the work on stream s: called under the submission lock,
	// on a locked thread with the context current. Nil (and no kernel) is
	// no work (the event still orders what waits for it).
	issue func(s uintptr) error
	// kernel is a kernel launch's work, issued instead of issue: kept in
	// the op so that a launch allocates no closure.
	kernel kernelRun
	// job is work the host does instead (a staged copy of Go memory): the
	// worker runs it in the gate's order, outside the submission lock, and
	// the work has ended when it returns.
	job func(ctx context.Context, s uintptr) error
	// finish is the host's part once the GPU work has succeeded (a read's
	// copy out of its bounce buffer).
	finish func()
	// hostWait makes the gate wait on the host for every dependency, this
	// device's too, and prep then runs before the work is issued (a write's
	// copy of Go memory into its bounce buffer, which must not read the
	// memory before what produces it has ended).
	hostWait bool
	prep     func()
	// waited says the submitter waits for the work itself (Launch): its
	// Wait completes it, so no reaper is started for it.
	waited bool
	// mayRunAlone: a synchronous launch, which runs alone on an idle
	// device (submit: runAloneLocked).
	mayRunAlone bool
	holds       holds
	stop        func() bool // ends the ctx watch of a gated submission
}

// access is a device buffer a submission reads or writes.
type access struct {
	buf   *devBuf
	write bool
}

func (o *op) addAccess(b *devBuf, write bool) {
	if o.acc == nil {
		o.acc = o.accInline[:0]
	}
	o.acc = append(o.acc, access{buf: b, write: write})
}

// heldBuf is a buffer reference a submission holds.
type heldBuf struct {
	pool *Pool
	id   driver.BufferID
}

// holds is what pending work keeps alive: buffer references, its
// executable and its bounce buffer. drop gives them back.
type holds struct {
	bufs   []heldBuf
	inline [3]heldBuf
	run    interface{ endRun() }
	bounce *bounceBuf
}

func (h *holds) add(p *Pool, id driver.BufferID) {
	if h.bufs == nil {
		h.bufs = h.inline[:0]
	}
	h.bufs = append(h.bufs, heldBuf{pool: p, id: id})
}

func (h *holds) drop() {
	for _, b := range h.bufs {
		// An id the device's Close drained is unknown: nothing to give back.
		_ = b.pool.bufs.Release(b.id)
	}
	h.bufs = nil
	if h.run != nil {
		h.run.endRun()
		h.run = nil
	}
	if h.bounce != nil {
		h.bounce.release()
		h.bounce = nil
	}
}

func (d *Device) newEvent(stream int, ctx context.Context, kind, detail string) *event {
	var e *event
	if pooledEvents.Load() > 0 {
		if pooledEvents.Add(-1) >= 0 {
			e = eventPool.Get().(*event)
		} else {
			pooledEvents.Add(1) // another submission took the last one
		}
	}
	if e == nil {
		e = new(event)
	}
	e.dev, e.stream = d, stream
	e.kind, e.detail = kind, detail
	if e.op == nil { // a pooled event keeps its op
		e.op = opPool.Get().(*op)
	}
	e.op.ctx = ctx
	return e
}

// recycle gives e, the event of a synchronous launch that syncTail
// retired, back to eventPool. The references the device still holds to it
// are dropped first, under the submission lock: the stream's list of
// events without a CUDA event (e and what came before it on the stream,
// all ended), and the last access of its buffers.
func (d *Device) recycle(e *event) {
	d.subMu.Lock()
	u := d.unrecorded[e.stream]
	if i := slices.Index(u, e); i >= 0 {
		n := copy(u, u[i+1:])
		clear(u[n:])
		d.unrecorded[e.stream] = u[:n]
	}
	for _, a := range e.op.acc {
		if a.buf.lastWrite == e {
			a.buf.lastWrite = nil
		}
		if a.buf.reads[e.stream] == e {
			a.buf.reads[e.stream] = nil
		}
	}
	d.subMu.Unlock()
	poolEvent(e)
}

// poolEvent clears e, an event nothing refers to any longer, and puts it
// in eventPool. The op stays with the event: the next synchronous launch
// takes both.
func poolEvent(e *event) {
	o := e.op
	*o = op{}
	*e = event{op: o}
	eventPool.Put(e)
	pooledEvents.Add(1)
}

// Done is closed once the work has ended. Asking for it while the work
// is pending puts the reaper at its fast pace: someone now waits for the
// reaper to see the end.
func (e *event) Done() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done == nil {
		e.done = make(chan struct{})
		if e.state.Load() == evDone {
			close(e.done)
		}
	}
	if e.state.Load() != evDone && e.dev != nil && !e.dev.watched.Load() {
		e.dev.watched.Store(true)
	}
	return e.done
}

// Err is the work's error once it has ended, nil before.
func (e *event) Err() error {
	if e.state.Load() != evDone {
		return nil
	}
	return e.err // written before the state became evDone
}

// complete ends the event with err; only the first call counts.
func (e *event) complete(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.state.Load()
	if st == evDone {
		return
	}
	e.err = err
	e.state.Store(evDone)
	if e.done != nil {
		close(e.done)
	}
	if st == evGated && e.enq != nil {
		close(e.enq)
	}
}

// markEnqueued moves a gated (or new) event onto its stream.
func (e *event) markEnqueued() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.state.Store(evEnqueued)
	if e.enq != nil {
		close(e.enq)
	}
}

// cancel ends a gated event that has not been claimed with err, giving
// back what it holds; it does nothing once the worker has taken it.
func (e *event) cancel(err error) {
	if e.claim.CompareAndSwap(claimFree, claimCancelled) {
		e.op.holds.drop()
		e.complete(err)
	}
}

// finishWith completes an enqueued event whose GPU work has ended (err nil)
// or failed. The caller that claims it runs the host step and completes it;
// it reports whether that was this caller.
func (e *event) finishWith(err error) bool {
	if !e.finishing.CompareAndSwap(false, true) {
		return false
	}
	if err == nil && e.op.finish != nil {
		e.op.finish()
	}
	e.complete(err)
	return true
}

// Wait blocks until the work has ended or ctx is done. An event on a stream
// is polled, spinning briefly and then backing off: while it is the newest
// work on its stream, the stream itself (cuStreamQuery, no CUDA event
// needed), else its CUDA event (cuEventQuery, recorded now when it has none
// yet). The caller that sees the end completes and retires the work on the
// stream up to the event, so a waited-for launch needs no reaper.
func (e *event) Wait(ctx context.Context) error {
	d := e.dev
	var start time.Time
	polls := 0
	for {
		switch e.state.Load() {
		case evDone:
			return e.err
		case evGated:
			var ch <-chan struct{} = e.enq
			if e.enq == nil {
				ch = e.Done()
			}
			select {
			case <-ch:
			case <-ctx.Done():
				d.kickReaper()
				return ctx.Err()
			}
			continue
		}
		if c := ctx.Done(); c != nil {
			select {
			case <-c:
				d.kickReaper()
				return ctx.Err()
			default:
			}
		}
		cu := e.cu.Load()
		if cu == 0 && d.tailSeq[e.stream].Load() != e.seq {
			// Newer work follows: the stream's end is not e's.
			if cu = d.recordFor(e); cu == 0 && d.lost.Load() != nil {
				d.kickReaper() // the reaper fails every pending event
				return e.waitDone(ctx)
			}
		}
		r, through := d.poll(e, cu)
		switch {
		case r == cudaSuccess:
			d.completeThrough(e.stream, through)
			return e.waitDone(ctx)
		case r == cudaErrorNotReady:
		default:
			op := "cuEventQuery"
			if e.cu.Load() == 0 {
				op = "cuStreamQuery"
			}
			err := d.fail(op, r)
			if !r.sticky() && e.finishWith(e.failure(err)) {
				d.kickReaper() // it retires the failed work
				return e.err
			}
			// A lost device: the reaper fails every pending event.
			d.kickReaper()
			return e.waitDone(ctx)
		}
		if start.IsZero() {
			start = time.Now()
		}
		polls++
		pause(time.Since(start), polls, waitMaxSleep)
	}
}

func (e *event) waitDone(ctx context.Context) error {
	select {
	case <-e.Done():
		return e.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// failure is err as the event's error: naming the device and the work.
func (e *event) failure(err error) error {
	if e.detail != "" {
		return fmt.Errorf("%s: %s %q: %w", e.dev.name, e.kind, e.detail, err)
	}
	return fmt.Errorf("%s: %s: %w", e.dev.name, e.kind, err)
}

// poll asks whether e's work has ended: through its CUDA event cu, or
// with none, through its stream (everything on it, e and what came after).
// On success every event of the stream up to through has ended.
func (d *Device) poll(e *event, cu uintptr) (r cuResult, through uint64) {
	if cu != 0 {
		return d.query(cu), e.seq
	}
	through = d.tailSeq[e.stream].Load() // before the query: put on the stream before it
	return d.queryStream(e.stream), through
}

// queryStream is cuStreamQuery of the device's stream s with its context
// current: success means everything put on s before the call has ended.
func (d *Device) queryStream(s int) cuResult {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := d.drv.cuCtxSetCurrent(d.ctx); r != cudaSuccess {
		return r
	}
	return d.drv.cuStreamQuery(d.streams[s])
}

// completeThrough completes and retires the events of stream s up to seq,
// oldest first: their work has ended. Events another caller is completing
// are waited for.
func (d *Device) completeThrough(s int, seq uint64) {
	d.reapMu.Lock()
	defer d.reapMu.Unlock()
	d.completeThroughLocked(s, seq)
}

// completeThroughLocked is completeThrough with reapMu held. The events
// leave the FIFO under one hold of fifoMu, which submissions take too, and
// are completed and retired after it, in order.
func (d *Device) completeThroughLocked(s int, seq uint64) {
	batch := d.reapBatch[:0]
	d.fifoMu.Lock()
	for e := d.fifo[s].front(); e != nil && e.seq <= seq; e = d.fifo[s].front() {
		batch = append(batch, e)
		d.fifo[s].pop()
	}
	d.inflight.Add(-int32(len(batch)))
	d.fifoMu.Unlock()
	for _, e := range batch {
		if !e.finishWith(nil) {
			<-e.Done() // another caller is completing it
		}
		d.retire(e, e.Err() == nil)
	}
	clear(batch)
	d.reapBatch = batch[:0]
}

// sharedThrough is the seq of the last of the events at the front of
// stream s's FIFO that share the CUDA event cu, which has completed: they
// have all ended. They are contiguous, and cu goes back to the pool only
// once the last of them is retired, so no later work has it meanwhile.
func (d *Device) sharedThrough(s int, cu uintptr, seq uint64) uint64 {
	d.fifoMu.Lock()
	defer d.fifoMu.Unlock()
	q := &d.fifo[s]
	for _, e := range q.items[q.head:] {
		if e.cu.Load() != cu {
			break
		}
		seq = max(seq, e.seq)
	}
	return seq
}

// submitterRecords says the reaper should leave stream s's newest work
// without a CUDA event for now: work was put on the stream since the
// reaper's last look, so its submitter is at it and records one itself
// every recordEvery submissions (recording here would contend for the
// submission lock). Not while someone waits through Done. reapMu is held.
func (d *Device) submitterRecords(s int) bool {
	seq := d.tailSeq[s].Load()
	busy := seq != d.reapSeen[s] && !d.watched.Load() && !d.closed.Load()
	d.reapSeen[s] = seq
	return busy
}

// kickReaper starts the reaper when work is on the streams and none runs:
// work whose submitter stopped waiting for it (waited) must still end.
func (d *Device) kickReaper() {
	d.watched.Store(true)
	d.fifoMu.Lock()
	defer d.fifoMu.Unlock()
	if d.reaping {
		return
	}
	for s := range numStreams {
		if d.fifo[s].len() > 0 {
			d.reaping = true
			d.reapers.Add(1)
			go d.reap()
			return
		}
	}
}

// query is cuEventQuery of cu with the device's context current.
func (d *Device) query(cu uintptr) cuResult {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := d.drv.cuCtxSetCurrent(d.ctx); r != cudaSuccess {
		return r
	}
	return d.drv.cuEventQuery(cu)
}

// eventFIFO is a queue of events, oldest first.
type eventFIFO struct {
	items []*event
	head  int
}

func (q *eventFIFO) push(e *event) { q.items = append(q.items, e) }

func (q *eventFIFO) len() int { return len(q.items) - q.head }

func (q *eventFIFO) front() *event {
	if q.head == len(q.items) {
		return nil
	}
	return q.items[q.head]
}

func (q *eventFIFO) pop() {
	q.items[q.head] = nil
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head >= 1024 && 2*q.head >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
}

// all is the queue's events, oldest first.
func (q *eventFIFO) all() []*event { return slices.Clone(q.items[q.head:]) }

// sortDeps looks at a submission's dependencies without waiting: failed is
// the error of the first that has failed (core.DependencyFailed), and gate
// says some are not decided and must be waited for on the host (another
// device's or a host event still pending, or an event of this device still
// in its gate). Events of this device on a stream are waited for on the GPU
// and leave gate false. The submission lock is held.
func (d *Device) sortDeps(after []driver.Event) (gate bool, failed error) {
	for i, dep := range after {
		if dep == nil {
			continue
		}
		if x, ok := dep.(*event); ok && x == nil {
			continue
		}
		if x := d.own(dep); x != nil {
			switch x.state.Load() {
			case evDone:
				if err := x.Err(); err != nil {
					return false, core.DependencyFailed(i, err)
				}
			case evGated:
				gate = true
			}
			continue
		}
		ended, err := core.Ended(dep)
		if err != nil {
			return false, core.DependencyFailed(i, err)
		}
		gate = gate || !ended
	}
	return gate, nil
}

// own is dep when it is an event of this device, else nil.
func (d *Device) own(dep driver.Event) *event {
	if x, ok := dep.(*event); ok && x != nil && x.dev == d {
		return x
	}
	return nil
}

// needsWait reports whether work on stream must wait on the GPU for x: x
// is on another stream of this device and has not ended.
func needsWait(x *event, stream int) bool {
	return x != nil && x.stream != stream && x.state.Load() == evEnqueued
}

// hazards calls wait for every event that work on stream touching the
// buffers in acc must wait for: each buffer's last write, and for a write
// its reads since. The submission lock is held.
func hazards(acc []access, stream int, wait func(*event) error) error {
	for _, a := range acc {
		if needsWait(a.buf.lastWrite, stream) {
			if err := wait(a.buf.lastWrite); err != nil {
				return err
			}
		}
		if !a.write {
			continue
		}
		for _, r := range a.buf.reads {
			if needsWait(r, stream) {
				if err := wait(r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// recordAccess notes e as the last writer or a reader of its buffers. The
// submission lock is held.
func recordAccess(e *event) {
	for _, a := range e.op.acc {
		if a.write {
			a.buf.lastWrite = e
			a.buf.reads = [numStreams]*event{}
		} else {
			a.buf.reads[e.stream] = e
		}
	}
}

// submit queues e: on its stream at once when nothing must be waited for
// on the host, else in the gate. It returns e, or an error with nothing
// queued (e's holds given back). A dependency that has already failed fails
// e at once. Called without locks.
func (d *Device) submit(e *event) (driver.Event, error) {
	if err := d.roomFor(e.op.ctx); err != nil {
		e.op.holds.drop()
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d.subMu.Lock()
	if err := d.usable(e.kind); err != nil {
		d.subMu.Unlock()
		e.op.holds.drop()
		return nil, err
	}
	gate, failed := d.sortDeps(e.op.after)
	if failed != nil {
		d.subMu.Unlock()
		e.op.holds.drop()
		e.complete(failed)
		return e, nil
	}
	if gate || e.op.job != nil || e.op.hostWait || d.gate.len() > 0 {
		d.gateLocked(e)
		d.subMu.Unlock()
		return e, nil
	}
	// Read before e is on its stream: from then on, a waiter of later work
	// on the stream (its syncTail or Wait) may complete and retire e,
	// clearing its op.
	syncWait := e.op.waited && e.op.ctx.Done() == nil
	if syncWait && e.op.mayRunAlone && d.inflight.Load() == 0 && d.asidePending.Load() == 0 {
		ended, err := d.runAloneLocked(e)
		switch {
		case ended:
			d.subMu.Unlock()
			e.complete(err)
			d.retire(e, false)
			e.alone = true
			return e, nil
		case err != nil:
			d.subMu.Unlock()
			e.op.holds.drop()
			return nil, err
		}
		d.subMu.Unlock()
		e.synced = d.syncTail(e)
		return e, nil
	}
	if d.asideEligible(e) {
		d.issueAsideLocked(e)
		d.subMu.Unlock()
		return e, nil
	}
	err := d.enqueueLocked(e)
	d.subMu.Unlock()
	if err != nil {
		e.op.holds.drop()
		return nil, err
	}
	if syncWait {
		e.synced = d.syncTail(e)
	}
	return e, nil
}

// syncTail waits for e, which its submitter waits for with a ctx that
// cannot end, on the thread that put it on its stream (locked, the context
// current), as a native program waits: waitStream, with no second
// cuCtxSetCurrent, no reaper and no other goroutine. Only while e is the
// newest work on its stream (else the stream's end is not e's); on any
// failure Wait finds out by polling. It reports whether it waited and
// retired e.
func (d *Device) syncTail(e *event) bool {
	through := d.tailSeq[e.stream].Load()
	if through != e.seq {
		return false
	}
	if d.waitStream(e.stream) != nil {
		return false // a fault lost the device (fail); Wait finds out
	}
	d.completeThrough(e.stream, through)
	return true
}

// aloneSpin is how long a synchronous launch on an idle device waits for
// its work with the submission lock held (runAloneLocked): other
// submitters wait for it meanwhile. A variable so that a test can make
// the work outlast it.
var aloneSpin = 20 * time.Microsecond

// aloneWaitMode is how runAloneLocked learns that the work ended.
type aloneWaitMode int

const (
	// aloneWaitWord: the device's completion word (doneword.go), written
	// by the GPU after the work and read with plain loads; where the
	// driver cannot make one, aloneWaitEvent.
	aloneWaitWord aloneWaitMode = iota
	// aloneWaitEvent: a CUDA event of the device's own, recorded after
	// the work and polled with cuEventQuery.
	aloneWaitEvent
	// aloneWaitStream: the stream, polled with cuStreamQuery.
	aloneWaitStream
)

// aloneWait is how launches that run alone wait: a variable so that tests
// and benchmarks can compare the three.
var aloneWait = aloneWaitWord

// runAloneLocked runs e, a synchronous launch on an idle device (nothing
// on its streams, in the gate or in the issue ring), as a native program
// launches and synchronises: it issues the work and waits for it with the
// submission lock held, so that no other work can be put on a stream
// meanwhile and e needs no place on its stream, no FIFO entry and no
// retirement. The wait spins on the device's completion word, which the
// GPU writes after the work (aloneWait says otherwise in tests). ended
// reports that the work has ended, err then being its failure (nil:
// success). Work still running after aloneSpin takes its place on the
// stream as any submission's (placeLocked) and the caller waits as usual:
// ended is false and err nil. So does work that failed on the GPU when
// the word is what is waited for (the word never arrives; the event wait
// that follows reports the failure). An err with ended false is a
// submission error, with nothing queued. The thread is locked.
func (d *Device) runAloneLocked(e *event) (ended bool, err error) {
	if r := d.makeCurrent(); r != cudaSuccess {
		return false, d.fail("cuCtxSetCurrent", r)
	}
	s := d.streams[e.stream]
	if err := d.issueLocked(e, s); err != nil {
		return false, err
	}
	var query func() cuResult
	what := "cuStreamQuery"
	switch mode := aloneWait; {
	case mode == aloneWaitWord && d.done.ready(d, s):
		v, r := d.done.write(d, s)
		if r != cudaSuccess {
			_ = d.fail("cuStreamWriteValue32", r)
			d.placeLocked(e, true)
			return false, nil
		}
		query = func() cuResult {
			if d.done.arrived(v) {
				return cudaSuccess
			}
			return cudaErrorNotReady
		}
	case mode == aloneWaitStream:
		query = func() cuResult { return d.drv.cuStreamQuery(s) }
	default:
		if !d.aloneMade {
			if d.aloneCU, err = d.takeEvent(); err != nil {
				d.placeLocked(e, true)
				return false, nil
			}
			d.aloneMade = true
		}
		if r := d.drv.cuEventRecord(d.aloneCU, s); r != cudaSuccess {
			_ = d.fail("cuEventRecord", r)
			d.placeLocked(e, true)
			return false, nil
		}
		query, what = func() cuResult { return d.drv.cuEventQuery(d.aloneCU) }, "cuEventQuery"
	}
	switch r, expired := spinPoll(query, aloneSpin); {
	case expired:
		d.placeLocked(e, true)
		return false, nil
	case r != cudaSuccess:
		return true, e.failure(d.fail(what, r))
	}
	return true, nil
}

// spinPoll calls query in a tight loop until it answers anything but not
// ready, or, with expired, until limit has passed. The clock is read from
// the 64th poll on: most waits end sooner.
func spinPoll(query func() cuResult, limit time.Duration) (r cuResult, expired bool) {
	var start time.Time
	for polls := 1; ; polls++ {
		if r = query(); r != cudaErrorNotReady {
			return r, false
		}
		if polls%64 == 0 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > limit {
				return r, true
			}
		}
	}
}

// syncSpin is how long waitStream polls before it blocks in the driver.
const syncSpin = 200 * time.Microsecond

// waitStream waits for everything put on stream s so far, on the
// submitting thread (locked, the context current): it records a CUDA
// event from the device's pool and polls it with cuEventQuery in a tight
// loop for up to syncSpin, then blocks in cuEventSynchronize. On the H200
// host, through these bindings, a launch waited for this way took
// 0.93-0.99x a native program's launch and cudaStreamSynchronize in one
// run where cuStreamSynchronize took 1.08-1.11x; over the day's seven runs
// the two overlap (0.88-1.12x and 0.93-1.12x; bench/run-h200.sh, the raw
// launch figures), the polled event a little lower on average.
func (d *Device) waitStream(s int) error {
	cu, err := d.takeEvent()
	if err != nil {
		return d.fail("cuStreamSynchronize", d.drv.cuStreamSynchronize(d.streams[s]))
	}
	defer d.putEvent(cu)
	if r := d.drv.cuEventRecord(cu, d.streams[s]); r != cudaSuccess {
		return d.fail("cuEventRecord", r)
	}
	r, expired := spinPoll(func() cuResult { return d.drv.cuEventQuery(cu) }, syncSpin)
	if expired {
		return d.fail("cuEventSynchronize", d.drv.call(d.drv.eventSynchronize, cu))
	}
	return d.fail("cuEventQuery", r)
}

// roomFor waits while the device has maxInFlight submissions on its
// streams (they always end: the GPU waits for nothing on the host).
func (d *Device) roomFor(ctx context.Context) error {
	if d.inflight.Load() < maxInFlight {
		return nil
	}
	start := time.Now()
	for polls := 1; d.inflight.Load() >= maxInFlight && d.usable("submit") == nil; polls++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		pause(time.Since(start), polls, waitMaxSleep)
	}
	return nil
}

// gateLocked appends e to the gate and starts the worker if it is not
// running. The submission lock is held.
func (d *Device) gateLocked(e *event) {
	e.op.after = slices.Clone(e.op.after) // the caller may reuse its slice
	e.enq = make(chan struct{})
	ctx := e.op.ctx
	e.op.stop = context.AfterFunc(ctx, func() { e.cancel(ctx.Err()) })
	d.gate.push(e)
	if !d.working {
		d.working = true
		d.workers.Add(1)
		go d.work()
	}
}

// enqueueLocked puts e on its stream: the GPU-side waits for its
// dependencies and buffers, then the work. The CUDA event after it is
// recorded later (recordTailLocked). The submission lock is held and the
// thread locked.
func (d *Device) enqueueLocked(e *event) error {
	if r := d.makeCurrent(); r != cudaSuccess {
		return d.fail("cuCtxSetCurrent", r)
	}
	d.flushLocked() // after the launches queued before it
	s := d.streams[e.stream]
	if err := d.streamWaitsLocked(e, s); err != nil {
		return err
	}
	if err := d.issueLocked(e, s); err != nil {
		return err
	}
	d.placeLocked(e, true)
	if !e.op.waited && len(d.unrecorded[e.stream]) >= recordEvery {
		// A failure marks the device lost: the reaper then fails the
		// pending work, this submission's too.
		_ = d.recordTailLocked(e.stream)
	}
	return nil
}

// issueLocked puts e's work on stream s. The submission lock is held, the
// thread locked and the context current.
func (d *Device) issueLocked(e *event, s uintptr) error {
	switch {
	case e.op.kernel.k != nil:
		return e.op.kernel.k.issue(s, e, e.op.kernel.grid, e.op.kernel.timed)
	case e.op.issue != nil:
		return e.op.issue(s)
	}
	return nil
}

// placeLocked gives e its place on its stream: in the stream's list of
// work without a CUDA event, as its buffers' last access, its seq, and in
// the FIFO, starting the reaper for work nobody waits for. issued says e
// is on the stream already (tailSeq moves to it); a launch issued aside is
// not yet, and the issuer moves tailSeq. The submission lock is held.
func (d *Device) placeLocked(e *event, issued bool) {
	u := d.unrecorded[e.stream]
	if n := len(u); n > 0 && u[n-1].state.Load() == evDone {
		// Seen ended without an event (a wait saw the stream idle):
		// nothing of it is left to record.
		clear(u)
		u = u[:0]
	}
	d.unrecorded[e.stream] = append(u, e)
	recordAccess(e)
	d.seqs[e.stream]++
	e.seq = d.seqs[e.stream]
	e.markEnqueued() // before the reaper can see it
	d.fifoMu.Lock()
	d.fifo[e.stream].push(e)
	if issued {
		d.tailSeq[e.stream].Store(e.seq)
	}
	d.inflight.Add(1)
	if !d.reaping && !e.op.waited {
		d.reaping = true
		d.reapers.Add(1)
		go d.reap()
	}
	d.fifoMu.Unlock()
}

// checkCurrent says makeCurrent asks the driver for the thread's current
// context before it sets it: a variable so that a benchmark can compare.
var checkCurrent = true

// makeCurrent makes the device's context current on the calling (locked)
// thread, which usually has it already: a submitter's thread is the one
// that launched last.
func (d *Device) makeCurrent() cuResult {
	if checkCurrent {
		if cur, r := d.drv.cuCtxGetCurrent(); r == cudaSuccess && cur == d.ctx {
			return cudaSuccess
		}
	}
	return d.drv.cuCtxSetCurrent(d.ctx)
}

// streamWaitsLocked makes stream s wait for e's dependencies of this
// device on other streams and for the work e's buffers wait for. The
// submission lock is held (so no event waited for is recorded again
// meanwhile) and the context is current.
func (d *Device) streamWaitsLocked(e *event, s uintptr) error {
	wait := func(x *event) error {
		if x.cu.Load() == 0 {
			if err := d.recordTailLocked(x.stream); err != nil {
				return err
			}
		}
		cu := x.cu.Load()
		if cu == 0 {
			return nil // it ended meanwhile
		}
		return d.fail("cuStreamWaitEvent", d.drv.cuStreamWaitEvent(s, cu))
	}
	for _, dep := range e.op.after {
		if x := d.own(dep); needsWait(x, e.stream) {
			if err := wait(x); err != nil {
				return err
			}
		}
	}
	if len(e.op.acc) == 0 {
		return nil
	}
	return hazards(e.op.acc, e.stream, wait)
}

// recordTailLocked records a CUDA event on stream after the work submitted
// to it since the last record, and gives it to that work's events. A
// failure leaves the device unable to tell when its work ends: it is then
// lost. The submission lock is held, the thread locked and the context
// current.
func (d *Device) recordTailLocked(stream int) error {
	d.flushLocked() // the ring's launches are the stream's tail too
	batch := d.unrecorded[stream]
	if len(batch) == 0 {
		return nil
	}
	if err := d.recordAfter(stream, batch); err != nil {
		return err
	}
	clear(batch)
	d.unrecorded[stream] = batch[:0]
	return nil
}

// recordAfter records a CUDA event on stream after batch, the work put on
// it since its last one, and gives it to batch's events; none is needed
// when the last of them has ended well (a wait saw the stream idle). A
// failure leaves the device unable to tell when its work ends: it is then
// lost. The thread is locked and the context current; the submission lock
// or the issue lock is held.
func (d *Device) recordAfter(stream int, batch []*event) error {
	if last := batch[len(batch)-1]; last.state.Load() == evDone && last.Err() == nil {
		return nil
	}
	cu, err := d.takeEvent()
	if err == nil {
		if r := d.drv.cuEventRecord(cu, d.streams[stream]); r != cudaSuccess {
			d.putEvent(cu)
			err = d.fail("cuEventRecord", r)
		}
	}
	if err != nil {
		d.untracked(err)
		return err
	}
	batch[len(batch)-1].ownsCU = true
	for _, e := range batch {
		e.cu.Store(cu)
	}
	return nil
}

// recordFor makes sure e has a CUDA event and returns it; 0 when none can
// be recorded (the device is lost). Called without locks.
func (d *Device) recordFor(e *event) uintptr {
	if cu := e.cu.Load(); cu != 0 {
		return cu
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d.subMu.Lock()
	defer d.subMu.Unlock()
	if cu := e.cu.Load(); cu != 0 {
		return cu
	}
	if d.lost.Load() != nil {
		return 0
	}
	if r := d.drv.cuCtxSetCurrent(d.ctx); r != cudaSuccess {
		d.untracked(d.fail("cuCtxSetCurrent", r))
		return 0
	}
	_ = d.recordTailLocked(e.stream)
	return e.cu.Load()
}

// untracked marks the device lost because the end of its work can no
// longer be told (a CUDA event could not be made or recorded).
func (d *Device) untracked(err error) {
	var be *driver.Error
	if !errors.As(err, &be) {
		be = &driver.Error{Backend: Name, Op: "track", Err: err}
	}
	lost := &driver.Error{Backend: Name, Op: be.Op, Native: be.Native,
		Err: fmt.Errorf("%w: %s can no longer track its work: %w", driver.ErrDeviceLost, d.name, be.Err)}
	if d.lost.CompareAndSwap(nil, lost) {
		driver.Debug(driver.DebugDevice, "cuda device lost: events cannot be recorded", "device", d.name, "err", err)
		d.stopWaiting()
	}
}

// takeEvent is a CUDA event from the device's pool, made when the pool is
// empty. The submission lock or the issue lock is held and the context
// current.
func (d *Device) takeEvent() (uintptr, error) {
	d.fifoMu.Lock()
	if n := len(d.freeEvents); n > 0 {
		cu := d.freeEvents[n-1]
		d.freeEvents = d.freeEvents[:n-1]
		d.fifoMu.Unlock()
		return cu, nil
	}
	d.fifoMu.Unlock()
	var cu uintptr
	if r := d.drv.call(d.drv.eventCreate, uintptr(unsafe.Pointer(&cu)), eventDisableTiming); r != cudaSuccess {
		return 0, d.fail("cuEventCreate", r)
	}
	d.fifoMu.Lock()
	d.allEvents = append(d.allEvents, cu)
	d.fifoMu.Unlock()
	return cu, nil
}

func (d *Device) putEvent(cu uintptr) {
	d.fifoMu.Lock()
	d.freeEvents = append(d.freeEvents, cu)
	d.fifoMu.Unlock()
}

// syncStream waits for stream s.
func (d *Device) syncStream(s uintptr) error {
	return d.fail("cuStreamSynchronize", d.drv.call(d.drv.streamSynchronize, s))
}

// retire gives back what ended work held and its op; recycle returns its
// CUDA event to the pool. A synchronous launch's op stays until recycle,
// which reads its accesses.
func (d *Device) retire(e *event, recycle bool) {
	e.op.holds.drop()
	if cu := e.cu.Load(); recycle && cu != 0 && e.ownsCU {
		d.putEvent(cu)
	}
	o := e.op
	if o.waited && o.ctx != nil && o.ctx.Done() == nil {
		// Launch's own wait: the op stays with the event, which recycle
		// pools for the next synchronous launch. Clear what it holds.
		o.ctx, o.after, o.vals = nil, nil, nil
		o.issue, o.job, o.finish, o.stop, o.prep = nil, nil, nil, nil, nil
		o.kernel = kernelRun{}
		return
	}
	e.op = nil
	putOp(o)
}

// putOp clears o and gives it back to opPool.
func putOp(o *op) {
	*o = op{}
	opPool.Put(o)
}

// reap completes the events on the device's streams as they end, oldest
// first on each stream, and exits once the streams have had nothing for
// reaperLinger.
func (d *Device) reap() {
	defer d.reapers.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	drv := d.drv
	idle := time.Now()
	for {
		// Set each round: giving back a peer copy's source buffer may free
		// it with the other device's context made current on this thread.
		drv.cuCtxSetCurrent(d.ctx)
		if d.lost.Load() != nil {
			d.failEnqueued()
		}
		progressed := false
		for s := range numStreams {
			d.reapMu.Lock()
			p, stop := d.reapStream(s)
			d.reapMu.Unlock()
			progressed = progressed || p
			if stop {
				break // lost: failEnqueued fails them all
			}
		}
		if progressed {
			idle = time.Now()
			continue
		}
		d.fifoMu.Lock()
		empty := true
		for s := range numStreams {
			empty = empty && d.fifo[s].len() == 0
		}
		if empty && (time.Since(idle) >= reaperLinger || d.closed.Load() || d.lost.Load() != nil) {
			d.reaping = false
			d.watched.Store(false)
			d.fifoMu.Unlock()
			return
		}
		d.fifoMu.Unlock()
		switch {
		case d.lost.Load() != nil:
		case !empty && !d.watched.Load() && !d.closed.Load():
			// Work is pending and nobody waits through Done: Wait polls
			// for itself, so the reaper only gives back buffers and
			// executables, and its rounds (a CUDA event recorded under
			// the submission lock, a query, the retirements) would
			// compete with a submitter queueing back to back.
			time.Sleep(reaperIdleSleep)
		default:
			// No spinning: Wait polls for itself, so the reaper's latency
			// only delays Done and the giving back of buffers.
			time.Sleep(max(sleepFor(time.Since(idle), reaperMaxSleep), reaperMinSleep))
		}
	}
}

// reapStream completes the events of stream s that have ended, oldest
// first; stop reports a lost device. reapMu is held, the thread locked and
// the context current.
func (d *Device) reapStream(s int) (progressed, stop bool) {
	drv := d.drv
	for {
		d.fifoMu.Lock()
		e := d.fifo[s].front()
		d.fifoMu.Unlock()
		if e == nil {
			return progressed, false
		}
		if e.state.Load() == evDone {
			// A waiter completed it and has yet to retire it.
			d.completeThroughLocked(s, e.seq)
			progressed = true
			continue
		}
		cu := e.cu.Load()
		if cu == 0 {
			if d.submitterRecords(s) {
				return progressed, false
			}
			// Record one event after everything submitted since the
			// last: this round's batch.
			cu = d.recordFor(e)
			if cu == 0 && d.lost.Load() != nil {
				return progressed, true
			}
			drv.cuCtxSetCurrent(d.ctx)
		}
		r, through := d.poll(e, cu)
		if r == cudaErrorNotReady {
			return progressed, false
		}
		progressed = true
		if r == cudaSuccess {
			if cu != 0 {
				through = d.sharedThrough(s, cu, through)
			}
			d.completeThroughLocked(s, through)
			continue
		}
		op := "cuEventQuery"
		if cu == 0 {
			op = "cuStreamQuery"
		}
		err := d.fail(op, r)
		if r.sticky() {
			return progressed, true
		}
		if !e.finishWith(e.failure(err)) {
			<-e.Done() // a waiter is completing it
		}
		d.fifoMu.Lock()
		d.fifo[s].pop()
		d.inflight.Add(-1)
		d.fifoMu.Unlock()
		d.retire(e, false) // a handle the driver refused is not reused
	}
}

// failEnqueued fails every event on the device's streams once the context
// is lost: they can no longer end, and their CUDA events are not reused.
func (d *Device) failEnqueued() {
	d.fifoMu.Lock()
	var pending []*event
	for s := range numStreams {
		pending = append(pending, d.fifo[s].all()...)
		d.inflight.Add(-int32(d.fifo[s].len()))
		d.fifo[s] = eventFIFO{}
	}
	d.fifoMu.Unlock()
	d.subMu.Lock()
	for s := range d.unrecorded {
		clear(d.unrecorded[s])
		d.unrecorded[s] = d.unrecorded[s][:0]
	}
	d.subMu.Unlock()
	lost := d.lostError()
	for _, e := range pending {
		if !e.finishWith(e.failure(lost)) {
			<-e.Done()
		}
		d.retire(e, false)
	}
}

// lostError is the error of work that a lost context ended.
func (d *Device) lostError() error {
	cause := d.lost.Load()
	if cause == nil {
		return driver.ErrDeviceLost
	}
	return &driver.Error{Backend: Name, Op: cause.Op, Native: cause.Native,
		Err: fmt.Errorf("%w: the context faulted (%s) with this work pending", driver.ErrDeviceLost, cause.Op)}
}

// work empties the gate in order and exits when it is empty.
func (d *Device) work() {
	defer d.workers.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for {
		d.subMu.Lock()
		e := d.gate.front()
		if e == nil {
			d.working = false
			d.subMu.Unlock()
			return
		}
		d.subMu.Unlock()
		if e.claim.Load() == claimFree {
			d.runGated(e)
		}
		d.subMu.Lock()
		d.gate.pop()
		d.subMu.Unlock()
	}
}

// runGated waits on the host for e's dependencies and then puts it on its
// stream, or runs its job.
func (d *Device) runGated(e *event) {
	if err := d.waitHost(e); err != nil {
		e.cancel(err)
		return
	}
	if !e.claim.CompareAndSwap(claimFree, claimTaken) {
		return // cancelled meanwhile
	}
	e.op.stop()
	if e.op.prep != nil && d.ownDepsFailed(e) == nil {
		e.op.prep()
	}
	d.subMu.Lock()
	err := d.usable(e.kind)
	if err != nil {
		err = e.failure(err)
	} else {
		err = d.ownDepsFailed(e)
	}
	if err == nil && e.op.job == nil {
		if err = d.enqueueLocked(e); err != nil {
			err = e.failure(err)
		}
		d.subMu.Unlock()
		if err != nil {
			e.op.holds.drop()
			e.complete(err)
		}
		return
	}
	s := d.streams[e.stream]
	if err == nil {
		if r := d.drv.call(d.drv.ctxSetCurrent, d.ctx); r != cudaSuccess {
			err = e.failure(d.fail("cuCtxSetCurrent", r))
		}
	}
	if err == nil {
		d.flushLocked() // the job's stream work follows the launches before it
	}
	if err == nil {
		if err = d.streamWaitsLocked(e, s); err != nil {
			err = e.failure(err)
		}
	}
	if err == nil {
		recordAccess(e) // later work is gated behind e until it has ended
	}
	d.subMu.Unlock()
	if err == nil {
		// The thread is locked and the context current.
		if err = e.op.job(e.op.ctx, s); err != nil && !errors.Is(err, e.op.ctx.Err()) {
			err = e.failure(err)
		}
	}
	e.op.holds.drop()
	e.complete(err)
	d.retire(e, false)
}

// ownDepsFailed is the error of the first of e's dependencies of this
// device that has already failed (those ahead of e in the gate have been
// decided or put on a stream by now).
func (d *Device) ownDepsFailed(e *event) error {
	for i, dep := range e.op.after {
		if x := d.own(dep); x != nil {
			if err := x.Err(); err != nil {
				return core.DependencyFailed(i, err)
			}
		}
	}
	return nil
}

// waitHost waits for e's dependencies that are not events of this device
// (all of them for a hostWait submission): nil when they have all
// succeeded, the DependencyFailed error of the first that failed, e's ctx's
// error when it ends first, or the device's error when it is closed or
// lost meanwhile.
func (d *Device) waitHost(e *event) error {
	ctx := e.op.ctx
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.stopMu.Lock()
	d.stopWait = cancel
	stopped := d.closed.Load() || d.lost.Load() != nil
	d.stopMu.Unlock()
	defer func() {
		d.stopMu.Lock()
		d.stopWait = nil
		d.stopMu.Unlock()
	}()
	if stopped {
		cancel()
	}
	for i, dep := range e.op.after {
		if x, ok := dep.(*event); dep == nil || ok && (x == nil || x.dev == d && !e.op.hostWait) {
			continue
		}
		if err := dep.Wait(wctx); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if wctx.Err() != nil {
				if uerr := d.usable(e.kind); uerr != nil {
					return uerr
				}
				return wctx.Err()
			}
			return core.DependencyFailed(i, err)
		}
	}
	return nil
}

// stopWaiting interrupts the worker's host-side wait (the device is
// closing or lost).
func (d *Device) stopWaiting() {
	d.stopMu.Lock()
	if d.stopWait != nil {
		d.stopWait()
	}
	d.stopMu.Unlock()
}

// drainForClose ends the gate's work with ErrClosed, waits for the worker,
// for the streams and for the reaper. The device is marked closed.
func (d *Device) drainForClose() {
	d.stopWaiting()
	d.subMu.Lock() // every submission that saw the device open has queued
	gated := d.gate.all()
	d.subMu.Unlock()
	closed := driver.Errorf(Name, "close", driver.ErrClosed, "%s was closed before the work was queued on the GPU", d.name)
	for _, e := range gated {
		e.cancel(closed)
	}
	d.ringMu.Lock() // an idle issuer exits now: the device is closed
	if d.issuerIdle {
		select {
		case d.ringKick <- struct{}{}:
		default:
		}
	}
	d.ringMu.Unlock()
	d.workers.Wait() // the gate's worker, and the issuer once the ring is empty
	if d.lost.Load() == nil {
		runtime.LockOSThread()
		d.drv.call(d.drv.ctxSetCurrent, d.ctx)
		for _, s := range d.streams {
			_ = d.syncStream(s)
		}
		runtime.UnlockOSThread()
	}
	d.reapers.Wait()
}
