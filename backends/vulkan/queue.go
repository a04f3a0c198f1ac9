package vulkan

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zyxtt/zyxtt/backends"
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
	launches = iota
	transfers
	staged
	kinds
)

const (
	// maxBatch is how many commands a batch takes before it is submitted.
	maxBatch = 512
	// flushDelay is the longest a batch stays open with no one waiting.
	flushDelay = 500 * time.Microsecond
	// fenceTimeout bounds one wait of the completer, in nanoseconds.
	fenceTimeout = uint64(time.Second)
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

// Wait submits the work's batch if it is still open, then waits.
func (e *event) Wait(ctx context.Context) error {
	e.kick()
	return e.HostEvent.Wait(ctx)
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
	d.mu.Lock()
	if d.open != nil && d.open.serial == s {
		d.flush()
	}
	d.mu.Unlock()
}

// work is one piece of device work on its way to a batch.
type work struct {
	ctx   context.Context
	op    string
	kind  int // launches or transfers
	after []backends.Event
	ev    *event
	// fits reports whether record can run now without waiting for
	// staging memory (nil: always). The caller holds d.mu.
	fits func() bool
	// record puts the work's commands in the open batch (or does it on
	// the host, when nothing is pending); canWait allows it to wait for
	// staging memory. The caller holds d.mu.
	record func(canWait bool) error
	// done gives back what the work holds; release calls it once.
	done     func()
	released atomic.Bool
}

func (w *work) release() {
	if w.done != nil && !w.released.Swap(true) {
		w.done()
	}
}

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
func (d *device) recorded(e backends.Event) bool {
	o, ok := e.(*event)
	return ok && o.dev == d && o.serial.Load() != 0
}

// deps looks at a submission's events without waiting: err is the first
// that has failed (as a dependency failure), waiting is whether one is
// still pending that the queue's order does not cover: another device's
// or the host's, or one of this device's not yet recorded. The caller does
// not hold d.mu (another device's Done may take its own lock); events
// only move towards their end, so what it finds stays true, or becomes
// "waiting for nothing" (which the deferred path then finds at once).
func (d *device) deps(after []backends.Event) (waiting bool, err error) {
	for i, e := range after {
		if e == nil {
			continue
		}
		select {
		case <-e.Done():
			if err := e.Err(); err != nil {
				return false, core.DependencyFailed(i, err)
			}
		default:
			waiting = waiting || !d.recorded(e)
		}
	}
	return waiting, nil
}

// submit records w, or defers it when it waits for a foreign event, when
// it does not fit the free staging memory, or when earlier work is
// deferred, and returns its event. An error (the device closed or lost)
// means nothing was queued; w's hold has been given back either way.
func (d *device) submit(w *work) (backends.Event, error) {
	w.ev = newEvent(d)
	waiting, err := d.deps(w.after)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		w.release()
		return nil, backends.Errorf(Name, w.op, backends.ErrClosed, "%s", d.name)
	}
	if err := d.lostErr(); err != nil {
		w.release()
		return nil, err
	}
	if err != nil {
		w.release()
		w.ev.Complete(err)
		return w.ev, nil
	}
	if waiting || (w.kind == launches && len(d.deferred[launches]) > 0) {
		d.deferList(w.kind, w)
		return w.ev, nil
	}
	if err := d.admit(w); err != nil {
		return nil, err
	}
	return w.ev, nil
}

// deferList appends w to the deferred list k and starts its goroutine.
// The caller holds d.mu.
func (d *device) deferList(k int, w *work) {
	d.deferred[k] = append(d.deferred[k], w)
	if !d.draining[k] {
		d.draining[k] = true
		go d.drain(k)
	}
}

// admit records w, whose events need no more waiting, unless it is a
// transfer that does not fit the free staging memory or comes after one:
// that waits in the staging list. The caller holds d.mu.
func (d *device) admit(w *work) error {
	if w.kind == transfers && (len(d.deferred[staged]) > 0 || (w.fits != nil && !w.fits())) {
		d.deferList(staged, w)
		return nil
	}
	return d.issue(w, false)
}

// issue records w and attaches its event and hold to the batch of its
// last command. The caller holds d.mu. On an error nothing of w is
// pending and its hold has been given back, except when the device began
// closing while w waited for staging memory: Close gives it back then.
func (d *device) issue(w *work, canWait bool) error {
	if err := w.record(canWait); err != nil {
		if !errors.Is(err, errClosing) {
			w.release()
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
		w.release()
		w.ev.Complete(nil)
		d.cond.Broadcast() // for work waiting for it to be recorded
		return nil
	}
	w.ev.serial.Store(b.serial) // before wanted is read: kick stores it first
	b.events = append(b.events, w.ev)
	b.holds = append(b.holds, w.release)
	d.cond.Broadcast() // for work waiting for it to be recorded
	if b == d.open && (b.n >= maxBatch || w.ev.wanted.Load()) {
		d.flush()
	}
	return nil
}

// drain takes the deferred list k in order and returns when it is empty
// or the device closes. Work waiting for events is admitted (recorded,
// or moved to the staging list) once they have succeeded; work waiting
// for staging memory is recorded as memory comes back, staying first in
// its list meanwhile.
func (d *device) drain(k int) {
	for {
		d.mu.Lock()
		if d.closed || len(d.deferred[k]) == 0 {
			d.draining[k] = false
			d.mu.Unlock()
			return
		}
		w := d.deferred[k][0]
		var err error
		if k != staged {
			d.flush() // what is recorded runs while this waits
			d.mu.Unlock()
			err = d.await(w)
			if err == nil {
				_, err = d.deps(w.after) // an own event failed meanwhile
			}
			d.mu.Lock()
			if d.closed { // Close fails w and everything after it
				d.draining[k] = false
				d.mu.Unlock()
				return
			}
		}
		if err == nil {
			err = w.ctx.Err()
		}
		if err == nil {
			err = d.lostErr()
		}
		switch {
		case err != nil:
			w.release()
		case k == staged:
			err = d.issue(w, true)
		default:
			err = d.admit(w)
		}
		if len(d.inflight) == 0 {
			d.flush() // held-back work released: do not leave the device idle
		}
		if d.closed { // w waited for staging memory while Close began
			d.draining[k] = false
			d.mu.Unlock()
			return
		}
		d.deferred[k][0] = nil
		d.deferred[k] = d.deferred[k][1:]
		if err != nil {
			w.ev.Complete(err)
			d.cond.Broadcast() // for work waiting for it to be recorded
		}
		d.mu.Unlock()
	}
}

// await waits for w's events that the queue's order does not cover
// (other devices', the host's, this device's not yet recorded). It
// returns the first failure as a dependency failure, w's ctx error when
// that ends first, the device's loss; nil when they all succeeded or the
// device closes.
func (d *device) await(w *work) error {
	for i, e := range w.after {
		if e == nil || d.recorded(e) {
			continue
		}
		if o, ok := e.(*event); ok && o.dev == d {
			if err := d.awaitRecorded(w.ctx, o); err != nil {
				return err
			}
			if err := o.Err(); err != nil {
				return core.DependencyFailed(i, err)
			}
			continue
		}
		select {
		case <-e.Done():
			if err := e.Err(); err != nil {
				return core.DependencyFailed(i, err)
			}
		case <-w.ctx.Done():
			return w.ctx.Err()
		case <-d.lostCh:
			return d.lostErr()
		case <-d.closing:
			return nil
		}
	}
	return nil
}

// awaitRecorded waits until o's work is recorded (the queue's order then
// covers it) or has ended. It returns ctx's error when ctx ends first, the
// device's loss; nil when the device closes.
func (d *device) awaitRecorded(ctx context.Context, o *event) error {
	stop := context.AfterFunc(ctx, func() {
		d.mu.Lock()
		d.cond.Broadcast()
		d.mu.Unlock()
	})
	defer stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	for o.serial.Load() == 0 {
		select {
		case <-o.HostEvent.Done():
			return nil
		default:
		}
		switch {
		case d.closed:
			return nil
		case d.lostErr() != nil:
			return d.lostErr()
		case ctx.Err() != nil:
			return ctx.Err()
		}
		d.cond.Wait()
	}
	return nil
}

// openBatch returns the batch being recorded, beginning one (a recycled
// command buffer and fence, or new ones) when there is none. The caller
// holds d.mu.
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
			return nil, d.markLost(err)
		}
		if err := l.ResetCommandBuffer(b.cmd, 0); err != nil {
			return nil, d.markLost(err)
		}
	} else {
		var err error
		if b, err = d.newBatch(); err != nil {
			return nil, err
		}
	}
	if err := l.BeginCommandBuffer(b.cmd, &h.begin); err != nil {
		d.free = append(d.free, b)
		return nil, d.markLost(err)
	}
	d.nextSerial++
	b.serial, b.n, b.err = d.nextSerial, 0, nil
	d.open = b
	d.flushTimer.Reset(flushDelay)
	return b, nil
}

// flushLate is the flush timer's: it submits the open batch once it has
// been open flushDelay (it may be a later batch than the one that armed
// the timer: that one was submitted already), or looks again later while
// the open batch holds nothing.
func (d *device) flushLate() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.holdOpen {
		return
	}
	if b := d.open; b != nil && b.n == 0 && len(b.events) == 0 {
		d.flushTimer.Reset(flushDelay) // nothing to submit yet: look again
		return
	}
	d.flush()
}

// newBatch allocates a command buffer and a fence. The caller holds d.mu.
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
// The caller holds d.mu. A batch that cannot be submitted loses the
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
		err = d.lostErr()
	}
	if err == nil {
		h.cmds[0] = b.cmd
		err = l.QueueSubmit(d.queue, h.submits[:], b.fence)
	}
	if err != nil {
		b.err = d.markLost(err)
	}
	d.flushed.Store(b.serial)
	d.inflight = append(d.inflight, b)
	d.cond.Broadcast()
}

// errClosing: the device began closing while work waited for staging
// memory; Close fails that work.
var errClosing = errors.New("closing")

// waitRoom waits, with the open batch submitted, until a batch has ended
// and given back staging memory. The caller holds d.mu.
func (d *device) waitRoom() error {
	d.flush()
	if len(d.inflight) == 0 {
		return fmt.Errorf("%w: no staging memory is free and none is in use", backends.ErrOutOfMemory)
	}
	d.cond.Wait()
	if d.closed {
		return errClosing
	}
	return d.lostErr()
}

// complete is the device's completer: it ends the submitted batches in
// order until the device stops it.
func (d *device) complete() {
	defer close(d.completerDone)
	var events []*event
	var holds []func()
	for {
		d.mu.Lock()
		for len(d.inflight) == 0 && !d.stopping {
			d.cond.Wait()
		}
		if len(d.inflight) == 0 {
			d.mu.Unlock()
			return
		}
		b := d.inflight[0]
		d.mu.Unlock()

		err := b.err
		if err == nil {
			err = d.lostErr()
		}
		if err == nil {
			err = d.waitFence(b)
		}
		if err == nil && len(b.reads) > 0 {
			stage := d.staging.bytes()
			for _, r := range b.reads {
				copy(r.dst, stage[r.off:])
			}
		}

		d.mu.Lock()
		n := copy(d.inflight, d.inflight[1:]) // keeps the array: no allocation
		d.inflight[n] = nil
		d.inflight = d.inflight[:n]
		d.ring.free(b.span)
		d.completed.Store(b.serial)
		events = append(events[:0], b.events...)
		holds = append(holds[:0], b.holds...)
		clear(b.events)
		clear(b.holds)
		clear(b.reads)
		b.events, b.holds, b.reads, b.span = b.events[:0], b.holds[:0], b.reads[:0], 0
		d.free = append(d.free, b)
		if !d.closed && d.open != nil && d.open.n > 0 {
			d.flush()
		}
		d.cond.Broadcast()
		d.mu.Unlock()

		for _, h := range holds {
			h()
		}
		for _, e := range events {
			e.Complete(err)
		}
		clear(events)
		clear(holds)
	}
}

// waitFence waits for b's fence; a failed wait loses the device.
func (d *device) waitFence(b *batch) error {
	h := d.hot
	h.waitFences[0] = b.fence
	for {
		done, err := d.l.WaitForFences(d.handle, h.waitFences[:], true, fenceTimeout)
		if err != nil {
			return d.markLost(err)
		}
		if done {
			return nil
		}
	}
}

// lostErr is the error every event of a lost device fails with, or nil.
func (d *device) lostErr() error {
	if p := d.lost.Load(); p != nil {
		return *p
	}
	return nil
}

// markLost records that the device is gone because of cause and returns
// the error (wrapping ErrDeviceLost and cause) that all its pending and
// later work fails with. The first cause is kept.
func (d *device) markLost(cause error) error {
	err := error(&backends.Error{Backend: Name, Op: "queue", Err: fmt.Errorf("%w: %s: %w", backends.ErrDeviceLost, d.name, cause)})
	if d.lost.CompareAndSwap(nil, &err) {
		close(d.lostCh)
		d.cond.Broadcast()
	}
	return d.lostErr()
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
