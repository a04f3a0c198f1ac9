package main

import (
	"context"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A reference of +Inf (1/0) must not pass a kernel that writes 12345: a
// non-finite expected value matches only itself.
func TestVerifyNonFiniteReference(t *testing.T) {
	o, _ := verifyMismatch(t, "testdata/bundles/nonfinite")
	require.Equal(t, int64(256), o.Mismatches)
	require.True(t, math.IsInf(float64(o.Want), 1), "want %v", o.Want)
	require.Equal(t, 12345.0, float64(o.Got))
}

// --json reports a run whose outputs hold NaN (and whose error figures are
// infinite), exits 3 for the mismatch, and replaces no --out file.
func TestJSONReportsNonFiniteNumbers(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "z.bin")
	require.NoError(t, os.WriteFile(out, []byte("keep me"), 0o640))
	rep, r := runJSON(t, cliEnv{}, "testdata/bundles/nonfinite", "--dev", "c", "--verify", "--in", "x=const:-1", "--out", "z="+out)
	require.Equal(t, exitMismatch, r.code, r.stderr)
	require.Contains(t, r.stdout, `"worst_got": "NaN"`, "NaN is encoded as a string")
	require.Contains(t, r.stdout, `"max_abs": "+Inf"`)
	require.True(t, math.IsNaN(float64(rep.Verify.Outputs[0].Got)))
	require.Empty(t, rep.Written)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, "keep me", string(data), "a failed run replaces no --out file")
	st, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), st.Mode().Perm())
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "no temp file left behind")
}

// An --out file that replaces another keeps its mode; a new one follows the
// umask (never forced to 0644).
func TestOutputModes(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.bin")
	require.NoError(t, os.WriteFile(old, nil, 0o600))
	require.NoError(t, os.Chmod(old, 0o600))
	fresh := filepath.Join(dir, "new.bin")
	r := cli(t, cliEnv{}, "run", testBundle, "--dev", "c", "--set", "n=64", "--out", "z="+old, "--out", "y="+fresh)
	require.Equal(t, exitOK, r.code, r.stderr)
	st, err := os.Stat(old)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the replaced file's mode is kept")
	st, err = os.Stat(fresh)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o666)&^umask(t), st.Mode().Perm(), "a new file follows the umask")
}

func umask(t *testing.T) os.FileMode {
	t.Helper()
	p := filepath.Join(t.TempDir(), "probe")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o666)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	st, err := os.Stat(p)
	require.NoError(t, err)
	return 0o666 &^ st.Mode().Perm()
}

// 64-bit integers are compared as integers: an off-by-one at 2^60, which
// float64 cannot see, is a mismatch.
func TestIntegersCompareExactly(t *testing.T) {
	dir := t.TempDir()
	vals := make([]byte, 64*8)
	for i := range 64 {
		binary.LittleEndian.PutUint64(vals[8*i:], 1<<60+uint64(i))
	}
	x := filepath.Join(dir, "x.bin")
	require.NoError(t, os.WriteFile(x, vals, 0o600))
	rep, r := runJSON(t, cliEnv{}, "testdata/bundles/i64off", "--dev", "c", "--verify", "--in", "x="+x, "--in", "y="+x)
	require.Equal(t, exitMismatch, r.code, r.stderr)
	o := rep.Verify.Outputs[0]
	require.Equal(t, int64(64), o.Mismatches, "every element is off by one")
	require.Zero(t, float64(o.Atol), "integers have no tolerance")
}

// A panic inside a command is reported as a bug with exit status 1, not a
// crash with status 2.
func TestPanicIsABugNotACrash(t *testing.T) {
	saved := commands
	t.Cleanup(func() { commands = saved })
	commands = append(commands, command{name: "boom", short: "panics", run: func(context.Context, []string, io.Writer, io.Writer) error {
		var m map[string]int
		m["x"]++ // a nil map write
		return nil
	}})
	r := cli(t, cliEnv{}, "boom")
	require.Equal(t, exitFailure, r.code)
	require.Contains(t, r.stderr, "internal error (a bug in zyx-tt")
	require.Contains(t, r.stderr, "assignment to entry in nil map")
}

// A run on a named device opens no other backend: PoCL leaves a temp file
// in its cache for every process that opens OpenCL. Each command runs in a
// process of its own, because PoCL makes its cache once per process: one
// opened in this test binary before would leave no trace.
func TestNamedDeviceOpensNoOtherBackend(t *testing.T) {
	cache := t.TempDir()
	r := cliProcess(t, cliEnv{extra: map[string]string{"XDG_CACHE_HOME": cache}}, "run", testBundle, "--dev", "c", "--set", "n=64")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NoDirExists(t, filepath.Join(cache, "pocl"), "--dev c did not open OpenCL")
	r = cliProcess(t, cliEnv{extra: map[string]string{"XDG_CACHE_HOME": cache}}, "probe", "--backends", "opencl")
	require.Equal(t, exitOK, r.code, r.stderr)
	if strings.Contains(r.stdout, "opencl: no devices") {
		t.Skip("no OpenCL platform here: the check above cannot be shown to bite")
	}
	require.DirExists(t, filepath.Join(cache, "pocl"), "opening OpenCL does make it (so the check above can fail)")
}
