// Package gpuqueue is the submission side that the OpenCL and Vulkan
// devices share: the device lock and its cond, the closed state, the
// record of the device's loss, and the deferred lists of work held back
// behind events the device's own queue cannot wait for (another device's,
// the host's, or one of the device's own not yet on its queue), each with
// the goroutine that puts its work on the device once those events have
// succeeded (or fails it, putting nothing there).
//
// Launches keep their submission order: every launch after a held-back
// one is held back behind it (list Launches). Held-back transfers keep
// their order among themselves (list Transfers), but a transfer that waits
// for nothing goes ahead of them. A backend may keep more lists of its own
// after these, of work that waits for something its Admit waits for
// itself (device memory) rather than for events.
package gpuqueue

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/core"
)

// The deferred lists every queue has.
const (
	// Launches holds launches waiting for events, and every launch after
	// them.
	Launches = iota
	// Transfers holds transfers waiting for events.
	Transfers
	// Lists is the number of lists above; a backend's own lists follow.
	Lists
)

// Work is one piece of device work on its way to the device, as the queue
// sees it.
type Work interface {
	// Context is the ctx the work was submitted under: once it ends, the
	// work, still held back, fails with its error.
	Context() context.Context
	// Events are the events the work runs after.
	Events() []driver.Event
	// Release gives back what the work holds (once, however often it is
	// called).
	Release()
	// End ends the work's event with err.
	End(err error)
}

// Item is what a backend's Work keeps for the queue: the ctx and events
// it was submitted with, and what it holds. Embedded, it gives the Work its
// Context, Events and Release; End is the backend's own.
type Item struct {
	Ctx   context.Context
	After []driver.Event
	// Done gives back what the work holds (buffers, the executable,
	// pinned memory); Release calls it once.
	Done     func()
	released atomic.Bool
}

// Context is the ctx the work was submitted under.
func (it *Item) Context() context.Context { return it.Ctx }

// Events are the events the work runs after.
func (it *Item) Events() []driver.Event { return it.After }

// Release gives back what the work holds, once.
func (it *Item) Release() {
	if it.Done != nil && !it.released.Swap(true) {
		it.Done()
	}
}

// Hooks is what a device tells its queue about its own events and how its
// work reaches it.
type Hooks[W Work] struct {
	// Covered reports whether e is an event of the device whose work is on
	// the device's queue: the device orders what comes after it without
	// the host waiting (for an ended event it may say either). It is
	// called with and without Mu held and must not call into another
	// device.
	Covered func(e driver.Event) bool
	// Own returns, for an event of the device, the channel closed when it
	// has ended, one that takes no lock to read; ok is false for any other
	// event.
	Own func(e driver.Event) (ended <-chan struct{}, ok bool)
	// Admit puts w, which waits for no event any more, on the device from
	// list k. The caller holds Mu. On an error w is not on the device and
	// its hold has been given back, unless Closed was set meanwhile
	// (Admit may wait on Cond): the work is then Close's to fail.
	Admit func(k int, w W) error
	// BeforeWait, when not nil, is called with Mu held before a drain
	// lets go of Mu to wait for a held-back work's events.
	BeforeWait func()
	// AfterAdmit, when not nil, is called with Mu held after a drain has
	// admitted (or failed) a held-back work.
	AfterAdmit func()
}

// Queue is a device's submission state. A device embeds it and calls Init
// before it submits anything.
type Queue[W Work] struct {
	// Mu orders submissions: the deferred lists, Closed and whatever the
	// device puts on its queue under it.
	Mu sync.Mutex
	// Cond (on Mu) is broadcast when work reaches the device's queue or
	// fails without reaching it, when the device is lost or closes, and
	// whenever the device has more to say to work waiting under Mu.
	Cond *sync.Cond
	// Closed is set, under Mu, once Shut has been called.
	Closed bool

	backend, name string
	hooks         Hooks[W]
	eventLists    int           // lists below this wait for events; the others for what Admit waits for
	deferred      [][]W         // by list: held-back work, oldest first
	draining      []bool        // by list: a drain goroutine runs for it
	closing       chan struct{} // closed by Shut
	lost          atomic.Pointer[error]
	lostCh        chan struct{} // closed when the device is lost
}

// Init readies the queue of device name of backend, with lists deferred
// lists of which those below eventLists (at least Lists) hold work waiting
// for events.
func (q *Queue[W]) Init(backend, name string, lists, eventLists int, h Hooks[W]) {
	q.backend, q.name, q.hooks = backend, name, h
	q.eventLists = eventLists
	q.Cond = sync.NewCond(&q.Mu)
	q.deferred = make([][]W, lists)
	q.draining = make([]bool, lists)
	q.closing = make(chan struct{})
	q.lostCh = make(chan struct{})
}

// CheckOpen is what every operation of the device checks first: ctx's
// error, then ErrClosed once the device is closed.
func (q *Queue[W]) CheckOpen(ctx context.Context, op string) error {
	return driver.CheckOpen(ctx, q.backend, op, q.name, &q.Mu, &q.Closed)
}

// Deferred is how many works list k holds back. The caller holds Mu.
func (q *Queue[W]) Deferred(k int) int { return len(q.deferred[k]) }

// LostErr is the error every event of a lost device fails with, or nil.
func (q *Queue[W]) LostErr() error {
	if p := q.lost.Load(); p != nil {
		return *p
	}
	return nil
}

// MarkLost records that the device is gone because of cause and returns
// the error (wrapping ErrDeviceLost and cause) that all its pending and
// later work fails with. The first cause is kept.
func (q *Queue[W]) MarkLost(cause error) error {
	err := error(&driver.Error{Backend: q.backend, Op: "queue", Err: fmt.Errorf("%w: %s: %w", driver.ErrDeviceLost, q.name, cause)})
	if q.lost.CompareAndSwap(nil, &err) {
		close(q.lostCh)
		q.Cond.Broadcast()
	}
	return q.LostErr()
}

// Deps looks at a submission's events without waiting: err is the first
// that has failed (as a dependency failure), waiting is whether one is
// still pending that the device does not order by itself (not Covered).
// The caller does not hold Mu (another device's Done may take its own
// lock); events only move towards their end, so what it finds stays true,
// or becomes "waiting for nothing", which the deferred path then finds at
// once.
func (q *Queue[W]) Deps(after []driver.Event) (waiting bool, err error) {
	for i, e := range after {
		if e == nil {
			continue
		}
		ended, err := core.Ended(e)
		if err != nil {
			return false, core.DependencyFailed(i, err)
		}
		waiting = waiting || !ended && !q.hooks.Covered(e)
	}
	return waiting, nil
}

// Submit hands w, of list kind (Launches or Transfers), to Admit, or to
// its deferred list when it waits for an event the device does not order
// by itself or (a launch) an earlier launch is held back. An error (the
// device closed or lost, Admit's) means nothing was queued; w's hold has
// been given back either way. A failed event in w's Events ends w's event
// with a dependency failure at once, and Submit returns nil.
func (q *Queue[W]) Submit(w W, kind int, op string) error {
	waiting, err := q.Deps(w.Events())
	q.Mu.Lock()
	defer q.Mu.Unlock()
	if q.Closed {
		w.Release()
		return driver.Errorf(q.backend, op, driver.ErrClosed, "%s", q.name)
	}
	if err := q.LostErr(); err != nil {
		w.Release()
		return err
	}
	if err != nil {
		w.Release()
		w.End(err)
		return nil
	}
	if waiting || (kind == Launches && len(q.deferred[Launches]) > 0) {
		q.Defer(kind, w)
		return nil
	}
	return q.hooks.Admit(kind, w)
}

// Defer appends w to the deferred list k and starts its drain. The caller
// holds Mu.
func (q *Queue[W]) Defer(k int, w W) {
	q.deferred[k] = append(q.deferred[k], w)
	if !q.draining[k] {
		q.draining[k] = true
		go q.drain(k)
	}
}

// Shut marks the queue closed, wakes everything waiting on it and returns
// the work still held back, every list's, which the caller fails (with
// ErrClosed) once it has let go of Mu. It returns false, and nothing, when
// the queue was closed already. The caller holds Mu.
func (q *Queue[W]) Shut() ([]W, bool) {
	if q.Closed {
		return nil, false
	}
	q.Closed = true
	var held []W
	for k := range q.deferred {
		held = append(held, q.deferred[k]...)
		q.deferred[k] = nil
	}
	close(q.closing)
	q.Cond.Broadcast()
	return held, true
}

// drain takes the deferred list k in order and returns when it is empty
// or the queue closes. Work waiting for events is admitted once they have
// succeeded; work of a list above eventLists is admitted at once (Admit
// waits for what it needs), staying first in its list meanwhile.
func (q *Queue[W]) drain(k int) {
	for {
		q.Mu.Lock()
		if q.Closed || len(q.deferred[k]) == 0 {
			q.draining[k] = false
			q.Mu.Unlock()
			return
		}
		w := q.deferred[k][0]
		var err error
		if k < q.eventLists {
			if q.hooks.BeforeWait != nil {
				q.hooks.BeforeWait()
			}
			q.Mu.Unlock()
			err = q.await(w)
			if err == nil {
				_, err = q.Deps(w.Events()) // an own event failed meanwhile
			}
			q.Mu.Lock()
			if q.Closed { // Shut has taken w and everything after it
				q.draining[k] = false
				q.Mu.Unlock()
				return
			}
		}
		if err == nil {
			err = w.Context().Err()
		}
		if err == nil {
			err = q.LostErr()
		}
		if err == nil {
			err = q.hooks.Admit(k, w)
		} else {
			w.Release()
		}
		if q.hooks.AfterAdmit != nil {
			q.hooks.AfterAdmit()
		}
		if q.Closed { // Admit waited, and Shut took w meanwhile
			q.draining[k] = false
			q.Mu.Unlock()
			return
		}
		var none W
		q.deferred[k][0] = none
		q.deferred[k] = q.deferred[k][1:]
		if err != nil {
			w.End(err)
			q.Cond.Broadcast() // for work waiting for it to reach the device
		}
		q.Mu.Unlock()
	}
}

// await waits for w's events that the device does not order by itself
// (other devices', the host's, the device's own not yet on its queue). It
// returns the first failure as a dependency failure, w's ctx error when
// that ends first, the device's loss; nil when they all succeeded or the
// queue closes.
func (q *Queue[W]) await(w W) error {
	ctx := w.Context()
	for i, e := range w.Events() {
		if e == nil || q.hooks.Covered(e) {
			continue
		}
		if ended, ok := q.hooks.Own(e); ok {
			if err := q.awaitCovered(ctx, e, ended); err != nil {
				return err
			}
			if err := e.Err(); err != nil {
				return core.DependencyFailed(i, err)
			}
			continue
		}
		select {
		case <-e.Done():
			if err := e.Err(); err != nil {
				return core.DependencyFailed(i, err)
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-q.lostCh:
			return q.LostErr()
		case <-q.closing:
			return nil
		}
	}
	return nil
}

// awaitCovered waits until the device's own event e is Covered (its work
// is on the device's queue) or has ended (ended is closed). It returns
// ctx's error when ctx ends first, the device's loss; nil when the queue
// closes.
func (q *Queue[W]) awaitCovered(ctx context.Context, e driver.Event, ended <-chan struct{}) error {
	stop := context.AfterFunc(ctx, func() {
		q.Mu.Lock()
		q.Cond.Broadcast()
		q.Mu.Unlock()
	})
	defer stop()
	q.Mu.Lock()
	defer q.Mu.Unlock()
	for !q.hooks.Covered(e) {
		select {
		case <-ended:
			return nil
		default:
		}
		switch {
		case q.Closed:
			return nil
		case q.LostErr() != nil:
			return q.LostErr()
		case ctx.Err() != nil:
			return ctx.Err()
		}
		q.Cond.Wait()
	}
	return nil
}
