package ttruntime_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/internal/leakcheck"
	"github.com/zyxtt/zyxtt/internal/rtbin"
	"github.com/zyxtt/zyxtt/shm"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// helperEnv set to "echo" makes the test binary echo its stdin lines to
// stdout: the raw-pipe reference of BenchmarkPingVsPipe.
const helperEnv = "ZYX_TT_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "echo" {
		echo(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	os.Exit(leakcheck.Run(m, nil))
}

func echo(r io.Reader, w io.Writer) {
	br := bufio.NewReader(r)
	bw := bufio.NewWriter(w)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return
		}
		_, _ = bw.Write(line)
		_ = bw.Flush()
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// mockConfig runs the C++ runtime (bin/zyx-tt-runtime; the test skips when
// it is not built) in mock mode with the faults of spec (docs/runtime.md,
// "Mock mode"; "" for none) on the emulated n150. Its calls wait as long as
// the test may run: a test that wants a hang detected sets a short Timeout
// itself, for a reply that never comes.
func mockConfig(t testing.TB, spec string) ttruntime.Config {
	if spec == "" {
		spec = "on"
	}
	return ttruntime.Config{
		Path:             rtbin.Require(t),
		Args:             []string{"--mock", spec},
		Timeout:          patience(t),
		HandshakeTimeout: patience(t),
		ShutdownTimeout:  10 * time.Second,
		Logger:           quietLogger(),
		Init:             ttruntime.InitRequest{Layer: "emu", Board: "n150", CacheDir: t.TempDir()},
	}
}

// patience is how long a test waits for what must happen: the time left
// before its deadline, less a minute for its report, or two minutes when it
// has none. It bounds waits whose end is the point of a check only as a
// last resort, so that a loaded machine does not fail them.
func patience(t testing.TB) time.Duration {
	if tt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := tt.Deadline(); ok {
			return max(time.Until(d)-time.Minute, 10*time.Second)
		}
	}
	return 2 * time.Minute
}

// awaitHold waits until the runtime holds request n (mock hold-at): it has
// read the request, and every byte of it.
func awaitHold(t testing.TB, c *ttruntime.Client, n int) {
	t.Helper()
	require.True(t, holds(c, n, patience(t)), "the runtime never held request %d; its stderr:\n%s", n, c.StderrTail())
}

// holds is awaitHold for a goroutine other than the test's: it reports
// whether the runtime held request n within d.
func holds(c *ttruntime.Client, n int, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if strings.Contains(c.StderrTail(), rtbin.HoldLine(n)) {
			return true
		}
	}
	return false
}

// release lets a runtime holding a request go on (SIGUSR1).
func release(t testing.TB, c *ttruntime.Client) {
	t.Helper()
	require.NoError(t, rtbin.Release(c.Pid()))
}

func start(t *testing.T, cfg ttruntime.Config) *ttruntime.Client {
	t.Helper()
	c, err := ttruntime.Start(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(c.Kill)
	return c
}

func TestHandshakeReportsTheRuntime(t *testing.T) {
	cfg := mockConfig(t, "harvest-rows=3")
	cfg.Init.Board = "p150a"
	c := start(t, cfg)
	info := c.Info()
	require.Equal(t, ttruntime.ProtocolVersion, info.Protocol)
	require.Equal(t, "emu", info.Runtime)
	require.Equal(t, "blackhole", info.Arch)
	require.EqualValues(t, 9, info.Grid.Rows)
	require.EqualValues(t, 13, info.Grid.Cols)
	require.Equal(t, []uint32{3}, info.Grid.HarvestedRows)
	require.EqualValues(t, 8*(4<<30), info.DRAM.Total())
	require.NoError(t, c.Ping(context.Background()))
	require.NoError(t, c.Close())
	require.False(t, c.Alive())
	err := c.Ping(context.Background())
	require.ErrorIs(t, err, backends.ErrDeviceLost)
	require.ErrorIs(t, err, backends.ErrClosed)
}

func TestBuffersMoveThroughShm(t *testing.T) {
	c := start(t, mockConfig(t, ""))
	ctx := context.Background()
	seg, err := shm.Create(shm.NewName(), 1<<16)
	require.NoError(t, err)
	defer seg.Close()
	mem := seg.Bytes()
	for i := range 4096 {
		mem[i] = byte(i * 7)
	}
	a, err := c.Alloc(ctx, ttruntime.AllocRequest{Size: 4096, BufferSpec: ttruntime.BufferSpec{PageSize: 2048}})
	require.NoError(t, err)
	require.NotZero(t, a.Buffer)
	require.NoError(t, c.Map(ctx, ttruntime.SegmentRequest{Segment: seg.Name()}))
	require.NoError(t, c.Write(ctx, ttruntime.TransferRequest{Buffer: a.Buffer, Segment: seg.Name(), Length: 4096}))
	require.NoError(t, c.Read(ctx, ttruntime.TransferRequest{Buffer: a.Buffer, Offset: 100, Segment: seg.Name(), SegmentOffset: 8192, Length: 3996}))
	require.Equal(t, mem[100:4096], mem[8192:8192+3996])

	// out of range: nothing moves, a typed error comes back, the client lives
	err = c.Read(ctx, ttruntime.TransferRequest{Buffer: a.Buffer, Offset: 4000, Segment: seg.Name(), Length: 200})
	require.ErrorIs(t, err, backends.ErrInvalidArgument)
	var re *ttruntime.RemoteError
	require.ErrorAs(t, err, &re)
	require.Equal(t, ttruntime.CodeInvalidArgument, re.Code)

	require.NoError(t, c.Free(ctx, ttruntime.BufferRequest{Buffer: a.Buffer}))
	err = c.Free(ctx, ttruntime.BufferRequest{Buffer: a.Buffer})
	require.ErrorIs(t, err, backends.ErrUnknownBuffer)
	require.NoError(t, c.Unmap(ctx, ttruntime.SegmentRequest{Segment: seg.Name()}))
	require.NoError(t, c.Ping(ctx))
}

func TestConcurrentCallsStayInStep(t *testing.T) {
	c := start(t, mockConfig(t, ""))
	var g errgroup.Group
	for range 8 {
		g.Go(func() error {
			for range 50 {
				a, err := c.Alloc(context.Background(), ttruntime.AllocRequest{Size: 64})
				if err != nil {
					return err
				}
				if err := c.Free(context.Background(), ttruntime.BufferRequest{Buffer: a.Buffer}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
}

// A caller queued behind a call that has no reply yet is still bounded by
// its own context, and sends nothing.
func TestQueuedCallHonoursItsContext(t *testing.T) {
	// init 1; the first ping (2) is held; the queued one must not be 3.
	c := start(t, mockConfig(t, "hold-at=2,error-at=3"))
	first := make(chan error, 1)
	go func() { first <- c.Ping(context.Background()) }()
	awaitHold(t, c, 2) // the first ping was sent: its caller holds the call slot
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, c.Ping(ctx), context.DeadlineExceeded)
	release(t, c)
	require.NoError(t, <-first)
	var re *ttruntime.RemoteError
	require.ErrorAs(t, c.Ping(context.Background()), &re, "this ping is request 3: nothing went out for the queued one")
	require.Equal(t, "injected error on request 3", re.Message)
}

// Every fault gives a clear error of its kind and leaves the client usable
// or cleanly lost. The faults are counted by request (init is request 1,
// the ping request 2); a reply the test holds (hold-at) comes when the test
// releases it, and one that never comes (hang-at) is found by a short
// Timeout.
func TestFaults(t *testing.T) {
	type after int
	const (
		usable after = iota
		lost
	)
	// How the caller treats its ping: waits, gives up at a deadline, or
	// cancels once the runtime holds the request.
	type caller int
	const (
		waits caller = iota
		deadline
		cancels
	)
	cases := []struct {
		name    string
		spec    string
		timeout time.Duration
		caller  caller
		is      []error
		says    string
		then    after
	}{
		{name: "log noise on stdout", spec: "noise", then: usable},
		{name: "slow but in time", spec: "slow=30ms", then: usable},
		{name: "error reply", spec: "error-at=2,error-code=out_of_memory",
			is: []error{backends.ErrOutOfMemory}, says: "injected error on request 2", then: usable},
		{name: "caller gives up on a held reply", spec: "hold-at=2", caller: deadline,
			is: []error{context.DeadlineExceeded}, then: usable},
		{name: "caller cancels a held reply", spec: "hold-at=2", caller: cancels,
			is: []error{context.Canceled}, then: usable},
		{name: "stdout flooded between commands", spec: "flood=1000000", then: usable},
		{name: "exit leaving a grandchild on stdout", spec: "orphan-at=2",
			is: []error{backends.ErrDeviceLost}, says: "exit status 3", then: lost},
		{name: "crash", spec: "crash-at=2",
			is: []error{backends.ErrDeviceLost}, says: "exit status 3", then: lost},
		{name: "hang", spec: "hang-at=2", timeout: 300 * time.Millisecond,
			is: []error{backends.ErrDeviceLost}, says: "no reply to ping within 300ms; the runtime is presumed hung and was killed (runtime signal: killed)", then: lost},
		{name: "hang ignoring SIGTERM", spec: "hang-at=2,ignore-term", timeout: 300 * time.Millisecond,
			is: []error{backends.ErrDeviceLost}, says: "presumed hung and was killed (runtime signal: killed)", then: lost},
		// Every reply comes a second late: init has its own HandshakeTimeout;
		// the ping's 300 ms cannot be met.
		{name: "slow past the timeout", spec: "slow=1s", timeout: 300 * time.Millisecond,
			is: []error{backends.ErrDeviceLost}, says: "presumed hung", then: lost},
		{name: "wrong reply id", spec: "wrong-id-at=2",
			is: []error{backends.ErrDeviceLost, ttruntime.ErrProtocol}, says: "reply id 1002 to request 2 (ping)", then: lost},
		{name: "garbage line", spec: "garbage-at=2",
			is: []error{backends.ErrDeviceLost, ttruntime.ErrProtocol}, says: "undecodable", then: lost},
		{name: "oversized line", spec: "oversize-at=2",
			is: []error{backends.ErrDeviceLost, ttruntime.ErrProtocol}, says: "a stdout line longer than 67108864 bytes", then: lost},
		{name: "stdout closed", spec: "close-stdout-at=2",
			is: []error{backends.ErrDeviceLost}, says: "closed its stdout (runtime signal: killed)", then: lost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mockConfig(t, tc.spec+",stderr=the mock says hello")
			if tc.timeout > 0 {
				cfg.Timeout = tc.timeout
			}
			c := start(t, cfg)
			ctx := context.Background()
			switch tc.caller {
			case deadline:
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
				defer cancel()
			case cancels:
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				go func() {
					holds(c, 2, patience(t)) // and cancel whether or not it did: the check below tells
					cancel()
				}()
			}
			err := c.Ping(ctx) // request 2: init was request 1
			if tc.is == nil {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				for _, want := range tc.is {
					require.ErrorIs(t, err, want)
				}
				require.Contains(t, err.Error(), tc.says)
				var be *backends.Error
				require.ErrorAs(t, err, &be)
				require.Equal(t, "tt", be.Backend)
			}
			if tc.caller != waits {
				release(t, c) // the held reply comes, and is skipped
			}
			if tc.then == lost {
				require.Contains(t, err.Error(), "the mock says hello", "the stderr tail belongs in the error")
				require.False(t, c.Alive())
				err := c.Ping(context.Background())
				require.ErrorIs(t, err, backends.ErrDeviceLost)
				require.Contains(t, err.Error(), "the mock says hello")
			} else {
				require.NotErrorIs(t, err, backends.ErrDeviceLost)
				require.NoError(t, c.Ping(context.Background()), "the next call must work")
				require.NoError(t, c.Ping(context.Background()))
				require.True(t, c.Alive())
			}
			require.NoError(t, c.Close())
			require.False(t, c.Alive())
		})
	}
}

// A request longer than a pipe holds is written while the client drains
// stdout, so a runtime that floods stdout before reading cannot deadlock it.
// (The request is a ping with a field a ping does not take: it travels whole
// and is answered with bad_request.)
func TestLongRequestWhileStdoutFloods(t *testing.T) {
	c := start(t, mockConfig(t, "flood=1000000"))
	err := c.RawCall(context.Background(), ttruntime.CmdPing, map[string]string{"junk": strings.Repeat("r", 3<<20)}, nil)
	requireCode(t, err, ttruntime.CodeBadRequest)
	require.NoError(t, c.Ping(context.Background()))
	require.NoError(t, c.Close())
}

// A caller that cancels while a long request is still being written (the
// runtime stopped reading) gets its answer at once; the half-sent request
// costs the runtime, since the stream cannot be resynchronised.
func TestCancelCutsOffALongRequest(t *testing.T) {
	c := start(t, mockConfig(t, "hang-at=2"))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, c.Ping(ctx), context.DeadlineExceeded) // the runtime now reads nothing
	require.True(t, c.Alive())

	req := oneKernelProgram("long", strings.Repeat("r", 4<<20))
	// Encoding 4 MiB may outlast a short delay on a loaded machine; then the
	// call ends before sending anything, which is right too: try longer.
	for _, delay := range []time.Duration{100 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second, 10 * time.Second} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(delay, cancel)
		_, err := c.Compile(ctx, req)
		cancel()
		require.ErrorIs(t, err, context.Canceled)
		if !errors.Is(err, backends.ErrDeviceLost) {
			require.True(t, c.Alive(), "nothing was sent: %v", err)
			continue
		}
		require.Contains(t, err.Error(), "cut off")
		require.False(t, c.Alive())
		return
	}
	t.Fatal("the request was never cut off while being written")
}

// A caller that gives up after its long request was written whole loses
// only that reply: the stop it raised for the writer is lowered again, so
// later writes are not taken for stopped ones.
func TestCancelAfterALongRequestWasSent(t *testing.T) {
	c := start(t, mockConfig(t, "hold-at=2"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		holds(c, 2, patience(t)) // read whole (the checks below tell if not)
		cancel()
	}()
	err := c.RawCall(ctx, ttruntime.CmdPing, map[string]string{"junk": strings.Repeat("r", 1<<20)}, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, backends.ErrDeviceLost, "the request went out whole")
	require.True(t, c.Alive())
	require.False(t, c.WriteStopped())
	release(t, c)
	require.NoError(t, c.Ping(context.Background()))
}

// The round trip allocates nothing: request encoding, line reading and the
// reply header all reuse the client's buffers.
func TestPingDoesNotAllocate(t *testing.T) {
	c := start(t, mockConfig(t, ""))
	ctx := context.Background()
	require.NoError(t, c.Ping(ctx))
	allocs := testing.AllocsPerRun(500, func() {
		if err := c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
}

// Lines on stdout that are not protocol are skipped and logged.
func TestStdoutNoiseIsLogged(t *testing.T) {
	var logs lockedBuffer
	cfg := mockConfig(t, "noise")
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := start(t, cfg)
	require.NoError(t, c.Ping(context.Background()))
	require.NoError(t, c.Close())
	require.Contains(t, logs.String(), "noise before the reply to request 2")
	require.Contains(t, logs.String(), "not protocol")
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestHandshakeFailures(t *testing.T) {
	cases := []struct {
		name    string
		spec    string
		timeout time.Duration // HandshakeTimeout, for a reply that never comes
		is      []error
		says    string
	}{
		{"crash during init", "crash-at=1", 0, []error{backends.ErrDeviceLost}, "exit status 3"},
		{"hang during init", "hang-at=1", 400 * time.Millisecond, []error{backends.ErrDeviceLost}, "no reply to init within 400ms; the runtime is presumed hung"},
		{"newer runtime", "protocol=3", 0, []error{ttruntime.ErrVersion}, "rebuild zyx-tt"},
		{"v1 runtime", "protocol=1", 0, []error{ttruntime.ErrVersion}, "rebuild the runtime (make runtime)"},
		{"garbage instead of a reply", "garbage-at=1", 0, []error{ttruntime.ErrProtocol}, "undecodable"},
		{"a spec the runtime refuses", "crash-at=x", 0, []error{backends.ErrDeviceLost}, `mock item "crash-at=x": wants a non-negative integer`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mockConfig(t, tc.spec)
			if tc.timeout > 0 {
				cfg.HandshakeTimeout = tc.timeout
			}
			c, err := ttruntime.Start(context.Background(), cfg)
			require.Nil(t, c)
			for _, want := range tc.is {
				require.ErrorIs(t, err, want)
			}
			require.Contains(t, err.Error(), tc.says)
		})
	}
	t.Run("missing executable", func(t *testing.T) {
		cfg := mockConfig(t, "")
		cfg.Path = filepath.Join(t.TempDir(), "nope")
		_, err := ttruntime.Start(context.Background(), cfg)
		require.ErrorIs(t, err, backends.ErrNoDevice)
	})
	t.Run("the caller's deadline", func(t *testing.T) {
		cfg := mockConfig(t, "hold-at=1")
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := ttruntime.Start(ctx, cfg)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NotErrorIs(t, err, backends.ErrDeviceLost)
	})
}

func TestKillIsIdempotent(t *testing.T) {
	c := start(t, mockConfig(t, ""))
	c.Kill()
	c.Kill()
	require.NoError(t, c.Close())
	require.ErrorIs(t, c.Ping(context.Background()), backends.ErrDeviceLost)
}

// Close reports how the runtime ended when it had to go past the exit
// request: SIGTERM ends a runtime that hangs, SIGKILL one that also ignores
// SIGTERM. A graceful exit, and a runtime already gone, are no error.
func TestCloseReportsHowItEscalated(t *testing.T) {
	cases := []struct {
		name   string
		spec   string
		how    ttruntime.Shutdown
		status string
		says   string
	}{
		{"hang", "hang-at=3", ttruntime.ShutdownTerminated, "signal: terminated", "exited after SIGTERM"},
		{"hang ignoring SIGTERM", "hang-at=3,ignore-term", ttruntime.ShutdownKilled, "signal: killed", "killed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mockConfig(t, tc.spec+",stderr=the mock says hello")
			cfg.ShutdownTimeout = 200 * time.Millisecond
			c := start(t, cfg)
			pid := c.Pid()
			require.NoError(t, c.Ping(context.Background()))
			began := time.Now()
			err := c.Close() // exit is request 3: it is never read
			took := time.Since(began)
			require.Error(t, err)
			var se *ttruntime.ShutdownError
			require.ErrorAs(t, err, &se)
			require.Equal(t, tc.how, se.How)
			require.Equal(t, pid, se.Pid)
			require.Equal(t, tc.status, se.Status)
			require.Contains(t, err.Error(), tc.says)
			require.Contains(t, err.Error(), "the mock says hello", "the stderr tail belongs in the report")
			require.NotErrorIs(t, err, backends.ErrDeviceLost, "a forced shutdown is a report, not a lost device")
			var be *backends.Error
			require.ErrorAs(t, err, &be)
			require.Equal(t, "tt", be.Backend)
			require.Equal(t, "close", be.Op)
			// exit request (200 ms), exit wait (200 ms), then SIGTERM's wait
			// (200 ms) only when it is ignored
			least := 400 * time.Millisecond
			if tc.how == ttruntime.ShutdownKilled {
				least = 600 * time.Millisecond
			}
			require.GreaterOrEqual(t, took, least, "Close escalated before its waits were up")
			require.False(t, c.Alive())
			require.NoError(t, c.Close(), "a second Close has nothing to report")
		})
	}
	t.Run("graceful", func(t *testing.T) {
		c := start(t, mockConfig(t, ""))
		require.NoError(t, c.Ping(context.Background()))
		require.NoError(t, c.Close())
		require.False(t, c.Alive())
	})
	t.Run("already crashed", func(t *testing.T) {
		c := start(t, mockConfig(t, "crash-at=2"))
		require.ErrorIs(t, c.Ping(context.Background()), backends.ErrDeviceLost)
		require.NoError(t, c.Close(), "the crash was reported by the call that saw it")
	})
}

// Free and Release are bounded by CleanupTimeout, every other call by
// Timeout: a runtime slower than the first on a cleanup is presumed hung
// and killed, while the same delay on another call is just slow.
func TestCleanupCallsHaveTheirOwnTimeout(t *testing.T) {
	ctx := context.Background()
	// Every reply comes 600 ms late: well within Timeout, never within
	// CleanupTimeout.
	cfg := mockConfig(t, "slow=600ms")
	cfg.CleanupTimeout = 200 * time.Millisecond
	c := start(t, cfg)
	require.NoError(t, c.Ping(ctx), "600 ms is within Timeout")
	a, err := c.Alloc(ctx, ttruntime.AllocRequest{Size: 64})
	require.NoError(t, err)
	err = c.Free(ctx, ttruntime.BufferRequest{Buffer: a.Buffer})
	require.ErrorIs(t, err, backends.ErrDeviceLost)
	require.Contains(t, err.Error(), "no reply to free within 200ms")
	require.Contains(t, err.Error(), "presumed hung")
	require.False(t, c.Alive())

	// Release too: init 1, compile 2, release 3 hangs.
	cfg = mockConfig(t, "hang-at=3")
	cfg.CleanupTimeout = 200 * time.Millisecond
	c = start(t, cfg)
	p, err := c.Compile(ctx, oneKernelProgram("p", emptyDataflow))
	require.NoError(t, err)
	err = c.Release(ctx, ttruntime.ProgramRequest{Program: p.Program})
	require.ErrorIs(t, err, backends.ErrDeviceLost)
	require.Contains(t, err.Error(), "no reply to release within 200ms")

	// CleanupTimeout never exceeds Timeout (short here, but long enough for
	// the alloc before the hang on a loaded machine).
	cfg = mockConfig(t, "hang-at=3")
	cfg.Timeout = 2 * time.Second
	cfg.CleanupTimeout = time.Hour
	c = start(t, cfg)
	a, err = c.Alloc(ctx, ttruntime.AllocRequest{Size: 64})
	require.NoError(t, err)
	err = c.Free(ctx, ttruntime.BufferRequest{Buffer: a.Buffer})
	require.ErrorIs(t, err, backends.ErrDeviceLost)
	require.Contains(t, err.Error(), "no reply to free within 2s")
}

func TestEncodeSourceSurvivesAnyByte(t *testing.T) {
	for _, src := range []string{"", "kernel();\n\"quoted\"\t\\", "bad \xff\xfe utf8\n\x00"} {
		var s ttruntime.Kernel
		s.SetSource(src)
		got, err := s.Text()
		require.NoError(t, err)
		require.Equal(t, src, got)
	}
}

// lockDir points the chip locks at a private directory of the test.
func lockDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "locks")
	t.Setenv(ttruntime.EnvLockDir, dir)
	return dir
}

func TestChipLock(t *testing.T) {
	dir := lockDir(t)
	l, err := ttruntime.LockChip("0000:01:00.0", 1)
	require.NoError(t, err)
	st, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm(), "the lock directory is created 0700")
	st, err = os.Stat(l.Path())
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "a new lock file is 0600")
	_, err = ttruntime.LockChip("0000:01:00.0", 1)
	require.ErrorIs(t, err, ttruntime.ErrChipBusy)
	require.ErrorIs(t, err, backends.ErrNoDevice)
	require.Contains(t, err.Error(), fmt.Sprintf("pid %d", os.Getpid()))
	other, err := ttruntime.LockChip("0000:01:00.0", 0)
	require.NoError(t, err, "another chip of the same card is free")
	require.NoError(t, other.Unlock())
	require.NoError(t, l.Unlock())
	require.NoError(t, l.Unlock())
	l, err = ttruntime.LockChip("0000:01:00.0", 1)
	require.NoError(t, err)
	require.NoError(t, l.Unlock())
}

func TestChipLockDirDefaults(t *testing.T) {
	t.Setenv(ttruntime.EnvLockDir, "")
	x := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", x)
	if os.Geteuid() == 0 {
		require.Equal(t, "/run/lock/zyx-tt", ttruntime.LockDir())
		return
	}
	require.Equal(t, filepath.Join(x, "zyx-tt"), ttruntime.LockDir())
	t.Setenv("XDG_RUNTIME_DIR", "")
	require.Equal(t, filepath.Join(os.TempDir(), fmt.Sprintf("zyx-tt-%d", os.Geteuid())), ttruntime.LockDir())
}

// A file planted where a lock file goes is neither followed nor trusted,
// and the lock code changes nothing about it.
func TestChipLockRefusesPlantedFiles(t *testing.T) {
	dir := lockDir(t)
	require.NoError(t, os.Mkdir(dir, 0o700))
	path := filepath.Join(dir, ttruntime.LockName("0000:01:00.0", 0))

	t.Run("symbolic link", func(t *testing.T) {
		target := filepath.Join(t.TempDir(), "victim")
		require.NoError(t, os.WriteFile(target, []byte("precious\n"), 0o644))
		require.NoError(t, os.Symlink(target, path))
		defer os.Remove(path)
		_, err := ttruntime.LockChip("0000:01:00.0", 0)
		require.ErrorIs(t, err, backends.ErrNoDevice)
		require.ErrorContains(t, err, "symbolic link")
		got, err := os.ReadFile(target)
		require.NoError(t, err)
		require.Equal(t, "precious\n", string(got), "the link's target is untouched")
		st, err := os.Stat(target)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o644), st.Mode().Perm(), "and not chmod-ed")
		// a dangling link is not followed into creating its target either
		dangling := filepath.Join(t.TempDir(), "new")
		require.NoError(t, os.Remove(path))
		require.NoError(t, os.Symlink(dangling, path))
		_, err = ttruntime.LockChip("0000:01:00.0", 0)
		require.ErrorContains(t, err, "symbolic link")
		_, err = os.Lstat(dangling)
		require.ErrorIs(t, err, os.ErrNotExist)
	})

	t.Run("another user's file", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to give a file to another user (chown to nobody)")
		}
		require.NoError(t, os.WriteFile(path, []byte("4242\n"), 0o666))
		defer os.Remove(path)
		require.NoError(t, os.Chmod(path, 0o666))
		require.NoError(t, os.Chown(path, 65534, 65534))
		_, err := ttruntime.LockChip("0000:01:00.0", 0)
		require.ErrorIs(t, err, backends.ErrNoDevice)
		require.ErrorContains(t, err, "belongs to uid 65534")
		st, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o666), st.Mode().Perm(), "an existing file is never chmod-ed")
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, "4242\n", string(got), "nor written")
	})

	t.Run("hard link", func(t *testing.T) {
		other := filepath.Join(dir, "elsewhere")
		require.NoError(t, os.WriteFile(other, nil, 0o600))
		require.NoError(t, os.Link(other, path))
		defer os.Remove(path)
		_, err := ttruntime.LockChip("0000:01:00.0", 0)
		require.ErrorContains(t, err, "2 links")
	})

	t.Run("not a regular file", func(t *testing.T) {
		require.NoError(t, syscall.Mkfifo(path, 0o600))
		defer os.Remove(path)
		_, err := ttruntime.LockChip("0000:01:00.0", 0)
		require.ErrorContains(t, err, "not a regular file")
	})
}

func TestChipLockRefusesUntrustedDirectories(t *testing.T) {
	base := t.TempDir()
	t.Run("a symbolic link", func(t *testing.T) {
		real := filepath.Join(base, "real")
		require.NoError(t, os.Mkdir(real, 0o700))
		link := filepath.Join(base, "link")
		require.NoError(t, os.Symlink(real, link))
		t.Setenv(ttruntime.EnvLockDir, link)
		_, err := ttruntime.LockChip("0000:01:00.0", 0)
		require.ErrorContains(t, err, "not a directory")
		ents, _ := os.ReadDir(real)
		require.Empty(t, ents, "nothing was created through the link")
	})
	t.Run("writable by others", func(t *testing.T) {
		open := filepath.Join(base, "open")
		require.NoError(t, os.Mkdir(open, 0o700))
		require.NoError(t, os.Chmod(open, 0o777))
		t.Setenv(ttruntime.EnvLockDir, open)
		_, err := ttruntime.LockChip("0000:01:00.0", 0)
		require.ErrorContains(t, err, "writable by other users")
	})
	t.Run("another user's", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to give a directory to another user (chown to nobody)")
		}
		theirs := filepath.Join(base, "theirs")
		require.NoError(t, os.Mkdir(theirs, 0o700))
		require.NoError(t, os.Chown(theirs, 65534, 65534))
		t.Setenv(ttruntime.EnvLockDir, theirs)
		_, err := ttruntime.LockChip("0000:01:00.0", 0)
		require.ErrorContains(t, err, "belongs to uid 65534")
	})
}

// The runtime inherits the lock (--lock-fd) and holds the chip while it
// lives, also after the driver's own descriptor is gone: a runtime left
// behind keeps a second one off the chip.
func TestRuntimeHoldsTheChipLock(t *testing.T) {
	lockDir(t)
	l, err := ttruntime.LockChip("0000:07:00.0", 0)
	require.NoError(t, err)
	cfg := emuConfig(t, "n150", 0)
	cfg.LockFile = l.File()
	c := start(t, cfg)
	l.NoteRuntime(c.Pid())
	require.NoError(t, c.Ping(context.Background()))
	require.NoError(t, l.Unlock(), "the driver lets go of its descriptor")

	_, err = ttruntime.LockChip("0000:07:00.0", 0)
	require.ErrorIs(t, err, ttruntime.ErrChipBusy, "the runtime still holds the chip")
	require.ErrorContains(t, err, fmt.Sprintf("its runtime is pid %d", c.Pid()))
	c.Kill()
	again, err := ttruntime.LockChip("0000:07:00.0", 0)
	require.NoError(t, err, "the chip is free once the runtime is gone")

	// A runtime handed a lock that another open of the file holds
	// refuses to start.
	f, err := os.Open(again.Path())
	require.NoError(t, err)
	defer f.Close()
	cfg.LockFile = f
	_, err = ttruntime.Start(context.Background(), cfg)
	require.ErrorIs(t, err, backends.ErrDeviceLost)
	require.ErrorContains(t, err, "held by another process")
	require.NoError(t, again.Unlock())
}

// DPRINT lines on the runtime's stderr go to KernelOutput, without their
// prefix and all of them before Run returns; other stderr lines stay in
// the log and the tail. The mock prints its line from every core of every
// kernel at every run.
func TestKernelOutput(t *testing.T) {
	var out lockedBuffer
	cfg := mockConfig(t, "dprint=hello from a kernel,stderr=an ordinary log line")
	cfg.KernelOutput = &out
	c := start(t, cfg)
	ctx := context.Background()
	p := oneGroupProgram("p", emptyDataflow, emptyCompute, emptyDataflow)
	for k := range p.Kernels {
		p.Kernels[k].Cores = ttruntime.CoreRangeSet{ttruntime.Rect(0, 0, 7, 7)}
	}
	p.CBs[0].Cores = p.Kernels[0].Cores
	pr, err := c.Compile(ctx, p)
	require.NoError(t, err)
	for run := 1; run <= 3; run++ {
		_, err = c.Run(ctx, ttruntime.RunRequest{Program: pr.Program})
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		require.Len(t, lines, run*3*64, "every line of the run is there when Run returns")
		require.Contains(t, lines, "core (7,3) compute: hello from a kernel")
		require.Contains(t, lines, "core (0,0) riscv_1: hello from a kernel")
	}
	require.NotContains(t, out.String(), "ordinary", "only DPRINT lines go to KernelOutput")
	require.Contains(t, c.StderrTail(), "an ordinary log line")
	require.NotContains(t, c.StderrTail(), "hello from a kernel", "DPRINT lines stay out of the error tail")

	// Without KernelOutput the runtime is not asked to print.
	cfg.KernelOutput = nil
	c2 := start(t, cfg)
	pr, err = c2.Compile(ctx, p)
	require.NoError(t, err)
	_, err = c2.Run(ctx, ttruntime.RunRequest{Program: pr.Program})
	require.NoError(t, err)
	require.NoError(t, c2.Close())
	require.NotContains(t, c2.StderrTail(), "hello from a kernel")
}

func TestFindRuntime(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "rt")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, nil, 0o644))
	xdg := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "zyx"), 0o755))

	t.Setenv("PATH", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("ZYX_TT_RUNTIME", "")

	p, err := ttruntime.FindRuntime(exe)
	require.NoError(t, err)
	require.Equal(t, exe, p)

	_, err = ttruntime.FindRuntime(plain)
	require.ErrorIs(t, err, ttruntime.ErrRuntimeNotFound)
	require.Contains(t, err.Error(), "not executable")

	_, err = ttruntime.FindRuntime("")
	require.ErrorIs(t, err, ttruntime.ErrRuntimeNotFound)
	require.Contains(t, err.Error(), "make runtime")
	require.Contains(t, err.Error(), "zyx-tt runtime install")
	require.Contains(t, err.Error(), filepath.Join(xdg, "zyx", ttruntime.RuntimeName), "the error names the config directory it looked in")
	installDir, err2 := ttruntime.InstallDir()
	require.NoError(t, err2)
	require.Contains(t, err.Error(), filepath.Join(installDir, ttruntime.RuntimeName), "and the install directory")

	inXDG := filepath.Join(xdg, "zyx", ttruntime.RuntimeName)
	require.NoError(t, os.WriteFile(inXDG, []byte("#!/bin/sh\n"), 0o755))
	p, err = ttruntime.FindRuntime("")
	require.NoError(t, err)
	require.Equal(t, inXDG, p)

	t.Setenv("ZYX_TT_RUNTIME", exe)
	p, err = ttruntime.FindRuntime("")
	require.NoError(t, err)
	require.Equal(t, exe, p, "the environment comes before the XDG location")

	// What `zyx-tt runtime install` puts in the install directory is found.
	t.Setenv("ZYX_TT_RUNTIME", "")
	require.NoError(t, os.Remove(inXDG))
	installDir, err = ttruntime.InstallDir()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(installDir, 0o755))
	installed := filepath.Join(installDir, ttruntime.RuntimeName)
	require.NoError(t, os.WriteFile(installed, []byte("#!/bin/sh\n"), 0o755))
	p, err = ttruntime.FindRuntime("")
	require.NoError(t, err)
	require.Equal(t, installed, p)
}

func FuzzReplyLine(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"ok":true}`,
		`{"id":7,"ok":false,"error":{"code":"unknown_buffer","message":"buffer 12 \"x\" does not exist"}}`,
		`{"id":2,"ok":true,"protocol":1,"runtime":"emu","grid":{"rows":8,"cols":8,"harvested_rows":[1]},"dram":{"banks":12,"bank_size":1073741824},"l1":{"size":1499136,"unreserved_base":102400}}`,
		`{"id":3,"ok":true,"elapsed_ns":18446744073709551615}`,
		`{"id":18446744073709551615,"ok":true}`,
		`{"id":18446744073709551616,"ok":true}`,
		`{"id":007,"ok":true}`,
		`{"id":0,"ok":true}`,
		`{"id":12,"ok":true} `,
		`UMD | warning | not json`,
		`{"id":-1,"ok":"yes"}`,
		`{"id":1e99}`,
		"{\"id\":1,\"ok\":true,\"buffer\":\xff}",
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		h, isReply, err := ttruntime.ParseReplyLine(line)
		// The client's fast path must read every line as the decoder does.
		fh, fIsReply, ferr := ttruntime.ParseReplyFast(line)
		require.Equal(t, err == nil, ferr == nil, "fast parser error %v, decoder error %v", ferr, err)
		require.Equal(t, isReply, fIsReply)
		require.Equal(t, h, fh)
		if err != nil {
			require.ErrorIs(t, err, ttruntime.ErrProtocol)
			require.False(t, isReply)
			return
		}
		if !isReply {
			return
		}
		require.NotNil(t, h.OK)
		if !*h.OK {
			require.NotNil(t, h.Error, "an error reply always carries an error body")
		}
		// The typed result decoders must not panic on whatever came.
		var ir ttruntime.InitReply
		var ar ttruntime.AllocReply
		var rr ttruntime.RunReply
		var pr ttruntime.ProgramReply
		for _, v := range []any{&ir, &ar, &rr, &pr} {
			_ = jsonUnmarshal(line, v)
		}
		_ = ir.DRAM.Total()
		_ = ir.L1.Usable()
	})
}

// BenchmarkPingVsPipe measures, in one run, a no-op ping through the client
// against the runtime in mock mode (no fault) and a raw line echo through
// two pipes to a trivial helper process. Both are child processes of this
// test binary reached through os.Pipe files, and both round trips are one
// write and one line read on each side. The two alternate every iteration,
// so load changes hit both. The metrics are medians per round trip (a
// shared, loaded machine stalls single iterations by milliseconds, which
// would swamp a mean), and ping/raw is their ratio; ping/raw-mean is the
// ratio of the means.
func BenchmarkPingVsPipe(b *testing.B) { benchPingVsPipe(b, mockConfig(b, "")) }

// benchPingVsPipe is BenchmarkPingVsPipe against the runtime cfg starts; the
// conformance benchmark runs it against the C++ runtime.
func benchPingVsPipe(b *testing.B, cfg ttruntime.Config) {
	c, err := ttruntime.Start(context.Background(), cfg)
	require.NoError(b, err)
	defer c.Kill()

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=echo")
	in, err := cmd.StdinPipe()
	require.NoError(b, err)
	outPipe, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	out := bufio.NewReader(outPipe)
	msg := []byte(`{"id":1,"cmd":"ping"}` + "\n")

	ctx := context.Background()
	ping := func() {
		if err := c.Ping(ctx); err != nil {
			b.Fatal(err)
		}
	}
	echo := func() {
		if _, err := in.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := out.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	for range 200 { // warm both paths
		ping()
		echo()
	}
	client := make([]time.Duration, b.N)
	raw := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			t0 := time.Now()
			ping()
			t1 := time.Now()
			echo()
			client[i], raw[i] = t1.Sub(t0), time.Since(t1)
		} else {
			t0 := time.Now()
			echo()
			t1 := time.Now()
			ping()
			raw[i], client[i] = t1.Sub(t0), time.Since(t1)
		}
	}
	b.StopTimer()
	cm, rm := median(client), median(raw)
	b.ReportMetric(float64(cm.Nanoseconds()), "ns/ping")
	b.ReportMetric(float64(rm.Nanoseconds()), "ns/raw-echo")
	b.ReportMetric(float64(cm)/float64(rm), "ping/raw")
	b.ReportMetric(float64(sum(client))/float64(sum(raw)), "ping/raw-mean")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func sum(ds []time.Duration) (t time.Duration) {
	for _, d := range ds {
		t += d
	}
	return t
}

// While an abandoned call is unanswered, cleanups and Close's exit wait
// only AbandonedGrace: a program that gave up on a hung kernel and shuts
// down is not held for CleanupTimeout and ShutdownTimeout.
func TestAbandonedCallShortensCleanupAndClose(t *testing.T) {
	ctx := context.Background()
	cfg := mockConfig(t, "hang-at=3") // init 1, alloc 2, the ping 3 hangs
	cfg.CleanupTimeout = 30 * time.Second
	cfg.ShutdownTimeout = 30 * time.Second
	cfg.AbandonedGrace = 300 * time.Millisecond
	// abandoned starts a client on cfg that holds a buffer (a) and has
	// given up on a call (the ping that hangs).
	abandoned := func(t *testing.T) (c *ttruntime.Client, a ttruntime.AllocReply) {
		c = start(t, cfg)
		a, err := c.Alloc(ctx, ttruntime.AllocRequest{Size: 64})
		require.NoError(t, err)
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		require.ErrorIs(t, c.Ping(cctx), context.DeadlineExceeded)
		require.True(t, c.Alive())
		return c, a
	}

	t.Run("free", func(t *testing.T) {
		c, a := abandoned(t)
		began := time.Now()
		err := c.Free(ctx, ttruntime.BufferRequest{Buffer: a.Buffer})
		took := time.Since(began)
		require.ErrorIs(t, err, backends.ErrDeviceLost)
		require.ErrorContains(t, err, "no reply to free within 300ms")
		require.GreaterOrEqual(t, took, 300*time.Millisecond)
		require.Less(t, took, cfg.CleanupTimeout, "not CleanupTimeout")
		began = time.Now()
		require.NoError(t, c.Close())
		require.Less(t, time.Since(began), cfg.ShutdownTimeout, "the runtime is gone: nothing to wait for")
	})
	t.Run("close", func(t *testing.T) {
		c, _ := abandoned(t)
		began := time.Now()
		err := c.Close()
		require.Less(t, time.Since(began), cfg.ShutdownTimeout, "not ShutdownTimeout")
		var se *ttruntime.ShutdownError
		require.ErrorAs(t, err, &se)
		require.Equal(t, ttruntime.ShutdownKilled, se.How)
		require.False(t, c.Alive())
	})
	t.Run("an answered abandoned call restores the full timeout", func(t *testing.T) {
		// Every reply comes 400 ms late: past the grace, within CleanupTimeout.
		slow := mockConfig(t, "slow=400ms")
		slow.AbandonedGrace = 100 * time.Millisecond
		slow.CleanupTimeout = patience(t)
		c := start(t, slow)
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		require.ErrorIs(t, c.Ping(cctx), context.DeadlineExceeded)
		require.NoError(t, c.Ping(ctx), "the late reply is skipped")
		a, err := c.Alloc(ctx, ttruntime.AllocRequest{Size: 64})
		require.NoError(t, err)
		require.NoError(t, c.Free(ctx, ttruntime.BufferRequest{Buffer: a.Buffer}), "400 ms is within CleanupTimeout again")
	})
}

// A Conn works over any reader and writer with deadlines: here the pipes of
// a runtime this test started itself, with no Peer behind the connection.
func TestConnOverBarePipes(t *testing.T) {
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	defer func() { _ = inW.Close(); _ = outR.Close() }()
	cmd := exec.Command(rtbin.Require(t), "--mock", "on")
	cmd.Stdin, cmd.Stdout = inR, outW
	require.NoError(t, cmd.Start())
	_ = inR.Close()
	_ = outW.Close()
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	c := ttruntime.NewConn(outR, inW, ttruntime.ConnConfig{Timeout: patience(t), Logger: quietLogger()}, nil)
	ctx := context.Background()
	info, err := c.Init(ctx, ttruntime.InitRequest{Layer: "emu", Board: "n150", CacheDir: t.TempDir()})
	require.NoError(t, err)
	require.Equal(t, "emu", info.Runtime)
	require.NoError(t, c.Ping(ctx))
	a, err := c.Alloc(ctx, ttruntime.AllocRequest{Size: 64})
	require.NoError(t, err)
	tk, err := c.SendFree(ctx, ttruntime.BufferRequest{Buffer: a.Buffer}, nil)
	require.NoError(t, err)
	require.NoError(t, tk.Wait(ctx))

	// The stream's end is the connection's: with no peer to ask, the error
	// says what the stream did and nothing of a process.
	// The ping meets the stream's end on one side or the other: its write
	// finds the pipe closed, or its read finds stdout closed.
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	err = c.Ping(ctx)
	require.ErrorIs(t, err, backends.ErrDeviceLost)
	if !strings.Contains(err.Error(), "the runtime closed its stdout") {
		require.ErrorContains(t, err, "write ping request")
		require.ErrorIs(t, err, syscall.EPIPE)
	}
	require.NotContains(t, err.Error(), "(runtime ")
	require.False(t, c.Alive())
	require.NoError(t, c.Close())
	require.ErrorIs(t, c.Ping(ctx), backends.ErrDeviceLost)
}
