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
	"github.com/zyxtt/zyxtt/internal/mockrt"
	"github.com/zyxtt/zyxtt/shm"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// helperEnv makes the test binary act as a helper process: "mockrt" runs
// the mock runtime, "echo" echoes stdin lines (the raw-pipe reference).
const helperEnv = mockrt.HelperEnv

func TestMain(m *testing.M) {
	mockrt.ServeIfHelper()
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

// mockConfig runs the mock runtime from this test binary with flags.
//
// A binary built with -race sleeps 1 s in its exit (the race runtime's
// atexit_sleep_ms), longer than the ShutdownTimeout here, which would make
// every Close escalate to SIGTERM; the mock is started without that sleep
// (mockrt.SelfEnv).
func mockConfig(flags ...string) ttruntime.Config {
	env := mockrt.SelfEnv()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, helperEnv+"=") && !strings.HasPrefix(kv, mockrt.EnvFlags+"=") && !strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	return ttruntime.Config{
		Path:             os.Args[0],
		Args:             flags,
		Env:              env,
		Timeout:          5 * time.Second,
		HandshakeTimeout: 5 * time.Second,
		ShutdownTimeout:  time.Second,
		Logger:           quietLogger(),
		Init:             ttruntime.InitRequest{Layer: "emu", Board: "n150"},
	}
}

func start(t *testing.T, cfg ttruntime.Config) *ttruntime.Client {
	t.Helper()
	c, err := ttruntime.Start(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(c.Kill)
	return c
}

func TestHandshakeReportsTheRuntime(t *testing.T) {
	c := start(t, mockConfig("-rows", "10", "-cols", "13", "-harvest-rows", "3", "-board", "p150a"))
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
	c := start(t, mockConfig())
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
	c := start(t, mockConfig())
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

// A caller queued behind a slow call is still bounded by its own context.
func TestQueuedCallHonoursItsContext(t *testing.T) {
	c := start(t, mockConfig("-slow", "1500ms"))
	first := make(chan error, 1)
	go func() { first <- c.Ping(context.Background()) }()
	time.Sleep(100 * time.Millisecond) // let it take the call slot
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	began := time.Now()
	err := c.Ping(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(began), time.Second, "it waited for the slow call")
	require.NoError(t, <-first)
	require.NoError(t, c.Ping(context.Background()), "nothing was sent for the queued call")
}

// Every fault must give a clear error within its deadline and leave the
// client usable or cleanly lost.
func TestFaults(t *testing.T) {
	type after int
	const (
		usable after = iota
		lost
	)
	cases := []struct {
		name        string
		flags       []string
		timeout     time.Duration
		ctxWait     time.Duration // the caller's deadline
		cancelAfter time.Duration // the caller cancels
		within      time.Duration // the error must come this fast (default: timeout + 3 s)
		is          []error
		says        string
		then        after
	}{
		{name: "log noise on stdout", flags: []string{"-noise"}, then: usable},
		{name: "slow but in time", flags: []string{"-slow", "30ms"}, then: usable},
		{name: "error reply", flags: []string{"-error-at", "2", "-error-code", "out_of_memory"},
			is: []error{backends.ErrOutOfMemory}, says: "injected error", then: usable},
		{name: "caller gives up on a slow reply", flags: []string{"-slow", "400ms"}, ctxWait: 50 * time.Millisecond,
			is: []error{context.DeadlineExceeded}, then: usable},
		{name: "caller cancels a slow reply", flags: []string{"-slow", "400ms"}, cancelAfter: 50 * time.Millisecond,
			within: 2 * time.Second, is: []error{context.Canceled}, then: usable},
		{name: "stdout flooded between commands", flags: []string{"-flood", "1000000"}, then: usable},
		{name: "exit leaving a grandchild on stdout", flags: []string{"-orphan-at", "2"}, within: 2500 * time.Millisecond,
			is: []error{backends.ErrDeviceLost}, says: "exit status 3", then: lost},
		{name: "crash", flags: []string{"-crash-at", "2"},
			is: []error{backends.ErrDeviceLost}, says: "exit status 3", then: lost},
		{name: "hang", flags: []string{"-hang-at", "2"}, timeout: 300 * time.Millisecond,
			is: []error{backends.ErrDeviceLost}, says: "presumed hung and was killed (runtime signal: killed)", then: lost},
		{name: "hang ignoring SIGTERM", flags: []string{"-hang-at", "2", "-ignore-term"}, timeout: 300 * time.Millisecond,
			is: []error{backends.ErrDeviceLost}, says: "presumed hung and was killed (runtime signal: killed)", then: lost},
		{name: "slow past the timeout", flags: []string{"-slow", "2s"}, timeout: 300 * time.Millisecond,
			is: []error{backends.ErrDeviceLost}, says: "presumed hung", then: lost},
		{name: "wrong reply id", flags: []string{"-wrong-id-at", "2"},
			is: []error{backends.ErrDeviceLost, ttruntime.ErrProtocol}, says: "reply id", then: lost},
		{name: "garbage line", flags: []string{"-garbage-at", "2"},
			is: []error{backends.ErrDeviceLost, ttruntime.ErrProtocol}, says: "undecodable", then: lost},
		{name: "oversized line", flags: []string{"-oversize-at", "2"},
			is: []error{backends.ErrDeviceLost, ttruntime.ErrProtocol}, says: "longer than", then: lost},
		{name: "stdout closed", flags: []string{"-close-stdout-at", "2"},
			is: []error{backends.ErrDeviceLost}, says: "closed its stdout (runtime signal: killed)", then: lost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mockConfig(append(tc.flags, "-stderr", "mockrt says hello")...)
			if tc.timeout > 0 {
				cfg.Timeout = tc.timeout
			}
			c := start(t, cfg)
			ctx := context.Background()
			if tc.ctxWait > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxWait)
				defer cancel()
			}
			if tc.cancelAfter > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				time.AfterFunc(tc.cancelAfter, cancel)
			}
			began := time.Now()
			err := c.Ping(ctx) // the second command: init was the first
			bound := cfg.Timeout + 3*time.Second
			if tc.within > 0 {
				bound = tc.within
			}
			require.Less(t, time.Since(began), bound, "the fault took too long to surface")
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
			if tc.then == lost {
				require.Contains(t, err.Error(), "mockrt says hello", "the stderr tail belongs in the error")
				require.False(t, c.Alive())
				began = time.Now()
				err := c.Ping(context.Background())
				require.ErrorIs(t, err, backends.ErrDeviceLost)
				require.Less(t, time.Since(began), 3*time.Second)
			} else {
				require.NoError(t, c.Ping(context.Background()), "the next call must work")
				require.NoError(t, c.Ping(context.Background()))
			}
			began = time.Now()
			require.NoError(t, c.Close())
			require.Less(t, time.Since(began), 4*cfg.ShutdownTimeout+2*time.Second)
		})
	}
}

// A request longer than a pipe holds is written while the client drains
// stdout, so a runtime that floods stdout before reading cannot deadlock it.
func TestLongRequestWhileStdoutFloods(t *testing.T) {
	c := start(t, mockConfig("-flood", "1000000"))
	req := oneGroupProgram("long", "// "+strings.Repeat("r", 3<<20)+"\n", "void kernel() {}\n", "void kernel() {}\n")
	p, err := c.Compile(context.Background(), req)
	require.NoError(t, err)
	require.NotZero(t, p.Program)
	require.NoError(t, c.Ping(context.Background()))
	require.NoError(t, c.Close())
}

// A caller that cancels while a long request is still being written (the
// runtime stopped reading) gets its answer at once; the half-sent request
// costs the runtime, since the stream cannot be resynchronised.
func TestCancelCutsOffALongRequest(t *testing.T) {
	c := start(t, mockConfig("-hang-at", "2"))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, c.Ping(ctx), context.DeadlineExceeded) // the runtime now reads nothing
	require.True(t, c.Alive())

	req := oneKernelProgram("long", strings.Repeat("r", 4<<20))
	// Encoding 4 MiB may outlast a short delay on a loaded machine; then the
	// call ends before sending anything, which is right too: try longer.
	for _, delay := range []time.Duration{100 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(delay, cancel)
		began := time.Now()
		_, err := c.Compile(ctx, req)
		took := time.Since(began)
		cancel()
		require.ErrorIs(t, err, context.Canceled)
		if !errors.Is(err, backends.ErrDeviceLost) {
			require.True(t, c.Alive(), "nothing was sent: %v", err)
			continue
		}
		require.Less(t, took, delay+2*time.Second)
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
	c := start(t, mockConfig("-slow", "400ms"))
	req := oneKernelProgram("long", strings.Repeat("r", 1<<20))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Compile(ctx, req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, backends.ErrDeviceLost, "the request went out whole")
	require.True(t, c.Alive())
	require.False(t, c.WriteStopped())
	require.NoError(t, c.Ping(context.Background()))
}

// The round trip allocates nothing: request encoding, line reading and the
// reply header all reuse the client's buffers.
func TestPingDoesNotAllocate(t *testing.T) {
	c := start(t, mockConfig())
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
	cfg := mockConfig("-noise")
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := start(t, cfg)
	require.NoError(t, c.Ping(context.Background()))
	require.NoError(t, c.Close())
	require.Contains(t, logs.String(), "noise before reply to command 2")
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
		name  string
		flags []string
		is    []error
		says  string
	}{
		{"crash during init", []string{"-crash-at", "1"}, []error{backends.ErrDeviceLost}, "exit status 3"},
		{"hang during init", []string{"-hang-at", "1"}, []error{backends.ErrDeviceLost}, "presumed hung"},
		{"newer runtime", []string{"-protocol", "3"}, []error{ttruntime.ErrVersion}, "rebuild zyx-tt"},
		{"v1 runtime", []string{"-protocol", "1"}, []error{ttruntime.ErrVersion}, "rebuild the runtime (make runtime)"},
		{"garbage instead of a reply", []string{"-garbage-at", "1"}, []error{ttruntime.ErrProtocol}, "undecodable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mockConfig(tc.flags...)
			cfg.HandshakeTimeout = 400 * time.Millisecond
			began := time.Now()
			c, err := ttruntime.Start(context.Background(), cfg)
			require.Nil(t, c)
			for _, want := range tc.is {
				require.ErrorIs(t, err, want)
			}
			require.Contains(t, err.Error(), tc.says)
			require.Less(t, time.Since(began), 4*time.Second)
		})
	}
	t.Run("missing executable", func(t *testing.T) {
		cfg := mockConfig()
		cfg.Path = filepath.Join(t.TempDir(), "nope")
		_, err := ttruntime.Start(context.Background(), cfg)
		require.ErrorIs(t, err, backends.ErrNoDevice)
	})
	t.Run("cancelled context", func(t *testing.T) {
		cfg := mockConfig("-slow", "2s")
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := ttruntime.Start(ctx, cfg)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

func TestKillIsIdempotent(t *testing.T) {
	c := start(t, mockConfig())
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
		flags  []string
		how    ttruntime.Shutdown
		status string
		says   string
	}{
		{"hang", []string{"-hang-at", "3"}, ttruntime.ShutdownTerminated, "signal: terminated", "exited after SIGTERM"},
		{"hang ignoring SIGTERM", []string{"-hang-at", "3", "-ignore-term"}, ttruntime.ShutdownKilled, "signal: killed", "killed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mockConfig(append(tc.flags, "-stderr", "mockrt says hello")...)
			cfg.ShutdownTimeout = 200 * time.Millisecond
			c := start(t, cfg)
			pid := c.Pid()
			require.NoError(t, c.Ping(context.Background()))
			began := time.Now()
			err := c.Close() // exit is the third command: it hangs
			took := time.Since(began)
			require.Error(t, err)
			var se *ttruntime.ShutdownError
			require.ErrorAs(t, err, &se)
			require.Equal(t, tc.how, se.How)
			require.Equal(t, pid, se.Pid)
			require.Equal(t, tc.status, se.Status)
			require.Contains(t, err.Error(), tc.says)
			require.Contains(t, err.Error(), "mockrt says hello", "the stderr tail belongs in the report")
			require.NotErrorIs(t, err, backends.ErrDeviceLost, "a forced shutdown is a report, not a lost device")
			var be *backends.Error
			require.ErrorAs(t, err, &be)
			require.Equal(t, "tt", be.Backend)
			require.Equal(t, "close", be.Op)
			// exit request (200 ms), exit wait (200 ms), then SIGTERM's wait
			// (200 ms) only when it is ignored
			min := 400 * time.Millisecond
			if tc.how == ttruntime.ShutdownKilled {
				min = 600 * time.Millisecond
			}
			require.GreaterOrEqual(t, took, min, "Close escalated before its waits were up")
			require.Less(t, took, 3*time.Second)
			require.False(t, c.Alive())
			require.NoError(t, c.Close(), "a second Close has nothing to report")
		})
	}
	t.Run("graceful", func(t *testing.T) {
		c := start(t, mockConfig())
		require.NoError(t, c.Ping(context.Background()))
		require.NoError(t, c.Close())
		require.False(t, c.Alive())
	})
	t.Run("already crashed", func(t *testing.T) {
		c := start(t, mockConfig("-crash-at", "2"))
		require.ErrorIs(t, c.Ping(context.Background()), backends.ErrDeviceLost)
		require.NoError(t, c.Close(), "the crash was reported by the call that saw it")
	})
}

// Free and Release are bounded by CleanupTimeout, every other call by
// Timeout: a runtime slower than the first on a cleanup is presumed hung
// and killed, while the same delay on another call is just slow.
func TestCleanupCallsHaveTheirOwnTimeout(t *testing.T) {
	ctx := context.Background()
	cfg := mockConfig("-slow", "600ms")
	cfg.Timeout = 20 * time.Second
	cfg.CleanupTimeout = 200 * time.Millisecond
	c := start(t, cfg)
	require.NoError(t, c.Ping(ctx), "600 ms is within Timeout")
	a, err := c.Alloc(ctx, ttruntime.AllocRequest{Size: 64})
	require.NoError(t, err)
	began := time.Now()
	err = c.Free(ctx, ttruntime.BufferRequest{Buffer: a.Buffer})
	require.Less(t, time.Since(began), 3*time.Second)
	require.ErrorIs(t, err, backends.ErrDeviceLost)
	require.Contains(t, err.Error(), "no reply to free within 200ms")
	require.Contains(t, err.Error(), "presumed hung")
	require.False(t, c.Alive())

	// Release too: init 1, compile 2, release 3 hangs.
	cfg = mockConfig("-hang-at", "3")
	cfg.Timeout = 20 * time.Second
	cfg.CleanupTimeout = 200 * time.Millisecond
	c = start(t, cfg)
	req := oneKernelProgram("p", "void kernel_main() {}\n")
	p, err := c.Compile(ctx, req)
	require.NoError(t, err)
	began = time.Now()
	err = c.Release(ctx, ttruntime.ProgramRequest{Program: p.Program})
	require.Less(t, time.Since(began), 3*time.Second)
	require.ErrorIs(t, err, backends.ErrDeviceLost)
	require.Contains(t, err.Error(), "no reply to release within 200ms")

	// CleanupTimeout never exceeds Timeout.
	cfg = mockConfig("-hang-at", "3")
	cfg.Timeout = 300 * time.Millisecond
	cfg.CleanupTimeout = time.Minute
	c = start(t, cfg)
	a, err = c.Alloc(ctx, ttruntime.AllocRequest{Size: 64})
	require.NoError(t, err)
	err = c.Free(ctx, ttruntime.BufferRequest{Buffer: a.Buffer})
	require.ErrorIs(t, err, backends.ErrDeviceLost)
	require.Contains(t, err.Error(), "within 300ms")
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
// behind keeps a second one off the chip. For the mock and the C++
// runtime alike.
func TestRuntimeHoldsTheChipLock(t *testing.T) {
	for _, rt := range []struct {
		name string
		cfg  func() ttruntime.Config
	}{{"mock", func() ttruntime.Config { return mockConfig() }}, {"c++", func() ttruntime.Config { return emuConfig(t, "n150", 0) }}} {
		t.Run(rt.name, func(t *testing.T) {
			lockDir(t)
			l, err := ttruntime.LockChip("0000:07:00.0", 0)
			require.NoError(t, err)
			cfg := rt.cfg()
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
		})
	}
}

// DPRINT lines on the runtime's stderr go to KernelOutput, without their
// prefix and all of them before Run returns; other stderr lines stay in
// the log and the tail.
func TestKernelOutput(t *testing.T) {
	var out lockedBuffer
	cfg := mockConfig("-dprint", "hello from a kernel", "-stderr", "an ordinary log line")
	cfg.KernelOutput = &out
	c := start(t, cfg)
	ctx := context.Background()
	p := oneGroupProgram("p", "void kernel_main() {}", "void kernel_main() {}", "void kernel_main() {}")
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

	inXDG := filepath.Join(xdg, "zyx", ttruntime.RuntimeName)
	require.NoError(t, os.WriteFile(inXDG, []byte("#!/bin/sh\n"), 0o755))
	p, err = ttruntime.FindRuntime("")
	require.NoError(t, err)
	require.Equal(t, inXDG, p)

	t.Setenv("ZYX_TT_RUNTIME", exe)
	p, err = ttruntime.FindRuntime("")
	require.NoError(t, err)
	require.Equal(t, exe, p, "the environment comes before the XDG location")
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
// against the mock and a raw line echo through two pipes to a trivial helper
// process. Both are child processes of this test binary reached through
// os.Pipe files, and both round trips are one write and one line read on
// each side. The two alternate every iteration, so load changes hit both.
// The metrics are medians per round trip (a shared, loaded machine stalls
// single iterations by milliseconds, which would swamp a mean), and ping/raw
// is their ratio; ping/raw-mean is the ratio of the means.
func BenchmarkPingVsPipe(b *testing.B) { benchPingVsPipe(b, mockConfig()) }

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
	cfg := mockConfig("-hang-at", "3") // init 1, alloc 2, the ping 3 hangs
	cfg.Timeout = 20 * time.Second
	cfg.CleanupTimeout = 10 * time.Second
	cfg.ShutdownTimeout = 10 * time.Second
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
		require.Less(t, took, 3*time.Second)
		began = time.Now()
		require.NoError(t, c.Close())
		require.Less(t, time.Since(began), time.Second)
	})
	t.Run("close", func(t *testing.T) {
		c, _ := abandoned(t)
		began := time.Now()
		err := c.Close()
		require.Less(t, time.Since(began), 3*time.Second, "not ShutdownTimeout")
		var se *ttruntime.ShutdownError
		require.ErrorAs(t, err, &se)
		require.Equal(t, ttruntime.ShutdownKilled, se.How)
		require.False(t, c.Alive())
	})
	t.Run("an answered abandoned call restores the full timeout", func(t *testing.T) {
		slow := mockConfig("-slow", "400ms")
		slow.AbandonedGrace = 100 * time.Millisecond
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
