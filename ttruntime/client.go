// Package ttruntime is the Go driver for one zyx-tt-runtime process: it
// spawns the process, speaks the typed JSON-line protocol of
// docs/protocol.md over its stdin and stdout, bounds every call in time,
// notices at once when the process dies, and shuts it down gracefully.
//
// The code is split by concern:
//
//   - client.go: Config, the Client and Start;
//   - process.go: the process's lifecycle (spawn, wait, stderr tail, the
//     broken state, Kill and Close with its escalation);
//   - wire.go: framing (request encoding and writing, line reading, reply
//     parsing);
//   - deadline.go: the read and write deadlines that bound a call and the
//     context watcher that interrupts it;
//   - roundtrip.go: one call (the call slot, send, read until the reply);
//   - calls.go: the typed calls, one method per protocol command.
//
// Errors are *core.Error values (backends.Error to users: the same type)
// wrapping the sentinels of internal/core, which package backends
// re-exports, so errors.Is(err, backends.ErrDeviceLost) works on them. This
// package imports neither backends nor any other part of zyx-tt but core.
package ttruntime

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
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
	if c.KernelOutput != nil {
		c.Init.DPrint = true
	}
	return c
}

// Client is one running runtime process. Its methods are safe for
// concurrent use; requests are written one at a time, and several may be in
// flight (Send, pipeline.go).
//
// While nothing is in flight there is no reader goroutine: the caller that
// holds the call slot writes its request and reads stdout itself until its
// reply comes, so a round trip costs what a raw pipe echo costs (no
// hand-off between goroutines). What a blocked read cannot see by itself
// (the caller's context, the process's exit) wakes it through the read
// deadline of the stdout pipe. While requests are in flight, a reader
// goroutine reads their replies in order and a call waits for its own.
type Client struct {
	cfg    Config
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	stderr *os.File
	info   InitReply
	log    *slog.Logger
	tail   *tailBuffer

	// callSlot (capacity 1) serialises the writing of requests; a caller
	// waiting for it is still bounded by its context. The holder owns the
	// ids and the request encoder; while nothing is in flight (direct) it
	// also owns the stdout reader and a half-read line, which the reader
	// goroutine owns while it runs.
	callSlot chan struct{}
	nextID   uint64
	// abandonedN counts the abandoned requests whose replies have not
	// come yet: while there are any, the runtime may still be busy with
	// them (a kernel whose launch was given up).
	abandonedN atomic.Int32
	wbuf       []byte        // request encoding, reused
	out        *bufio.Reader // stdout
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
	torn      bool        // teardown: no reader starts any more
	readers   sync.WaitGroup
	room      chan struct{} // a slot per ticket in flight (MaxInFlight)
	dead      chan struct{} // closed once broken, exited or closing
	deadOnce  sync.Once

	armedWrite time.Time   // the stdin write deadline now set
	writeStop  atomic.Bool // the caller interrupts a concurrent write

	// dlMu orders stdout read-deadline changes by callers, context
	// watchers and waitLoop.
	dlMu      sync.Mutex
	armedRead time.Time // the stdout read deadline now set
	wakeAt    time.Time // once the process exited, no read waits past this
	hasWake   bool

	stderrDone chan struct{}
	// stderrMu is held while stderr bytes are read and their lines handled
	// (stderrLoop, syncStderr); it guards the two buffers.
	stderrMu   sync.Mutex
	stderrBuf  []byte // a read of stderr
	stderrLine []byte // the line read so far (at most stderrLineMax bytes)
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

// Start spawns the runtime and performs the init handshake. The handshake
// is bounded by ctx, cfg.HandshakeTimeout and the process's exit, whichever
// comes first; on failure the process is killed and nothing is left behind.
// ctx bounds only the start: the process lives until Close or Kill.
func Start(ctx context.Context, cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if cfg.Path == "" {
		return nil, core.Errorf(Backend, "start", core.ErrInvalidArgument, "no runtime path")
	}
	c := &Client{
		cfg:        cfg,
		log:        cfg.Logger.With("runtime", cfg.Path),
		tail:       newTailBuffer(cfg.StderrTail),
		callSlot:   make(chan struct{}, 1),
		room:       make(chan struct{}, MaxInFlight),
		dead:       make(chan struct{}),
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
		broken:     make(chan struct{}),
		closing:    make(chan struct{}),
	}
	if err := c.spawn(); err != nil {
		return nil, err
	}
	info, err := c.initialize(ctx)
	if err == nil {
		err = checkVersion(info.Protocol)
	}
	if err != nil {
		var re *RemoteError
		if errors.As(err, &re) && re.Code == CodeVersionMismatch {
			err = &core.Error{Backend: Backend, Op: CmdInit, Err: fmt.Errorf("%w: %s: rebuild the runtime (make runtime) or zyx-tt so that both speak protocol %d", ErrVersion, re.Message, ProtocolVersion)}
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
		return &core.Error{Backend: Backend, Op: CmdInit, Err: fmt.Errorf("%w: the runtime speaks protocol %d, this zyx-tt speaks %d: rebuild the runtime (make runtime)", ErrVersion, v, ProtocolVersion)}
	default:
		return &core.Error{Backend: Backend, Op: CmdInit, Err: fmt.Errorf("%w: the runtime speaks protocol %d, this zyx-tt speaks %d: rebuild zyx-tt (the Go driver) from the same tree as the runtime", ErrVersion, v, ProtocolVersion)}
	}
}

// Info is what the runtime reported at the handshake.
func (c *Client) Info() InitReply { return c.info }

// Pid is the runtime's process id.
func (c *Client) Pid() int { return c.cmd.Process.Pid }

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

// StderrTail is the last lines the runtime wrote to stderr.
func (c *Client) StderrTail() string { return c.tail.String() }

var _ io.Closer = (*Client)(nil)
