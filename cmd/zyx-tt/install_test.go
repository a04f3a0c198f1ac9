package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/ttruntime"
)

// What a Go user does: `go install` the command into an empty GOBIN, run
// `zyx-tt runtime install`, and run an example verified on the emulator,
// with no runtime anywhere the lookup looks before the install. The
// install's cache directory is build/install-test in the repository, kept
// between runs, so the C++ build is incremental after the first; the
// installed binary is removed first, so the command must build and put it
// there again.
func TestGoInstallThenRuntimeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds zyx-tt with go install and zyx-tt-runtime from source with cmake (minutes): make test runs it, -short skips it")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	for _, tool := range []string{"cmake", "c++"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make deps installs it): the runtime cannot be built", tool)
		}
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	gobin := t.TempDir()
	cache := filepath.Join(root, "build", "install-test")
	require.NoError(t, os.MkdirAll(cache, 0o755))
	installed := filepath.Join(cache, "zyx", "runtime", ttruntime.RuntimeName)
	require.NoError(t, os.RemoveAll(installed))

	// PATH without any directory that holds a runtime (make puts bin/ on it).
	var path []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, ttruntime.RuntimeName)); err != nil {
			path = append(path, d)
		}
	}
	// An empty module cache, filled from the one this test runs with as a
	// file proxy: go install fetches every module as from a registry, with
	// no network.
	out, err := exec.Command(goBin, "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	proxy := "file://" + filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	modcache := t.TempDir()
	t.Cleanup(func() { // the module cache is read-only: the go command removes it
		clean := exec.Command(goBin, "clean", "-modcache")
		clean.Env = append(os.Environ(), "GOMODCACHE="+modcache)
		_ = clean.Run()
	})
	env := []string{
		"PATH=" + strings.Join(path, string(os.PathListSeparator)),
		"HOME=" + os.Getenv("HOME"),
		"GOBIN=" + gobin,
		"GOFLAGS=-mod=mod",
		"GOPROXY=" + proxy,
		"GOSUMDB=off",
		"GOMODCACHE=" + modcache,
		"XDG_CACHE_HOME=" + cache,
		"XDG_CONFIG_HOME=" + t.TempDir(),
		"ZYX_PROGRESS=0",
	}
	for _, k := range []string{"GOCACHE", "GOPATH", "GOROOT", "TMPDIR", "ZYX_SHM_DIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	run := func(dir string, name string, args ...string) (string, string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}

	_, stderr, err := run(root, goBin, "install", "./cmd/zyx-tt")
	require.NoError(t, err, stderr)
	entries, err := os.ReadDir(gobin)
	require.NoError(t, err)
	require.Len(t, entries, 1, "GOBIN holds zyx-tt alone")
	zyx := filepath.Join(gobin, "zyx-tt")

	// Before the install the lookup finds nothing and says what to run.
	stdout, stderr, err := run(t.TempDir(), zyx, "version")
	require.NoError(t, err, stderr)
	require.Contains(t, stdout, "zyx-tt-runtime not found (looked at "+filepath.Join(gobin, ttruntime.RuntimeName))
	require.Contains(t, stdout, installed)
	require.Contains(t, stdout, "run `zyx-tt runtime install`")

	jobs := os.Getenv("RUNTIME_JOBS")
	if jobs == "" {
		jobs = "2"
	}
	stdout, stderr, err = run(t.TempDir(), zyx, "runtime", "install", "-j", jobs)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Contains(t, stdout, "installed zyx-tt-runtime ")
	require.Contains(t, stdout, " at "+installed+"\n")
	require.FileExists(t, installed)

	stdout, stderr, err = run(t.TempDir(), zyx, "run", "--dev", "tt-emu", "--verify", filepath.Join(root, "examples", "vadd"), "--set", "n=4096")
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Contains(t, stdout, "device    tt-emu:0")
	require.Regexp(t, `verify    z against .*: ok\n`, stdout)

	stdout, _, err = run(t.TempDir(), zyx, "version")
	require.NoError(t, err)
	require.Contains(t, stdout, fmt.Sprintf("(protocol %d) at %s\n", ttruntime.ProtocolVersion, installed))
}
