package ttruntime

// Deadlines: how a call is bounded in time without a reader goroutine. The
// stdout read deadline wakes a blocked read when the call times out, when
// the caller's context ends (a context.AfterFunc moves it into the past)
// and when the peer exits (peerExited pulls it in to exitGrace later). The
// stdin write deadline bounds writing a request.

import (
	"context"
	"time"
)

// exitGrace is how long a read may still wait for replies the runtime wrote
// before it exited. They are normally read at once; the grace matters only
// when a grandchild keeps the stdout pipe open, and 250 ms is far more than
// reading what is already in the pipe takes.
const exitGrace = 250 * time.Millisecond

// pastDeadline is a deadline long gone: arming it wakes a blocked read or
// write at once.
var pastDeadline = time.Unix(1, 0)

// bounds are one call's deadlines.
type bounds struct {
	call   time.Time // the call's own timeout: past it, the runtime is presumed hung
	ctx    time.Time // the caller's deadline, when hasCtx
	hasCtx bool
	io     time.Time // the earlier of the two: what the pipes are armed for
}

// callBounds starts the clock of a call that may take timeout.
func callBounds(ctx context.Context, timeout time.Duration) bounds {
	b := bounds{call: time.Now().Add(timeout)}
	b.io = b.call
	b.ctx, b.hasCtx = ctx.Deadline()
	if b.hasCtx && b.ctx.Before(b.io) {
		b.io = b.ctx
	}
	return b
}

// callerErr is why the caller gave up, or nil: its context's error, or
// DeadlineExceeded once its deadline has passed even if the context's own
// timer has not fired yet.
func (b *bounds) callerErr(ctx context.Context, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.hasCtx && !now.Before(b.ctx) {
		return context.DeadlineExceeded
	}
	return nil
}

// timedOut reports whether the call's own timeout has passed.
func (b *bounds) timedOut(now time.Time) bool { return !now.Before(b.call) }

// setReadDeadline arms the stdout deadline for a call, never past the exit
// grace once the peer has exited.
func (c *Conn) setReadDeadline(d time.Time) error {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	if c.hasWake && c.wakeAt.Before(d) {
		d = c.wakeAt
	}
	if closeEnough(c.armedRead, d, time.Now()) {
		return nil
	}
	c.armedRead = d
	return c.in.SetReadDeadline(d)
}

// closeEnough reports whether the deadline armed may stand for the one a
// call wants: it is not later, and earlier by at most an eighth of the
// call's window. Moving a poller deadline costs about as much as the rest of
// a round trip, so back-to-back calls keep the one armed; a deadline that
// fires early is seen as such (the call's own deadline has not passed) and
// re-armed exactly.
func closeEnough(armed, want, now time.Time) bool {
	return !armed.After(want) && armed.After(now) && want.Sub(armed) <= want.Sub(now)/8
}

// limitReadsAfterExit is peerExited's: from now on no read waits past
// exitGrace, and a read blocked now is woken by then.
func (c *Conn) limitReadsAfterExit() {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	c.wakeAt, c.hasWake = time.Now().Add(exitGrace), true
	if c.armedRead.IsZero() || c.armedRead.After(c.wakeAt) {
		c.armedRead = c.wakeAt
		_ = c.in.SetReadDeadline(c.wakeAt)
	}
}

// pastExitGrace reports whether the peer has exited more than
// exitGrace ago, so no reply it wrote can still be unread.
func (c *Conn) pastExitGrace(now time.Time) bool {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	return c.hasWake && !now.Before(c.wakeAt)
}

// interruptRead wakes the caller blocked on stdout: its context is done.
func (c *Conn) interruptRead() {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	c.armedRead = pastDeadline
	_ = c.in.SetReadDeadline(c.armedRead)
}

// watchContext makes the end of ctx, a context that can end, wake the
// caller's blocked read. The returned stop must be called (deferred) when
// the call ends; it waits for a watcher already running, which must not
// pull in a later call's deadline. A context that cannot end (Done is nil)
// needs no watcher; the caller checks that first, so a ping with one
// allocates nothing.
func (c *Conn) watchContext(ctx context.Context) (stop func()) {
	watched := make(chan struct{})
	cancel := context.AfterFunc(ctx, func() {
		defer close(watched)
		c.interruptRead()
	})
	return func() {
		if !cancel() {
			<-watched
		}
	}
}

// armWrite sets the stdin deadline for writing a request, unless the one
// armed may stand for it (see closeEnough).
func (c *Conn) armWrite(d time.Time) error {
	if closeEnough(c.armedWrite, d, time.Now()) {
		return nil
	}
	return c.rearmWrite(d)
}

// rearmWrite sets the stdin deadline to exactly d.
func (c *Conn) rearmWrite(d time.Time) error {
	if err := c.outw.SetWriteDeadline(d); err != nil {
		return err
	}
	c.armedWrite = d
	return nil
}

// stopWrite interrupts a request that a helper goroutine is writing: it
// raises the stop flag, which the writer checks after each arming, and
// moves the deadline into the past, which wakes a write in progress. The
// caller then waits for the writer and calls writeStopped.
func (c *Conn) stopWrite() {
	c.writeStop.Store(true)
	_ = c.outw.SetWriteDeadline(pastDeadline)
}

// writeStopped records, once the stopped writer is done, the deadline
// stopWrite armed, and lowers the flag so that later writes do not see it.
func (c *Conn) writeStopped() {
	c.armedWrite = pastDeadline
	c.writeStop.Store(false)
}
