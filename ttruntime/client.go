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
	"os"
	"os/exec"
	"strconv"
	"sync"
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

type reply struct {
	hdr  ReplyHeader
	line []byte
}

// Client is one running runtime process. Its methods are safe for
// concurrent use; requests are sent one at a time, as the protocol needs.
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

	callMu    sync.Mutex
	nextID    uint64
	abandoned map[uint64]string

	replies    chan reply
	readerDone chan struct{}
	stderrDone chan struct{}
	exited     chan struct{}
	exitStatus string // set before exited is closed

	stop     chan struct{}
	stopOnce sync.Once

	brokenOnce sync.Once
	broken     chan struct{}
	brokenErr  error

	closing   chan struct{}
	closeOnce sync.Once
	fdsOnce   sync.Once
	wg        sync.WaitGroup
}

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
		replies:    make(chan reply),
		readerDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
		stop:       make(chan struct{}),
		broken:     make(chan struct{}),
		closing:    make(chan struct{}),
	}
	if err := c.spawn(); err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, cfg.HandshakeTimeout)
	defer cancel()
	var info InitReply
	err := c.callWithTimeout(hctx, CmdInit, cfg.Init, &info, cfg.HandshakeTimeout)
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
	c.log.Debug("tt-runtime started", "pid", cmd.Process.Pid)
	c.wg.Add(3)
	go c.waitLoop()
	go c.readLoop()
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

// waitLoop reaps the process and records how it ended.
func (c *Client) waitLoop() {
	defer c.wg.Done()
	err := c.cmd.Wait()
	status := "exit status 0"
	if err != nil {
		status = err.Error()
	}
	c.exitStatus = status
	close(c.exited)
	c.log.Debug("tt-runtime exited", "status", status)
}

// readLoop decodes protocol lines from stdout and hands replies to the
// caller waiting for one. Lines that are not JSON objects are logged and
// skipped; an oversized line or an object that is not a reply breaks the
// client.
func (c *Client) readLoop() {
	defer c.wg.Done()
	defer close(c.readerDone)
	br := bufio.NewReaderSize(c.stdout, 64<<10)
	for {
		line, err := readLine(br, MaxLineBytes)
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				c.fail(fmt.Errorf("%w: a stdout line longer than %d bytes", ErrProtocol, MaxLineBytes))
			}
			return
		}
		line = bytes.TrimSpace(line)
		h, isReply, err := ParseReplyLine(line)
		if err != nil {
			c.fail(err)
			return
		}
		if !isReply {
			if len(line) > 0 {
				c.log.Debug("tt-runtime stdout (not protocol)", "line", clip(line, 512))
			}
			continue
		}
		select {
		case c.replies <- reply{hdr: h, line: line}:
		case <-c.stop:
			return
		}
	}
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

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline; it never holds more
// than max bytes of one line.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > max+1 {
			return nil, errLineTooLong
		}
		switch {
		case err == nil:
			if buf == nil {
				return bytes.Clone(frag[:len(frag)-1]), nil
			}
			buf = append(buf, frag...)
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			buf = append(buf, frag...)
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
	line, err := encodeRequest(cmd, req)
	if err != nil {
		return &backends.Error{Backend: Backend, Op: cmd, Err: fmt.Errorf("%w: encode request: %w", backends.ErrInvalidArgument, err)}
	}
	c.callMu.Lock()
	defer c.callMu.Unlock()
	if err := c.deadErr(cmd); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &backends.Error{Backend: Backend, Op: cmd, Err: err}
	}
	c.nextID++
	id := c.nextID
	line = finishRequest(line, id)

	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.stdin.SetWriteDeadline(deadline); err == nil {
		if _, err := c.stdin.Write(line); err != nil {
			// A partly written line desynchronises the stream for good.
			c.fail(fmt.Errorf("write %s request: %w", cmd, err))
			return c.deadErr(cmd)
		}
	} else {
		c.fail(fmt.Errorf("write %s request: %w", cmd, err))
		return c.deadErr(cmd)
	}

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	exited := c.exited
	var grace <-chan time.Time
	for {
		select {
		case r := <-c.replies:
			if r.hdr.ID != id {
				if _, ok := c.abandoned[r.hdr.ID]; ok {
					delete(c.abandoned, r.hdr.ID)
					continue
				}
				if r.hdr.ID == 0 && r.hdr.Error != nil {
					// the runtime could not read our line at all
					return remoteErr(cmd, r.hdr.Error)
				}
				c.fail(fmt.Errorf("%w: reply id %d to request %d (%s)", ErrProtocol, r.hdr.ID, id, cmd))
				return c.deadErr(cmd)
			}
			if !*r.hdr.OK {
				body := r.hdr.Error
				if body == nil {
					body = &ErrorBody{Code: CodeInternal, Message: "error reply without an error object"}
				}
				return remoteErr(cmd, body)
			}
			if out != nil {
				if err := json.Unmarshal(r.line, out); err != nil {
					c.fail(fmt.Errorf("%w: %s reply does not decode: %w", ErrProtocol, cmd, err))
					return c.deadErr(cmd)
				}
			}
			return nil
		case <-ctx.Done():
			// The reply will still come; the next call skips it by id.
			c.abandoned[id] = cmd
			return &backends.Error{Backend: Backend, Op: cmd, Err: ctx.Err()}
		case <-timer.C:
			c.fail(fmt.Errorf("no reply to %s within %s; the runtime is presumed hung and was killed", cmd, timeout))
			return c.deadErr(cmd)
		case <-c.readerDone:
			c.fail(fmt.Errorf("the runtime closed its stdout"))
			return c.deadErr(cmd)
		case <-exited:
			// Replies written before the exit are still in the pipe.
			exited = nil
			grace = time.After(250 * time.Millisecond)
		case <-grace:
			return c.deadErr(cmd)
		case <-c.broken:
			return c.deadErr(cmd)
		}
	}
}

// encodeRequest renders the request without its id: `{"cmd":"x"` and the
// request's own fields. finishRequest adds the id and the newline.
func encodeRequest(cmd string, req any) ([]byte, error) {
	var body []byte
	if req != nil {
		b, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		if len(b) < 2 || b[0] != '{' {
			return nil, fmt.Errorf("request for %s is not an object", cmd)
		}
		body = b
	}
	out := make([]byte, 0, len(body)+len(cmd)+40)
	out = append(out, `,"cmd":`...)
	out = strconv.AppendQuote(out, cmd)
	if len(body) > 2 {
		out = append(out, ',')
		out = append(out, body[1:len(body)-1]...)
	}
	out = append(out, '}', '\n')
	return out, nil
}

func finishRequest(rest []byte, id uint64) []byte {
	out := make([]byte, 0, len(rest)+24)
	out = append(out, `{"id":`...)
	out = strconv.AppendUint(out, id, 10)
	return append(out, rest...)
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
	c.closeOnce.Do(func() { close(c.closing) })
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
	c.stopOnce.Do(func() { close(c.stop) })
	_ = c.stdin.Close() // EOF tells the runtime to exit
	select {
	case <-c.exited:
	case <-time.After(2*c.cfg.ShutdownTimeout + time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	c.procCancel()
	// With the process gone the pipes reach EOF, unless a grandchild still
	// holds them; then closing our ends unblocks the readers.
	select {
	case <-c.readerDone:
	case <-time.After(time.Second):
	}
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
