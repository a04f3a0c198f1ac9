package ttruntime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/zyxtt/zyxtt/internal/core"
)

// RuntimeName is the runtime executable's file name.
const RuntimeName = "zyx-tt-runtime"

// EnvMock, set in the environment of a runtime, turns its mock mode on: it
// serves the protocol through the emulator and injects the faults the
// variable's value names (docs/runtime.md, "Mock mode"). The runtimes the
// driver starts inherit its environment, so a program under test gets the
// mock by setting it.
const EnvMock = "ZYX_TT_MOCK"

// ErrRuntimeNotFound marks a missing runtime executable.
var ErrRuntimeNotFound = errors.New("zyx-tt-runtime not found")

// InstallDir is where `zyx-tt runtime install` puts the runtime it builds
// from the module's source, and where FindRuntime looks for it:
// $XDG_CACHE_HOME/zyx/runtime, else ~/.cache/zyx/runtime.
func InstallDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "zyx", "runtime"), nil
}

// InstallHint says how to get a runtime; the not-found error ends with it.
const InstallHint = "run `zyx-tt runtime install` (builds it from this module's source; needs cmake, a C++20 compiler and nlohmann-json), or `make runtime` in a checkout, or set ZYX_TT_RUNTIME or config tenstorrent.runtime"

// FindRuntime locates the runtime executable. It looks, in order, at
// configured (config key tenstorrent.runtime), $ZYX_TT_RUNTIME, next to the
// running executable, the user's config directory
// ($XDG_CONFIG_HOME/zyx/zyx-tt-runtime, else ~/.config/zyx/zyx-tt-runtime),
// InstallDir and PATH. An explicitly named path that is not executable is
// an error of its own, not a reason to look further. The not-found error
// lists every place looked at and says what to run.
func FindRuntime(configured string) (string, error) {
	for _, c := range []struct{ path, source string }{
		{configured, "config tenstorrent.runtime"},
		{os.Getenv("ZYX_TT_RUNTIME"), "ZYX_TT_RUNTIME"},
	} {
		if c.path == "" {
			continue
		}
		if err := executable(c.path); err != nil {
			return "", &core.Error{Backend: Backend, Op: "find runtime",
				Err: fmt.Errorf("%w: %s names %s: %w", ErrRuntimeNotFound, c.source, c.path, err)}
		}
		return c.path, nil
	}
	var looked []string
	try := func(p string) bool {
		looked = append(looked, p)
		return executable(p) == nil
	}
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), RuntimeName); try(p) {
			return p, nil
		}
	}
	if dir, err := os.UserConfigDir(); err == nil {
		if p := filepath.Join(dir, "zyx", RuntimeName); try(p) {
			return p, nil
		}
	}
	if dir, err := InstallDir(); err == nil {
		if p := filepath.Join(dir, RuntimeName); try(p) {
			return p, nil
		}
	}
	looked = append(looked, "PATH")
	if p, err := exec.LookPath(RuntimeName); err == nil {
		return p, nil
	}
	return "", &core.Error{Backend: Backend, Op: "find runtime",
		Err: fmt.Errorf("%w (looked at %s; config tenstorrent.runtime and ZYX_TT_RUNTIME unset): %s",
			ErrRuntimeNotFound, strings.Join(looked, ", "), InstallHint)}
}

func executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("not a regular file")
	}
	if st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("not executable")
	}
	return nil
}
