//go:build darwin || freebsd || linux || netbsd

package c_test

import (
	"context"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/c"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// TestExampleBundles runs every example's C variant from its bundle files
// against the bundle's float64 reference, as `zyx-tt run --verify` does.
func TestExampleBundles(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) on PATH")
	}
	dev, err := c.Open(context.Background(), c.Config{})
	require.NoError(t, err)
	_, ok := dev.Pool().(driver.HostMemory)
	require.True(t, ok, "the %s device computes on host memory", dev.Name())
	backendtest.RunExamples(t, dev,
		backendtest.Example{Name: "vadd", Set: map[string]string{"n": "100003"}},
		backendtest.Example{Name: "vadd"},
		backendtest.Example{Name: "unary", Set: map[string]string{"n": "5003"}},
		backendtest.Example{Name: "matmul", Set: map[string]string{"m": "37", "n": "41", "k": "29"}},
		backendtest.Example{Name: "matmul"},
	)
}
