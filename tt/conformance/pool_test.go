package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/internal/rtbin"
	"github.com/zyxtt/zyxtt/tt"
	"github.com/zyxtt/zyxtt/ttruntime"
)

func TestMain(m *testing.M) {
	code := m.Run()
	_ = backends.CloseAll()
	os.Exit(code)
}

// open opens the tt backend with no card (the emulator devices) on the
// runtime at path.
func open(t *testing.T, runtime string) *backends.Device {
	t.Setenv(tt.EnvSysfsRoot, filepath.Join("..", "testdata", "sysfs", "none"))
	t.Setenv(ttruntime.EnvLockDir, filepath.Join(t.TempDir(), "locks"))
	t.Setenv(tt.EnvEmulator, "")
	cfg, err := backends.ParseConfig(fmt.Appendf(nil, `{"tenstorrent": {"runtime": %q, "cache_dir": %q}}`, runtime, t.TempDir()))
	require.NoError(t, err)
	rt, err := backends.Open(context.Background(), backends.Options{Config: cfg, Backends: []string{"tt"}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	st, err := rt.Backend(context.Background(), "tt")
	require.NoError(t, err)
	require.NoError(t, st.Err)
	require.NotEmpty(t, st.Devices)
	return st.Devices[0]
}

// The pool contract through the runtime in mock mode (with no fault: the
// emulator's device, as a user testing without a card gets it) and out of
// it.
func TestPoolConformanceUnderTheMock(t *testing.T) {
	t.Setenv(ttruntime.EnvMock, "on")
	backendtest.RunPoolConformance(t, open(t, rtbin.Require(t)).Pool())
}

func TestPoolConformanceUnderTheEmulator(t *testing.T) {
	t.Setenv(ttruntime.EnvMock, "")
	backendtest.RunPoolConformance(t, open(t, rtbin.Require(t)).Pool())
}
