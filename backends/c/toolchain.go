//go:build darwin || freebsd || linux || netbsd

package c

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ebitengine/purego"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/diskcache"
	"github.com/zyxtt/zyxtt/internal/dl"
)

// optionalFlags are added when the compiler accepts them.
//   - -fno-semantic-interposition lets the compiler inline the exported
//     entry into the launcher's loop even though the object is -fPIC.
//   - The -Werror flags turn a missing entry, a wrong arity or wrong
//     pointer types into compile errors instead of a crash at launch.
var optionalFlags = []string{
	"-fno-semantic-interposition",
	"-Werror=implicit-function-declaration",
	"-Werror=incompatible-pointer-types",
	"-Werror=int-conversion",
}

// toolchain is a probed compiler with the flags every build uses, and the
// on-disk object cache.
type toolchain struct {
	compiler string // resolved path
	version  string // the compiler's --version output, part of every cache key
	flags    []string
	openmp   bool
	cache    *diskcache.Dir
	// ownCache is a private directory made for this process because the
	// cache is off (or the user has no cache directory), removed at Close.
	ownCache bool

	// runtimePin keeps the OpenMP runtime loaded for the life of the
	// process, so that closing the last program object never unloads it
	// under its idle worker threads.
	runtimePin uintptr

	keyMu sync.Mutex
	keys  map[string]*sync.Mutex // one build at a time per cache key in this process
}

// compilerEnv runs the compiler with messages in plain ASCII so the
// diagnostics can be matched.
func compilerEnv() []string { return append(os.Environ(), "LC_ALL=C", "LANG=C") }

// probeToolchain finds the compiler and works out the flags it accepts.
func probeToolchain(ctx context.Context, cfg Config) (*toolchain, error) {
	name := cfg.Compiler
	if name == "" {
		name = "cc"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w: C compiler %q: %w", driver.ErrNoDevice, name, err)
	}
	ver, err := compilerCommand(ctx, path, "--version").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%w: %s --version: %w: %s", driver.ErrNoDevice, path, err, bytes.TrimSpace(ver))
	}
	cache, err := diskcache.Open(cfg.CacheDir, BackendName)
	if err != nil {
		return nil, fmt.Errorf("%w: c.cache_dir: %w", driver.ErrNoDevice, err)
	}
	ownCache := cache == nil
	if ownCache {
		// Objects must live in a file to be loaded: with no disk cache, in a
		// private directory of this process's.
		tmp, err := os.MkdirTemp("", "zyx-c-objects-")
		if err != nil {
			return nil, fmt.Errorf("%w: a private object directory: %w", driver.ErrNoDevice, err)
		}
		if cache, err = diskcache.OpenPath(tmp); err != nil {
			_ = os.RemoveAll(tmp)
			return nil, fmt.Errorf("%w: %w", driver.ErrNoDevice, err)
		}
	}
	tc := &toolchain{compiler: path, version: string(ver), cache: cache, ownCache: ownCache, keys: map[string]*sync.Mutex{}}

	base := DefaultFlags
	if cfg.Flags != nil {
		base = *cfg.Flags
	}
	tc.flags = append(append([]string{}, base...), "-fPIC", "-shared")

	dir, err := os.MkdirTemp("", "zyx-c-probe-")
	if err != nil {
		return nil, fmt.Errorf("%w: probe dir: %w", driver.ErrNoDevice, err)
	}
	defer os.RemoveAll(dir)

	const plain = "int zyx_probe(int x) { return x + 1; }\n"
	if out, err := tc.probe(ctx, dir, plain, tc.flags); err != nil {
		return nil, fmt.Errorf("%w: %s cannot build a shared object with flags %q: %w: %s",
			driver.ErrNoDevice, path, tc.flags, err, out)
	}
	if _, err := tc.probe(ctx, dir, plain, append(tc.flags, optionalFlags...)); err == nil {
		tc.flags = append(tc.flags, optionalFlags...)
	} else {
		for _, f := range optionalFlags {
			if _, err := tc.probe(ctx, dir, plain, append(tc.flags, f)); err == nil {
				tc.flags = append(tc.flags, f)
			}
		}
	}

	if cfg.OpenMP == nil || *cfg.OpenMP {
		const omp = "#include <omp.h>\nint zyx_probe(void) { int n = 0;\n#pragma omp parallel\n{\n#pragma omp atomic\nn++;\n}\nreturn n + omp_get_max_threads(); }\n"
		so, err := tc.probe(ctx, dir, omp, append(tc.flags, "-fopenmp"))
		switch {
		case err == nil:
			h, lerr := dl.Dlopen(so, purego.RTLD_NOW|purego.RTLD_LOCAL)
			if lerr != nil {
				err = fmt.Errorf("loading the OpenMP probe: %w", lerr)
				break
			}
			tc.runtimePin, tc.openmp = h, true
			tc.flags = append(tc.flags, "-fopenmp")
		case cfg.OpenMP != nil:
			return nil, fmt.Errorf("%w: config asks for OpenMP but %s -fopenmp fails: %w", driver.ErrNoDevice, path, err)
		}
		if err != nil {
			driver.Debug(driver.DebugDevice, "c: compiling without OpenMP", "compiler", path, "reason", err)
		}
	}
	if !tc.openmp {
		tc.flags = append(tc.flags, "-pthread")
	}
	return tc, nil
}

// probe compiles src with flags into dir and returns the object's path, or
// the compiler's output with the error.
func (tc *toolchain) probe(ctx context.Context, dir, src string, flags []string) (string, error) {
	f, err := os.CreateTemp(dir, "probe-*.c")
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(src); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	so := strings.TrimSuffix(f.Name(), ".c") + ".so"
	cmd := compilerCommand(ctx, tc.compiler, append(append([]string{}, flags...), "-o", so, f.Name())...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return string(bytes.TrimSpace(out)), err
	}
	return so, nil
}

// close removes the object directory when it is this process's own.
func (tc *toolchain) close() {
	if tc.ownCache {
		_ = os.RemoveAll(tc.cache.Path())
	}
}

// cacheKey names an object by everything that changes its bytes.
func (tc *toolchain) cacheKey(tu string, options []string) string {
	h := sha256.New()
	for _, part := range []string{tc.compiler, tc.version, strings.Join(tc.flags, "\x00"), strings.Join(options, "\x00"), tu} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (tc *toolchain) keyLock(key string) *sync.Mutex {
	tc.keyMu.Lock()
	defer tc.keyMu.Unlock()
	m, ok := tc.keys[key]
	if !ok {
		m = &sync.Mutex{}
		tc.keys[key] = m
	}
	return m
}

// buildError is a compile failure with the compiler's diagnostics.
type buildError struct {
	diagnostics string
	err         error
}

func (e *buildError) Error() string { return e.err.Error() }
func (e *buildError) Unwrap() error { return e.err }

// build returns the path of the object for tu, compiling it unless the
// cache already holds it. The object is written under a temporary name and
// renamed into place, so a reader never sees a partial file, whichever
// process or goroutine finishes first. hit reports a cache hit.
func (tc *toolchain) build(ctx context.Context, tu string, options []string) (path string, hit bool, err error) {
	key := tc.cacheKey(tu, options)
	name := key + ".so"
	path = tc.cache.File(name)
	if tc.cached(name) {
		return path, true, nil
	}
	lock := tc.keyLock(key)
	lock.Lock()
	defer lock.Unlock()
	if tc.cached(name) {
		return path, true, nil
	}
	src, err := tc.cache.CreateTemp(".build-" + key[:16] + "-*.c")
	if err != nil {
		return "", false, fmt.Errorf("object cache: %w", err)
	}
	defer os.Remove(src.Name())
	if _, err := src.WriteString(tu); err != nil {
		src.Close()
		return "", false, fmt.Errorf("object cache: %w", err)
	}
	if err := src.Close(); err != nil {
		return "", false, fmt.Errorf("object cache: %w", err)
	}
	tmp := strings.TrimSuffix(src.Name(), ".c") + ".so.tmp"
	defer os.Remove(tmp) // a no-op once renamed

	args := append(append(append([]string{}, tc.flags...), options...), "-o", tmp, src.Name(), "-lm")
	cmd := compilerCommand(ctx, tc.compiler, args...)
	out, runErr := cmd.CombinedOutput()
	driver.Debug(driver.DebugCompile, "c: compiled", "compiler", tc.compiler, "args", strings.Join(args, " "), "err", runErr)
	if runErr != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", false, ctxErr
		}
		diag := string(bytes.TrimSpace(out))
		if diag == "" {
			diag = runErr.Error()
		}
		return "", false, &buildError{diagnostics: diag, err: driver.ErrCompile}
	}
	if len(out) > 0 {
		driver.Debug(driver.DebugCompile, "c: compiler warnings", "output", string(out))
	}
	// The linker's mode follows the umask, which may let the group write:
	// the object is ours alone, as the cache check wants it.
	if err := os.Chmod(tmp, 0o700); err != nil {
		return "", false, fmt.Errorf("object cache: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", false, fmt.Errorf("object cache: %w", err)
	}
	return path, false, nil
}

// cached reports whether the cache holds the object name in a state that
// may be loaded. One it must not load (another owner, a link, writable by
// others) is removed, which the private directory allows, and built again.
func (tc *toolchain) cached(name string) bool {
	err := tc.cache.Check(name)
	if errors.Is(err, diskcache.ErrUntrusted) {
		driver.Debug(driver.DebugCompile, "c: refusing a cached object; rebuilding it", "err", err)
		_ = tc.cache.Remove(name)
	}
	return err == nil
}

// compilerWaitDelay bounds how long a cancelled compile may take to go away
// after its process group was killed (its output pipes to drain).
const compilerWaitDelay = 2 * time.Second

// compilerCommand runs the compiler in a process group of its own, so that
// cancelling ctx (Ctrl-C in zyx-tt) kills the whole tree at once: the
// driver and the cc1, as and ld it started, not only the driver.
func compilerCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = compilerEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The group's id is the driver's pid; the driver is ours.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = compilerWaitDelay
	return cmd
}
