// Package ttruntime is the Go driver for one zyx-tt-runtime process: it
// spawns the process, speaks the typed JSON-line protocol of
// docs/protocol.md over its stdin and stdout, bounds every call in time,
// notices at once when the process dies, and shuts it down gracefully.
package ttruntime

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	json "github.com/goccy/go-json"

	"github.com/zyxtt/zyxtt/backends"
)

// Config describes how to start and talk to a runtime process. Zero fields
// take the defaults below.
type Config struct {
	// Path is the runtime executable (see FindRuntime).
	Path string
	// Args are extra command-line arguments.
	Args []string
	// Env is the child's environment; nil inherits this process's.
	Env []string
	// Timeout bounds every call (default 120 s). A call that gets no
	// reply in time means a hung runtime: the client kills it and the
	// call, like every later one, fails with backends.ErrDeviceLost.
	Timeout time.Duration
	// HandshakeTimeout bounds the init handshake (default 30 s).
	HandshakeTimeout time.Duration
	// ShutdownTimeout is how long Close waits after exit, and then after
	// SIGTERM, before escalating (default 5 s).
	ShutdownTimeout time.Duration
	// Logger receives the runtime's stderr and stray stdout lines at debug
	// level (default slog.Default()).
	Logger *slog.Logger
	// StderrTail is how many stderr lines are kept for error messages
	// (default 32).
	StderrTail int
	// Init holds the handshake fields; Protocol is always ProtocolVersion.
	Init InitRequest
}

// The defaults of Config.
const (
	DefaultTimeout          = 120 * time.Second
	DefaultHandshakeTimeout = 30 * time.Second
	DefaultShutdownTimeout  = 5 * time.Second
	DefaultStderrTail       = 32
)

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.StderrTail <= 0 {
		c.StderrTail = DefaultStderrTail
	}
	if c.Init.Layer == "" {
		c.Init.Layer = "auto"
	}
	c.Init.Protocol = ProtocolVersion
	return c
}

// Client is one running runtime process. Its methods are safe for
// concurrent use; requests are sent one at a time, as the protocol needs.
//
// There is no reader goroutine: the caller that holds the call slot writes its
// request and reads stdout itself until its reply comes, so a round trip
// costs what a raw pipe echo costs (no hand-off between goroutines). What
// a blocked read cannot see by itself (the caller's context, the process's
// exit) wakes it through the read deadline of the stdout pipe.
type Client struct {
	cfg        Config
	cmd        *exec.Cmd
	procCancel context.CancelFunc
	stdin      *os.File
	stdout     *os.File
	stderr     *os.File
	info       InitReply
	log        *slog.Logger
	tail       *tailBuffer

	// callSlot (capacity 1) serialises calls; a caller waiting for it is
	// still bounded by its context. The holder owns the fields up to dlMu:
	// the ids, the request encoder, the stdout reader and a half-read line.
	callSlot  chan struct{}
	nextID    uint64
	abandoned map[uint64]string
	wbuf      []byte        // request encoding, reused
	out       *bufio.Reader // stdout
	partial   []byte        // a line read in part (interrupted or long)

	armedWrite time.Time   // the stdin write deadline now set
	writeStop  atomic.Bool // the caller interrupts a concurrent write

	// dlMu orders stdout read-deadline changes by callers, context
	// watchers and waitLoop.
	dlMu      sync.Mutex
	armedRead time.Time // the stdout read deadline now set
	wakeAt    time.Time // once the process exited, no read waits past this
	hasWake   bool

	stderrDone chan struct{}
	exited     chan struct{}
	exitStatus string // set before exited is closed

	brokenOnce sync.Once
	broken     chan struct{}
	brokenErr  error

	closing   chan struct{}
	ending    atomic.Bool // set before exited, broken or closing is closed
	closeOnce sync.Once
	fdsOnce   sync.Once
	wg        sync.WaitGroup
}

// exitGrace is how long a read may still wait for replies the runtime wrote
// before it exited. They are normally read at once; the grace matters only
// when a grandchild keeps the stdout pipe open.
const exitGrace = 250 * time.Millisecond

// directWriteMax is the longest request written before reading. A pipe
// always takes this much (PIPE_BUF) at once; longer requests are written by
// a helper goroutine while the caller drains stdout, so a runtime that logs
// to stdout while we are still writing cannot deadlock the pair.
const directWriteMax = 4096

// Start spawns the runtime and performs the init handshake. The handshake
// is bounded by ctx, cfg.HandshakeTimeout and the process's exit, whichever
// comes first; on failure the process is killed and nothing is left behind.
// ctx bounds only the start: the process lives until Close or Kill.
func Start(ctx context.Context, cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if cfg.Path == "" {
		return nil, backends.Errorf(Backend, "start", backends.ErrInvalidArgument, "no runtime path")
	}
	c := &Client{
		cfg:        cfg,
		log:        cfg.Logger.With("runtime", cfg.Path),
		tail:       newTailBuffer(cfg.StderrTail),
		abandoned:  map[uint64]string{},
		callSlot:   make(chan struct{}, 1),
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
		broken:     make(chan struct{}),
		closing:    make(chan struct{}),
	}
	if err := c.spawn(); err != nil {
		return nil, err
	}
	// HandshakeTimeout is the call's own timeout, not a context deadline, so
	// that a runtime hanging in init is reported as hung (ErrDeviceLost)
	// and only the caller's own deadline reads as ctx.Err().
	var info InitReply
	err := c.callWithTimeout(ctx, CmdInit, cfg.Init, &info, cfg.HandshakeTimeout)
	if err == nil {
		err = checkVersion(info.Protocol)
	}
	if err != nil {
		var re *RemoteError
		if errors.As(err, &re) && re.Code == CodeVersionMismatch {
			err = &backends.Error{Backend: Backend, Op: CmdInit, Err: fmt.Errorf("%w: %s: rebuild the runtime (make runtime) or zyx-tt so that both speak protocol %d", ErrVersion, re.Message, ProtocolVersion)}
		}
		c.Kill()
		return nil, err
	}
	c.info = info
	return c, nil
}

func checkVersion(v int) error {
	switch {
	case v == ProtocolVersion:
		return nil
	case v < ProtocolVersion:
		return &backends.Error{Backend: Backend, Op: CmdInit, Err: fmt.Errorf("%w: the runtime speaks protocol %d, this zyx-tt speaks %d: rebuild the runtime (make runtime)", ErrVersion, v, ProtocolVersion)}
	default:
		return &backends.Error{Backend: Backend, Op: CmdInit, Err: fmt.Errorf("%w: the runtime speaks protocol %d, this zyx-tt speaks %d: rebuild zyx-tt (the Go driver) from the same tree as the runtime", ErrVersion, v, ProtocolVersion)}
	}
}

// spawn starts the process with three pipes of our own, so that no exec
// copying goroutine sits between the process and the protocol reader.
func (c *Client) spawn() error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return backends.Errorf(Backend, "start", backends.ErrNoDevice, "pipe: %v", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return backends.Errorf(Backend, "start", backends.ErrNoDevice, "pipe: %v", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return backends.Errorf(Backend, "start", backends.ErrNoDevice, "pipe: %v", err)
	}
	procCtx, procCancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(procCtx, c.cfg.Path, c.cfg.Args...)
	cmd.Env = c.cfg.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	// Cancel (from Close, once exit was ignored) asks politely; WaitDelay
	// later makes exec send SIGKILL.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = c.cfg.ShutdownTimeout
	if err := cmd.Start(); err != nil {
		procCancel()
		closeAll(inR, inW, outR, outW, errR, errW)
		return &backends.Error{Backend: Backend, Op: "start", Err: fmt.Errorf("%w: %w", backends.ErrNoDevice, err)}
	}
	closeAll(inR, outW, errW) // the child holds its own copies
	c.cmd, c.procCancel = cmd, procCancel
	c.stdin, c.stdout, c.stderr = inW, outR, errR
	c.out = bufio.NewReaderSize(outR, 64<<10)
	c.log.Debug("tt-runtime started", "pid", cmd.Process.Pid)
	c.wg.Add(2)
	go c.waitLoop()
	go c.stderrLoop()
	return nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// Info is what the runtime reported at the handshake.
func (c *Client) Info() InitReply { return c.info }

// Pid is the runtime's process id.
func (c *Client) Pid() int { return c.cmd.Process.Pid }

// waitLoop reaps the process and records how it ended. A caller blocked on
// stdout gets exitGrace to read what the runtime wrote before it died.
func (c *Client) waitLoop() {
	defer c.wg.Done()
	err := c.cmd.Wait()
	status := "exit status 0"
	if err != nil {
		status = err.Error()
	}
	c.exitStatus = status
	c.ending.Store(true)
	close(c.exited)
	c.dlMu.Lock()
	c.wakeAt, c.hasWake = time.Now().Add(exitGrace), true
	if c.armedRead.IsZero() || c.armedRead.After(c.wakeAt) {
		c.armedRead = c.wakeAt
		_ = c.stdout.SetReadDeadline(c.wakeAt)
	}
	c.dlMu.Unlock()
	c.log.Debug("tt-runtime exited", "status", status)
}

// setReadDeadline arms the stdout deadline for a call, never past the exit
// grace once the process has exited.
func (c *Client) setReadDeadline(d time.Time) error {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	if c.hasWake && c.wakeAt.Before(d) {
		d = c.wakeAt
	}
	if closeEnough(c.armedRead, d, time.Now()) {
		return nil
	}
	c.armedRead = d
	return c.stdout.SetReadDeadline(d)
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

// pastExitGrace reports whether the process has exited more than
// exitGrace ago, so no reply it wrote can still be unread.
func (c *Client) pastExitGrace(now time.Time) bool {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	return c.hasWake && !now.Before(c.wakeAt)
}

// interruptRead wakes the caller blocked on stdout: its context is done.
func (c *Client) interruptRead() {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	c.armedRead = time.Unix(1, 0)
	_ = c.stdout.SetReadDeadline(c.armedRead)
}

// ParseReplyLine reads the header of one stdout line. A line that is not a
// JSON object (a log line that leaked onto stdout) is not a reply and not an
// error; an object that does not decode as a reply is ErrProtocol.
func ParseReplyLine(line []byte) (h ReplyHeader, isReply bool, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return h, false, nil
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return ReplyHeader{}, false, fmt.Errorf("%w: undecodable reply line %q: %w", ErrProtocol, clip(line, 120), err)
	}
	if h.OK == nil {
		return ReplyHeader{}, false, fmt.Errorf("%w: reply line %q has no ok field", ErrProtocol, clip(line, 120))
	}
	if !*h.OK && h.Error == nil {
		h.Error = &ErrorBody{Code: CodeInternal, Message: "error reply without an error object"}
	}
	return h, true, nil
}

// parseReply is ParseReplyLine with a fast path for the commonest reply,
// {"id":N,"ok":true} exactly, which it reads without the decoder.
func parseReply(line []byte) (ReplyHeader, bool, error) {
	const head, tail = `{"id":`, `,"ok":true}`
	if len(line) > len(head)+len(tail) && string(line[:len(head)]) == head && string(line[len(line)-len(tail):]) == tail {
		digits := line[len(head) : len(line)-len(tail)]
		if id, ok := parseID(digits); ok {
			return ReplyHeader{ID: id, OK: &replyOK}, true, nil
		}
	}
	return ParseReplyLine(line)
}

var replyOK = true

// parseID reads a plain decimal uint64 (no sign, no leading zero unless 0).
func parseID(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	var v uint64
	for _, d := range b {
		if d < '0' || d > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-uint64(d-'0'))/10 {
			return 0, false // overflow
		}
		v = v*10 + uint64(d-'0')
	}
	return v, true
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next stdout line without its newline; it is valid
// until the next read. A read cut short (deadline, error) keeps what it got
// in c.partial, so the next read goes on with the same line. No line longer
// than MaxLineBytes is ever held.
func (c *Client) readLine() ([]byte, error) {
	for {
		frag, err := c.out.ReadSlice('\n')
		if err == nil && len(c.partial) == 0 {
			return frag[:len(frag)-1], nil // the common case: no copy
		}
		if len(c.partial)+len(frag) > MaxLineBytes+1 {
			c.partial = nil
			return nil, errLineTooLong
		}
		c.partial = append(c.partial, frag...)
		switch {
		case err == nil:
			line := c.partial[:len(c.partial)-1]
			if cap(c.partial) > 1<<20 {
				c.partial = nil // do not pin a huge buffer
			} else {
				c.partial = c.partial[:0]
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			return nil, err
		}
	}
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// stderrLoop forwards the runtime's stderr to the logger and keeps its tail.
func (c *Client) stderrLoop() {
	defer c.wg.Done()
	defer close(c.stderrDone)
	br := bufio.NewReaderSize(c.stderr, 16<<10)
	var long []byte
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long) < 4096 {
				long = append(long, frag...)
			}
			continue
		}
		line := append(long, frag...)
		long = nil
		if s := string(bytes.TrimRight(line, "\r\n")); s != "" {
			c.tail.add(s)
			c.log.Debug("tt-runtime stderr", "line", s)
		}
		if err != nil {
			return
		}
	}
}

// fail marks the client broken and kills the process.
func (c *Client) fail(reason error) {
	c.brokenOnce.Do(func() {
		c.brokenErr = reason
		c.ending.Store(true)
		close(c.broken)
		c.log.Debug("tt-runtime broken; killing it", "reason", reason)
	})
	c.signal(syscall.SIGKILL)
}

func (c *Client) signal(sig os.Signal) {
	select {
	case <-c.exited:
	default:
		_ = c.cmd.Process.Signal(sig)
	}
}

// deadErr is the error for a client whose runtime is gone or broken, or nil
// while it is alive. It waits a moment for the exit status when the process
// is dying, so the error can say how it ended.
func (c *Client) deadErr(cmd string) error {
	if !c.ending.Load() {
		return nil // the common case, without a select
	}
	select {
	case <-c.broken:
	case <-c.exited:
	case <-c.closing:
	default:
		return nil
	}
	select {
	case <-c.exited:
	case <-time.After(2 * time.Second):
	}
	// give stderr a moment to drain so the tail is complete
	select {
	case <-c.stderrDone:
	case <-time.After(200 * time.Millisecond):
	}
	status := "still running"
	select {
	case <-c.exited:
		status = c.exitStatus
	default:
	}
	select {
	case <-c.broken:
		return &backends.Error{
			Backend: Backend, Op: cmd,
			Err:    fmt.Errorf("%w: %w (runtime %s)", backends.ErrDeviceLost, c.brokenErr, status),
			Native: stderrNote(c.tail.String()),
		}
	default:
	}
	select {
	case <-c.closing:
		return &backends.Error{Backend: Backend, Op: cmd, Err: fmt.Errorf("%w: %w: the runtime client was closed", backends.ErrDeviceLost, backends.ErrClosed)}
	default:
	}
	return lostErr(cmd, "the runtime exited ("+status+")", c.tail.String())
}

// StderrTail is the last lines the runtime wrote to stderr.
func (c *Client) StderrTail() string { return c.tail.String() }

// Call sends one request and decodes the reply's result into out (nil to
// ignore it). It is bounded by ctx and the per-call timeout.
func (c *Client) Call(ctx context.Context, cmd string, req, out any) error {
	return c.callWithTimeout(ctx, cmd, req, out, c.cfg.Timeout)
}

func (c *Client) callWithTimeout(ctx context.Context, cmd string, req, out any, timeout time.Duration) error {
	var body []byte
	if req != nil {
		b, err := json.Marshal(req)
		if err == nil && (len(b) < 2 || b[0] != '{') {
			err = fmt.Errorf("request for %s is not an object", cmd)
		}
		if err != nil {
			return &backends.Error{Backend: Backend, Op: cmd, Err: fmt.Errorf("%w: encode request: %w", backends.ErrInvalidArgument, err)}
		}
		body = b
	}
	select {
	case c.callSlot <- struct{}{}:
	default: // another call is in flight: wait for it, or for our context
		select {
		case c.callSlot <- struct{}{}:
		case <-ctx.Done():
			return &backends.Error{Backend: Backend, Op: cmd, Err: ctx.Err()}
		}
	}
	defer func() { <-c.callSlot }()
	if err := c.deadErr(cmd); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &backends.Error{Backend: Backend, Op: cmd, Err: err}
	}
	c.nextID++
	id := c.nextID
	line := appendRequest(c.wbuf[:0], id, cmd, body)
	if cap(line) <= 1<<20 {
		c.wbuf = line // reuse it, unless it is huge
	}

	callDeadline := time.Now().Add(timeout)
	deadline := callDeadline
	ctxDeadline, hasCtxDeadline := ctx.Deadline()
	if hasCtxDeadline && ctxDeadline.Before(deadline) {
		deadline = ctxDeadline
	}
	if err := c.setReadDeadline(deadline); err != nil {
		c.fail(fmt.Errorf("arm the stdout deadline: %w", err))
		return c.deadErr(cmd)
	}
	if ctx.Done() != nil {
		watched := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			defer close(watched)
			c.interruptRead()
		})
		defer func() {
			if !stop() {
				<-watched // it must not pull in a later call's deadline
			}
		}()
	}

	// Send. A long request is written concurrently with the reads below;
	// sent waits for that write. A write that failed part way
	// desynchronises the stream for good.
	var written chan error
	if len(line) <= directWriteMax {
		if err := c.writeRequest(line, deadline); err != nil {
			c.fail(fmt.Errorf("write %s request: %w", cmd, err))
			return c.deadErr(cmd)
		}
	} else {
		c.writeStop.Store(false)
		done := make(chan error, 1) // the goroutine must not capture written, which is reassigned: that would put it on the heap for every call
		written = done
		go func() { done <- c.writeRequest(line, deadline) }()
	}
	sent := func() error {
		if written == nil {
			return nil
		}
		err := <-written
		written = nil
		if err != nil {
			c.fail(fmt.Errorf("write %s request: %w", cmd, err))
			return c.deadErr(cmd)
		}
		return nil
	}
	// lost kills the runtime for reason and reports it once the writer is done.
	lost := func(reason error) error {
		c.fail(reason)
		_ = sent()
		return c.deadErr(cmd)
	}

	for {
		raw, err := c.readLine()
		switch {
		case err == nil:
		case errors.Is(err, errLineTooLong):
			return lost(fmt.Errorf("%w: a stdout line longer than %d bytes", ErrProtocol, MaxLineBytes))
		case !errors.Is(err, os.ErrDeadlineExceeded):
			return lost(errors.New("the runtime closed its stdout"))
		default:
			// The deadline woke us: the caller's context ended, the call
			// timed out, or the process exited.
			now := time.Now()
			cerr := ctx.Err()
			if cerr == nil && hasCtxDeadline && !now.Before(ctxDeadline) {
				cerr = context.DeadlineExceeded
			}
			if cerr != nil {
				if written != nil {
					// Still sending: stop. Only a request sent whole, or
					// not at all, leaves the stream usable.
					c.writeStop.Store(true)
					_ = c.stdin.SetWriteDeadline(time.Unix(1, 0))
					werr := <-written
					written, c.armedWrite = nil, time.Unix(1, 0)
					c.writeStop.Store(false) // the writer is done; later writes must not see the stop
					switch {
					case errors.Is(werr, errNotSent):
						return &backends.Error{Backend: Backend, Op: cmd, Err: cerr} // no reply will come
					case werr != nil:
						return lost(fmt.Errorf("%s request cut off part way by the caller (%w); the stream cannot be resynchronised", cmd, cerr))
					}
				}
				c.abandoned[id] = cmd // the next call skips its reply
				return &backends.Error{Backend: Backend, Op: cmd, Err: cerr}
			}
			if !now.Before(callDeadline) {
				return lost(fmt.Errorf("no reply to %s within %s; the runtime is presumed hung and was killed", cmd, timeout))
			}
			if c.pastExitGrace(now) {
				_ = sent()
				return c.deadErr(cmd)
			}
			if err := c.setReadDeadline(deadline); err != nil {
				return lost(fmt.Errorf("arm the stdout deadline: %w", err))
			}
			continue
		}
		h, isReply, err := parseReply(raw)
		if err != nil {
			return lost(err)
		}
		if !isReply {
			if text := bytes.TrimSpace(raw); len(text) > 0 {
				c.log.Debug("tt-runtime stdout (not protocol)", "line", clip(text, 512))
			}
			continue
		}
		if err := sent(); err != nil {
			return err
		}
		if h.ID != id {
			if _, ok := c.abandoned[h.ID]; ok {
				delete(c.abandoned, h.ID)
				continue
			}
			if h.ID == 0 && h.Error != nil {
				// the runtime could not read our line at all
				return remoteErr(cmd, h.Error)
			}
			return lost(fmt.Errorf("%w: reply id %d to request %d (%s)", ErrProtocol, h.ID, id, cmd))
		}
		if !*h.OK {
			return remoteErr(cmd, h.Error)
		}
		if out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				return lost(fmt.Errorf("%w: %s reply does not decode: %w", ErrProtocol, cmd, err))
			}
		}
		return nil
	}
}

// errNotSent is writeRequest's answer when the caller stopped it before
// any byte of the request went out.
var errNotSent = errors.New("request not sent")

// writeRequest writes one whole request line by the deadline. A deadline
// armed for an earlier call that fires first is re-armed exactly and the
// write goes on where it stopped.
func (c *Client) writeRequest(line []byte, deadline time.Time) error {
	if !closeEnough(c.armedWrite, deadline, time.Now()) {
		if err := c.stdin.SetWriteDeadline(deadline); err != nil {
			return err
		}
		c.armedWrite = deadline
	}
	whole := len(line)
	for {
		// The stop is checked after every arming: a stop that came
		// before it is seen here, and one that comes after it has moved
		// the deadline into the past, so no write outlives a stop.
		if c.writeStop.Load() {
			if len(line) == whole {
				return errNotSent
			}
			return os.ErrDeadlineExceeded
		}
		n, err := c.stdin.Write(line)
		line = line[n:]
		switch {
		case err == nil || !errors.Is(err, os.ErrDeadlineExceeded):
			return err
		case c.writeStop.Load():
			continue // the stop woke the write: answered above
		case !time.Now().Before(deadline) || c.armedWrite.Equal(deadline):
			return err
		}
		if err := c.stdin.SetWriteDeadline(deadline); err != nil {
			return err
		}
		c.armedWrite = deadline
	}
}

// appendRequest renders {"id":id,"cmd":cmd,<fields of body>} and a newline.
func appendRequest(dst []byte, id uint64, cmd string, body []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendUint(dst, id, 10)
	dst = append(dst, `,"cmd":`...)
	dst = appendJSONString(dst, cmd)
	if len(body) > 2 {
		dst = append(dst, ',')
		dst = append(dst, body[1:len(body)-1]...)
	}
	return append(dst, '}', '\n')
}

// appendJSONString quotes s for JSON; command names are plain words, so
// the encoder is needed only for anything else.
func appendJSONString(dst []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x7f || b == '"' || b == '\\' {
			plain = false
			break
		}
	}
	if plain {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	q, err := json.Marshal(s)
	if err != nil { // not reachable for a string; keep the stream valid
		return append(dst, `""`...)
	}
	return append(dst, q...)
}

// Ping is a no-op round trip.
func (c *Client) Ping(ctx context.Context) error { return c.Call(ctx, CmdPing, nil, nil) }

// Alive reports whether the process is running and the client usable.
func (c *Client) Alive() bool {
	select {
	case <-c.exited:
		return false
	case <-c.broken:
		return false
	case <-c.closing:
		return false
	default:
		return true
	}
}

// Kill ends the process at once with SIGKILL and releases everything. It
// is safe to call more than once and after Close.
func (c *Client) Kill() {
	c.closeOnce.Do(func() {
		c.ending.Store(true)
		close(c.closing)
	})
	c.signal(syscall.SIGKILL)
	c.teardown()
}

// Close shuts the runtime down gracefully: it sends exit and waits, then
// sends SIGTERM and waits, then SIGKILL. It is safe to call more than once.
func (c *Client) Close() error {
	first := false
	c.closeOnce.Do(func() { first = true })
	if !first {
		c.teardown()
		return nil
	}
	if c.Alive() {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ShutdownTimeout)
		err := c.callWithTimeout(ctx, CmdExit, nil, nil, c.cfg.ShutdownTimeout)
		cancel()
		if err != nil {
			c.log.Debug("tt-runtime exit request failed", "err", err)
		}
	}
	c.ending.Store(true)
	close(c.closing)
	select {
	case <-c.exited:
	case <-time.After(c.cfg.ShutdownTimeout):
		c.log.Warn("tt-runtime ignored exit; sending SIGTERM", "pid", c.cmd.Process.Pid)
		c.procCancel() // SIGTERM, then SIGKILL after WaitDelay
	}
	c.teardown()
	return nil
}

// teardown waits for the process and the goroutines and closes the pipes.
func (c *Client) teardown() {
	_ = c.stdin.Close() // EOF tells the runtime to exit
	select {
	case <-c.exited:
	case <-time.After(2*c.cfg.ShutdownTimeout + time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	c.procCancel()
	// With the process gone stderr reaches EOF, unless a grandchild still
	// holds it; then closing our end unblocks the reader.
	select {
	case <-c.stderrDone:
	case <-time.After(time.Second):
	}
	c.fdsOnce.Do(func() { closeAll(c.stdout, c.stderr) })
	c.wg.Wait()
}

// tailBuffer keeps the last n lines.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
}

func newTailBuffer(n int) *tailBuffer { return &tailBuffer{lines: make([]string, n)} }

func (t *tailBuffer) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(s) > 1024 {
		s = s[:1024] + "…"
	}
	t.lines[t.next] = s
	t.next = (t.next + 1) % len(t.lines)
	if t.next == 0 {
		t.full = true
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b bytes.Buffer
	write := func(ls []string) {
		for _, l := range ls {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	if t.full {
		write(t.lines[t.next:])
	}
	write(t.lines[:t.next])
	return b.String()
}

var _ io.Closer = (*Client)(nil)
