package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"codeberg.org/sbinet/npyio"
	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/bundle"
	"github.com/zyxtt/zyxtt/internal/rtbin"
	"github.com/zyxtt/zyxtt/internal/testfiles"
)

const testBundle = "testdata/bundles/vadd"

func runJSON(t *testing.T, env cliEnv, args ...string) (bundle.Report, cliResult) {
	t.Helper()
	r := cli(t, env, append([]string{"run", "--json"}, args...)...)
	var rep bundle.Report
	if r.code == exitOK || r.code == exitMismatch {
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	return rep, r
}

// verifyMismatch runs dir on c with --verify, which must fail (exit status
// 3, the report not OK), and gives the first output's verdict.
func verifyMismatch(t *testing.T, dir string) (bundle.OutputVerdict, cliResult) {
	t.Helper()
	rep, r := runJSON(t, cliEnv{}, dir, "--dev", "c", "--verify")
	require.Equal(t, exitMismatch, r.code, r.stderr)
	require.False(t, rep.Verify.OK)
	require.NotEmpty(t, rep.Verify.Outputs)
	return rep.Verify.Outputs[0], r
}

// --queue times the --repeat launches synchronously and queued, and the
// outputs still verify after them.
func TestRunQueue(t *testing.T) {
	rep, r := runJSON(t, cliEnv{}, testBundle, "--dev", "c", "--verify", "--repeat", "20", "--queue", "--set", "n=1000")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NotNil(t, rep.Queue)
	require.Equal(t, 20, rep.Queue.Launches)
	require.Positive(t, rep.Queue.SyncNS)
	require.Positive(t, rep.Queue.QueuedNS)
	require.True(t, rep.Verify.OK)
	r = cli(t, cliEnv{}, "run", testBundle, "--dev", "c", "--repeat", "5", "--queue")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Regexp(t, `queue     5 launches: synchronous .* each, queued .* each \(\d+\.\d\dx\)`, r.stdout)
	bad := cli(t, cliEnv{}, "run", testBundle, "--queue")
	require.Equal(t, exitUsage, bad.code)
	require.Contains(t, bad.stderr, "give --repeat N too")
}

// A bundle without a host reference verifies against its C variant, so
// --verify of a run on c itself is refused (it would compare c with c);
// asked for by name (--verify=c) it runs, as a determinism check.
func TestVerifyRefusesTheRunsOwnDevice(t *testing.T) {
	r := cli(t, cliEnv{}, "run", "../../examples/bcast_rows", "--dev", "c", "--verify")
	require.Equal(t, exitFailure, r.code, r.stdout)
	require.Contains(t, r.stderr, "has no reference, and no reference device can check the run on c (c is the device the run used; tt-emu: ")
	r = cli(t, cliEnv{}, "run", "../../examples/bcast_rows", "--dev", "c", "--verify=c")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "against c")

	// With the emulator present, a run on c is checked against it.
	env := runtimeEnv(t)
	if env == nil {
		t.Skip("no built zyx-tt-runtime (make runtime): the fallback to tt-emu is not checked")
	}
	r = cli(t, cliEnv{extra: env}, "run", "../../examples/bcast_rows", "--dev", "c", "--verify")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "against tt-emu:0")
}

func TestRunOnC(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "z.npy")
	rep, r := runJSON(t, cliEnv{}, testBundle, "--dev", "c", "--verify", "--repeat", "3", "--set", "n=1000", "--out", "z="+out)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "c", rep.Device.Name)
	require.Equal(t, []uint64{16}, rep.Grid) // ceil_div(1000, 64)
	require.Equal(t, "host", rep.Verify.Against)
	require.True(t, rep.Verify.OK)
	require.Equal(t, 1000, rep.Verify.Outputs[0].Elems)
	require.Equal(t, 3, rep.Repeat.Runs)
	require.LessOrEqual(t, rep.Repeat.MinNS, rep.Repeat.MedianNS)
	require.LessOrEqual(t, rep.Repeat.MedianNS, rep.Repeat.MaxNS)
	// The c device computes on the host pool: it reads x and y where they
	// are, z gets one copy of its own, and there is nothing to download.
	require.Equal(t, int64(4000), rep.Timing.UpBytes)
	require.Zero(t, rep.Timing.DownBytes)
	require.Equal(t, []bundle.WrittenReport{{Param: "z", Path: out}}, rep.Written)

	// The output file holds x + y = i + 0.5 with the param's shape.
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	rd, err := npyio.NewReader(f)
	require.NoError(t, err)
	require.Equal(t, []int{1000}, rd.Header.Descr.Shape)
	var z []float32
	require.NoError(t, rd.Read(&z))
	require.Len(t, z, 1000)
	for i, v := range z {
		require.Equal(t, float32(i)+0.5, v)
	}

	// The text report says the same things.
	r = cli(t, cliEnv{}, "run", testBundle, "--dev", "c", "--verify")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "device    c (")
	require.Contains(t, r.stdout, "verify    z against the float64 host reference")
	require.Contains(t, r.stdout, ": ok\n")
	require.Empty(t, r.stderr, "no progress bars or logs off a terminal")
}

func TestRunInputsFromFiles(t *testing.T) {
	dir := t.TempDir()
	n := 256
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(2 * i)
	}
	xpath := filepath.Join(dir, "x.npy")
	f, err := os.Create(xpath)
	require.NoError(t, err)
	require.NoError(t, npyio.Write(f, x))
	require.NoError(t, f.Close())
	ybin := make([]byte, 4*n)
	require.NoError(t, bundle.Fill(ybin, backends.F32, bundle.Gen{Kind: bundle.GenConst, Value: 1}, 0))
	ypath := filepath.Join(dir, "y.bin")
	require.NoError(t, os.WriteFile(ypath, ybin, 0o644))
	zpath := filepath.Join(dir, "z.bin")

	rep, r := runJSON(t, cliEnv{}, testBundle, "--dev", "c", "--set", fmt.Sprintf("n=%d", n),
		"--in", "x="+xpath, "--in", "y="+ypath, "--out", "z="+zpath, "--verify")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.True(t, rep.Verify.OK)
	require.Equal(t, xpath, rep.Params[0].Input)
	got, err := os.ReadFile(zpath)
	require.NoError(t, err)
	z, err := bundle.ToFloat64(backends.F32, got)
	require.NoError(t, err)
	for i, v := range z {
		require.Equal(t, float64(2*i+1), v)
	}
}

func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	i32 := filepath.Join(dir, "i32.npy")
	f, err := os.Create(i32)
	require.NoError(t, err)
	require.NoError(t, npyio.Write(f, make([]int32, 4096)))
	require.NoError(t, f.Close())
	short := filepath.Join(dir, "short.bin")
	require.NoError(t, os.WriteFile(short, make([]byte, 100), 0o644))
	badManifest := filepath.Join(dir, "bad")
	require.NoError(t, os.MkdirAll(badManifest, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(badManifest, "manifest.json"),
		[]byte(`{"name": "bad", "params": [{"name": "x", "kind": "global", "dtype": "f33", "shape": [4]}]}`), 0o644))
	readonly := filepath.Join(dir, "ro")
	require.NoError(t, os.MkdirAll(readonly, 0o555))
	existing := filepath.Join(dir, "keep.npy")
	require.NoError(t, os.WriteFile(existing, []byte("previous contents"), 0o644))

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		substr string
	}{
		{"missing bundle", []string{filepath.Join(dir, "nope")}, exitFailure, "no such file or directory"},
		{"malformed manifest", []string{badManifest}, exitFailure, filepath.Join(badManifest, "manifest.json") + `: params[0].dtype: unknown dtype "f33"`},
		{"missing input file", []string{testBundle, "--in", "x=" + filepath.Join(dir, "absent.npy")}, exitFailure, "input x: open " + filepath.Join(dir, "absent.npy") + ": no such file"},
		{"wrong input size", []string{testBundle, "--in", "y=" + short}, exitFailure, "input y: invalid argument: " + short + " has 100 bytes, the param needs 16384"},
		{"wrong input dtype", []string{testBundle, "--in", "x=" + i32}, exitFailure, "holds <i4 elements, the param is f32"},
		{"unwritable output dir", []string{testBundle, "--out", "z=" + filepath.Join(dir, "no", "such", "dir", "z.npy")}, exitFailure, "--out z: cannot write"},
		{"no device", []string{testBundle, "--dev", "vulkan:7"}, exitFailure, "vulkan:7"},
		{"no emulator", []string{testBundle, "--dev", "tt-emu"}, exitFailure, "the tt backend has no emulator device"},
		{"zero elements", []string{testBundle, "--set", "n=0"}, exitFailure, "param x has no elements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cli(t, cliEnv{}, append([]string{"run", "--dev", "c"}, tc.args...)...)
			require.Equal(t, tc.code, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			require.Contains(t, r.stderr, tc.substr)
		})
	}
	if os.Geteuid() != 0 { // root writes anywhere
		r := cli(t, cliEnv{}, "run", testBundle, "--dev", "c", "--out", "z="+filepath.Join(readonly, "z.npy"))
		require.Equal(t, exitFailure, r.code, r.stderr)
		require.Contains(t, r.stderr, "permission denied")
	}

	// A run that fails leaves an existing output untouched and no temp files.
	r := cli(t, cliEnv{}, "run", testBundle, "--dev", "c", "--in", "x="+i32, "--out", "z="+existing)
	require.Equal(t, exitFailure, r.code)
	data, err := os.ReadFile(existing)
	require.NoError(t, err)
	require.Equal(t, "previous contents", string(data))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.NotContains(t, e.Name(), ".tmp", "temp file left behind")
	}
}

func TestRunVerifyMismatch(t *testing.T) {
	// The kernel subtracts where the reference adds: exit status 3, and the
	// report names the worst element.
	o, r := verifyMismatch(t, "testdata/bundles/wrong")
	require.Equal(t, int64(4096), o.Mismatches)
	require.InDelta(t, 1.0, float64(o.MaxAbs), 1e-9) // (x-0.5) - (x+0.5)
	require.Contains(t, r.stderr, "verification failed against host: z: 4096 of 4096 elements out of tolerance")

	// The dummy device computes nothing: against the reference it fails,
	// against itself it matches.
	_, r = runJSON(t, cliEnv{}, testBundle, "--dev", "dummy", "--verify")
	require.Equal(t, exitMismatch, r.code, r.stderr)
	rep, r := runJSON(t, cliEnv{}, testBundle, "--dev", "dummy", "--verify=dummy")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "dummy", rep.Verify.Against)

	// Verification on the C backend as the reference device.
	rep, r = runJSON(t, cliEnv{}, "testdata/bundles/wrong", "--dev", "c", "--verify=c")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "c", rep.Verify.Against)
}

func TestRunAutoSkips(t *testing.T) {
	// The test bundle has only a C variant: auto passes over every other
	// device and says why.
	rep, r := runJSON(t, cliEnv{}, testBundle, "--dev", "auto")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "c", rep.Device.Name)
	// Every other backend was passed over, ahead of the chosen device, with
	// a reason: its devices lack a variant, or it has no devices.
	for _, be := range []string{"cblas", "cuda", "opencl", "tt", "vulkan"} {
		found := false
		for _, s := range rep.Skipped {
			if s.Device != be && !strings.HasPrefix(s.Device, be+":") {
				continue
			}
			found = true
			require.NotEmpty(t, s.Reason)
			if s.Device != be || strings.HasPrefix(s.Reason, "no variant") {
				require.Equal(t, "no variant for "+be, s.Reason, s.Device)
			}
		}
		require.True(t, found, "backend %s not in the skip list %v", be, rep.Skipped)
	}
}

// TestExamplesOnEveryDevice runs each example bundle on every device this
// machine has, verified against the float64 host reference.
func TestExamplesOnEveryDevice(t *testing.T) {
	r := cli(t, cliEnv{config: "{}", extra: runtimeEnv(t)}, "probe", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var probe probeReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &probe))
	// Smaller than the defaults, and whole tiles for Tenstorrent variants.
	small := map[string][]string{
		"vadd":   {"--set", "n=8192"},
		"unary":  {"--set", "n=8192"},
		"matmul": {"--set", "m=64", "--set", "n=96", "--set", "k=64"},
	}
	entries, err := os.ReadDir(filepath.Join("..", "..", "examples"))
	require.NoError(t, err)
	var examples []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join("..", "..", "examples", e.Name(), bundle.ManifestFile)); err == nil {
			examples = append(examples, e.Name())
		}
	}
	require.Subset(t, examples, []string{"vadd", "unary", "matmul"})
	for _, ex := range examples {
		dir := filepath.Join("..", "..", "examples", ex)
		b, err := bundle.Load(dir)
		for _, pb := range probe.Backends {
			if len(pb.Devices) == 0 {
				t.Run(ex+"/"+pb.Name, func(t *testing.T) { t.Skipf("backend %s has no device here: %s", pb.Name, oneLine(pb.Reason)) })
				continue
			}
			for _, d := range pb.Devices {
				t.Run(ex+"/"+d.Name, func(t *testing.T) {
					if err != nil {
						t.Fatalf("example %s does not load: %v", ex, err)
					}
					if !slices.ContainsFunc(b.Formats(), func(f backends.Format) bool { return slices.Contains(d.Info.Formats, f) }) {
						t.Skipf("example %s has no variant for %s yet", ex, d.Backend)
					}
					// Without a host reference the C variant is the reference,
					// which cannot check a run on c itself.
					verify := b.Ref != nil || (slices.Contains(b.Formats(), backends.FormatC) && d.Backend != "c")
					args := append([]string{dir, "--dev", d.Name}, small[ex]...)
					if verify {
						args = append(args, "--verify")
					}
					rep, r := runJSON(t, cliEnv{config: "{}", extra: runtimeEnv(t)}, args...)
					require.Equal(t, exitOK, r.code, "stderr:\n%s", r.stderr)
					require.Equal(t, d.Name, rep.Device.Name)
					if !verify {
						t.Logf("example %s has no reference and %s is its only other device: ran unverified", ex, d.Name)
						return
					}
					require.True(t, rep.Verify.OK)
				})
			}
		}
	}
}

// runtimeEnv points the tt backend at a built runtime when there is one, so
// the emulator counts as a device present.
func runtimeEnv(t *testing.T) map[string]string {
	if p, err := rtbin.Built(); err == nil {
		return map[string]string{"ZYX_TT_RUNTIME": p}
	}
	return nil
}

// emuEnv is runtimeEnv for the emulator (ZYX_TT_EMU) with a cache of the
// test's own; without a built runtime it skips the test, saying that what
// is not checked.
func emuEnv(t *testing.T, what string) map[string]string {
	t.Helper()
	env := runtimeEnv(t)
	if env == nil {
		t.Skip("no zyx-tt-runtime built (make runtime): " + what + " is not checked")
	}
	env["ZYX_TT_EMU"] = "1"
	env["XDG_CACHE_HOME"] = t.TempDir()
	return env
}

// kernelBundle writes a bundle named name, with no params, whose tt variant
// runs src on riscv_0 of the core range cores (JSON, "[0, 0, 0, 1]").
func kernelBundle(t *testing.T, name, cores, src string) string {
	return testfiles.Dir(t, map[string]string{
		"manifest.json": `{"name": "` + name + `", "params": [], "outputs": []}`,
		"tt.json":       `{"kernels": [{"processor": "riscv_0", "cores": [` + cores + `], "source": "k.cpp"}]}`,
		"k.cpp":         src,
	})
}

// --dev fastest measures every device that can run the bundle, records it,
// and a later --dev auto follows the record and says so; probe --perf lists
// it.
func TestFastestThenAuto(t *testing.T) {
	rep, r := runJSON(t, cliEnv{}, testBundle, "--dev", "fastest", "--set", "n=4096")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NotNil(t, rep.Selection)
	require.Contains(t, rep.Selection.Reason, "measured: ")
	require.NotEmpty(t, rep.Selection.Measured)
	winner := rep.Selection.Measured[0].Device
	require.Equal(t, winner, rep.Device.Name)

	rep, r = runJSON(t, cliEnv{}, testBundle, "--dev", "auto", "--set", "n=4096")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, rep.Selection.Reason, "measured: ", "auto follows the record")
	require.Equal(t, winner, rep.Device.Name)

	rep, r = runJSON(t, cliEnv{}, testBundle, "--dev", "auto", "--set", "n=1048576")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "static ranking, not measured yet", rep.Selection.Reason, "another size is not measured")

	p := cli(t, cliEnv{}, "probe", "--perf")
	require.Equal(t, exitOK, p.code, p.stderr)
	require.Contains(t, p.stdout, "performance record: ")
	require.Contains(t, p.stdout, "vadd")

	bad := cli(t, cliEnv{}, "run", testBundle, "--dev", "fastest", "--budget", "-1s")
	require.Equal(t, exitUsage, bad.code)
}

// TestRunDPrint: --dprint passes the kernels' DPRINT lines to stderr,
// tagged with core and processor; without it they stay hidden. The kernel
// prints on both of its cores, on the emulator.
func TestRunDPrint(t *testing.T) {
	env := emuEnv(t, "the kernels' DPRINT output")
	dir := kernelBundle(t, "hello", "[0, 0, 0, 1]", `void kernel_main() { DPRINT << "hello-from-the-kernel" << ENDL(); }`)
	cenv := cliEnv{config: "{}", extra: env}
	r := cli(t, cenv, "run", dir, "--dev", "tt-emu", "--dprint")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stderr, "core (0,0) riscv_0: hello-from-the-kernel\n")
	require.Contains(t, r.stderr, "core (0,1) riscv_0: hello-from-the-kernel\n")
	require.NotContains(t, r.stderr, "dprint: ")
	require.NotContains(t, r.stdout, "hello-from-the-kernel")
	r = cli(t, cenv, "run", dir, "--dev", "tt-emu")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NotContains(t, r.stderr, "hello-from-the-kernel")
	// Nothing to verify in a program without outputs.
	r = cli(t, cenv, "run", dir, "--dev", "tt-emu", "--verify")
	require.Equal(t, exitFailure, r.code)
	require.Contains(t, r.stderr, "has no outputs to verify")
}

// The emulator's kernels are cached in the one default cache directory,
// $XDG_CACHE_HOME/zyx/tt (its emu/ part), with no cache_dir configured:
// the Go driver's default and the runtime's agree (docs/tt.md).
func TestEmulatorCacheIsTheDefaultOne(t *testing.T) {
	env := emuEnv(t, "the emulator's kernel cache")
	cache := env["XDG_CACHE_HOME"]
	r := cli(t, cliEnv{config: "{}", extra: env}, "run", "../../examples/vadd", "--dev", "tt-emu", "--set", "n=4096")
	require.Equal(t, exitOK, r.code, r.stderr)
	objects, err := filepath.Glob(filepath.Join(cache, "zyx", "tt", "emu", "*.so"))
	require.NoError(t, err)
	require.NotEmpty(t, objects, "the kernels were built into the default cache")
	st, err := os.Stat(filepath.Join(cache, "zyx", "tt"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm(), "the cache is private")
}

// A performance record that is a FIFO or a link to /dev/zero neither hangs
// nor floods `run --dev auto` and `probe --perf`: it is ignored with a
// warning.
func TestHostilePerformanceRecord(t *testing.T) {
	for name, plant := range map[string]func(string) error{
		"fifo":              func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"link to /dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, plant(perfRecordOf(t)))
			for _, args := range [][]string{{"run", testBundle, "--dev", "auto", "--set", "n=64"}, {"probe", "--perf"}} {
				done := make(chan cliResult, 1)
				go func() { done <- cli(t, cliEnv{}, args...) }()
				select {
				case r := <-done:
					require.Equal(t, exitOK, r.code, "%v: %s", args, r.stderr)
				case <-time.After(time.Minute):
					t.Fatalf("%v blocked on the record", args)
				}
			}
		})
	}
}

// A kernel that does not compile on the device named is the user's compile
// error: the compiler's first error line first, file:line leading, then the
// compiler's output, then what was compiled where.
func TestCompileErrorComesFirst(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(testBundle)))
	src, err := os.ReadFile(filepath.Join(dir, "vadd.c"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vadd.c"), append(src, []byte("\nint broken(void) { return undeclared_name; }\n")...), 0o644))
	r := cli(t, cliEnv{}, "run", dir, "--dev", "c")
	require.Equal(t, exitFailure, r.code, r.stderr)
	lines := strings.Split(r.stderr, "\n")
	require.Regexp(t, `^zyx-tt run: vadd\.c:\d+:\d+: error: .*undeclared_name`, lines[0])
	require.Contains(t, r.stderr, "\n(c: compile: compile failed")
	require.NotContains(t, r.stderr, "no device for")

	t.Run("tt-emu", func(t *testing.T) {
		env := emuEnv(t, "the emulator's compile error")
		dir := kernelBundle(t, "broken", "[0, 0, 0, 0]", "void kernel_main() {\n  not_a_function();\n}\n")
		r := cli(t, cliEnv{config: "{}", extra: env}, "run", dir, "--dev", "tt-emu")
		require.Equal(t, exitFailure, r.code, r.stderr)
		require.Regexp(t, `^zyx-tt run: k\.cpp:2:\d+: error: .*not_a_function`, r.stderr)
		require.NotContains(t, r.stderr, "no device for")
	})
}
