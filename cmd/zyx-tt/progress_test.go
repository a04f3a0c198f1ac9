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

// On a terminal, zyx-tt run draws a spinner while the kernel builds and
// bars for the upload and the --repeat launches, and clears each before
// the report. A pseudo-terminal that reports no size (0x0) draws too.
func TestProgressOnATerminal(t *testing.T) {
	for _, tc := range []struct {
		name string
		size *pty.Winsize
	}{
		{"100x24", &pty.Winsize{Rows: 24, Cols: 100}},
		{"no size", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A cache of its own: the kernel is built, not found built.
			cliEnviron(t, cliEnv{extra: map[string]string{"XDG_CACHE_HOME": t.TempDir()}})
			cmd := exec.Command(os.Args[0], "run", testBundle, "--dev", "c", "--set", "n=1048576", "--repeat", "1000")
			cmd.Env = append(os.Environ(), envCLI+"=1")
			var f *os.File
			var err error
			if tc.size != nil {
				f, err = pty.StartWithSize(cmd, tc.size)
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
			s := out.String()

			require.Regexp(t, regexp.MustCompile(`compile\s+\S+\s+\d+s`), s, "a spinner while the kernel builds")
			require.Regexp(t, regexp.MustCompile(`repeat\s+\[[=>-]+\] \d+ / 1000`), s, "a bar for the --repeat launches")
			const clear = "\x1b[J"
			require.Contains(t, s, clear, "bars are redrawn in place")
			last := s[strings.LastIndex(s, clear)+len(clear):]
			require.True(t, strings.HasPrefix(last, "vadd: "), "the bars are cleared and the report follows:\n%q", last)
			// Bars start their lines; the report's lines are indented.
			require.NotRegexp(t, regexp.MustCompile(`(?m)^(compile|upload|repeat|download)\s`), last)
			require.Contains(t, last, "repeat    1000 timed runs")
		})
	}
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
