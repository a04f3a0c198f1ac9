package ttruntime

// The process runner: the runtime process's lifecycle, with nothing of the
// protocol. It starts the process (exec.CommandContext, whose Cancel sends
// SIGTERM and whose WaitDelay then sends SIGKILL), reaps it and records how
// it ended, keeps the tail of its stderr (and hands DPRINT lines to
// KernelOutput), kills it (Kill, idempotent), escalates a shutdown
// (awaitExit) and closes its pipes. The connection (conn.go) reads and
// writes the pipes; the runner is its Peer.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zyxtt/zyxtt/internal/core"
)

// Fixed waits of the lifecycle. The configurable ones (ShutdownTimeout and
// the call timeouts) are in Config.
const (
	// exitStatusWait is how long an error for a dying runtime waits for
	// the process to be reaped, so that it can say how it ended. A process
	// we killed, or whose stdout closed, is normally reaped within
	// milliseconds; 2 s covers a loaded machine without making a broken
	// client slow to answer.
	exitStatusWait = 2 * time.Second
	// stderrDrainWait is how long that error then waits for the stderr
	// reader to reach EOF, so the tail it quotes is complete. The last
	// lines are in the pipe when the process dies; reading them takes
	// microseconds, and a grandchild holding stderr open must not delay
	// the error by more than this.
	stderrDrainWait = 200 * time.Millisecond
	// stderrCloseWait is how long teardown waits for stderr to reach EOF
	// once the process is gone before it closes our end, which is only
	// needed when a grandchild still holds the pipe. It is longer than
	// stderrDrainWait because nobody is waiting for an answer here and the
	// lines are worth logging.
	stderrCloseWait = time.Second
	// teardownSlack is what teardown waits beyond a concurrent Close's
	// whole escalation (exit request, exit wait, SIGTERM wait: three
	// ShutdownTimeouts) before it kills the process itself, so that the
	// Close that escalates, not teardown, ends the process and reports how.
	teardownSlack = time.Second
)

// Sizes of the process's stderr reader.
const (
	stderrBufBytes = 16 << 10 // a read of stderr
	// stderrReadsPerLock bounds how long stderrLoop holds stderrMu while a
	// runtime floods stderr, so that a syncStderr gets its turn.
	stderrReadsPerLock = 4
	stderrLineMax      = 4096 // a longer stderr line is cut here
)

// runner is one runtime process.
type runner struct {
	cmd          *exec.Cmd
	terminate    context.CancelFunc // ends cmd's context: SIGTERM, then SIGKILL after WaitDelay
	stdin        *os.File           // our ends of the three pipes
	stdout       *os.File
	stderr       *os.File
	log          *slog.Logger
	tail         *tailBuffer
	kernelOutput io.Writer

	exited     chan struct{} // closed once the process is reaped
	exitStatus string        // set before exited is closed

	stderrDone chan struct{}
	// stderrMu is held while stderr bytes are read and their lines handled
	// (stderrLoop, FlushOutput); it guards the two buffers.
	stderrMu   sync.Mutex
	stderrBuf  []byte // a read of stderr
	stderrLine []byte // the line read so far (at most stderrLineMax bytes)

	fdsOnce sync.Once
	wg      sync.WaitGroup
}

// startRunner starts the runtime of cfg with three pipes of our own, so
// that no exec copying goroutine sits between the process and the protocol
// reader, and starts reading its stderr. watch starts its reaping.
func startRunner(cfg Config, log *slog.Logger) (*runner, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, core.Errorf(Backend, "start", core.ErrNoDevice, "pipe: %v", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, core.Errorf(Backend, "start", core.ErrNoDevice, "pipe: %v", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, core.Errorf(Backend, "start", core.ErrNoDevice, "pipe: %v", err)
	}
	// --parent-pid lets the runtime see that this process died before the
	// runtime could arm its parent-death signal (docs/runtime.md).
	args := append([]string{"--parent-pid", strconv.Itoa(os.Getpid())}, cfg.Args...)
	if cfg.LockFile != nil {
		// ExtraFiles[0] is descriptor 3 in the child.
		args = append([]string{"--lock-fd", "3"}, args...)
	}
	// The context is the process's lifetime, not the caller's: ending it
	// is how a shutdown escalates (Cancel: SIGTERM; WaitDelay later:
	// SIGKILL).
	life, terminate := context.WithCancel(context.Background())
	cmd := exec.CommandContext(life, cfg.Path, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = cfg.ShutdownTimeout
	cmd.Env = cfg.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if cfg.LockFile != nil {
		cmd.ExtraFiles = []*os.File{cfg.LockFile}
	}
	if err := cmd.Start(); err != nil {
		terminate()
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, &core.Error{Backend: Backend, Op: "start", Err: fmt.Errorf("%w: %w", core.ErrNoDevice, err)}
	}
	closeAll(inR, outW, errW) // the child holds its own copies
	r := &runner{
		cmd: cmd, terminate: terminate, stdin: inW, stdout: outR, stderr: errR,
		log: log, tail: newTailBuffer(cfg.StderrTail), kernelOutput: cfg.KernelOutput,
		exited: make(chan struct{}), stderrDone: make(chan struct{}),
	}
	log.Debug("tt-runtime started", "pid", cmd.Process.Pid)
	r.wg.Add(1)
	go r.stderrLoop()
	return r, nil
}

// watch starts reaping the process; onExit (may be nil) runs once it has
// been reaped and its status recorded.
func (r *runner) watch(onExit func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		_ = r.cmd.Wait()
		r.exitStatus = r.cmd.ProcessState.String()
		close(r.exited)
		r.terminate() // nothing left to end: release the context
		if onExit != nil {
			onExit()
		}
		r.log.Debug("tt-runtime exited", "status", r.exitStatus)
	}()
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// Pid is the process id.
func (r *runner) Pid() int { return r.cmd.Process.Pid }

// Exited is closed once the process has ended and been reaped.
func (r *runner) Exited() <-chan struct{} { return r.exited }

// Kill ends the process at once with SIGKILL. It may be called any number
// of times, also after the process has ended: os.Process signals through
// a pidfd, so a late signal never reaches a process that reused the pid.
func (r *runner) Kill() { r.signal(syscall.SIGKILL) }

func (r *runner) signal(sig os.Signal) {
	select {
	case <-r.exited:
	default:
		_ = r.cmd.Process.Signal(sig)
	}
}

// Report is how the process ended ("exit status 3", "signal: killed"), or
// "still running", and the last lines of its stderr. It waits a moment for
// the process to be reaped and for its stderr to reach EOF, so that a
// report on a dying runtime is complete.
func (r *runner) Report() (status, stderrTail string) {
	select {
	case <-r.exited:
	case <-time.After(exitStatusWait):
	}
	select {
	case <-r.stderrDone:
	case <-time.After(stderrDrainWait):
	}
	status = "still running"
	select {
	case <-r.exited:
		status = r.exitStatus
	default:
	}
	return status, r.tail.String()
}

// awaitExit waits wait for the process to exit, then ends its context
// (SIGTERM) and waits as long again, after which os/exec sends SIGKILL
// (WaitDelay). It reports how the process ended when it had to escalate.
func (r *runner) awaitExit(wait time.Duration) error {
	pid := r.Pid()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-r.exited:
		return nil
	case <-timer.C:
	}
	r.log.Warn("tt-runtime ignored exit; sending SIGTERM", "pid", pid)
	r.terminate()
	<-r.exited // WaitDelay after the SIGTERM, os/exec sends SIGKILL
	how := ShutdownTerminated
	if ws, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		r.log.Warn("tt-runtime ignored SIGTERM and was killed", "pid", pid)
		how = ShutdownKilled
	}
	return &core.Error{Backend: Backend, Op: "close",
		Err:    &ShutdownError{Pid: pid, How: how, Status: r.exitStatus},
		Native: stderrNote(r.tail.String())}
}

// close ends the process (stdin's EOF asks it to exit; it is killed once
// a concurrent Close's escalation, wait long, should be over) and closes
// the pipes; the caller then stops whoever reads stdout and calls wait.
func (r *runner) close(escalation time.Duration) {
	_ = r.stdin.Close() // EOF tells the runtime to exit
	select {
	case <-r.exited:
	case <-time.After(escalation + teardownSlack):
		r.Kill()
		<-r.exited
	}
	// With the process gone stderr reaches EOF, unless a grandchild still
	// holds it; then closing our end unblocks the reader.
	select {
	case <-r.stderrDone:
	case <-time.After(stderrCloseWait):
	}
	r.fdsOnce.Do(func() { closeAll(r.stdout, r.stderr) })
}

// wait waits for the runner's goroutines.
func (r *runner) wait() { r.wg.Wait() }

// dprintPrefix starts the stderr lines that carry kernel DPRINT output.
const dprintPrefix = "dprint: "

// stderrLoop forwards the runtime's stderr to the logger, or DPRINT lines
// to KernelOutput, and keeps the tail of the rest. It reads the pipe
// without blocking, under stderrMu, and handles every whole line it read
// before it lets go of the lock; so FlushOutput, which takes the same lock
// and reads what is left in the pipe itself, knows that every byte the
// runtime had written is handled when it returns.
func (r *runner) stderrLoop() {
	defer r.wg.Done()
	defer close(r.stderrDone)
	rc, err := r.stderr.SyscallConn()
	if err != nil {
		r.log.Debug("tt-runtime stderr is not readable", "err", err)
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		for {
			r.stderrMu.Lock()
			more, end := r.readStderr(int(fd), stderrReadsPerLock*stderrBufBytes)
			r.stderrMu.Unlock()
			if end {
				return true
			}
			if !more { // the pipe is empty: wait until it is readable
				return false
			}
		}
	})
}

// readStderr reads at most limit bytes of stderr and handles the whole
// lines among them. It returns more when the pipe may hold more, and end
// at EOF or on an error, having handled a last unterminated line. The
// caller holds stderrMu.
func (r *runner) readStderr(fd, limit int) (more, end bool) {
	if r.stderrBuf == nil {
		r.stderrBuf = make([]byte, stderrBufBytes)
	}
	for total := 0; total < limit; {
		n, err := unix.Read(fd, r.stderrBuf[:min(len(r.stderrBuf), limit-total)])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return false, false
		}
		if err != nil || n == 0 {
			if len(r.stderrLine) > 0 {
				r.handleStderrLine(r.stderrLine)
				r.stderrLine = r.stderrLine[:0]
			}
			return false, true
		}
		total += n
		chunk := r.stderrBuf[:n]
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				r.stderrLine = appendCapped(r.stderrLine, chunk)
				break
			}
			r.stderrLine = appendCapped(r.stderrLine, chunk[:i])
			chunk = chunk[i+1:]
			r.handleStderrLine(bytes.TrimRight(r.stderrLine, "\r"))
			r.stderrLine = r.stderrLine[:0]
		}
	}
	return true, false
}

func appendCapped(line, b []byte) []byte {
	if room := stderrLineMax - len(line); room < len(b) {
		b = b[:max(room, 0)]
	}
	return append(line, b...)
}

func (r *runner) handleStderrLine(line []byte) {
	if len(line) == 0 {
		return
	}
	if w := r.kernelOutput; w != nil && bytes.HasPrefix(line, []byte(dprintPrefix)) {
		out := make([]byte, 0, len(line)-len(dprintPrefix)+1)
		out = append(out, line[len(dprintPrefix):]...)
		_, _ = w.Write(append(out, '\n'))
		return
	}
	s := string(line)
	r.tail.add(s)
	r.log.Debug("tt-runtime stderr", "line", s)
}

// FlushOutput returns once every stderr line the runtime had written by
// now has been handled: after a run's reply, the DPRINT lines its kernels
// printed are in the pipe, or read and handled by stderrLoop, and the
// caller should see them written to KernelOutput before the run returns.
// Holding stderrMu, it reads what the pipe holds now itself; a stream that
// never stops cannot keep it, as it reads no more than was there.
func (r *runner) FlushOutput() {
	if r.kernelOutput == nil {
		return
	}
	rc, err := r.stderr.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		r.stderrMu.Lock()
		defer r.stderrMu.Unlock()
		pending, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ)
		if err == nil && pending > 0 {
			r.readStderr(int(fd), pending)
		}
	})
}

// Shutdown is how a runtime ended that ignored Close's exit request.
type Shutdown int

const (
	// ShutdownTerminated: the runtime ignored exit and ended once it was
	// sent SIGTERM.
	ShutdownTerminated Shutdown = iota + 1
	// ShutdownKilled: the runtime ignored exit and SIGTERM and was killed
	// with SIGKILL.
	ShutdownKilled
)

func (s Shutdown) String() string {
	switch s {
	case ShutdownTerminated:
		return "exited after SIGTERM"
	case ShutdownKilled:
		return "killed"
	}
	return fmt.Sprintf("Shutdown(%d)", int(s))
}

// ShutdownError is Close's report on a runtime that did not exit when
// asked. It wraps no sentinel: the runtime is gone and nothing is lost that
// Close was not giving up anyway. A graceful exit is no error at all.
type ShutdownError struct {
	Pid    int
	How    Shutdown
	Status string // the exit status as wait reported it ("signal: killed")
}

func (e *ShutdownError) Error() string {
	return fmt.Sprintf("the runtime (pid %d) did not exit when asked and %s (%s)", e.Pid, e.How, e.Status)
}

// tailBuffer keeps the last n lines.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
}

// tailLineMax is the longest line the tail keeps; the rest is cut.
const tailLineMax = 1024

func newTailBuffer(n int) *tailBuffer { return &tailBuffer{lines: make([]string, n)} }

func (t *tailBuffer) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(s) > tailLineMax {
		s = s[:tailLineMax] + "…"
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
