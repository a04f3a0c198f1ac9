package ttruntime

// The typed calls: one method per protocol command (docs/protocol.md), each
// with its request and reply types (protocol.go). Every call is bounded by
// its context and the client's Timeout (Free and Release by CleanupTimeout);
// an error reply is a *core.Error wrapping a *RemoteError, and a runtime
// that is gone makes every call fail with ErrDeviceLost.

import (
	"context"
	"time"
)

// Init is the handshake on a connection made with NewConn (Start performs
// it for a Client): it asks for the device of req in protocol
// ProtocolVersion. A runtime of another protocol is ErrVersion.
func (c *Conn) Init(ctx context.Context, req InitRequest) (InitReply, error) {
	req.Protocol = ProtocolVersion
	r, err := callFor[InitReply](ctx, c, CmdInit, req)
	if err == nil {
		err = checkVersion(r.Protocol)
	}
	return r, err
}

// graced is timeout, or AbandonedGrace when that is shorter and an
// abandoned call is still unanswered (the runtime is likely inside its
// kernel).
func (c *Conn) graced(timeout time.Duration) time.Duration {
	if c.abandonedN.Load() > 0 {
		return min(timeout, c.cfg.AbandonedGrace)
	}
	return timeout
}

// callFor is a call whose reply decodes into an R; the zero R on error.
func callFor[R any](ctx context.Context, c *Conn, cmd string, req any) (R, error) {
	var r R
	if err := c.call(ctx, cmd, req, &r); err != nil {
		var zero R
		return zero, err
	}
	return r, nil
}

// Ping is a no-op round trip. It allocates nothing.
func (c *Conn) Ping(ctx context.Context) error { return c.call(ctx, CmdPing, nil, nil) }

// Map maps a shm segment in the runtime ahead of the transfers that use it
// (they map it on first use too).
func (c *Conn) Map(ctx context.Context, req SegmentRequest) error {
	return c.call(ctx, CmdMap, req, nil)
}

// Unmap drops the runtime's mapping of a shm segment; a segment it never
// mapped is no error.
func (c *Conn) Unmap(ctx context.Context, req SegmentRequest) error {
	return c.call(ctx, CmdUnmap, req, nil)
}

// Alloc creates a device buffer of req.Size bytes laid out as its spec
// says (the zero spec: DRAM, interleaved in DefaultPageSize pages). The
// runtime checks the request and answers a refusal with its code and field
// path (docs/protocol.md, "Validation").
func (c *Conn) Alloc(ctx context.Context, req AllocRequest) (AllocReply, error) {
	return callFor[AllocReply](ctx, c, CmdAlloc, req)
}

// Free frees a device buffer. Its reply is bounded by CleanupTimeout (or
// AbandonedGrace while an abandoned call is unanswered): a runtime that
// does not answer a free that long after it was sent is presumed hung and
// killed, as on any call's timeout.
func (c *Conn) Free(ctx context.Context, req BufferRequest) error {
	return c.cleanupCall(ctx, CmdFree, req, c.cfg.CleanupTimeout)
}

// Write copies req.Length bytes from the shm segment at req.SegmentOffset
// into the buffer at req.Offset.
func (c *Conn) Write(ctx context.Context, req TransferRequest) error {
	return c.call(ctx, CmdWrite, req, nil)
}

// Read copies req.Length bytes from the buffer at req.Offset into the shm
// segment at req.SegmentOffset.
func (c *Conn) Read(ctx context.Context, req TransferRequest) error {
	return c.call(ctx, CmdRead, req, nil)
}

// Compile registers and builds a program; a build failure is ErrCompile
// carrying the compiler's diagnostics. The runtime checks the request and
// answers a refusal with its code and field path.
func (c *Conn) Compile(ctx context.Context, req CompileRequest) (ProgramReply, error) {
	return callFor[ProgramReply](ctx, c, CmdCompile, req)
}

// Run runs every kernel of a compiled program on its cores and waits for
// it; the reply carries the device time when req.Timed. With
// KernelOutput set, the DPRINT lines of the run have been written there
// when Run returns.
func (c *Conn) Run(ctx context.Context, req RunRequest) (RunReply, error) {
	r, err := callFor[RunReply](ctx, c, CmdRun, req)
	c.peer.FlushOutput()
	return r, err
}

// Release drops a compiled program. Like Free, its reply is bounded by
// CleanupTimeout.
func (c *Conn) Release(ctx context.Context, req ProgramRequest) error {
	return c.cleanupCall(ctx, CmdRelease, req, c.cfg.CleanupTimeout)
}

// The pipelined calls: each sends its request without waiting and returns
// its ticket (see Send); done (may be nil) is called with the outcome when
// the reply has come, before the ticket's Done closes.

// SendRun sends a run; its reply (the run's completion, with its error)
// decodes into out when out is not nil. With KernelOutput set, the run's
// DPRINT lines have been written there before done is called.
//
// after (may be nil) are the tickets whose failure must keep it from
// running (see SendAfter).
func (c *Conn) SendRun(ctx context.Context, req RunRequest, out *RunReply, after []*Ticket, done func(error)) (*Ticket, error) {
	if out == nil {
		return c.send(ctx, CmdRun, req, nil, after, done, c.cfg.Timeout, false)
	}
	return c.send(ctx, CmdRun, req, out, after, done, c.cfg.Timeout, false)
}

// SendWrite sends a write (shm segment to buffer), after as SendRun's.
func (c *Conn) SendWrite(ctx context.Context, req TransferRequest, after []*Ticket, done func(error)) (*Ticket, error) {
	return c.send(ctx, CmdWrite, req, nil, after, done, c.cfg.Timeout, false)
}

// SendRead sends a read (buffer to shm segment), after as SendRun's: the
// bytes are in the segment once the ticket has succeeded.
func (c *Conn) SendRead(ctx context.Context, req TransferRequest, after []*Ticket, done func(error)) (*Ticket, error) {
	return c.send(ctx, CmdRead, req, nil, after, done, c.cfg.Timeout, false)
}

// SendUnmap sends an unmap.
func (c *Conn) SendUnmap(ctx context.Context, req SegmentRequest, done func(error)) (*Ticket, error) {
	return c.send(ctx, CmdUnmap, req, nil, nil, done, c.cfg.Timeout, false)
}

// SendFree sends a free. The runtime runs requests in order, so a free
// sent after requests that use the buffer frees it once they have run.
// Like Free, its reply is due CleanupTimeout after the requests before it
// have been answered (AbandonedGrace after it was sent, while an abandoned
// call is unanswered).
func (c *Conn) SendFree(ctx context.Context, req BufferRequest, done func(error)) (*Ticket, error) {
	return c.send(ctx, CmdFree, req, nil, nil, done, c.cfg.CleanupTimeout, true)
}

// SendRelease sends a release, with Free's bounds.
func (c *Conn) SendRelease(ctx context.Context, req ProgramRequest, done func(error)) (*Ticket, error) {
	return c.send(ctx, CmdRelease, req, nil, nil, done, c.cfg.CleanupTimeout, true)
}
