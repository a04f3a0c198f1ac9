package ttruntime

// The connection: requests and replies over a reader and a writer with
// deadlines, with nothing of the process behind them but what Peer says.
// One call is a round trip (roundtrip.go) on the fast path, or a ticket in
// the pipeline (pipeline.go); wire.go frames the lines and deadline.go
// bounds the calls in time.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zyxtt/zyxtt/internal/core"
)

// DeadlineReader is the runtime's stdout as a Conn reads it: an *os.File
// pipe, or any reader whose blocked Read a deadline ends (a net.Conn).
type DeadlineReader interface {
	io.Reader
	SetReadDeadline(t time.Time) error
}

// DeadlineWriter is the runtime's stdin as a Conn writes it.
type DeadlineWriter interface {
	io.Writer
	SetWriteDeadline(t time.Time) error
}

// Peer is what a Conn needs of the process that serves it.
type Peer interface {
	// Kill ends the peer at once; the connection calls it when the peer
	// broke the protocol or is presumed hung. It may be called more than
	// once.
	Kill()
	// Exited is closed once the peer has ended: replies it wrote before
	// are still read (for exitGrace), and then every call fails.
	Exited() <-chan struct{}
	// Report is how the peer ended ("exit status 3"), or "still running",
	// and the last lines of its stderr, for the error of a lost
	// connection; it may wait a moment for both.
	Report() (status, stderrTail string)
	// FlushOutput returns once the output the peer had written by now
	// (the DPRINT lines of a run just answered) has been handled.
	FlushOutput()
}

// ConnConfig bounds a Conn's calls; zero fields take Config's defaults.
type ConnConfig struct {
	// Timeout, CleanupTimeout and AbandonedGrace are Config's.
	Timeout        time.Duration
	CleanupTimeout time.Duration
	AbandonedGrace time.Duration
	// Logger receives stdout lines that are not protocol (default
	// slog.Default()).
	Logger *slog.Logger
}

func (c ConnConfig) withDefaults() ConnConfig {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.CleanupTimeout <= 0 {
		c.CleanupTimeout = DefaultCleanupTimeout
	}
	c.CleanupTimeout = min(c.CleanupTimeout, c.Timeout)
	if c.AbandonedGrace <= 0 {
		c.AbandonedGrace = DefaultAbandonedGrace
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Conn is a protocol connection to one runtime: the typed calls
// (calls.go), pipelined sends (pipeline.go) and their bounds. Its methods
// are safe for concurrent use; requests are written one at a time, and
// several may be in flight.
//
// While nothing is in flight there is no reader goroutine: the caller that
// holds the call slot writes its request and reads the replies itself until
// its own comes, so a round trip costs what a raw pipe echo costs (no
// hand-off between goroutines). What a blocked read cannot see by itself
// (the caller's context, the peer's exit) wakes it through the read
// deadline. While requests are in flight, a reader goroutine reads their
// replies in order and a call waits for its own.
type Conn struct {
	in   DeadlineReader // the runtime's stdout
	outw DeadlineWriter // the runtime's stdin
	cfg  ConnConfig
	log  *slog.Logger
	peer Peer

	// callSlot (capacity 1) serialises the writing of requests; a caller
	// waiting for it is still bounded by its context. The holder owns the
	// ids and the request encoder; while nothing is in flight (direct) it
	// also owns the reader and a half-read line, which the reader
	// goroutine owns while it runs.
	callSlot chan struct{}
	nextID   uint64
	// abandonedN counts the abandoned requests whose replies have not
	// come yet: while there are any, the runtime may still be busy with
	// them (a kernel whose launch was given up).
	abandonedN atomic.Int32
	wbuf       []byte        // request encoding, reused
	out        *bufio.Reader // the runtime's stdout
	partial    []byte        // a line read in part (interrupted or long)

	// The tickets in flight (pipeline.go), a queue in request order.
	qmu       sync.Mutex
	ring      [MaxInFlight]*Ticket
	qHead     int
	qLen      int
	reading   bool        // the reader goroutine runs
	active    atomic.Bool // qLen > 0 || reading, for the fast path's check
	lastReply time.Time   // when the last reply was handled
	strictN   int         // tickets in the queue with a strict deadline
	pipeDead  bool        // the pipe failed: every ticket fails at once
	torn      bool        // stopped: no reader starts any more
	readers   sync.WaitGroup
	room      chan struct{} // a slot per ticket in flight (MaxInFlight)

	armedWrite time.Time   // the write deadline now set
	writeStop  atomic.Bool // the caller interrupts a concurrent write

	// dlMu orders read-deadline changes by callers, context watchers and
	// the peer's exit.
	dlMu      sync.Mutex
	armedRead time.Time // the read deadline now set
	wakeAt    time.Time // once the peer exited, no read waits past this
	hasWake   bool

	// The connection's state: once down (broken, the peer gone, or
	// closed), every call fails. The flags are set before dead is closed.
	down      atomic.Bool
	broken    atomic.Bool
	brokenErr error // set before broken
	peerGone  atomic.Bool
	closed    atomic.Bool
	stateOnce sync.Once // orders brokenErr
	dead      chan struct{}
	deadOnce  sync.Once
	watching  chan struct{} // closed when the watch of the peer's exit ends
}

// stdoutBufBytes is the reader's buffer: a whole ordinary reply; long
// lines span reads.
const stdoutBufBytes = 64 << 10

// NewConn is a connection that reads replies from in and writes requests
// to out, served by peer (nil for a stream with no process behind it: a
// break then only stops the connection). It sends nothing: the caller's
// first call is normally init.
func NewConn(in DeadlineReader, out DeadlineWriter, cfg ConnConfig, peer Peer) *Conn {
	cfg = cfg.withDefaults()
	if peer == nil {
		peer = noPeer{}
	}
	c := &Conn{
		in: in, outw: out, cfg: cfg, log: cfg.Logger, peer: peer,
		callSlot: make(chan struct{}, 1),
		room:     make(chan struct{}, MaxInFlight),
		out:      bufio.NewReaderSize(in, stdoutBufBytes),
		dead:     make(chan struct{}),
		watching: make(chan struct{}),
	}
	if exited := peer.Exited(); exited != nil {
		go func() {
			defer close(c.watching)
			select {
			case <-exited:
				c.peerExited()
			case <-c.dead:
			}
		}()
	} else {
		close(c.watching)
	}
	return c
}

// noPeer is the Peer of a bare stream.
type noPeer struct{}

func (noPeer) Kill()                    {}
func (noPeer) Exited() <-chan struct{}  { return nil }
func (noPeer) Report() (string, string) { return "", "" }
func (noPeer) FlushOutput()             {}

// peerExited is the peer's end: from now on no read waits past exitGrace,
// and a read blocked now is woken by then.
func (c *Conn) peerExited() {
	c.peerGone.Store(true)
	c.markDown()
	c.limitReadsAfterExit()
}

func (c *Conn) markDown() {
	c.down.Store(true)
	c.deadOnce.Do(func() { close(c.dead) })
}

// Alive reports whether the connection is usable: not broken, not closed,
// and its peer running.
func (c *Conn) Alive() bool { return !c.down.Load() }

// Lost is closed once the connection is down (broken, its peer gone, or
// closed): work waiting to be sent can stop waiting (its send fails at
// once).
func (c *Conn) Lost() <-chan struct{} { return c.dead }

// LostErr is the error of a call on a connection that is down
// (ErrDeviceLost, with the peer's stderr tail), or nil while it is alive.
func (c *Conn) LostErr(op string) error { return c.deadErr(op) }

// fail marks the connection broken for reason and kills the peer.
func (c *Conn) fail(reason error) {
	c.stateOnce.Do(func() {
		c.brokenErr = reason
		c.broken.Store(true)
		c.markDown()
		c.log.Debug("tt-runtime broken; killing it", "reason", reason)
	})
	c.peer.Kill()
	c.interruptRead() // a reader goroutine sees the break at once
}

// markClosed marks the connection closed (Client.Close, Kill).
func (c *Conn) markClosed() {
	c.closed.Store(true)
	c.markDown()
}

// deadErr is the error for a connection that is down, or nil while it is
// alive. It waits a moment for the peer's report when the peer is dying,
// so the error can say how it ended.
func (c *Conn) deadErr(cmd string) error {
	if !c.down.Load() {
		return nil // the common case
	}
	status, tail := c.peer.Report()
	how := ""
	if status != "" {
		how = " (runtime " + status + ")"
	}
	switch {
	case c.broken.Load():
		return &core.Error{
			Backend: Backend, Op: cmd,
			Err:    fmt.Errorf("%w: %w%s", core.ErrDeviceLost, c.brokenErr, how),
			Native: stderrNote(tail),
		}
	case c.closed.Load():
		return &core.Error{Backend: Backend, Op: cmd, Err: fmt.Errorf("%w: %w: the runtime client was closed", core.ErrDeviceLost, core.ErrClosed)}
	}
	return lostErr(cmd, "the runtime exited ("+status+")", tail)
}

// lostErr is deadErr for a connection known to be down.
func (c *Conn) lostErr(cmd string) error {
	if err := c.deadErr(cmd); err != nil {
		return err
	}
	_, tail := c.peer.Report()
	return lostErr(cmd, "the runtime's pipe failed", tail)
}

// Close ends the connection: every call fails from now on (ErrClosed), no
// reader starts, and the one running (woken by a past deadline, or by the
// closed pipe) has ended when it returns, as has the watch of the peer's
// exit. It does not close the reader and writer, which are the caller's,
// and sends nothing (a Client's Close asks the runtime to exit first). It
// is safe to call more than once.
func (c *Conn) Close() error {
	c.markClosed()
	c.qmu.Lock()
	c.torn = true
	c.qmu.Unlock()
	c.interruptRead()
	c.readers.Wait()
	<-c.watching
	return nil
}

// exit asks the runtime to release everything and exit (Client.Close
// sends it), bounded by timeout.
func (c *Conn) exit(ctx context.Context, timeout time.Duration) error {
	return c.cleanupCall(ctx, CmdExit, nil, timeout)
}

// abandoned reports whether a call whose caller gave up is unanswered.
func (c *Conn) abandoned() bool { return c.abandonedN.Load() > 0 }

// isClosed says whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
