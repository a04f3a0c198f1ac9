//go:build darwin || freebsd || linux || netbsd

package cblas_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/cblas"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// TestExampleBundles runs the matmul example's GEMM variant from its bundle
// files against the bundle's float64 reference.
func TestExampleBundles(t *testing.T) {
	dev, err := cblas.Open(context.Background(), cblas.Config{})
	if err != nil {
		t.Skipf("no CBLAS library: %v", err)
	}
	_, ok := dev.Pool().(driver.HostMemory)
	require.True(t, ok, "the %s device computes on host memory", dev.Name())
	backendtest.RunExamples(t, dev,
		backendtest.Example{Name: "matmul", Set: map[string]string{"m": "37", "n": "41", "k": "29"}},
		backendtest.Example{Name: "matmul"},
	)
}
