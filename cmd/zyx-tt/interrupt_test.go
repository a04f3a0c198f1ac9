package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/shm"
)

// Ctrl-C during a run whose kernel never ends (a spin loop on the
// emulator, which no deadline catches because it waits for nothing):
// zyx-tt exits promptly with a failure that names the cancellation, and
// the zyx-tt-runtime process it started is gone, not left spinning.
func TestInterruptStopsAHungKernel(t *testing.T) {
	env := emuEnv(t, "the interrupt of a running kernel")
	dir := kernelBundle(t, "spin", "[0, 0, 0, 1]", "void kernel_main() { volatile uint32_t x = 0; for (;;) x = x + 1; }\n")
	cliEnviron(t, cliEnv{config: "{}", extra: env})

	cmd := exec.Command(os.Args[0], "run", dir, "--dev", "tt-emu")
	cmd.Env = append(os.Environ(), envCLI+"=1")
	var stderrBuf bytes.Buffer
	stderr := &lockedWriter{w: &stderrBuf}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	waited := false
	t.Cleanup(func() {
		// Only if the test failed before the CLI exited: the CLI is ours.
		if !waited {
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	// Wait until the runtime child has burnt a second of CPU: the kernel
	// is spinning (while the kernel builds, the compiler's process works).
	var runtimePID int
	deadline := time.Now().Add(120 * time.Second)
	for runtimePID == 0 || cpuTicks(runtimePID) < 100 {
		select {
		case err := <-exited:
			waited = true
			t.Fatalf("zyx-tt exited before the kernel ran: %v\n%s", err, stderr.text())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the runtime never ran the kernel:\n%s", stderr.text())
		}
		if runtimePID == 0 {
			runtimePID = childNamed(cmd.Process.Pid, "zyx-tt-runtime")
		}
	}

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	start := time.Now()
	var err error
	select {
	case err = <-exited:
		waited = true
	case <-time.After(15 * time.Second):
		t.Fatalf("zyx-tt did not exit within 15 s of SIGINT:\n%s", stderr.text())
	}
	t.Logf("zyx-tt exited %v after SIGINT", time.Since(start).Round(time.Millisecond))
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "zyx-tt fails: %v", err)
	require.Equal(t, exitFailure, ee.ExitCode(), stderr.text())
	require.Contains(t, stderr.text(), "zyx-tt run: interrupted (Ctrl-C or SIGTERM); stopped: ", "the error says the run was interrupted")
	require.Contains(t, stderr.text(), "context canceled", "and where")

	// It left no shm segment named for it behind.
	ents, err := os.ReadDir(shm.DefaultDir())
	require.NoError(t, err)
	prefix := fmt.Sprintf("%s%d-", shm.Prefix, cmd.Process.Pid)
	for _, e := range ents {
		require.False(t, strings.HasPrefix(e.Name(), prefix), "zyx-tt left %s in %s", e.Name(), shm.DefaultDir())
	}

	// The runtime it started is gone (reaped by zyx-tt, or, had it been
	// orphaned, by init, which would leave it running meanwhile).
	gone := time.Now().Add(5 * time.Second)
	for processAlive(runtimePID, "zyx-tt-runtime") {
		require.True(t, time.Now().Before(gone), "zyx-tt-runtime %d is still running after zyx-tt exited", runtimePID)
		time.Sleep(20 * time.Millisecond)
	}
}

// childNamed is the pid of a child of parent whose command is name, or 0.
func childNamed(parent int, name string) int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(parent) + "/task/*/children")
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(field)
			if err != nil {
				continue
			}
			if commOf(pid) == name {
				return pid
			}
		}
	}
	return 0
}

// commOf is the command name of pid ("" when it is gone).
func commOf(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// procStat is the fields of /proc/pid/stat after the command, or nil.
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// cpuTicks is the user plus system CPU time of pid in clock ticks.
func cpuTicks(pid int) int {
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(f[11]) // utime: field 14 of stat
	s, _ := strconv.Atoi(f[12]) // stime: field 15
	return u + s
}

// processAlive reports whether pid exists, is not a zombie and is still
// the command name (not a new process that took the pid).
func processAlive(pid int, name string) bool {
	if commOf(pid) != name {
		return false
	}
	f := procStat(pid)
	return f != nil && f[0] != "Z"
}

// text is what l's writer, a bytes.Buffer, holds so far.
func (l *lockedWriter) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.(*bytes.Buffer).String()
}
