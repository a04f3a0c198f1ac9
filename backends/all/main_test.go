package all_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/zyxtt/zyxtt/internal/rtbin"
)

// The examples are docs/api.md's programs. They run on the package-level
// default runtime, as the programs do, with a private config directory
// (no user config) and the runtime `make runtime` built. Without that
// runtime the Tenstorrent example cannot run: it is skipped, and the run
// says why.
func TestMain(m *testing.M) {
	cfg, err := os.MkdirTemp("", "zyx-examples-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Setenv("XDG_CONFIG_HOME", cfg)
	os.Setenv("XDG_CACHE_HOME", cfg)
	if bin, err := rtbin.Built(); err == nil {
		os.Setenv("ZYX_TT_RUNTIME", bin)
	} else if f := flag.Lookup("test.skip"); f != nil && f.Value.String() == "" {
		fmt.Fprintf(os.Stderr, "skipping Example_tenstorrent: %v\n", err)
		_ = f.Value.Set("^Example_tenstorrent$")
	}
	code := m.Run()
	os.RemoveAll(cfg)
	os.Exit(code)
}
