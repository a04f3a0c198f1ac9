package backends

import (
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/registry"

	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	bg           = context.Background()
	countingRuns atomic.Int32
)

func TestRegistryOpensLazilyExactlyOnce(t *testing.T) {
	var opens atomic.Int32
	// Registered for real, under a name only this run of this test uses
	// (the registry cannot forget a name, and -count may run it again).
	name := fmt.Sprintf("test-counting-%d", countingRuns.Add(1))
	dev := &fakeDevice{name: name + ":0", backend: name}
	registry.Register(name, driverFunc(func(context.Context, *registry.Env) ([]driver.Device, error) {
		opens.Add(1)
		time.Sleep(20 * time.Millisecond) // widen the window for racing first users
		return []driver.Device{dev}, nil
	}))
	require.Contains(t, Registered(), name)
	require.Zero(t, opens.Load(), "registering opens nothing")
	rt, err := Open(bg, Options{Config: &Config{}, Backends: []string{name}})
	require.NoError(t, err)
	defer rt.Close()
	require.Zero(t, opens.Load(), "making a runtime opens nothing")

	const users = 32
	start := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]BackendStatus, users)
	errs := make([]error, users)
	for i := range users {
		wg.Go(func() {
			<-start
			got[i], errs[i] = rt.Backend(bg, name)
		})
	}
	close(start)
	wg.Wait()
	require.EqualValues(t, 1, opens.Load(), "32 concurrent first users open the backend once")
	for i := range users {
		require.NoError(t, errs[i])
		require.NoError(t, got[i].Err)
		require.Equal(t, wrapAll(dev), got[i].Devices, "every user sees the devices of the one open")
	}
	d, err := rt.Lookup(bg, name)
	require.NoError(t, err)
	require.Same(t, dev, d.Driver())
	require.EqualValues(t, 1, opens.Load())

	require.PanicsWithValue(t, "backends: Register called twice for "+name, func() {
		registry.Register(name, driverFunc(nil))
	})
	require.PanicsWithValue(t, "backends: Register driver is nil", func() { registry.Register("test-nil", nil) })
}

// A cancelled first caller must not poison the backend: the open runs on
// its own and is kept, and an open that timed out is tried again.
func TestCancelledOpenIsNotCached(t *testing.T) {
	release := make(chan struct{})
	var opens atomic.Int32
	dev := &fakeDevice{name: "slow:0", backend: "slow"}
	rt := withRegistry(t, map[string]opener{
		"slow": driverFunc(func(ctx context.Context, _ *registry.Env) ([]driver.Device, error) {
			opens.Add(1)
			select {
			case <-release:
				return []driver.Device{dev}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}),
	})
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err := Lookup(ctx, "slow")
	require.ErrorIs(t, err, context.Canceled, "the caller's own cancellation")
	close(release)
	d, err := Lookup(bg, "slow")
	require.NoError(t, err, "the next caller is not given the first caller's context.Canceled")
	require.Same(t, dev, d.Driver())
	require.EqualValues(t, 1, opens.Load(), "the open the cancelled caller started was kept")

	// An open that outlives its timeout is not cached either.
	var tries atomic.Int32
	hang := make(chan struct{})
	defer close(hang)
	drivers := map[string]opener{"hung": driverFunc(func(ctx context.Context, _ *registry.Env) ([]driver.Device, error) {
		if tries.Add(1) == 1 {
			<-ctx.Done() // the first open hangs until its timeout
			return nil, ctx.Err()
		}
		return []driver.Device{&fakeDevice{name: "hung:0", backend: "hung"}}, nil
	})}
	rt2 := privateRuntime(t, drivers)
	rt2.openTimeout = 50 * time.Millisecond
	st, err := rt2.Backend(bg, "hung")
	require.NoError(t, err)
	require.ErrorIs(t, st.Err, context.DeadlineExceeded)
	require.ErrorContains(t, st.Err, "did not finish within")
	st, err = rt2.Backend(bg, "hung")
	require.NoError(t, err)
	require.NoError(t, st.Err, "a timed-out open is tried again")
	require.EqualValues(t, 2, tries.Load())
	_ = rt
}

// After Close a runtime hands out no device, and after CloseAll the
// package-level functions open backends afresh.
func TestClosedRuntimeNeverReturnsAClosedDevice(t *testing.T) {
	var opens atomic.Int32
	drivers := map[string]opener{"x": driverFunc(func(context.Context, *registry.Env) ([]driver.Device, error) {
		opens.Add(1)
		return []driver.Device{&fakeDevice{name: "x:0", backend: "x"}}, nil
	})}
	rt := privateRuntime(t, drivers)
	d, err := rt.Lookup(bg, "x")
	require.NoError(t, err)
	require.NoError(t, rt.Close())
	require.True(t, d.Driver().(*fakeDevice).closed.Load())
	_, err = rt.Lookup(bg, "x")
	require.ErrorIs(t, err, ErrClosed, "a closed runtime returns ErrClosed, never the closed device")
	_, err = rt.Backend(bg, "x")
	require.ErrorIs(t, err, ErrClosed)
	_, err = rt.HostPool()
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, rt.Close(), "Close twice")

	// The default runtime: CloseAll, then Lookup reopens.
	withRegistry(t, drivers)
	first, err := Lookup(bg, "x")
	require.NoError(t, err)
	require.NoError(t, CloseAll())
	require.True(t, first.Driver().(*fakeDevice).closed.Load())
	defaultRT.Lock()
	defaultRT.rt = privateRuntime(t, drivers) // what Default would make, over these drivers
	defaultRT.Unlock()
	again, err := Lookup(bg, "x")
	require.NoError(t, err)
	require.NotSame(t, first, again, "a fresh device, not the closed one")
	require.False(t, again.Driver().(*fakeDevice).closed.Load())
}

func TestRegistryKeepsReasons(t *testing.T) {
	missing := &staticDriver{err: errors.New("libfake.so.1: cannot open shared object file")}
	empty := &staticDriver{}
	withRegistry(t, map[string]opener{
		"missing": missing,
		"empty":   empty,
		"panicky": driverFunc(func(context.Context, *registry.Env) ([]driver.Device, error) { panic("boom") }),
	})
	for range 3 {
		st, err := Backend(bg, "missing")
		require.NoError(t, err)
		require.Empty(t, st.Devices)
		require.EqualError(t, st.Err, "libfake.so.1: cannot open shared object file")
	}
	require.EqualValues(t, 1, missing.opens.Load(), "a failed open is not retried")

	st, err := Backend(bg, "empty")
	require.NoError(t, err)
	require.ErrorIs(t, st.Err, ErrNoDevice, "no devices and no reason is still a reason")

	st, err = Backend(bg, "panicky")
	require.NoError(t, err)
	require.ErrorContains(t, st.Err, "panicked during init: boom")

	all := Status(bg)
	require.Len(t, all, 3)
	require.Equal(t, []string{"empty", "missing", "panicky"}, []string{all[0].Name, all[1].Name, all[2].Name})
	for _, s := range all {
		require.Error(t, s.Err, s.Name)
	}
	require.Empty(t, Devices(bg))

	_, err = Lookup(bg, "missing")
	require.ErrorContains(t, err, "missing: libfake.so.1")
}

func TestUnknownBackend(t *testing.T) {
	withRegistry(t, map[string]opener{})
	_, err := Backend(bg, "cudaa")
	require.EqualError(t, err, `unknown backend "cudaa" (forgotten import?)`)
	_, err = Lookup(bg, "cudaa")
	require.EqualError(t, err, `unknown backend "cudaa" (forgotten import?)`)
	_, err = Lookup(bg, "cudaa:0")
	require.EqualError(t, err, `unknown backend "cudaa" (forgotten import?)`)
	rt, err := Default()
	require.NoError(t, err)
	_, err = rt.Inventory(bg, "cudaa")
	require.EqualError(t, err, `unknown backend "cudaa" (forgotten import?)`)
	_, err = Open(bg, Options{Backends: []string{"cudaa"}})
	require.EqualError(t, err, `unknown backend "cudaa" (forgotten import?)`)
}

func TestLookupSelectors(t *testing.T) {
	host := newFakePool("host", 100)
	c := &fakeDevice{name: "c", backend: "c", pool: host}
	cblas := &fakeDevice{name: "cblas", backend: "cblas", pool: host}
	gpu0 := &fakeDevice{name: "gpu:0", backend: "gpu", pool: newFakePool("gpu:0", 10)}
	gpu1 := &fakeDevice{name: "gpu:1", backend: "gpu", pool: newFakePool("gpu:1", 20)}
	tt := &fakeDevice{name: "tt:0", backend: "tt", pool: newFakePool("tt:0", 30)}
	emu := &fakeDevice{name: "tt-emu:0", backend: "tt", pool: newFakePool("tt-emu:0", 40)}
	withRegistry(t, map[string]opener{
		"c":     &staticDriver{devs: []driver.Device{c}},
		"cblas": &staticDriver{devs: []driver.Device{cblas}},
		"gpu":   &staticDriver{devs: []driver.Device{gpu0, gpu1}},
		"tt":    &staticDriver{devs: []driver.Device{tt, emu}},
		"none":  &staticDriver{err: errors.New("no card")},
	})
	for _, tc := range []struct {
		selector string
		want     driver.Device
		err      string
	}{
		{"c", c, ""},
		{"gpu", gpu0, ""},
		{"gpu:0", gpu0, ""},
		{"gpu:1", gpu1, ""},
		{"gpu:2", nil, "gpu:2: no device: backend gpu has 2 devices"},
		{"gpu:x", nil, "backend gpu has 2 devices"},
		{"tt:0", tt, ""},
		{"tt-emu:0", emu, ""},
		{"tt-emu", emu, ""},
		{"none", nil, "none: no card"},
		{"nothing", nil, `unknown backend "nothing"`},
	} {
		t.Run(tc.selector, func(t *testing.T) {
			d, err := Lookup(bg, tc.selector)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Same(t, tc.want, d.Driver())
		})
	}

	require.Len(t, Devices(bg), 6)
	pools := Pools(bg)
	require.Len(t, pools, 5, "the shared host pool is listed once")
	byName := map[string]PoolStatus{}
	for _, p := range pools {
		byName[p.Pool.Name()] = p
	}
	require.Equal(t, []string{"c", "cblas"}, byName["host"].Devices)
	require.EqualValues(t, 100, byName["host"].FreeBytes)
	require.EqualValues(t, 20, byName["gpu:1"].FreeBytes)

	require.NoError(t, CloseAll())
	for _, d := range []*fakeDevice{c, cblas, gpu0, gpu1, tt, emu} {
		require.True(t, d.closed.Load(), d.name)
	}
}

func TestCloseAllDuringAnOpenIsNotARace(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	dev := &fakeDevice{name: "slow:0", backend: "slow"}
	withRegistry(t, map[string]opener{"slow": driverFunc(func(context.Context, *registry.Env) ([]driver.Device, error) {
		close(entered)
		<-release
		return []driver.Device{dev}, nil
	})})
	done := make(chan BackendStatus)
	go func() {
		st, _ := Backend(bg, "slow")
		done <- st
	}()
	<-entered
	// The backend is still opening: CloseAll must neither wait for it nor
	// touch its half-built state (the race detector watches this), and the
	// devices that open makes must not outlive the closed runtime.
	require.NoError(t, CloseAll())
	close(release)
	st := <-done
	require.ErrorIs(t, st.Err, ErrClosed)
	require.Empty(t, st.Devices)
	require.True(t, dev.closed.Load(), "the late device was closed, not leaked")
}

// namingDriver is a static driver that also names its devices' prefixes.
type namingDriver struct {
	staticDriver
	prefixes map[string]string
}

func (d *namingDriver) DeviceNamePrefixes() map[string]string { return d.prefixes }

func TestLookupNeverPicksAnUnnamedEmulator(t *testing.T) {
	emu := &fakeDevice{name: "tt-emu:0", backend: "tt", info: DeviceInfo{Kind: KindAccelerator, Emulated: true}}
	tt := &namingDriver{staticDriver: staticDriver{devs: []driver.Device{emu}}, prefixes: map[string]string{"tt": "Tenstorrent", "tt-emu": "emulator"}}
	other := &staticDriver{devs: []driver.Device{&fakeDevice{name: "cl:0", backend: "cl"}}}
	withRegistry(t, map[string]opener{"tt": tt, "cl": other})

	for _, sel := range []string{"tt:0", "tt"} {
		_, err := Lookup(bg, sel)
		require.ErrorIs(t, err, ErrNoDevice, sel)
		require.ErrorContains(t, err, "backend tt has 0 devices; emulated devices are named on their own (tt-emu:0)", "%s means hardware", sel)
	}
	d, err := Lookup(bg, "tt-emu:0")
	require.NoError(t, err)
	require.Same(t, emu, d.Driver())
	_, err = Lookup(bg, "tt-emu:5")
	require.ErrorContains(t, err, "tt-emu:5: no device: this host has 1 tt-emu device: tt-emu:0")
	require.Zero(t, other.opens.Load(), "a selector only the tt driver names opens no other backend")
}
