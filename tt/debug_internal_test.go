package tt

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/ttruntime"
)

// A runtime started for a debugger has no call deadline that would kill it
// while it is stopped at a breakpoint, and runs in the emulator's debug mode.
func TestDebugConfigLiftsDeadlines(t *testing.T) {
	t.Setenv("ZYX_TEST_MARKER", "kept")
	c := ttruntime.Config{Timeout: time.Second, CleanupTimeout: time.Second}
	debugConfig(&c)
	require.GreaterOrEqual(t, c.Timeout, 24*time.Hour)
	require.GreaterOrEqual(t, c.CleanupTimeout, 24*time.Hour)
	require.True(t, slices.Contains(c.Env, EnvEmuDebug+"=1"), "the runtime's environment lacks %s=1", EnvEmuDebug)
	require.True(t, slices.Contains(c.Env, "ZYX_TEST_MARKER=kept"), "the runtime's environment lost the caller's")
}
