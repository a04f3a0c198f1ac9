package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/bundle"
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

// TestSeededBugsRuntimeSurvives runs every seeded bug on one emulator
// runtime, in this process, each followed by a good run on the same
// runtime: the bug is a run error with the message expect.txt asks for, and
// the runtime and its device stay usable (the good run verifies against the
// host reference). A runtime that died would fail the good run, or restart
// under a new pid, which the test also rules out.
func TestSeededBugsRuntimeSurvives(t *testing.T) {
	env := emuEnv(t, "the runtime surviving the seeded bugs")
	cliEnviron(t, cliEnv{config: "{}", extra: env})
	ctx := context.Background()
	rt, err := backends.Open(ctx, backends.Options{Backends: []string{"tt"}, KernelOutput: io.Discard})
	require.NoError(t, err)
	defer rt.Close()
	good, err := bundle.Load(filepath.Join("..", "..", "examples", "loopback"))
	require.NoError(t, err)
	var runtimes []int
	goodRun := func(after string) {
		// The runtime's process is the same throughout: a driver that
		// replaced a runtime that died would hide the death.
		defer func() {
			now := runtimeChildren(t)
			require.NotEmpty(t, now, "no runtime process after %s", after)
			if runtimes == nil {
				runtimes = now
			}
			require.Equal(t, runtimes, now, "the runtime process changed after %s", after)
		}()
		run, _, err := good.RunOnce(ctx, rt, bundle.Options{Device: "tt-emu", Set: map[string]string{"n": "4096"}, Verify: true})
		if run != nil {
			defer run.Close()
		}
		require.NoError(t, err, "a good run after %s failed: the runtime did not survive", after)
		require.NotNil(t, run.Report.Verify)
		require.True(t, run.Report.Verify.OK, "a good run after %s computed wrong results", after)
	}
	entries, err := os.ReadDir(seededDir)
	require.NoError(t, err)
	n := 0
	var slowest time.Duration
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		dir := filepath.Join(seededDir, e.Name())
		raw, err := os.ReadFile(filepath.Join(dir, "expect.txt"))
		require.NoError(t, err)
		b, err := bundle.Load(dir)
		require.NoError(t, err)
		// Twice: the first run builds the kernels; the second, with them
		// loaded, must fail within a second of its start (the bound
		// for the bug to be reported, deadlocks included).
		for try := range 2 {
			start := time.Now()
			run, _, err := b.RunOnce(ctx, rt, bundle.Options{Device: "tt-emu"})
			took := time.Since(start)
			if run != nil {
				run.Close()
			}
			require.Error(t, err, "%s passed silently", e.Name())
			require.NotErrorIs(t, err, driver.ErrDeviceLost, "%s took the runtime down", e.Name())
			for _, want := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				require.Contains(t, err.Error(), want, "%s: the error lacks %q", e.Name(), want)
			}
			if try == 1 && !strings.Contains(err.Error(), "compile_error") {
				require.Less(t, took, time.Second, "%s took %v to be reported", e.Name(), took)
				slowest = max(slowest, took)
			}
			goodRun(e.Name())
		}
	}
	t.Logf("the slowest report of a bug with its kernels built: %v", slowest.Round(time.Millisecond))
	require.GreaterOrEqual(t, n, 40, "the seeded-bug suite has fewer than 40 bundles")
}

// runtimeChildren lists the pids of this process's zyx-tt-runtime children.
func runtimeChildren(t *testing.T) []int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	require.NoError(t, err)
	var pids []int
	for _, f := range tasks {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		for _, field := range strings.Fields(string(raw)) {
			pid, err := strconv.Atoi(field)
			require.NoError(t, err)
			comm, err := os.ReadFile("/proc/" + field + "/comm")
			if err == nil && strings.TrimSpace(string(comm)) == "zyx-tt-runtime" {
				pids = append(pids, pid)
			}
		}
	}
	slices.Sort(pids)
	return pids
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
	// Each check's own switch lets its bug run to the end (on the emulator
	// the data lands as the kernel asked).
	for _, tc := range []struct{ off, bundle string }{
		{"no-cb", "cb_noc_read_past_reserved"},
		{"no-cb", "cb_noc_write_past_waited"},
		{"no-race", "noc_dram_write_race"},
		{"no-noc", "noc_write_past_buffer"},
		{"no-cb", "cb_noc_read_outside_reserved"},
		{"no-stack", "stack_past_card"},
		{"no-cb-access", "cb_store_past_reserved"},
		{"no-cb", "cb_load_before_wait"},
	} {
		env["ZYX_EMU_WATCHER"] = tc.off
		r = cli(t, cliEnv{config: "{}", extra: env}, "run", filepath.Join(seededDir, tc.bundle), "--dev", "tt-emu")
		require.Equal(t, exitOK, r.code, "%s with %s: %s", tc.bundle, tc.off, r.stderr)
	}
	// and only its own: the race check works without the noc check.
	env["ZYX_EMU_WATCHER"] = "no-noc"
	r = cli(t, cliEnv{config: "{}", extra: env}, "run", filepath.Join(seededDir, "noc_dram_write_race"), "--dev", "tt-emu")
	require.Equal(t, exitFailure, r.code)
	require.Contains(t, r.stderr, "watcher check race")
}

// TestStrictNocFlag: `zyx-tt run --strict-noc` turns strict NOC mode on
// for a kernel that does not ask for it itself; without the flag, or with
// the watcher off, the same kernel runs to its end.
func TestStrictNocFlag(t *testing.T) {
	env := runtimeEnv(t)
	if env == nil {
		t.Skip("no zyx-tt-runtime built (make runtime): --strict-noc is not checked")
	}
	env["ZYX_TT_EMU"] = "1"
	env["XDG_CACHE_HOME"] = t.TempDir()
	// The seeded bundle without its kernel's ZYX_EMU_STRICT_NOC define.
	src := filepath.Join(seededDir, "strict_noc_push_before_barrier")
	dir := t.TempDir()
	for _, name := range []string{"manifest.json", "k.cpp"} {
		raw, err := os.ReadFile(filepath.Join(src, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), raw, 0o644))
	}
	raw, err := os.ReadFile(filepath.Join(src, "tt.json"))
	require.NoError(t, err)
	var tt map[string]any
	require.NoError(t, json.Unmarshal(raw, &tt))
	delete(tt["kernels"].([]any)[0].(map[string]any), "defines")
	raw, err = json.Marshal(tt)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tt.json"), raw, 0o644))

	cenv := cliEnv{config: "{}", extra: env}
	r := cli(t, cenv, "run", dir, "--dev", "tt-emu")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = cli(t, cenv, "run", dir, "--dev", "tt-emu", "--strict-noc")
	require.Equal(t, exitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, "core (0,0) k (riscv_0) at k.cpp:7: cb_push_back(0, 1): the pages")
	require.Contains(t, r.stderr, "watcher strict NOC mode")
	env["ZYX_EMU_WATCHER"] = "off"
	r = cli(t, cliEnv{config: "{}", extra: env}, "run", dir, "--dev", "tt-emu", "--strict-noc")
	require.Equal(t, exitOK, r.code, r.stderr)
}

func TestStrictNocWatcher(t *testing.T) {
	for cur, want := range map[string]string{
		"":        "ZYX_EMU_WATCHER=strict-noc",
		"on":      "ZYX_EMU_WATCHER=strict-noc",
		"off":     "ZYX_EMU_WATCHER=off",
		"no-race": "ZYX_EMU_WATCHER=no-race,strict-noc",
	} {
		require.Equal(t, want, strictNocWatcher(cur), cur)
	}
}

// debugBundle is the bundle of the gdb recipe in docs/emulator.md
// ("Stepping through a kernel with gdb"): sum.cpp sums 1 to 5 on one core.
const debugBundle = "testdata/debug_recipe"

// TestDebugRecipe replays the recipe of docs/emulator.md with gdb in batch
// mode: `zyx-tt run --debug` prints the runtime's pid and waits; gdb
// attaches, breaks at a line of the kernel, prints its locals and
// continues; the run then ends normally.
func TestDebugRecipe(t *testing.T) {
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		t.Skip("gdb is not installed (make deps installs it): the gdb recipe is not replayed")
	}
	env := emuEnv(t, "the gdb recipe")
	cliEnviron(t, cliEnv{config: "{}", extra: env})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "run", debugBundle, "--dev", "tt-emu", "--debug", "--dprint")
	cmd.Env = append(os.Environ(), envCLI+"=1")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	errPipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill() }()
	// The hint names the pid; read stderr up to it, then keep the rest.
	lines := bufio.NewScanner(errPipe)
	var before []string
	pid := ""
	for pid == "" && lines.Scan() {
		before = append(before, lines.Text())
		if m := regexp.MustCompile(`gdb -p (\d+) `).FindStringSubmatch(lines.Text()); m != nil {
			pid = m[1]
		}
	}
	require.NotEmpty(t, pid, "zyx-tt run --debug printed no gdb command line:\n%s", strings.Join(before, "\n"))
	rest := make(chan string)
	go func() {
		var b strings.Builder
		for lines.Scan() {
			b.WriteString(lines.Text() + "\n")
		}
		rest <- b.String()
	}()
	// The printed command line, with the breakpoint filled in and gdb's
	// batch mode: stop at line 7, print the locals, continue to the end.
	var hint string
	for _, l := range before {
		if i := strings.Index(l, "gdb -p "); i >= 0 {
			hint = l[i:]
		}
	}
	absBundle, err := filepath.Abs(debugBundle)
	require.NoError(t, err)
	require.Equal(t, "gdb -p "+pid+" -ex 'set breakpoint pending on' -ex 'directory "+absBundle+"' -ex 'break NAME.cpp:LINE' -ex continue", hint)
	g := exec.CommandContext(ctx, gdb, "-batch", "-nx", "-p", pid,
		"-ex", "set breakpoint pending on", "-ex", "directory "+absBundle, "-ex", "break sum.cpp:7", "-ex", "continue",
		"-ex", "print sum", "-ex", "print n", "-ex", "continue")
	out, err := g.CombinedOutput()
	require.NoError(t, err, "gdb:\n%s", out)
	text := string(out)
	t.Logf("zyx-tt run --debug:\n%s\ngdb:\n%s", strings.Join(before, "\n"), text)
	require.Regexp(t, `Breakpoint 1, kernel_main \(\) at \S*sum\.cpp:7`, text, "gdb did not stop at the kernel's line:\n%s", text)
	require.Contains(t, text, `DPRINT << "sum " << sum << ENDL();`, "gdb did not show the kernel's source line:\n%s", text)
	require.Contains(t, text, "$1 = 15", "gdb did not print the local sum:\n%s", text)
	require.Contains(t, text, "$2 = 5", "gdb did not print the local n:\n%s", text)
	after := <-rest // all of stderr: read before Wait
	require.NoError(t, cmd.Wait(), "zyx-tt run --debug failed after gdb continued:\n%s", after)
	require.Contains(t, after, "core (0,0) riscv_0: sum 15")
}

// TestDebugElsewhereWarns: --debug on a device that cannot stop in a
// kernel runs as usual and says that it did not debug anything.
func TestDebugElsewhereWarns(t *testing.T) {
	r := cli(t, cliEnv{}, "run", testBundle, "--dev", "c", "--debug")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stderr, "warning: --debug: no device of this run can stop in a kernel (only the emulator, tt-emu, can)")
	require.NotContains(t, r.stderr, "gdb -p")
}
