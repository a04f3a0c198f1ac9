// Package ttruntime is the Go driver for one zyx-tt-runtime process: it
// spawns the process, speaks the typed JSON-line protocol of
// docs/protocol.md over its stdin and stdout, bounds every call in time,
// notices at once when the process dies, and shuts it down gracefully.
//
// A Client is two parts:
//
//   - the process runner (process.go): the process's lifecycle (start with
//     exec.CommandContext, reaping, the stderr tail and kernel output,
//     Kill, and the escalation of a shutdown), with nothing of the
//     protocol;
//   - the connection (conn.go, a Conn): requests and replies over any
//     reader and writer with deadlines, with nothing of the process but
//     its Peer interface. wire.go frames the lines, deadline.go bounds a
//     call, roundtrip.go is one call, pipeline.go the calls in flight, and
//     calls.go the typed calls, one method per protocol command.
//
// client.go joins them: Config, Start (the runner, then the connection and
// the bounded init handshake) and Close.
//
// Errors are *core.Error values (backends.Error to users: the same type)
// wrapping the sentinels of internal/core, which package backends
// re-exports, so errors.Is(err, backends.ErrDeviceLost) works on them. This
// package imports neither backends nor any other part of zyx-tt but core.
package ttruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/zyxtt/zyxtt/internal/core"
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
	// CleanupTimeout bounds Free and Release in the same way (default 5 s,
	// never more than Timeout). They are cheap in the runtime, so one that
	// gets no reply this long after it was sent means a hung runtime (for
	// instance one still inside a kernel whose launch was abandoned): it is
	// killed, and a program exiting during a hung kernel does not wait the
	// full Timeout for each of its cleanups.
	CleanupTimeout time.Duration
	// AbandonedGrace bounds Free, Release and Close's exit request instead
	// of CleanupTimeout and ShutdownTimeout while a call whose caller gave
	// up (its context ended) has not been answered yet (default 1 s, never
	// more than those). The runtime is then most likely still inside the
	// kernel of an abandoned launch, and the cleanups and exit of a
	// program shutting down should not each wait for it: past the grace the
	// runtime is presumed hung and killed.
	AbandonedGrace time.Duration
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
	// LockFile, when set, is the chip's locked lock file (ChipLock.File):
	// the runtime inherits it as descriptor 3 and is told so with
	// --lock-fd 3, so it holds the chip for as long as it lives, also past
	// this process. The caller keeps its own descriptor until it unlocks.
	LockFile *os.File
	// KernelOutput, when set, receives the kernels' DPRINT output: the
	// runtime is asked to print it (init's dprint), and every stderr line
	// that starts with "dprint: " is written here without that prefix
	// ("core (0,1) riscv_0: text\n") instead of going to the log. Run
	// returns after the lines its kernels printed have been written.
	KernelOutput io.Writer
}

// The defaults of Config.
const (
	// DefaultTimeout is far longer than any one command takes when the
	// runtime works (the longest, a compile of three kernels by the host
	// compiler or a kernel run on the emulator, takes seconds), so that
	// only a runtime that is stuck is taken for hung.
	DefaultTimeout = 120 * time.Second
	// DefaultCleanupTimeout: a free or release takes micro- to
	// milliseconds in the runtime; 5 s is ample on a loaded machine and
	// short enough that exiting during a hung kernel is quick.
	DefaultCleanupTimeout = 5 * time.Second
	// DefaultAbandonedGrace: an abandoned launch that has not answered
	// yet is usually a hung or very long kernel; a second is enough for
	// one that was about to finish.
	DefaultAbandonedGrace = time.Second
	// DefaultHandshakeTimeout: init opens the device, which takes seconds
	// on a card (tt-metal brings the chip up) and milliseconds on the
	// emulator.
	DefaultHandshakeTimeout = 30 * time.Second
	// DefaultShutdownTimeout: exit frees everything and closes the device,
	// well within 5 s, so a runtime still there after it ignored exit.
	DefaultShutdownTimeout = 5 * time.Second
	// DefaultStderrTail lines are enough for a crash message or a
	// compiler's diagnostics without flooding an error.
	DefaultStderrTail = 32
)

func (c Config) withDefaults() Config {
	// The connection's settings take the connection's defaults.
	cc := ConnConfig{Timeout: c.Timeout, CleanupTimeout: c.CleanupTimeout, AbandonedGrace: c.AbandonedGrace,
		Logger: c.Logger}.withDefaults()
	c.Timeout, c.CleanupTimeout, c.AbandonedGrace, c.Logger = cc.Timeout, cc.CleanupTimeout, cc.AbandonedGrace, cc.Logger
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.StderrTail <= 0 {
		c.StderrTail = DefaultStderrTail
	}
	if c.Init.Layer == "" {
		c.Init.Layer = "auto"
	}
	c.Init.Protocol = ProtocolVersion
	if c.KernelOutput != nil {
		c.Init.DPrint = true
	}
	return c
}

// connConfig is the connection's part of c.
func (c Config) connConfig(log *slog.Logger) ConnConfig {
	return ConnConfig{Timeout: c.Timeout, CleanupTimeout: c.CleanupTimeout, AbandonedGrace: c.AbandonedGrace, Logger: log}
}

// Client is one running runtime process and the connection to it: the
// typed calls and sends are the Conn's (its methods are the Client's), and
// the process's end is the Client's (Close, Kill). Its methods are safe for
// concurrent use.
type Client struct {
	*Conn
	cfg       Config
	run       *runner
	info      InitReply
	closeOnce sync.Once
}

// Start spawns the runtime and performs the init handshake. The handshake
// is bounded by ctx, cfg.HandshakeTimeout and the process's exit, whichever
// comes first; on failure the process is killed and nothing is left behind.
// ctx bounds only the start: the process lives until Close or Kill.
func Start(ctx context.Context, cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if cfg.Path == "" {
		return nil, core.Errorf(Backend, "start", core.ErrInvalidArgument, "no runtime path")
	}
	log := cfg.Logger.With("runtime", cfg.Path)
	run, err := startRunner(cfg, log)
	if err != nil {
		return nil, err
	}
	c := &Client{Conn: NewConn(run.stdout, run.stdin, cfg.connConfig(log), run), cfg: cfg, run: run}
	run.watch(nil)
	// HandshakeTimeout is the call's own timeout, not a context deadline,
	// so that a runtime hanging in init is reported as hung
	// (ErrDeviceLost) and only the caller's own deadline reads as
	// ctx.Err().
	var info InitReply
	err = c.callWithTimeout(ctx, CmdInit, cfg.Init, &info, cfg.HandshakeTimeout)
	if err == nil {
		err = checkVersion(info.Protocol)
	}
	if err != nil {
		var re *RemoteError
		if errors.As(err, &re) && re.Code == CodeVersionMismatch {
			err = &core.Error{Backend: Backend, Op: CmdInit, Err: fmt.Errorf("%w: %s: rebuild the runtime (zyx-tt runtime install, or make runtime) or zyx-tt so that both speak protocol %d", ErrVersion, re.Message, ProtocolVersion)}
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
		return &core.Error{Backend: Backend, Op: CmdInit, Err: fmt.Errorf("%w: the runtime speaks protocol %d, this zyx-tt speaks %d: rebuild the runtime (zyx-tt runtime install, or make runtime)", ErrVersion, v, ProtocolVersion)}
	default:
		return &core.Error{Backend: Backend, Op: CmdInit, Err: fmt.Errorf("%w: the runtime speaks protocol %d, this zyx-tt speaks %d: rebuild zyx-tt (the Go driver) from the same tree as the runtime", ErrVersion, v, ProtocolVersion)}
	}
}

// Info is what the runtime reported at the handshake.
func (c *Client) Info() InitReply { return c.info }

// Pid is the runtime's process id.
func (c *Client) Pid() int { return c.run.Pid() }

// StderrTail is the last lines the runtime wrote to stderr.
func (c *Client) StderrTail() string { return c.run.tail.String() }

// Kill ends the process at once with SIGKILL and releases everything. It
// is safe to call more than once and after Close.
func (c *Client) Kill() {
	c.closeOnce.Do(func() {})
	c.markClosed()
	c.run.Kill()
	c.teardown()
}

// Close shuts the runtime down gracefully: it waits for the replies of the
// requests in flight (each bounded as always; their tickets end), sends exit
// and waits, then sends SIGTERM and waits, then SIGKILL (each wait
// ShutdownTimeout). While an abandoned call is unanswered (the runtime is
// likely still inside the kernel of a launch whose caller gave up), the exit
// request waits only AbandonedGrace, without waiting for what is in flight,
// and a runtime that does not answer is killed at once (what is in flight
// fails). It returns nil when the runtime exited when asked (or had already
// gone: its end was reported by the call that saw it), and a *core.Error
// wrapping a *ShutdownError, saying "exited after SIGTERM" or "killed", when
// Close had to escalate. It is safe to call more than once; later calls
// return nil.
func (c *Client) Close() error {
	first := false
	c.closeOnce.Do(func() { first = true })
	if !first {
		c.teardown()
		return nil
	}
	alive := c.Alive()
	if alive && !c.abandoned() {
		// Close drains: what is in flight is answered first (each reply
		// bounded as always), then exit is sent. While an abandoned call is
		// unanswered the runtime is likely stuck in it, and exit goes at
		// once with AbandonedGrace (it fails what is in flight when the
		// runtime does not answer).
		c.drain()
		alive = c.Alive()
	}
	killed := false
	if alive {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ShutdownTimeout)
		err := c.exit(ctx, c.cfg.ShutdownTimeout)
		cancel()
		if err != nil {
			c.log.Debug("tt-runtime exit request failed", "err", err)
			killed = c.broken.Load() // the exit's own timeout killed it: hung
		}
	}
	c.markClosed()
	var err error
	if alive {
		err = c.run.awaitExit(c.cfg.ShutdownTimeout)
	}
	if killed && err == nil {
		err = &core.Error{Backend: Backend, Op: "close",
			Err:    &ShutdownError{Pid: c.Pid(), How: ShutdownKilled, Status: c.run.exitStatus},
			Native: stderrNote(c.run.tail.String())}
	}
	c.teardown()
	return err
}

// teardown waits for the process and closes its pipes, then stops the
// connection's goroutines and waits for the runner's.
func (c *Client) teardown() {
	c.run.close(3 * c.cfg.ShutdownTimeout)
	_ = c.Conn.Close()
	c.run.wait()
}

var _ io.Closer = (*Client)(nil)
