package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/internal/core"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// build compiles this command as users run it: a plain binary, whose Go
// runtime (unlike a test binary's) has no other goroutine to keep it from
// taking a process that blocks on nothing for a deadlock.
func build(t *testing.T) string {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		t.Skipf("no go tool at %s to build the command: %v", goTool, err)
	}
	bin := filepath.Join(t.TempDir(), "zyx-tt-mockrt")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// The hang faults hang: the client's call times out, the client kills the
// runtime and reports the device lost; the mock does not die by itself
// ("all goroutines are asleep").
func TestHangFaultsHangTheCommand(t *testing.T) {
	bin := build(t)
	for _, tc := range []struct {
		flags []string
		says  string
	}{
		{[]string{"-hang-at", "2"}, "no reply to ping within 300ms; the runtime is presumed hung and was killed (runtime signal: killed)"},
		{[]string{"-hang-at", "2", "-ignore-term"}, "presumed hung and was killed (runtime signal: killed)"},
		{[]string{"-close-stdout-at", "2"}, "the runtime closed its stdout (runtime signal: killed)"},
	} {
		t.Run(tc.flags[0], func(t *testing.T) {
			c, err := ttruntime.Start(context.Background(), ttruntime.Config{
				Path: bin, Args: tc.flags, Timeout: 300 * time.Millisecond, ShutdownTimeout: time.Second,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				Init:   ttruntime.InitRequest{Layer: "emu", Board: "n150"},
			})
			require.NoError(t, err)
			defer c.Kill()
			began := time.Now()
			err = c.Ping(context.Background())
			require.ErrorIs(t, err, core.ErrDeviceLost)
			require.ErrorContains(t, err, tc.says)
			require.NotContains(t, err.Error(), "goroutines are asleep")
			require.Less(t, time.Since(began), 5*time.Second)
			require.False(t, c.Alive())
			require.NoError(t, c.Close(), "the runtime was killed: nothing to escalate")
		})
	}
}
