package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"
)

// ptyRun runs zyx-tt with args on a pseudo-terminal of size (nil: one
// that reports no size) and returns what it drew.
func ptyRun(t *testing.T, size *pty.Winsize, extra map[string]string, args ...string) string {
	t.Helper()
	// A cache of its own: the kernels are built, not found built.
	env := map[string]string{"XDG_CACHE_HOME": t.TempDir()}
	for k, v := range extra {
		env[k] = v
	}
	cliEnviron(t, cliEnv{config: "{}", extra: env})
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envCLI+"=1")
	var f *os.File
	var err error
	if size != nil {
		f, err = pty.StartWithSize(cmd, size)
	} else {
		f, err = pty.Start(cmd)
	}
	require.NoError(t, err)
	var out bytes.Buffer
	_, err = io.Copy(&out, f)
	if err != nil && !errors.Is(err, syscall.EIO) { // the terminal's end once the child exits
		require.NoError(t, err)
	}
	f.Close()
	require.NoError(t, cmd.Wait(), out.String())
	return out.String()
}

// requireCleared checks that the bars were redrawn in place and that the
// last clear leaves the report alone on the screen.
func requireCleared(t *testing.T, s, program string) string {
	t.Helper()
	const clear = "\x1b[J"
	require.Contains(t, s, clear, "bars are redrawn in place")
	last := s[strings.LastIndex(s, clear)+len(clear):]
	require.True(t, strings.HasPrefix(last, program+": "), "the bars are cleared and the report follows:\n%q", last)
	// Bars start their lines; the report's lines are indented.
	require.NotRegexp(t, regexp.MustCompile(`(?m)^(compile|upload|repeat|download)\s`), last)
	return last
}

// On a terminal, zyx-tt run draws bars for the upload and the --repeat
// launches, and clears each before the report; a pseudo-terminal that
// reports no size (0x0) is drawn on too.
func TestProgressOnATerminal(t *testing.T) {
	for _, tc := range []struct {
		name string
		size *pty.Winsize
	}{
		{"100x24", &pty.Winsize{Rows: 24, Cols: 100}},
		{"no size", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ptyRun(t, tc.size, nil, "run", testBundle, "--dev", "c", "--set", "n=1048576", "--repeat", "3000")
			require.Regexp(t, regexp.MustCompile(`repeat\s+\[[=>-]+\] \d+ / 3000`), s, "a bar for the --repeat launches")
			last := requireCleared(t, s, "vadd")
			require.Contains(t, last, "repeat    3000 timed runs")
		})
	}
	// A spinner while the kernels build: the emulator's take seconds.
	t.Run("kernel build", func(t *testing.T) {
		env := runtimeEnv(t)
		if env == nil {
			t.Skip("no built zyx-tt-runtime (make runtime): the emulator's kernel build is not drawn")
		}
		env["ZYX_TT_EMU"] = "1"
		s := ptyRun(t, &pty.Winsize{Rows: 24, Cols: 100}, env, "run", "../../examples/vadd", "--dev", "tt-emu", "--set", "n=65536")
		require.Regexp(t, regexp.MustCompile(`compile\s+\S+\s+\d+s`), s, "a spinner while the kernels build")
		requireCleared(t, s, "vadd")
	})
}

// Elsewhere (a pipe, a file, a CI log) nothing is drawn.
func TestNoProgressOffATerminal(t *testing.T) {
	cliEnviron(t, cliEnv{})
	cmd := exec.Command(os.Args[0], "run", testBundle, "--dev", "c", "--set", "n=4096", "--repeat", "10")
	cmd.Env = append(os.Environ(), envCLI+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NotContains(t, string(out), "\x1b[")
}
