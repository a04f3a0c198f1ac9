package ttruntime

// The runtime process's lifecycle: spawn, wait, the stderr tail, the broken
// state, Kill, and Close with its escalation from exit to SIGTERM to SIGKILL.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
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

// Sizes of the process's pipes' readers.
const (
	stdoutBufBytes = 64 << 10 // a whole ordinary reply; long lines span reads
	stderrBufBytes = 16 << 10 // a read of stderr
	// stderrReadsPerLock bounds how long stderrLoop holds stderrMu while a
	// runtime floods stderr, so that a syncStderr gets its turn.
	stderrReadsPerLock = 4
	stderrLineMax      = 4096 // a longer stderr line is cut here
)

// spawn starts the process with three pipes of our own, so that no exec
// copying goroutine sits between the process and the protocol reader.
func (c *Client) spawn() error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return core.Errorf(Backend, "start", core.ErrNoDevice, "pipe: %v", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return core.Errorf(Backend, "start", core.ErrNoDevice, "pipe: %v", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return core.Errorf(Backend, "start", core.ErrNoDevice, "pipe: %v", err)
	}
	// --parent-pid lets the runtime see that this process died before the
	// runtime could arm its parent-death signal (docs/runtime.md).
	args := append([]string{"--parent-pid", strconv.Itoa(os.Getpid())}, c.cfg.Args...)
	if c.cfg.LockFile != nil {
		// ExtraFiles[0] is descriptor 3 in the child.
		args = append([]string{"--lock-fd", "3"}, args...)
	}
	cmd := exec.Command(c.cfg.Path, args...)
	cmd.Env = c.cfg.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if c.cfg.LockFile != nil {
		cmd.ExtraFiles = []*os.File{c.cfg.LockFile}
	}
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return &core.Error{Backend: Backend, Op: "start", Err: fmt.Errorf("%w: %w", core.ErrNoDevice, err)}
	}
	closeAll(inR, outW, errW) // the child holds its own copies
	c.cmd = cmd
	c.stdin, c.stdout, c.stderr = inW, outR, errR
	c.out = bufio.NewReaderSize(outR, stdoutBufBytes)
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
	c.markDead()
	c.limitReadsAfterExit()
	c.log.Debug("tt-runtime exited", "status", status)
}

// dprintPrefix starts the stderr lines that carry kernel DPRINT output.
const dprintPrefix = "dprint: "

// stderrLoop forwards the runtime's stderr to the logger, or DPRINT lines
// to KernelOutput, and keeps the tail of the rest. It reads the pipe
// without blocking, under stderrMu, and handles every whole line it read
// before it lets go of the lock; so syncStderr, which takes the same lock
// and reads what is left in the pipe itself, knows that every byte the
// runtime had written is handled when it returns.
func (c *Client) stderrLoop() {
	defer c.wg.Done()
	defer close(c.stderrDone)
	rc, err := c.stderr.SyscallConn()
	if err != nil {
		c.log.Debug("tt-runtime stderr is not readable", "err", err)
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		for {
			c.stderrMu.Lock()
			more, end := c.readStderr(int(fd), stderrReadsPerLock*stderrBufBytes)
			c.stderrMu.Unlock()
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
func (c *Client) readStderr(fd, limit int) (more, end bool) {
	if c.stderrBuf == nil {
		c.stderrBuf = make([]byte, stderrBufBytes)
	}
	for total := 0; total < limit; {
		n, err := unix.Read(fd, c.stderrBuf[:min(len(c.stderrBuf), limit-total)])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return false, false
		}
		if err != nil || n == 0 {
			if len(c.stderrLine) > 0 {
				c.handleStderrLine(c.stderrLine)
				c.stderrLine = c.stderrLine[:0]
			}
			return false, true
		}
		total += n
		chunk := c.stderrBuf[:n]
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				c.stderrLine = appendCapped(c.stderrLine, chunk)
				break
			}
			c.stderrLine = appendCapped(c.stderrLine, chunk[:i])
			chunk = chunk[i+1:]
			c.handleStderrLine(bytes.TrimRight(c.stderrLine, "\r"))
			c.stderrLine = c.stderrLine[:0]
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

func (c *Client) handleStderrLine(line []byte) {
	if len(line) == 0 {
		return
	}
	if w := c.cfg.KernelOutput; w != nil && bytes.HasPrefix(line, []byte(dprintPrefix)) {
		out := make([]byte, 0, len(line)-len(dprintPrefix)+1)
		out = append(out, line[len(dprintPrefix):]...)
		_, _ = w.Write(append(out, '\n'))
		return
	}
	s := string(line)
	c.tail.add(s)
	c.log.Debug("tt-runtime stderr", "line", s)
}

// syncStderr returns once every stderr line the runtime had written by
// now has been handled: after a run's reply, the DPRINT lines its kernels
// printed are in the pipe, or read and handled by stderrLoop, and the
// caller should see them written to KernelOutput before the run returns.
// Holding stderrMu, it reads what the pipe holds now itself; a stream that
// never stops cannot keep it, as it reads no more than was there.
func (c *Client) syncStderr() {
	if c.cfg.KernelOutput == nil {
		return
	}
	rc, err := c.stderr.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		c.stderrMu.Lock()
		defer c.stderrMu.Unlock()
		pending, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ)
		if err == nil && pending > 0 {
			c.readStderr(int(fd), pending)
		}
	})
}

// fail marks the client broken and kills the process.
func (c *Client) fail(reason error) {
	c.brokenOnce.Do(func() {
		c.brokenErr = reason
		c.ending.Store(true)
		close(c.broken)
		c.markDead()
		c.log.Debug("tt-runtime broken; killing it", "reason", reason)
	})
	c.signal(syscall.SIGKILL)
	c.interruptRead() // a reader goroutine sees the break at once
}

// signal sends sig unless the process has been reaped. os.Process signals
// through a pidfd, so a late signal can never reach a process that reused
// the pid.
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
	case <-time.After(exitStatusWait):
	}
	select {
	case <-c.stderrDone:
	case <-time.After(stderrDrainWait):
	}
	status := "still running"
	select {
	case <-c.exited:
		status = c.exitStatus
	default:
	}
	select {
	case <-c.broken:
		return &core.Error{
			Backend: Backend, Op: cmd,
			Err:    fmt.Errorf("%w: %w (runtime %s)", core.ErrDeviceLost, c.brokenErr, status),
			Native: stderrNote(c.tail.String()),
		}
	default:
	}
	select {
	case <-c.closing:
		return &core.Error{Backend: Backend, Op: cmd, Err: fmt.Errorf("%w: %w: the runtime client was closed", core.ErrDeviceLost, core.ErrClosed)}
	default:
	}
	return lostErr(cmd, "the runtime exited ("+status+")", c.tail.String())
}

// Kill ends the process at once with SIGKILL and releases everything. It
// is safe to call more than once and after Close.
func (c *Client) Kill() {
	c.closeOnce.Do(func() {
		c.ending.Store(true)
		close(c.closing)
		c.markDead()
	})
	c.signal(syscall.SIGKILL)
	c.teardown()
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

// Close shuts the runtime down gracefully: it waits for the replies of the
// requests in flight (each bounded as always; their tickets end), sends exit
// and waits, then sends SIGTERM and waits, then SIGKILL (each wait
// ShutdownTimeout). While
// an abandoned call is unanswered (the runtime is likely still inside the
// kernel of a launch whose caller gave up), the exit request waits only
// AbandonedGrace, without waiting for what is in flight, and a runtime that
// does not answer is killed at once (what is in flight fails). It
// returns nil when the runtime exited when asked (or had already gone: its
// end was reported by the call that saw it), and a *core.Error wrapping a
// *ShutdownError, saying "exited after SIGTERM" or "killed", when Close had
// to escalate. It is safe to call more than once; later calls return nil.
func (c *Client) Close() error {
	first := false
	c.closeOnce.Do(func() { first = true })
	if !first {
		c.teardown()
		return nil
	}
	alive := c.Alive()
	killed := false
	if alive && c.abandonedN.Load() == 0 {
		// Close drains: what is in flight is answered first (each reply
		// bounded as always), then exit is sent. While an abandoned call is
		// unanswered the runtime is likely stuck in it, and exit goes at
		// once with AbandonedGrace (it fails what is in flight when the
		// runtime does not answer).
		c.drain()
		alive = c.Alive()
	}
	if alive {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ShutdownTimeout)
		err := c.exit(ctx)
		cancel()
		if err != nil {
			c.log.Debug("tt-runtime exit request failed", "err", err)
			select {
			case <-c.broken: // the exit's own timeout killed it: hung
				killed = true
			default:
			}
		}
	}
	c.ending.Store(true)
	close(c.closing)
	c.markDead()
	var err error
	if alive {
		err = c.awaitExit()
	}
	if killed && err == nil {
		err = &core.Error{Backend: Backend, Op: "close",
			Err:    &ShutdownError{Pid: c.cmd.Process.Pid, How: ShutdownKilled, Status: c.exitStatus},
			Native: stderrNote(c.tail.String())}
	}
	c.teardown()
	return err
}

// awaitExit waits ShutdownTimeout for the process to exit, then sends
// SIGTERM and waits as long again, then sends SIGKILL and waits for the
// end. It reports how the process ended when it had to escalate.
func (c *Client) awaitExit() error {
	pid := c.cmd.Process.Pid
	wait := time.NewTimer(c.cfg.ShutdownTimeout)
	defer wait.Stop()
	select {
	case <-c.exited:
		return nil
	case <-wait.C:
	}
	c.log.Warn("tt-runtime ignored exit; sending SIGTERM", "pid", pid)
	c.signal(syscall.SIGTERM)
	how := ShutdownTerminated
	wait.Reset(c.cfg.ShutdownTimeout)
	select {
	case <-c.exited:
	case <-wait.C:
		c.log.Warn("tt-runtime ignored SIGTERM; sending SIGKILL", "pid", pid)
		c.signal(syscall.SIGKILL)
		how = ShutdownKilled
	}
	<-c.exited // SIGKILL cannot be ignored: the reaping follows at once
	return &core.Error{Backend: Backend, Op: "close",
		Err:    &ShutdownError{Pid: pid, How: how, Status: c.exitStatus},
		Native: stderrNote(c.tail.String())}
}

// teardown waits for the process and the goroutines and closes the pipes.
func (c *Client) teardown() {
	_ = c.stdin.Close() // EOF tells the runtime to exit
	select {
	case <-c.exited:
	case <-time.After(3*c.cfg.ShutdownTimeout + teardownSlack):
		c.signal(syscall.SIGKILL)
		<-c.exited
	}
	// With the process gone stderr reaches EOF, unless a grandchild still
	// holds it; then closing our end unblocks the reader.
	select {
	case <-c.stderrDone:
	case <-time.After(stderrCloseWait):
	}
	c.fdsOnce.Do(func() { closeAll(c.stdout, c.stderr) })
	c.stopReaders() // the closed stdout ends a reader's read
	c.wg.Wait()
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
