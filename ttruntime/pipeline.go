package ttruntime

// Pipelining (docs/protocol.md, "Pipelining and order"): Send writes a
// request and returns a Ticket at once; the reply is read later. The runtime
// answers in request order, so the tickets in flight form a queue whose head
// is the next reply due. A reader goroutine, started by the first send
// while nothing is in flight and ending when the queue is empty, reads the
// replies and hands each to its ticket, so a completion is noticed without
// anyone waiting for it. While nothing is in flight a synchronous call keeps
// the fast path of roundtrip.go (the caller reads its own reply; no
// goroutine, no allocation).
//
// Bounds: at most MaxInFlight tickets are in flight (a sender waits beyond
// that). A ticket's reply is due its timeout after the ticket reached the
// head of the queue (the runtime runs requests one after another, so a
// request waits for those before it); a cleanup sent while an abandoned call
// is unanswered is due AbandonedGrace after it was sent, and that bounds
// every reply before it too (see Config.AbandonedGrace). A reply missing past
// its bound, a reply out of order, a malformed line or the peer's end
// fails every ticket in flight with ErrDeviceLost, and every later call
// fails at once.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/zyxtt/zyxtt/internal/core"
)

// MaxInFlight is the most requests a client keeps unanswered; a sender
// waits for a reply beyond it. The runtime holds 256 waiting requests
// before it stops reading its input; this stays well below.
const MaxInFlight = 64

// Ticket is one request sent without waiting for its reply. It is a
// core.Event: Done is closed once the reply has come (or the request has
// failed with the client), and Err is the reply's error then. Its methods
// are safe for concurrent use.
type Ticket struct {
	c       *Conn
	id      uint64
	cmd     string
	out     any         // the reply's result decodes here (nil: ignored)
	onReply func(error) // called with the outcome before Done is closed
	timeout time.Duration
	sent    time.Time
	due     time.Time // set when it reaches the head of the queue
	strict  time.Time // non-zero: due this long after it was sent, whatever is before it

	mu        sync.Mutex
	abandoned bool
	finished  bool
	ev        *core.HostEvent // completed by finish, after onReply
}

func (c *Conn) newTicket(cmd string, out any, onReply func(error), timeout time.Duration) *Ticket {
	return &Ticket{c: c, cmd: cmd, out: out, onReply: onReply, timeout: timeout, ev: core.NewHostEvent()}
}

// Done is closed once the ticket's reply has been handled.
func (t *Ticket) Done() <-chan struct{} { return t.ev.Done() }

// Err is the reply's error once Done is closed (a *core.Error wrapping a
// *RemoteError for an error reply, or ErrDeviceLost), nil before.
func (t *Ticket) Err() error { return t.ev.Err() }

// Wait waits for the reply or for ctx. Giving up the wait does not take
// the request back: the runtime runs it and its reply is read and handled
// all the same.
func (t *Ticket) Wait(ctx context.Context) error { return t.ev.Wait(ctx) }

// Abandon records that whoever waited for the reply has given up (a
// synchronous call whose context ended): until the reply comes, the
// runtime is taken to be stuck in it, and cleanups and Close wait only
// Config.AbandonedGrace (see there). It does nothing once the reply has come.
func (t *Ticket) Abandon() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.finished || t.abandoned {
		return
	}
	t.abandoned = true
	t.c.abandonedN.Add(1)
}

func (t *Ticket) isAbandoned() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.abandoned
}

// finish ends the ticket with err: the callback runs, then Done closes.
func (t *Ticket) finish(err error) {
	t.mu.Lock()
	if t.finished {
		t.mu.Unlock()
		return
	}
	t.finished = true
	if t.abandoned {
		t.c.abandonedN.Add(-1)
	}
	t.mu.Unlock()
	if t.onReply != nil {
		t.onReply(err)
	}
	t.ev.Complete(err)
}

var _ core.Event = (*Ticket)(nil)

// Send writes a request for cmd (req: its fields, nil for none) without
// waiting for its reply and returns its ticket; out (nil to ignore) is
// where the reply's result decodes, and onReply (may be nil) is called with
// the outcome when the reply has come, on the goroutine that read it,
// before the ticket's Done closes. onReply must be quick and must not call
// the client (a call would wait for the goroutine that runs it).
//
// Send waits for its turn on the pipe and for room in the queue
// (MaxInFlight), both bounded by ctx: a ctx that ends first means nothing
// was sent, and Send returns ctx's error (a *core.Error). Once sent, ctx
// no longer matters: the request runs and its reply is handled. A client
// whose runtime is gone does not return an error: the ticket fails at once
// with ErrDeviceLost (onReply is called), as every ticket in flight does
// when the runtime dies, hangs past the deadline or answers out of order.
func (c *Conn) Send(ctx context.Context, cmd string, req, out any, onReply func(error)) (*Ticket, error) {
	return c.send(ctx, cmd, req, out, nil, onReply, c.cfg.Timeout, false)
}

// SendAfter is Send for a request that must not run when one of the
// requests of after fails (protocol field `after`): the runtime then
// answers it with dependency_failed (a *RemoteError that unwraps to
// core.ErrDependency) without executing it. A ticket of after that has
// already failed fails this one at once, with core.ErrDependency, and
// nothing is sent; one that has succeeded is left out, and one given twice
// is named once. A ticket of another client still in flight cannot be
// named (its id means nothing to this runtime): SendAfter returns an error
// wrapping core.ErrInvalidArgument and sends nothing.
func (c *Conn) SendAfter(ctx context.Context, cmd string, req, out any, after []*Ticket, onReply func(error)) (*Ticket, error) {
	return c.send(ctx, cmd, req, out, after, onReply, c.cfg.Timeout, false)
}

// send is SendAfter with the ticket's timeout; graced marks a cleanup
// (free, release), which gets AbandonedGrace from its send while an
// abandoned call is unanswered.
func (c *Conn) send(ctx context.Context, cmd string, req, out any, after []*Ticket, onReply func(error), timeout time.Duration, graced bool) (*Ticket, error) {
	var body []byte
	if req != nil {
		var err error
		if body, err = encodeBody(cmd, req); err != nil {
			return nil, err
		}
	}
	if err := c.takeSlot(ctx, cmd); err != nil {
		return nil, err
	}
	defer func() { <-c.callSlot }()
	t := c.newTicket(cmd, out, onReply, timeout)
	if err := c.deadErr(cmd); err != nil {
		t.finish(err)
		return t, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, &core.Error{Backend: Backend, Op: cmd, Err: err}
	}
	if err := c.takeRoom(ctx, cmd); err != nil {
		if errors.Is(err, core.ErrDeviceLost) {
			t.finish(err)
			return t, nil
		}
		return nil, err
	}
	var ids []uint64
	for i, a := range after {
		if a == nil {
			continue
		}
		ended, aerr := core.Ended(a)
		if aerr != nil {
			<-c.room
			t.finish(&core.Error{Backend: Backend, Op: cmd, Err: fmt.Errorf("%w: request %d (%s) failed: %w", core.ErrDependency, a.id, a.cmd, aerr)})
			return t, nil
		}
		if ended {
			continue // succeeded: nothing to name
		}
		if a.c != c {
			<-c.room
			return nil, &core.Error{Backend: Backend, Op: cmd, Err: fmt.Errorf("%w: after[%d] is request %d (%s) of another runtime process, still in flight; wait for it first",
				core.ErrInvalidArgument, i, a.id, a.cmd)}
		}
		// In flight: within the runtime's window. The runtime refuses an id
		// named twice.
		if !slices.Contains(ids, a.id) {
			ids = append(ids, a.id)
		}
	}
	if graced && c.abandonedN.Load() > 0 {
		t.timeout = min(t.timeout, c.cfg.AbandonedGrace)
		t.strict = time.Now().Add(t.timeout)
	}
	c.nextID++
	t.id = c.nextID
	line := appendRequestAfter(c.wbuf[:0], t.id, cmd, ids, body)
	if cap(line) <= keptBufMax {
		c.wbuf = line
	}
	if err := c.pipelined(ctx, t, line); err != nil && !errors.Is(err, errCutOff) {
		return nil, err
	}
	return t, nil
}

// takeSlot waits for the call slot, or for ctx.
func (c *Conn) takeSlot(ctx context.Context, cmd string) error {
	select {
	case c.callSlot <- struct{}{}:
		return nil
	default: // another call is in flight: wait for it, or for our context
	}
	select {
	case c.callSlot <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &core.Error{Backend: Backend, Op: cmd, Err: ctx.Err()}
	}
}

// takeRoom waits for room in the queue of tickets in flight, or for ctx,
// or for the runtime's end. The caller holds the call slot.
func (c *Conn) takeRoom(ctx context.Context, cmd string) error {
	select {
	case c.room <- struct{}{}:
		return nil
	default:
	}
	select {
	case c.room <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &core.Error{Backend: Backend, Op: cmd, Err: ctx.Err()}
	case <-c.dead:
		return c.lostErr(cmd)
	}
}

// pipelined queues ticket t, whose request is line, starts the reader when
// none runs, and writes the request. The caller holds the call slot and a
// room slot, which the ticket keeps until its reply is handled. A long
// request is written by a helper while the caller watches ctx: a ctx that
// ends before any byte went out takes the ticket back (nil ticket, ctx's
// error: nothing was sent); one that ends part way costs the runtime, as
// the stream cannot be resynchronised.
func (c *Conn) pipelined(ctx context.Context, t *Ticket, line []byte) error {
	t.sent = time.Now()
	c.qmu.Lock()
	if c.pipeDead || c.torn {
		c.qmu.Unlock()
		<-c.room
		t.finish(c.lostErr(t.cmd))
		return nil
	}
	start := !c.reading
	if start {
		c.reading = true
		c.readers.Add(1)
	}
	c.push(t)
	c.qmu.Unlock()
	if start {
		go c.readLoop()
	}
	// The reader drains stdout meanwhile, so the request is written here.
	deadline := time.Now().Add(c.cfg.Timeout)
	if len(line) <= directWriteMax || ctx.Done() == nil {
		if err := c.writeRequest(line, deadline); err != nil {
			c.fail(fmt.Errorf("write %s request: %w", t.cmd, err))
		}
		return nil
	}
	c.writeStop.Store(false)
	written := make(chan error, 1)
	go func() { written <- c.writeRequest(line, deadline) }()
	var werr error
	select {
	case werr = <-written:
	case <-ctx.Done():
		c.stopWrite()
		werr = <-written
		c.writeStopped()
		switch {
		case errors.Is(werr, errNotSent):
			c.unpush(t)
			return &core.Error{Backend: Backend, Op: t.cmd, Err: ctx.Err()}
		case werr != nil:
			werr = fmt.Errorf("%s request cut off part way by the caller (%w); the stream cannot be resynchronised", t.cmd, ctx.Err())
		}
	}
	if werr != nil {
		if !errors.Is(werr, context.Canceled) && !errors.Is(werr, context.DeadlineExceeded) {
			werr = fmt.Errorf("write %s request: %w", t.cmd, werr)
		}
		c.fail(werr)
		return errCutOff // the reader fails the ticket
	}
	return nil
}

// errCutOff is pipelined's answer for a request whose write the caller's
// ctx cut off part way: the client is broken, and the ticket fails with it.
var errCutOff = errors.New("request cut off")

// unpush takes back t, the last ticket queued, whose request was not sent,
// and wakes the reader, which may be waiting for its reply.
func (c *Conn) unpush(t *Ticket) {
	c.qmu.Lock()
	last := (c.qHead + c.qLen - 1) % MaxInFlight
	if c.qLen > 0 && c.ring[last] == t {
		c.ring[last] = nil
		c.qLen--
		if !t.strict.IsZero() {
			c.strictN--
		}
		c.noteActive()
		c.qmu.Unlock()
		<-c.room
	} else {
		c.qmu.Unlock() // failed meanwhile: failPipe has it
	}
	c.interruptRead()
}

// push appends t to the queue; the caller holds qmu and a room slot.
func (c *Conn) push(t *Ticket) {
	c.ring[(c.qHead+c.qLen)%MaxInFlight] = t
	c.qLen++
	if !t.strict.IsZero() {
		c.strictN++
	}
	c.noteActive()
}

// noteActive records, for direct, whether anything is in flight or the
// reader runs; the caller holds qmu and calls it after every change.
func (c *Conn) noteActive() { c.active.Store(c.qLen > 0 || c.reading) }

// pop removes the head of the queue; the caller holds qmu.
func (c *Conn) pop() *Ticket {
	t := c.ring[c.qHead]
	c.ring[c.qHead] = nil
	c.qHead = (c.qHead + 1) % MaxInFlight
	c.qLen--
	if !t.strict.IsZero() {
		c.strictN--
	}
	c.noteActive()
	return t
}

// direct reports whether nothing is in flight, so a caller that holds the
// call slot may read its own reply. No ticket can be queued meanwhile: a
// sender needs the call slot. The reader records its end (noteActive)
// after its last read, so a caller that sees it ended may read stdout.
func (c *Conn) direct() bool { return !c.active.Load() }

// InFlight is the number of requests sent and not yet answered (tests and
// diagnostics).
func (c *Conn) InFlight() int {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	return c.qLen
}

// Reading reports whether the reader goroutine runs (tests: it must end
// once nothing is in flight).
func (c *Conn) Reading() bool {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	return c.reading
}

// abandonDirect queues the request that a direct call gave up on, so that
// its reply is skipped when it comes: the next call finds it in flight and
// goes through the reader. The caller holds the call slot; nothing else is
// in flight, so there is room.
func (c *Conn) abandonDirect(id uint64, cmd string, sent time.Time, timeout time.Duration) {
	t := c.newTicket(cmd, nil, nil, timeout)
	t.id, t.sent = id, sent
	t.Abandon()
	c.room <- struct{}{}
	c.qmu.Lock()
	c.push(t)
	c.qmu.Unlock()
}

// readLoop reads replies while tickets are in flight and hands each to the
// head of the queue; it ends when the queue is empty or the pipe fails.
func (c *Conn) readLoop() {
	defer c.readers.Done()
	for {
		c.qmu.Lock()
		if c.qLen == 0 {
			c.reading = false
			c.noteActive()
			c.qmu.Unlock()
			return
		}
		head := c.ring[c.qHead]
		if head.due.IsZero() {
			from := head.sent
			if c.lastReply.After(from) {
				from = c.lastReply
			}
			head.due = from.Add(head.timeout)
		}
		dl, late := head.due, head
		if c.strictN > 0 {
			for i := range c.qLen {
				if t := c.ring[(c.qHead+i)%MaxInFlight]; !t.strict.IsZero() && t.strict.Before(dl) {
					dl, late = t.strict, t
				}
			}
		}
		c.qmu.Unlock()

		if err := c.setReadDeadline(dl); err != nil {
			c.fail(fmt.Errorf("arm the stdout deadline: %w", err))
			c.failPipe()
			return
		}
		raw, err := c.readLine()
		if err != nil {
			switch {
			case errors.Is(err, errLineTooLong):
				c.fail(fmt.Errorf("%w: a stdout line longer than %d bytes", ErrProtocol, MaxLineBytes))
			case !errors.Is(err, os.ErrDeadlineExceeded):
				if !c.closed.Load() {
					c.fail(errors.New("the runtime closed its stdout"))
				}
			default:
				now := time.Now()
				switch {
				case c.broken.Load(), c.closed.Load():
				case !now.Before(dl):
					c.fail(fmt.Errorf("no reply to %s within %s; the runtime is presumed hung and was killed", late.cmd, late.timeout))
				case c.pastExitGrace(now):
				default:
					continue // an early wake: re-armed above
				}
			}
			c.failPipe()
			return
		}
		h, isReply, err := parseReply(raw)
		if err != nil {
			c.fail(err)
			c.failPipe()
			return
		}
		if !isReply {
			c.logStray(raw)
			continue
		}
		// Only this goroutine takes tickets off the queue: head is still
		// its head.
		if h.ID != head.id && (h.ID != 0 || h.Error == nil) { // id 0: the runtime could not read the line
			c.fail(fmt.Errorf("%w: reply id %d to request %d (%s)", ErrProtocol, h.ID, head.id, head.cmd))
			c.failPipe()
			return
		}
		var rerr error
		if !*h.OK {
			rerr = remoteErr(head.cmd, h.Error)
		} else if head.out != nil && !head.isAbandoned() {
			if err := json.Unmarshal(raw, head.out); err != nil {
				c.fail(fmt.Errorf("%w: %s reply does not decode: %w", ErrProtocol, head.cmd, err))
				c.failPipe()
				return
			}
		}
		c.qmu.Lock()
		c.pop()
		c.lastReply = time.Now()
		c.qmu.Unlock()
		<-c.room
		if head.cmd == CmdRun {
			c.peer.FlushOutput() // its DPRINT lines before its completion
		}
		head.finish(rerr)
	}
}

// failPipe fails every ticket in flight, and every later one, with the
// client's error; the reader calls it and then returns.
func (c *Conn) failPipe() {
	c.qmu.Lock()
	c.pipeDead = true
	var ts []*Ticket
	for c.qLen > 0 {
		ts = append(ts, c.pop())
	}
	c.reading = false
	c.noteActive()
	c.qmu.Unlock()
	for _, t := range ts {
		<-c.room
		t.finish(c.lostErr(t.cmd))
	}
}

// drain waits until every ticket in flight has been answered or failed.
func (c *Conn) drain() {
	for {
		c.qmu.Lock()
		if c.qLen == 0 {
			c.qmu.Unlock()
			return
		}
		last := c.ring[(c.qHead+c.qLen-1)%MaxInFlight]
		c.qmu.Unlock()
		<-last.Done()
	}
}
