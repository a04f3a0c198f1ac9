package backendtest

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/hostpool"
)

// Once is a device that a test binary opens once, on first use, and hands
// to every test that asks for it: the host backends' default device, which
// costs a compiler probe or a library load to open.
type Once[D any] struct {
	once sync.Once
	dev  D
	skip string
	err  error
}

// Get opens the device with open the first time and returns it. open gives
// the device, or why a test cannot have it here (no compiler, no library:
// the test is skipped with that reason), or an error that fails the test.
func (o *Once[D]) Get(t testing.TB, open func() (dev D, skip string, err error)) D {
	t.Helper()
	o.once.Do(func() { o.dev, o.skip, o.err = open() })
	if o.skip != "" {
		t.Skip(o.skip)
	}
	require.NoError(t, o.err)
	return o.dev
}

// RequireHostPools checks where the devices of a backend that computes in
// host memory do so: own, a device opened on its own, on the process-wide
// host pool, and the device the registry opens for backend name on the
// runtime's host pool. It returns the registry's device.
func RequireHostPools(t testing.TB, ownDriver driver.Device, name string) *backends.Device {
	own := backends.DeviceOf(ownDriver)
	t.Helper()
	hp, err := hostpool.Default()
	require.NoError(t, err)
	require.Same(t, hp, own.Pool().Driver(), "a device opened on its own computes on the process-wide host pool")
	dev, err := backends.Lookup(context.Background(), name)
	require.NoError(t, err)
	rtHost, err := backends.HostPool()
	require.NoError(t, err)
	require.Same(t, rtHost, dev.Pool(), "a device of a runtime computes on the runtime's host pool")
	require.Equal(t, name, dev.Backend())
	return dev
}
