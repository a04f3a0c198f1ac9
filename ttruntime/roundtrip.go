package ttruntime

// One round trip: take the call slot, send the request, read stdout until
// its reply comes, bounded by the caller's context, the call's timeout and
// the peer's exit. The typed calls (calls.go) are its only users.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	json "github.com/goccy/go-json"

	"github.com/zyxtt/zyxtt/internal/core"
)

// call sends one request and decodes the reply's result into out (nil to
// ignore it). It is bounded by ctx and the per-call timeout.
func (c *Conn) call(ctx context.Context, cmd string, req, out any) error {
	return c.callWithTimeout(ctx, cmd, req, out, c.cfg.Timeout)
}

// callWithTimeout is call with its own timeout: a reply that has not come
// timeout after the request was sent (the wait for the call slot does not
// count) means a hung runtime, which is killed. ctx ending first only
// abandons the call: its late reply is skipped and the client lives on.
func (c *Conn) callWithTimeout(ctx context.Context, cmd string, req, out any, timeout time.Duration) error {
	return c.roundTrip(ctx, cmd, req, out, timeout, false)
}

// cleanupCall is the call of a cleanup (free, release) or of Close's exit:
// while an abandoned call is unanswered its timeout is at most
// AbandonedGrace, and it is due that long after it was sent even behind
// other requests in flight.
func (c *Conn) cleanupCall(ctx context.Context, cmd string, req any, timeout time.Duration) error {
	return c.roundTrip(ctx, cmd, req, nil, c.graced(timeout), true)
}

// roundTrip is one call. With nothing in flight the caller writes its
// request and reads stdout itself until its reply comes (the fast path,
// directCall); otherwise the request goes behind those in flight as a
// ticket and the caller waits for it.
func (c *Conn) roundTrip(ctx context.Context, cmd string, req, out any, timeout time.Duration, graced bool) error {
	var body []byte
	if req != nil { // checked here, so a ping does not even make the call
		var err error
		if body, err = encodeBody(cmd, req); err != nil {
			return err
		}
	}
	select {
	case c.callSlot <- struct{}{}:
	default: // another call is in flight: wait for it, or for our context
		select {
		case c.callSlot <- struct{}{}:
		case <-ctx.Done():
			return &core.Error{Backend: Backend, Op: cmd, Err: ctx.Err()}
		}
	}
	if !c.direct() {
		return c.queuedCall(ctx, cmd, body, out, timeout, graced)
	}
	defer func() { <-c.callSlot }()
	return c.directCall(ctx, cmd, body, out, timeout)
}

// sending is a direct call's request while a helper goroutine writes it
// (a long request, written concurrently with the reads); written is nil
// once it is written, or when it was written before reading.
type sending struct {
	c       *Conn
	cmd     string
	written chan error
}

// sent waits for the write. A write that failed part way desynchronises
// the stream for good: the runtime is killed.
func (s *sending) sent() error {
	if s.written == nil {
		return nil
	}
	err := <-s.written
	s.written = nil
	if err != nil {
		s.c.fail(fmt.Errorf("write %s request: %w", s.cmd, err))
		return s.c.deadErr(s.cmd)
	}
	return nil
}

// lost kills the runtime for reason and reports it once the writer is done.
func (s *sending) lost(reason error) error {
	s.c.fail(reason)
	_ = s.sent()
	return s.c.deadErr(s.cmd)
}

// directCall is a call with nothing in flight, by a caller that holds the
// call slot: it writes the request and reads until the reply comes.
func (c *Conn) directCall(ctx context.Context, cmd string, body []byte, out any, timeout time.Duration) error {
	if err := c.deadErr(cmd); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &core.Error{Backend: Backend, Op: cmd, Err: err}
	}
	c.nextID++
	id := c.nextID
	line := appendRequest(c.wbuf[:0], id, cmd, body)
	if cap(line) <= keptBufMax {
		c.wbuf = line // reuse it, unless it is huge
	}

	b := callBounds(ctx, timeout)
	if err := c.setReadDeadline(b.io); err != nil {
		c.fail(fmt.Errorf("arm the stdout deadline: %w", err))
		return c.deadErr(cmd)
	}
	if ctx.Done() != nil { // a context that cannot end needs no watcher
		defer c.watchContext(ctx)()
	}

	// Send. A long request is written concurrently with the reads below.
	s := sending{c: c, cmd: cmd}
	if len(line) <= directWriteMax {
		if err := c.writeRequest(line, b.io); err != nil {
			c.fail(fmt.Errorf("write %s request: %w", cmd, err))
			return c.deadErr(cmd)
		}
	} else {
		c.writeStop.Store(false)
		done := make(chan error, 1) // the goroutine must not capture s, which would put it on the heap for every call
		s.written = done
		deadline := b.io
		go func() { done <- c.writeRequest(line, deadline) }()
	}

	for {
		raw, err := c.readLine()
		if err != nil {
			if err := c.readFailed(ctx, err, &b, &s, id, timeout); err != nil {
				return err
			}
			continue // an early wake: re-armed
		}
		h, isReply, err := parseReply(raw)
		if err != nil {
			return s.lost(err)
		}
		if !isReply {
			c.logStray(raw)
			continue
		}
		if err := s.sent(); err != nil {
			return err
		}
		if h.ID != id {
			if h.ID == 0 && h.Error != nil {
				// the runtime could not read our line at all
				return remoteErr(cmd, h.Error)
			}
			return s.lost(fmt.Errorf("%w: reply id %d to request %d (%s)", ErrProtocol, h.ID, id, cmd))
		}
		if !*h.OK {
			return remoteErr(cmd, h.Error)
		}
		if out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				return s.lost(fmt.Errorf("%w: %s reply does not decode: %w", ErrProtocol, cmd, err))
			}
		}
		return nil
	}
}

// readFailed is what a direct call does when its read of stdout fails: it
// returns the call's error, or nil after re-arming a deadline that woke
// the read early. A deadline wakes it when the caller's context ended (the
// call is abandoned: the next call skips its reply), when the call timed
// out (the runtime is presumed hung), or when the peer exited.
func (c *Conn) readFailed(ctx context.Context, err error, b *bounds, s *sending, id uint64, timeout time.Duration) error {
	cmd := s.cmd
	switch {
	case errors.Is(err, errLineTooLong):
		return s.lost(fmt.Errorf("%w: a stdout line longer than %d bytes", ErrProtocol, MaxLineBytes))
	case !errors.Is(err, os.ErrDeadlineExceeded):
		return s.lost(errors.New("the runtime closed its stdout"))
	}
	now := time.Now()
	if cerr := b.callerErr(ctx, now); cerr != nil {
		if s.written != nil {
			// Still sending: stop. Only a request sent whole, or not at
			// all, leaves the stream usable.
			c.stopWrite()
			werr := <-s.written
			s.written = nil
			c.writeStopped()
			switch {
			case errors.Is(werr, errNotSent):
				return &core.Error{Backend: Backend, Op: cmd, Err: cerr} // no reply will come
			case werr != nil:
				return s.lost(fmt.Errorf("%s request cut off part way by the caller (%w); the stream cannot be resynchronised", cmd, cerr))
			}
		}
		c.abandonDirect(id, cmd, b.call.Add(-timeout), timeout) // the next call skips its reply
		return &core.Error{Backend: Backend, Op: cmd, Err: cerr}
	}
	if b.timedOut(now) {
		return s.lost(fmt.Errorf("no reply to %s within %s; the runtime is presumed hung and was killed", cmd, timeout))
	}
	if c.pastExitGrace(now) {
		_ = s.sent()
		return c.deadErr(cmd)
	}
	if err := c.setReadDeadline(b.io); err != nil {
		return s.lost(fmt.Errorf("arm the stdout deadline: %w", err))
	}
	return nil
}

// logStray logs a stdout line that is not a reply.
func (c *Conn) logStray(raw []byte) {
	if text := bytes.TrimSpace(raw); len(text) > 0 {
		c.log.Debug("tt-runtime stdout (not protocol)", "line", clip(text, 512))
	}
}

// queuedCall is a call behind requests in flight: its request is queued as
// a ticket, the call slot (which the caller holds) is given back once it is
// written, and the caller waits for the reply, or gives it up with ctx
// (the reply is then read and dropped).
func (c *Conn) queuedCall(ctx context.Context, cmd string, body []byte, out any, timeout time.Duration, graced bool) error {
	slotHeld := true
	defer func() {
		if slotHeld {
			<-c.callSlot
		}
	}()
	if err := c.deadErr(cmd); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &core.Error{Backend: Backend, Op: cmd, Err: err}
	}
	if err := c.takeRoom(ctx, cmd); err != nil {
		return err
	}
	t := c.newTicket(cmd, out, nil, timeout)
	if graced && c.abandonedN.Load() > 0 {
		t.strict = time.Now().Add(timeout)
	}
	c.nextID++
	t.id = c.nextID
	line := appendRequest(c.wbuf[:0], t.id, cmd, body)
	if cap(line) <= keptBufMax {
		c.wbuf = line
	}
	if err := c.pipelined(ctx, t, line); errors.Is(err, errCutOff) {
		<-t.Done() // failed by the reader with the cut-off
		return t.Err()
	} else if err != nil {
		return err
	}
	<-c.callSlot
	slotHeld = false
	select {
	case <-t.Done():
		return t.Err()
	case <-ctx.Done():
		select {
		case <-t.Done():
			return t.Err()
		default:
		}
		t.Abandon() // its reply is read and dropped
		return &core.Error{Backend: Backend, Op: cmd, Err: ctx.Err()}
	}
}
