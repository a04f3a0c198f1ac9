package vulkan

import (
	"context"
	"testing"

	"github.com/zyxtt/zyxtt/backends"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/opencl"
	"github.com/zyxtt/zyxtt/hostpool"
)

// TestCrossDeviceEvents chains opencl:0 → host → vulkan:0 through events
// only: OpenCL's upload, launch and read into a host-pool buffer, then
// Vulkan's write of that buffer, launch and read, with no waits between
// them. Transfers on vulkan:0 run in place and through staging.
func TestCrossDeviceEvents(t *testing.T) {
	vk := openAll(t)[0]
	cls, err := opencl.OpenDevices(context.Background(), opencl.Config{DeviceIDs: &[]int{0}, CacheDir: t.TempDir()})
	if err != nil {
		t.Skipf("no OpenCL device: %v", err)
	}
	cl := cls[0]
	defer func() { require.NoError(t, cl.Close()) }()
	host, err := hostpool.New(hostpool.Config{})
	require.NoError(t, err)
	defer host.Close()
	const n = 1 << 16
	t.Run("in place", func(t *testing.T) {
		backendtest.RunCrossDeviceEvents(t, cl, vk, backendtest.VaddStep(t, n), backendtest.VaddStep(t, n), backends.PoolOf(host))
	})
	t.Run("staged", func(t *testing.T) {
		stageAlways(t, vk)
		backendtest.RunCrossDeviceEvents(t, cl, vk, backendtest.VaddStep(t, n), backendtest.VaddStep(t, n), backends.PoolOf(host))
	})
	t.Run("back", func(t *testing.T) {
		backendtest.RunCrossDeviceEvents(t, vk, cl, backendtest.VaddStep(t, n), backendtest.VaddStep(t, n), backends.PoolOf(host))
	})
}
