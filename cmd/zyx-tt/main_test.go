package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// envCLI makes the test binary act as zyx-tt (a helper process), for the
// tests that need a process of its own: one that is signalled or killed,
// or whose leftovers are checked after it exits.
const envCLI = "ZYXTT_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(envCLI) == "1" {
		os.Exit(mainWithSignals())
	}
	os.Exit(m.Run())
}

// cliResult is one zyx-tt invocation.
type cliResult struct {
	stdout, stderr string
	code           int
}

// cliEnv is the environment of a test invocation: a private config dir
// (with the dummy backend enabled unless cfg says otherwise), no
// Tenstorrent runtime, an empty sysfs, no progress bars.
type cliEnv struct {
	config string            // config.json contents; "" means dummy enabled
	sysfs  string            // ZYX_SYSFS_ROOT; "" means an empty tree
	extra  map[string]string // more variables
}

// cli runs zyx-tt in this process: every command opens a runtime of its
// own, which reads the config, the sysfs root and the runtime path from the
// environment as it opens, so a test's environment is all it needs.
func cli(t *testing.T, env cliEnv, args ...string) cliResult {
	t.Helper()
	cfgHome := cliEnviron(t, env)
	var stdout, stderr bytes.Buffer
	code := zyxMain(context.Background(), args, &stdout, &stderr)
	return cleanResult(cliResult{stdout.String(), stderr.String(), code}, cfgHome)
}

// cliProcess runs zyx-tt as a child process of this test binary.
func cliProcess(t *testing.T, env cliEnv, args ...string) cliResult {
	t.Helper()
	cfgHome := cliEnviron(t, env)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envCLI+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return cleanResult(cliResult{stdout.String(), stderr.String(), code}, cfgHome)
}

// cliEnviron sets the test's environment: a private config dir (with the
// dummy backend enabled unless env says otherwise), no Tenstorrent runtime,
// an empty sysfs tree. It returns the config dir.
func cliEnviron(t *testing.T, env cliEnv) string {
	t.Helper()
	cfgHome := t.TempDir()
	cfg := env.config
	if cfg == "" {
		cfg = `{"dummy": {"enabled": true, "memory": 67108864}}`
	}
	require.NoError(t, os.MkdirAll(filepath.Join(cfgHome, "zyx"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cfgHome, "zyx", "config.json"), []byte(cfg), 0o644))
	sysfs := env.sysfs
	if sysfs == "" {
		sysfs = t.TempDir()
	}
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	t.Setenv("ZYX_SYSFS_ROOT", sysfs)
	t.Setenv("ZYX_TT_RUNTIME", "/nonexistent/zyx-tt-runtime")
	t.Setenv("ZYX_PERF_RECORD", perfRecordOf(t))
	for k, v := range env.extra {
		t.Setenv(k, v)
	}
	return cfgHome
}

// perfRecords is each test's performance record: one per test, shared by
// its invocations (a --dev fastest run, then --dev auto).
var perfRecords sync.Map

func perfRecordOf(t *testing.T) string {
	if p, ok := perfRecords.Load(t); ok {
		return p.(string)
	}
	p := filepath.Join(t.TempDir(), "perf.json")
	perfRecords.Store(t, p)
	t.Cleanup(func() { perfRecords.Delete(t) })
	return p
}

// cleanResult turns the paths that depend on this checkout and this run
// into placeholders.
func cleanResult(res cliResult, cfgHome string) cliResult {
	root, _ := filepath.Abs("../..")
	for _, s := range []*string{&res.stdout, &res.stderr} {
		*s = strings.ReplaceAll(*s, cfgHome, "$CONFIG")
		*s = strings.ReplaceAll(*s, root, "$ROOT")
	}
	return res
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), got, "golden %s differs; run go test -update after checking the change", path)
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stream string // which stream must contain substr
		substr string
	}{
		{nil, exitUsage, "stderr", "Usage:"},
		{[]string{"help"}, exitOK, "stdout", "zyx-tt <command>"},
		{[]string{"help", "run"}, exitOK, "stdout", "--verify"},
		{[]string{"bogus"}, exitUsage, "stderr", `unknown command "bogus"`},
		{[]string{"prbe"}, exitUsage, "stderr", `unknown command "prbe" (did you mean probe?)`},
		{[]string{"help", "rnu"}, exitUsage, "stderr", `unknown command "rnu" (did you mean run?)`},
		{[]string{"probe", "--nope"}, exitUsage, "stderr", "unknown flag --nope"},
		{[]string{"probe", "--jsno"}, exitUsage, "stderr", "unknown flag --jsno (did you mean --json?)"},
		{[]string{"run", "testdata/bundles/vadd", "--devv", "c"}, exitUsage, "stderr", "unknown flag --devv (did you mean --dev?)"},
		{[]string{"run", "testdata/bundles/vadd", "--repeat", "x"}, exitUsage, "stderr", `invalid value "x" for flag --repeat`},
		{[]string{"run", "testdata/bundles/vadd", "--dev"}, exitUsage, "stderr", "flag --dev needs a value"},
		{[]string{"run", "testdata/bundles/vadd", "--dev", "tpu"}, exitUsage, "stderr", "--dev tpu: unknown device; give one of auto, fastest, c, cblas, cuda, dummy"},
		{[]string{"run", "testdata/bundles/vadd", "--dev", "tt-emy:0"}, exitUsage, "stderr", "--dev tt-emy:0: unknown device (did you mean tt-emu?)"},
		{[]string{"run", "testdata/bundles/vadd", "--dev", "auto:1"}, exitUsage, "stderr", "--dev auto:1: unknown device"},
		{[]string{"run", "testdata/bundles/vadd", "--verify=cuad"}, exitUsage, "stderr", "--verify cuad: unknown device (did you mean cuda?)"},
		{[]string{"version", "x"}, exitUsage, "stderr", `unexpected argument "x"`},
		{[]string{"completion"}, exitUsage, "stderr", "want one shell"},
		{[]string{"completion", "bsh"}, exitUsage, "stderr", `unknown shell "bsh" (did you mean bash?)`},
		{[]string{"runtime"}, exitUsage, "stderr", "want install or where"},
		{[]string{"runtime", "instal"}, exitUsage, "stderr", `unknown runtime command "instal" (did you mean install?)`},
		{[]string{"runtime", "install", "-j", "0"}, exitUsage, "stderr", "-j 0: must be 1 or more"},
		{[]string{"probe", "extra"}, exitUsage, "stderr", `unexpected argument "extra"`},
		{[]string{"probe", "--backends", "c,warp"}, exitUsage, "stderr", `unknown backend "warp"`},
		{[]string{"run"}, exitUsage, "stderr", "want exactly one BUNDLE"},
		{[]string{"run", "a", "b"}, exitUsage, "stderr", "want exactly one BUNDLE"},
		{[]string{"run", "-h"}, exitOK, "stdout", "usage: zyx-tt run"},
		{[]string{"run", "testdata/bundles/vadd", "--repeat", "-1"}, exitUsage, "stderr", "--repeat -1"},
		{[]string{"run", "testdata/bundles/vadd", "--set", "n"}, exitUsage, "stderr", `--set "n": want NAME=VALUE`},
		{[]string{"run", "testdata/bundles/vadd", "--set", "q=1"}, exitUsage, "stderr", `has no var "q"`},
		{[]string{"run", "testdata/bundles/vadd", "--set", "n=-5"}, exitUsage, "stderr", `var n: "-5" is not a u32`},
		{[]string{"run", "testdata/bundles/vadd", "--in", "w=random"}, exitUsage, "stderr", `no buffer param "w"`},
		{[]string{"run", "testdata/bundles/vadd", "--in", "n=random"}, exitUsage, "stderr", `no buffer param "n"`},
		{[]string{"run", "testdata/bundles/vadd", "--in", "x=gauss"}, exitUsage, "stderr", `--in x=gauss`},
		{[]string{"run", "testdata/bundles/vadd", "--out", "z=out.txt"}, exitUsage, "stderr", "want a .npy or .bin file"},
		{[]string{"run", "testdata/bundles/vadd", "--out", "q=out.npy"}, exitUsage, "stderr", `no buffer param "q"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := cli(t, cliEnv{}, tc.args...)
			require.Equal(t, tc.code, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			out := r.stderr
			if tc.stream == "stdout" {
				out = r.stdout
			}
			require.Contains(t, out, tc.substr)
			if tc.code == exitUsage && len(tc.args) > 0 { // bare zyx-tt prints the usage, as go does
				// The message comes first, on one line, then where help is.
				lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
				require.Len(t, lines, 2, r.stderr)
				require.Contains(t, lines[0], tc.substr)
				require.True(t, strings.HasPrefix(lines[1], "Run 'zyx-tt help"), r.stderr)
				require.Empty(t, r.stdout, "a usage error prints no usage text")
			}
		})
	}
	t.Run("help is printed once", func(t *testing.T) {
		for _, cmd := range []string{"run", "probe"} {
			r := cli(t, cliEnv{}, cmd, "-h")
			require.Equal(t, 1, strings.Count(r.stdout, "usage: zyx-tt "+cmd), r.stdout)
		}
	})
}

// probeFixtures are the Tenstorrent engineer's sysfs trees.
func probeFixtures(t *testing.T) []string {
	entries, err := os.ReadDir("../../tt/testdata/sysfs")
	if err != nil {
		t.Skipf("tt sysfs fixtures not present: %v", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	require.NotEmpty(t, out)
	return out
}

func TestProbeGolden(t *testing.T) {
	for _, fx := range probeFixtures(t) {
		t.Run(fx, func(t *testing.T) {
			root, err := filepath.Abs(filepath.Join("../../tt/testdata/sysfs", fx))
			require.NoError(t, err)
			r := cli(t, cliEnv{sysfs: root}, "probe", "--backends", "tt,dummy")
			require.Equal(t, exitOK, r.code, r.stderr)
			require.Empty(t, r.stderr)
			golden(t, "probe_"+fx+".golden", r.stdout)

			r = cli(t, cliEnv{sysfs: root}, "probe", "--json", "--backends", "tt,dummy")
			require.Equal(t, exitOK, r.code, r.stderr)
			var rep probeReport
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
			require.Len(t, rep.Backends, 2)
			require.Equal(t, "dummy", rep.Backends[0].Name)
			require.Equal(t, "tt", rep.Backends[1].Name)
			require.Len(t, rep.Backends[0].Devices, 1)
			require.True(t, rep.Config.Loaded)
			golden(t, "probe_"+fx+".json.golden", r.stdout)
		})
	}
}

func TestProbeAll(t *testing.T) {
	// Every registered backend appears, with devices or a reason.
	r := cli(t, cliEnv{}, "probe", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var rep probeReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	names := map[string]bool{}
	for _, b := range rep.Backends {
		names[b.Name] = true
		if len(b.Devices) == 0 {
			require.NotEmpty(t, b.Reason, b.Name)
		}
		for _, d := range b.Devices {
			require.NotEmpty(t, d.Name)
			require.NotNil(t, d.Info)
			require.NotEmpty(t, d.Info.Name)
		}
	}
	for _, n := range []string{"c", "cblas", "cuda", "dummy", "opencl", "tt", "vulkan"} {
		require.True(t, names[n], "backend %s missing from probe", n)
	}
	require.Contains(t, cli(t, cliEnv{}, "probe").stdout, "dummy: 1 device")
}

func TestSecondSignalExitsAtOnce(t *testing.T) {
	cancelled := make(chan struct{})
	exited := make(chan struct{})
	stop := onSignals(func() { close(cancelled) }, func() { close(exited) })
	defer stop()
	self, err := os.FindProcess(os.Getpid())
	require.NoError(t, err)
	require.NoError(t, self.Signal(os.Interrupt))
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the first signal did not cancel")
	}
	select {
	case <-exited:
		t.Fatal("the first signal must not exit")
	case <-time.After(50 * time.Millisecond):
	}
	require.NoError(t, self.Signal(syscall.SIGTERM))
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the second signal did not exit")
	}
}

// probe -L prints one line a device, as nvidia-smi -L does.
func TestProbeList(t *testing.T) {
	root, err := filepath.Abs("../../tt/testdata/sysfs/n300")
	require.NoError(t, err)
	r := cli(t, cliEnv{sysfs: root}, "probe", "-L", "--backends", "dummy,c")
	require.Equal(t, exitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	var rep probeReport
	j := cli(t, cliEnv{sysfs: root}, "probe", "--json", "--backends", "dummy,c")
	require.NoError(t, json.Unmarshal([]byte(j.stdout), &rep))
	n := 0
	for _, b := range rep.Backends {
		for _, d := range b.Devices {
			require.Regexp(t, `^`+regexpQuote(d.Name)+`: .+ \(.*pool `+regexpQuote(d.Pool)+`\)$`, lines[n])
			n++
		}
	}
	require.Len(t, lines, n, r.stdout)
	require.Contains(t, r.stdout, "dummy: ")
	require.Equal(t, r.stdout, cli(t, cliEnv{sysfs: root}, "probe", "--list", "--backends", "dummy,c").stdout)
}

func regexpQuote(s string) string { return regexp.QuoteMeta(s) }

// Every JSON document the command prints carries schema_version.
func TestSchemaVersionInEveryJSON(t *testing.T) {
	for _, args := range [][]string{
		{"probe", "--json", "--backends", "dummy"},
		{"probe", "--perf", "--json"},
		{"version", "--json"},
		{"run", "--json", testBundle, "--dev", "c", "--set", "n=100"},
	} {
		r := cli(t, cliEnv{}, args...)
		require.Equal(t, exitOK, r.code, "%v: %s", args, r.stderr)
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), "%v", args)
		require.EqualValues(t, 1, doc["schema_version"], "%v", args)
	}
}
