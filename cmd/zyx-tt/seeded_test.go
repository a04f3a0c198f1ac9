package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// seededDir holds the seeded-bug bundles: one kernel bug each, with
// expect.txt listing what the error must say (one substring a line: the
// core, the kernel and its file:line where the bug has one, and the rule),
// and optionally args.txt: more `zyx-tt run` flags (e.g. --dprint).
const seededDir = "testdata/seeded"

// TestSeededBugs runs every seeded-bug bundle with `zyx-tt run --dev
// tt-emu` as a child process (the emulator's watcher on, as by default):
// each must exit non-zero, within its share of the test's time, with a
// message that names the core, the kernel, file:line and the rule broken,
// and as a run error of the runtime, not its death.
func TestSeededBugs(t *testing.T) {
	env := runtimeEnv(t)
	if env == nil {
		t.Skip("no zyx-tt-runtime built (make runtime): the seeded bugs are not run")
	}
	env["ZYX_TT_EMU"] = "1"
	env["XDG_CACHE_HOME"] = t.TempDir()
	entries, err := os.ReadDir(seededDir)
	require.NoError(t, err)
	var cases []string
	for _, e := range entries {
		if e.IsDir() {
			cases = append(cases, e.Name())
		}
	}
	require.NotEmpty(t, cases)
	cfgHome := cliEnviron(t, cliEnv{config: "{}", extra: env})
	for i, name := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(seededDir, name)
			raw, err := os.ReadFile(filepath.Join(dir, "expect.txt"))
			require.NoError(t, err)
			// The bound: an equal share of the time the test has left (each
			// case builds its kernels and starts a runtime), at most a minute.
			bound := time.Minute
			if dl, ok := t.Deadline(); ok {
				if share := time.Until(dl) / time.Duration(len(cases)-i+1); share < bound {
					bound = share
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			args := []string{"run", dir, "--dev", "tt-emu"}
			if more, err := os.ReadFile(filepath.Join(dir, "args.txt")); err == nil {
				args = append(args, strings.Fields(string(more))...)
			}
			cmd := exec.CommandContext(ctx, os.Args[0], args...)
			cmd.Env = append(os.Environ(), envCLI+"=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err = cmd.Run()
			took := time.Since(start)
			require.NoError(t, ctx.Err(), "%s did not finish within %v (it hangs)\nstderr:\n%s", name, bound, stderr.String())
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "%s passed silently (exit 0) in %v\nstdout:\n%s", name, took, stdout.String())
			msg := strings.ReplaceAll(stderr.String(), cfgHome, "$CONFIG")
			require.Equal(t, exitFailure, ee.ExitCode(), msg)
			require.NotContains(t, msg, "the runtime exited", "the runtime died instead of reporting the bug")
			for _, want := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				require.Contains(t, msg, want, "%s: the message lacks %q", name, want)
			}
			t.Logf("%s: exit %d after %v", name, ee.ExitCode(), took.Round(time.Millisecond))
		})
	}
}

// TestWatcherSwitchAndWarnings: with a check turned off (ZYX_EMU_WATCHER)
// a seeded bug runs to its end, and what the emulator noticed reaches the
// run's report as a warning: printed by `zyx-tt run` and in its JSON.
func TestWatcherSwitchAndWarnings(t *testing.T) {
	env := runtimeEnv(t)
	if env == nil {
		t.Skip("no zyx-tt-runtime built (make runtime): the watcher's switch is not checked")
	}
	env["ZYX_TT_EMU"] = "1"
	env["XDG_CACHE_HOME"] = t.TempDir()
	env["ZYX_EMU_WATCHER"] = "no-args"
	cenv := cliEnv{config: "{}", extra: env}
	dir := filepath.Join(seededDir, "args_runtime_past_end")
	r := cli(t, cenv, "run", dir, "--dev", "tt-emu")
	require.Equal(t, exitOK, r.code, r.stderr)
	want := "core (0,0) k (riscv_0): get_arg_val(3): index 3 is past the 1 runtime args the host set; it reads 0"
	require.Contains(t, r.stdout, "  warning   "+want)
	rep, r := runJSON(t, cenv, dir, "--dev", "tt-emu")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Len(t, rep.Warnings, 1)
	require.Contains(t, rep.Warnings[0], want)
	// The other checks stay on.
	r = cli(t, cenv, "run", filepath.Join(seededDir, "cb_push_without_reserve"), "--dev", "tt-emu")
	require.Equal(t, exitFailure, r.code)
	require.Contains(t, r.stderr, "watcher check cb")
	// Off: none of them.
	env["ZYX_EMU_WATCHER"] = "off"
	r = cli(t, cliEnv{config: "{}", extra: env}, "run", filepath.Join(seededDir, "cb_push_without_reserve"), "--dev", "tt-emu")
	require.Equal(t, exitOK, r.code, r.stderr)
}
