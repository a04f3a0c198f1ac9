package vulkan

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

// The device's work is recorded into batches: command buffers submitted
// to its compute queue, each with a fence. Every command is preceded by a
// full memory barrier, so the queue runs the device's work in the order it
// was recorded, across batches too, and each batch ends with a barrier to
// the host. A command goes into the open batch, which is submitted when
// someone waits for (or selects on) one of its events (or has done so
// before the work was recorded), when the completer
// has seen the batch before it end, when it holds maxBatch commands,
// before the device blocks on anything (a foreign event, staging memory),
// at Close, and at the latest flushDelay after it was opened: launches
// submitted back to back share command buffers and submissions. One
// completer goroutine waits for the batches' fences in order, copies
// staged reads out, gives back what the work held (buffers, executables)
// and ends the events, whether or not anyone waits.
//
// Work that waits for an event of another device or of the host (or one
// of this device's not yet recorded) is held back in a deferred list, and
// a goroutine records it once that event has succeeded (or fails it,
// recording nothing). Launches keep their submission order: every launch
// after a held-back one is held back behind it. Held-back transfers keep
// their order among themselves, but a transfer that waits for nothing
// goes ahead of them, as the host pool does. Transfers through the staging
// buffer take its memory in the order they are recorded and give it back
// as their batches end (a ring), so pending work never shares it; a
// transfer that does not fit the free part waits in the staging list,
// strictly in order with every transfer after it, and is recorded chunk by
// chunk as memory comes back. Order between transfers and launches comes
// from events.

// The deferred lists: launches waiting for events (and every launch
// after them), transfers waiting for events, and transfers waiting for
// staging memory (and every transfer after them).
const (
	launches  = gpuqueue.Launches
	transfers = gpuqueue.Transfers
	staged    = gpuqueue.Lists
	kinds     = staged + 1
)

const (
	// maxBatch is how many commands a batch takes before it is submitted.
	maxBatch = 512
	// flushDelay is the longest a batch stays open with no one waiting.
	flushDelay = 500 * time.Microsecond
	// fenceTimeout bounds one wait of the completer, in nanoseconds.
	fenceTimeout = uint64(time.Second)
	// ctxPoll bounds one fence wait of a waiter with a ctx that may end.
	ctxPoll = time.Millisecond
)

// event is the completion of one piece of a device's work. Its Go side is
// a HostEvent that the completer ends; serial is the batch it was recorded
// in (0 while the work is deferred). Waiting for it submits that batch if
// it is still open.
type event struct {
	*core.HostEvent
	dev    *device
	serial atomic.Uint64
	wanted atomic.Bool // waited for before it was recorded: submit it then
}

func newEvent(d *device) *event { return &event{HostEvent: core.NewHostEvent(), dev: d} }

// Done is closed once the work has ended; it submits the work's batch if
// that is still open.
func (e *event) Done() <-chan struct{} {
	e.kick()
	return e.HostEvent.Done()
}

// Wait submits the work's batch if it is still open, then waits. When no
// one is ending the batches up to the work's, the caller ends them itself
// (waits for their fences and completes their events, as the completer
// would), so that a launch and its wait cost no handing over between
// goroutines; otherwise it waits for the event.
func (e *event) Wait(ctx context.Context) error {
	d := e.dev
	e.wanted.Store(true) // before serial is read: issue stores it first
	for {
		select {
		case <-e.HostEvent.Done():
			return e.HostEvent.Err()
		default:
		}
		s := e.serial.Load()
		if s == 0 || s <= d.completed.Load() {
			return e.HostEvent.Wait(ctx) // not recorded yet, or ending
		}
		d.q.Mu.Lock()
		claimed := false
		if d.open != nil && d.open.serial == s {
			// Claimed before the submission, so that the completer is
			// not woken for it.
			claimed = !d.completing && len(d.inflight) == 0
			d.completing = d.completing || claimed
			d.flush()
		}
		if !claimed && !d.completing && len(d.inflight) > 0 && d.inflight[0].serial <= s {
			claimed, d.completing = true, true
		}
		var b *batch
		if claimed {
			if len(d.inflight) == 0 { // the flush failed to queue it
				d.releaseClaim()
				d.q.Mu.Unlock()
				return e.HostEvent.Wait(ctx)
			}
			b = d.inflight[0]
		}
		d.q.Mu.Unlock()
		if b == nil {
			return e.HostEvent.Wait(ctx)
		}
		err := b.err
		if err == nil {
			err = d.q.LostErr()
		}
		if err == nil {
			if err = d.waitFenceCtx(b, ctx); err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				d.q.Mu.Lock()
				d.releaseClaim() // the completer ends it
				d.q.Mu.Unlock()
				return err
			}
		}
		d.finishBatch(b, err)
	}
}

// kick submits the open batch when it holds this event's work. It takes
// the device's lock; the device never calls into another event (another
// device's Done) while it holds that lock, so no two devices wait for
// each other's.
func (e *event) kick() {
	d := e.dev
	e.wanted.Store(true) // before serial is read: issue stores it first
	s := e.serial.Load()
	if s == 0 || s <= d.flushed.Load() {
		return
	}
	d.q.Mu.Lock()
	if d.open != nil && d.open.serial == s {
		d.flush()
	}
	d.q.Mu.Unlock()
}

// work is one piece of device work on its way to a batch.
type work struct {
	gpuqueue.Item // ctx, events, and the hold that Release gives back
	op            string
	kind          int // launches or transfers
	ev            *event
	// fits reports whether record can run now without waiting for
	// staging memory (nil: always). The caller holds d.q.Mu.
	fits func() bool
	// record puts the work's commands in the open batch (or does it on
	// the host, when nothing is pending); canWait allows it to wait for
	// staging memory. The caller holds d.q.Mu.
	record func(canWait bool) error
}

func (w *work) End(err error) { w.ev.Complete(err) }

// batch is one command buffer on its way to the queue and back.
type batch struct {
	serial uint64
	cmd    vkCommandBuffer
	fence  vkFence
	n      int   // commands recorded
	err    error // set when it was never submitted: its events fail with it
	events []*event
	holds  []func()
	reads  []stagedRead
	span   int64 // staging bytes it took
}

// stagedRead is a read's chunk, copied from staging once its batch ended.
type stagedRead struct {
	dst []byte
	off int64
}

// recorded reports whether e is an event of d's work that is recorded
// (or has ended): the queue's order covers it.
func (d *device) recorded(e driver.Event) bool {
	o, ok := e.(*event)
	return ok && o.dev == d && o.serial.Load() != 0
}

// ownEnded is the queue's Own hook: the end of an event of d, read
// without the kick that would take d's lock.
func (d *device) ownEnded(e driver.Event) (<-chan struct{}, bool) {
	o, ok := e.(*event)
	if !ok || o.dev != d {
		return nil, false
	}
	return o.HostEvent.Done(), true
}

// admitFrom is the queue's Admit hook: work from the staging list is
// recorded, waiting for staging memory; other work is admitted.
func (d *device) admitFrom(k int, w *work) error {
	if k == staged {
		return d.issue(w, true)
	}
	return d.admit(w)
}

// flushIdle is the queue's AfterAdmit hook: held-back work released does
// not leave the device idle.
func (d *device) flushIdle() {
	if len(d.inflight) == 0 {
		d.flush()
	}
}

// submit records w, or defers it when it waits for a foreign event, when
// it does not fit the free staging memory, or when earlier work is
// deferred, and returns its event. An error (the device closed or lost)
// means nothing was queued; w's hold has been given back either way.
func (d *device) submit(w *work) (driver.Event, error) {
	w.ev = newEvent(d)
	if err := d.q.Submit(w, w.kind, w.op); err != nil {
		return nil, err
	}
	return w.ev, nil
}

// admit records w, whose events need no more waiting, unless it is a
// transfer that does not fit the free staging memory or comes after one:
// that waits in the staging list. The caller holds d.q.Mu.
func (d *device) admit(w *work) error {
	if w.kind == transfers && (d.q.Deferred(staged) > 0 || (w.fits != nil && !w.fits())) {
		d.q.Defer(staged, w)
		return nil
	}
	return d.issue(w, false)
}

// issue records w and attaches its event and hold to the batch of its
// last command. The caller holds d.q.Mu. On an error nothing of w is
// pending and its hold has been given back, except when the device began
// closing while w waited for staging memory: Close gives it back then.
func (d *device) issue(w *work, canWait bool) error {
	if err := w.record(canWait); err != nil {
		if !errors.Is(err, errClosing) {
			w.Release()
		}
		return err
	}
	var b *batch
	if d.open != nil {
		b = d.open
	} else if n := len(d.inflight); n > 0 {
		b = d.inflight[n-1]
	}
	if b == nil { // nothing pending: the work was done on the host
		w.Release()
		w.ev.Complete(nil)
		d.q.Cond.Broadcast() // for work waiting for it to be recorded
		return nil
	}
	w.ev.serial.Store(b.serial) // before wanted is read: kick stores it first
	b.events = append(b.events, w.ev)
	b.holds = append(b.holds, w.Release)
	d.q.Cond.Broadcast() // for work waiting for it to be recorded
	if b == d.open && (b.n >= maxBatch || w.ev.wanted.Load()) {
		d.flush()
	}
	return nil
}

// openBatch returns the batch being recorded, beginning one (a recycled
// command buffer and fence, or new ones) when there is none. The caller
// holds d.q.Mu.
func (d *device) openBatch() (*batch, error) {
	if d.open != nil {
		return d.open, nil
	}
	l, h := d.l, d.hot
	var b *batch
	if n := len(d.free); n > 0 {
		b = d.free[n-1]
		d.free[n-1] = nil
		d.free = d.free[:n-1]
		h.resetFences[0] = b.fence
		if err := l.ResetFences(d.handle, h.resetFences[:]); err != nil {
			return nil, d.q.MarkLost(err)
		}
		if err := l.ResetCommandBuffer(b.cmd, 0); err != nil {
			return nil, d.q.MarkLost(err)
		}
	} else {
		var err error
		if b, err = d.newBatch(); err != nil {
			return nil, err
		}
	}
	if err := l.BeginCommandBuffer(b.cmd, &h.begin); err != nil {
		d.free = append(d.free, b)
		return nil, d.q.MarkLost(err)
	}
	d.nextSerial++
	b.serial, b.n, b.err = d.nextSerial, 0, nil
	d.open = b
	if !d.flushArmed {
		// Armed once per flushDelay, not per batch: a timer reset can
		// cost a wake of the netpoller.
		d.flushArmed = true
		d.flushTimer.Reset(flushDelay)
	}
	return b, nil
}

// flushLate is the flush timer's: it submits the open batch once it has
// been open flushDelay (it may be a later batch than the one that armed
// the timer: that one was submitted already), or looks again later while
// the open batch holds nothing.
func (d *device) flushLate() {
	d.q.Mu.Lock()
	defer d.q.Mu.Unlock()
	d.flushArmed = false
	if d.q.Closed || d.holdOpen {
		return
	}
	if b := d.open; b != nil && b.n == 0 && len(b.events) == 0 {
		d.flushArmed = true
		d.flushTimer.Reset(flushDelay) // nothing to submit yet: look again
		return
	}
	d.flush()
}

// newBatch allocates a command buffer and a fence. The caller holds d.q.Mu.
func (d *device) newBatch() (*batch, error) {
	var p pins
	defer p.Unpin()
	alloc := &vkCommandBufferAllocateInfo{SType: stCommandBufferAllocateInfo, CommandPool: d.cmdPool, CommandBufferCount: 1}
	p.Pin(alloc)
	cmds := make([]vkCommandBuffer, 1)
	if err := d.l.AllocateCommandBuffers(d.handle, alloc, cmds); err != nil {
		return nil, err
	}
	fence := &vkFenceCreateInfo{SType: stFenceCreateInfo}
	p.Pin(fence)
	f, err := d.l.CreateFence(d.handle, fence)
	if err != nil {
		return nil, err
	}
	b := &batch{cmd: cmds[0], fence: f}
	d.batches = append(d.batches, b)
	return b, nil
}

// flush ends the open batch with a barrier to the host and submits it.
// The caller holds d.q.Mu. A batch that cannot be submitted loses the
// device: the queue's order past it is unknown.
func (d *device) flush() {
	b := d.open
	if b == nil || (b.n == 0 && len(b.events) == 0) {
		return
	}
	d.open = nil
	l, h := d.l, d.hot
	d.barrier(b.cmd, stageAllCommands, accessMemoryWrite, stageHost, accessHostRead)
	err := l.EndCommandBuffer(b.cmd)
	if err == nil {
		err = d.q.LostErr()
	}
	if err == nil {
		h.cmds[0] = b.cmd
		err = l.QueueSubmit(d.queue, h.submits[:], b.fence)
	}
	if err != nil {
		b.err = d.q.MarkLost(err)
	}
	d.flushed.Store(b.serial)
	d.inflight = append(d.inflight, b)
	if !d.completing {
		d.compCond.Signal()
	}
	d.q.Cond.Broadcast()
}

// errClosing: the device began closing while work waited for staging
// memory; Close fails that work.
var errClosing = errors.New("closing")

// waitRoom waits, with the open batch submitted, until a batch has ended
// and given back staging memory. The caller holds d.q.Mu.
func (d *device) waitRoom() error {
	d.flush()
	if len(d.inflight) == 0 {
		return fmt.Errorf("%w: no staging memory is free and none is in use", driver.ErrOutOfMemory)
	}
	d.q.Cond.Wait()
	if d.q.Closed {
		return errClosing
	}
	return d.q.LostErr()
}

// complete is the device's completer: it ends the submitted batches in
// order until the device stops it, except those a waiter ends itself
// (completing is set while one of them is being ended).
func (d *device) complete() {
	defer close(d.completerDone)
	for {
		d.q.Mu.Lock()
		for (len(d.inflight) == 0 || d.completing) && !(d.stopping && len(d.inflight) == 0) {
			d.compCond.Wait()
		}
		if len(d.inflight) == 0 {
			d.q.Mu.Unlock()
			return
		}
		b := d.inflight[0]
		d.completing = true
		d.q.Mu.Unlock()

		err := b.err
		if err == nil {
			err = d.q.LostErr()
		}
		if err == nil {
			err = d.waitFence(b)
		}
		d.finishBatch(b, err)
	}
}

// releaseClaim ends a claim on the oldest batch: the completer takes the
// batches in flight from here. The caller holds d.q.Mu.
func (d *device) releaseClaim() {
	d.completing = false
	if len(d.inflight) > 0 || d.stopping {
		d.compCond.Signal()
	}
}

// finishBatch ends b, the oldest batch in flight, whose fence has
// signalled (err nil) or which failed: copies its staged reads out, takes
// it out of flight, gives back what its work held, completes its events,
// and recycles it. The caller has claimed it (completing); the claim ends
// once its events are complete, so events end in order.
func (d *device) finishBatch(b *batch, err error) {
	if err == nil && len(b.reads) > 0 {
		stage := d.staging.bytes()
		for _, r := range b.reads {
			copy(r.dst, stage[r.off:])
		}
	}
	d.q.Mu.Lock()
	n := copy(d.inflight, d.inflight[1:]) // keeps the array: no allocation
	d.inflight[n] = nil
	d.inflight = d.inflight[:n]
	d.ring.free(b.span)
	d.completed.Store(b.serial)
	if !d.q.Closed && d.open != nil && d.open.n > 0 {
		d.flush()
	}
	d.q.Cond.Broadcast()
	d.q.Mu.Unlock()

	for _, h := range b.holds {
		h()
	}
	for _, e := range b.events {
		e.Complete(err)
	}
	clear(b.events)
	clear(b.holds)
	clear(b.reads)
	b.events, b.holds, b.reads, b.span = b.events[:0], b.holds[:0], b.reads[:0], 0

	d.q.Mu.Lock()
	d.free = append(d.free, b)
	d.releaseClaim()
	d.q.Mu.Unlock()
}

// waitFence waits for b's fence; a failed wait loses the device.
func (d *device) waitFence(b *batch) error {
	h := d.hot
	h.waitFences[0] = b.fence
	for {
		done, err := d.l.WaitForFences(d.handle, h.waitFences[:], true, fenceTimeout)
		if err != nil {
			return d.q.MarkLost(err)
		}
		if done {
			return nil
		}
	}
}

// waitFenceCtx is waitFence for a waiter, which stops when ctx ends (it
// looks at ctx every ctxPoll).
func (d *device) waitFenceCtx(b *batch, ctx context.Context) error {
	if ctx.Done() == nil {
		return d.waitFence(b)
	}
	fences := [1]vkFence{b.fence}
	for {
		done, err := d.l.WaitForFences(d.handle, fences[:], true, uint64(ctxPoll))
		if err != nil {
			return d.q.MarkLost(err)
		}
		if done {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// ring hands out the staging buffer's bytes in order and takes them back
// in the same order: what pending work uses is never handed out again.
type ring struct {
	size, end, used int64
}

// take returns up to n bytes at off that follow the last bytes taken
// (wrapping to the start), fewer when less is free there; got is 0 when
// nothing is.
func (r *ring) take(n int64) (off, got int64) {
	if r.used == 0 {
		r.end = 0
	}
	if r.end == r.size {
		r.end = 0
	}
	got = min(n, r.size-r.end, r.size-r.used)
	off = r.end
	r.end += got
	r.used += got
	return off, got
}

// untake gives back the last n bytes taken, which nothing uses.
func (r *ring) untake(n int64) {
	r.end -= n
	r.used -= n
}

// free gives back the oldest n bytes taken.
func (r *ring) free(n int64) { r.used -= n }

// available is how many bytes take can hand out, in at most two pieces.
func (r *ring) available() int64 { return r.size - r.used }
