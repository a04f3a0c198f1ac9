package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"unicode"

	"github.com/zyxtt/zyxtt/ttruntime"
)

const runtimeAbout = `Runtime manages zyx-tt-runtime, the process that runs Tenstorrent programs
on a card and hosts the Tensix emulator (tt-emu devices).

  zyx-tt runtime install   builds zyx-tt-runtime from this module's own source
                           (its cpp/ directory: in a checkout, or in the Go
                           module cache after go install) and installs it in
                           the user's cache directory, where zyx-tt finds it
  zyx-tt runtime where     lists where zyx-tt looks for the runtime, in order,
                           and which one it would start

install needs cmake (3.20 or later), a C++20 compiler and nlohmann-json 3.10
or later (Debian: apt-get install cmake g++ nlohmann-json3-dev). It copies
the source to the install directory and builds there, so a second install
rebuilds only what changed, and the runtime keeps working after
go clean -modcache.`

// runtimeFlags are `zyx-tt runtime`'s flags.
type runtimeFlags struct {
	jobs  int
	src   string
	cmake string
}

func runtimeFlagSet(f *runtimeFlags, stdout io.Writer) *flagSet {
	fs := newFlagSet("runtime", "install|where [flags]", runtimeAbout, stdout)
	fs.IntVar(&f.jobs, "j", goruntime.NumCPU(), "build `N` files at a time")
	fs.StringVar(&f.src, "src", "", "the module source `DIR` to build from (default: the source zyx-tt was built from)")
	fs.StringVar(&f.cmake, "cmake", "cmake", "the cmake `PROGRAM`")
	return fs
}

func cmdRuntime(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runtimeFlags
	pos, err := parseFlags(runtimeFlagSet(&f, stdout), args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want install or where, got %d arguments", len(pos))
	}
	if f.jobs < 1 {
		return usagef("-j %d: must be 1 or more", f.jobs)
	}
	switch pos[0] {
	case "install":
		return installRuntime(ctx, f, stdout, stderr)
	case "where":
		return runtimeWhere(ctx, stdout)
	}
	return usagef("unknown runtime command %q%s (commands: install, where)", pos[0], didYouMean("", pos[0], []string{"install", "where"}))
}

// runtimeWhere prints the lookup order and its result.
func runtimeWhere(ctx context.Context, stdout io.Writer) error {
	fmt.Fprintln(stdout, "zyx-tt looks for zyx-tt-runtime at, in order:")
	fmt.Fprintln(stdout, "  config tenstorrent.runtime")
	fmt.Fprintln(stdout, "  $ZYX_TT_RUNTIME")
	if exe, err := os.Executable(); err == nil {
		fmt.Fprintf(stdout, "  %s (next to zyx-tt)\n", filepath.Join(filepath.Dir(exe), ttruntime.RuntimeName))
	}
	if dir, err := os.UserConfigDir(); err == nil {
		fmt.Fprintf(stdout, "  %s\n", filepath.Join(dir, "zyx", ttruntime.RuntimeName))
	}
	if dir, err := ttruntime.InstallDir(); err == nil {
		fmt.Fprintf(stdout, "  %s (zyx-tt runtime install)\n", filepath.Join(dir, ttruntime.RuntimeName))
	}
	fmt.Fprintln(stdout, "  PATH")
	v := findRuntimeVersion(ctx)
	if v.Error != "" {
		fmt.Fprintf(stdout, "found: none: %s\n", oneLine(v.Error))
		return nil
	}
	fmt.Fprintf(stdout, "found: %s (zyx-tt-runtime %s, protocol %d)\n", v.Path, v.Version, v.Protocol)
	return nil
}

// installRuntime copies the module's cpp/ into the install directory,
// builds zyx-tt-runtime there with cmake and puts it where FindRuntime
// looks.
func installRuntime(ctx context.Context, f runtimeFlags, stdout, stderr io.Writer) error {
	src := f.src
	if src == "" {
		var err error
		if src, err = moduleSource(); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(src, "cpp", "CMakeLists.txt")); err != nil {
		return fmt.Errorf("%s is not the zyx-tt module source (no cpp/CMakeLists.txt): give the module's directory with --src", src)
	}
	cmake, err := exec.LookPath(f.cmake)
	if err != nil {
		return fmt.Errorf("no %s on PATH: install cmake 3.20 or later, a C++20 compiler and nlohmann-json (Debian: apt-get install cmake g++ nlohmann-json3-dev)", f.cmake)
	}
	dir, err := ttruntime.InstallDir()
	if err != nil {
		return fmt.Errorf("no cache directory to install into: %w (set XDG_CACHE_HOME to an absolute path)", err)
	}
	copyDir, buildDir := filepath.Join(dir, "src", "cpp"), filepath.Join(dir, "build")
	fmt.Fprintf(stderr, "zyx-tt runtime install: building %s from %s in %s\n", ttruntime.RuntimeName, filepath.Join(src, "cpp"), dir)
	if err := syncTree(filepath.Join(src, "cpp"), copyDir); err != nil {
		return fmt.Errorf("copy the source: %w", err)
	}
	if err := configured(buildDir, copyDir); err != nil {
		return err
	}
	run := func(args ...string) error {
		cmd := exec.CommandContext(ctx, cmake, args...)
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("cmake %s: %w (the output above says why)", strings.Join(args, " "), err)
		}
		return nil
	}
	if _, err := os.Stat(filepath.Join(buildDir, "CMakeCache.txt")); err != nil {
		if err := run("-S", copyDir, "-B", buildDir, "-DCMAKE_BUILD_TYPE=Release", "-DZYX_TT_TESTS=OFF", "-DZYX_TT_FUZZ=OFF"); err != nil {
			return err
		}
	}
	if err := run("--build", buildDir, "--target", ttruntime.RuntimeName, "-j", strconv.Itoa(f.jobs)); err != nil {
		return err
	}
	dst := filepath.Join(dir, ttruntime.RuntimeName)
	if err := installFile(filepath.Join(buildDir, ttruntime.RuntimeName), dst); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, dst, "--version").Output()
	if err != nil {
		return fmt.Errorf("the built runtime does not run: %s --version: %w", dst, err)
	}
	m := runtimeVersionLine.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil || m[2] != strconv.Itoa(ttruntime.ProtocolVersion) {
		return fmt.Errorf("the built runtime says %q; this zyx-tt speaks protocol %d: build from the source zyx-tt was built from (--src)", strings.TrimSpace(string(out)), ttruntime.ProtocolVersion)
	}
	fmt.Fprintf(stdout, "installed zyx-tt-runtime %s (protocol %s) at %s\n", m[1], m[2], dst)
	if found, err := ttruntime.FindRuntime(""); err == nil && found != dst {
		fmt.Fprintf(stdout, "note: zyx-tt finds %s first (zyx-tt runtime where lists the order)\n", found)
	}
	return nil
}

// configured removes a build directory configured for another source
// directory (cmake refuses to reuse it).
func configured(buildDir, srcDir string) error {
	cache, err := os.ReadFile(filepath.Join(buildDir, "CMakeCache.txt"))
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(cache), "\n") {
		if v, ok := strings.CutPrefix(line, "CMAKE_HOME_DIRECTORY:INTERNAL="); ok && filepath.Clean(v) != filepath.Clean(srcDir) {
			return os.RemoveAll(buildDir)
		}
	}
	return nil
}

// moduleSource is the directory of the module zyx-tt was built from: the
// checkout its source files were compiled in (a `go build` or `go install`
// in a checkout), else the module cache's copy of the version it was built
// at (`go install github.com/zyxtt/zyxtt/cmd/zyx-tt@VERSION`).
func moduleSource() (string, error) {
	if _, file, _, ok := goruntime.Caller(0); ok && filepath.IsAbs(file) {
		root := filepath.Dir(filepath.Dir(filepath.Dir(file))) // cmd/zyx-tt/runtime.go
		if _, err := os.Stat(filepath.Join(root, "cpp", "CMakeLists.txt")); err == nil {
			return root, nil
		}
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
		return "", errors.New("cannot tell which source zyx-tt was built from (built with -trimpath, or the checkout moved): give the module's directory with --src")
	}
	cache := goModCache()
	if cache == "" {
		return "", errors.New("no Go module cache found (go env GOMODCACHE): give the module's directory with --src")
	}
	dir := filepath.Join(cache, escapeModulePath(bi.Main.Path)+"@"+bi.Main.Version)
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("the module source %s@%s is not in the module cache (%s): run go mod download %s@%s, or give the module's directory with --src",
			bi.Main.Path, bi.Main.Version, cache, bi.Main.Path, bi.Main.Version)
	}
	return dir, nil
}

func goModCache() string {
	if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		if s := strings.TrimSpace(string(out)); s != "" {
			return s
		}
	}
	if v := os.Getenv("GOMODCACHE"); v != "" {
		return v
	}
	if v := os.Getenv("GOPATH"); v != "" {
		return filepath.Join(filepath.SplitList(v)[0], "pkg", "mod")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}

// escapeModulePath is the module cache's spelling of a module path: each
// upper-case letter is '!' and the letter in lower case.
func escapeModulePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// syncTree makes dst a copy of src, writing only files whose content
// differs (so an incremental build recompiles only what changed) and
// removing what src no longer has.
func syncTree(src, dst string) error {
	keep := map[string]bool{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		keep[to] = true
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if old, err := os.ReadFile(to); err == nil && bytes.Equal(old, data) {
			return nil
		}
		mode := os.FileMode(0o644)
		if info, err := d.Info(); err == nil && info.Mode()&0o111 != 0 {
			mode = 0o755
		}
		_ = os.Remove(to) // a read-only copy from the module cache
		return os.WriteFile(to, data, mode)
	})
	if err != nil {
		return err
	}
	var stale []string
	_ = filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !keep[p] {
			stale = append(stale, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	for _, p := range stale {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return nil
}

// installFile copies the built binary to dst through a temp file and a
// rename, so a runtime that is running keeps its file.
func installFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".zyx-tt-runtime-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
