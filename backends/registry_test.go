package backends

import (
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
	Register(name, DriverFunc(func(context.Context, *Config) ([]Device, error) {
		opens.Add(1)
		time.Sleep(20 * time.Millisecond) // widen the window for racing first users
		return []Device{dev}, nil
	}))
	require.Contains(t, Registered(), name)
	require.Zero(t, opens.Load(), "registering opens nothing")

	const users = 32
	start := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]BackendStatus, users)
	errs := make([]error, users)
	for i := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i], errs[i] = Backend(bg, name)
		}()
	}
	close(start)
	wg.Wait()
	require.EqualValues(t, 1, opens.Load(), "32 concurrent first users open the backend once")
	for i := range users {
		require.NoError(t, errs[i])
		require.NoError(t, got[i].Err)
		require.Equal(t, []Device{dev}, got[i].Devices, "every user sees the devices of the one open")
	}
	d, err := Lookup(bg, name)
	require.NoError(t, err)
	require.Same(t, dev, d)
	require.EqualValues(t, 1, opens.Load())

	require.PanicsWithValue(t, "backends: Register called twice for "+name, func() {
		Register(name, DriverFunc(nil))
	})
	require.PanicsWithValue(t, "backends: Register driver is nil", func() { Register("test-nil", nil) })
}

func TestRegistryKeepsReasons(t *testing.T) {
	missing := &staticDriver{err: errors.New("libfake.so.1: cannot open shared object file")}
	empty := &staticDriver{}
	withRegistry(t, map[string]Driver{
		"missing": missing,
		"empty":   empty,
		"panicky": DriverFunc(func(context.Context, *Config) ([]Device, error) { panic("boom") }),
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
	withRegistry(t, map[string]Driver{})
	_, err := Backend(bg, "cudaa")
	require.EqualError(t, err, `unknown backend "cudaa" (forgotten import?)`)
	_, err = Lookup(bg, "cudaa")
	require.EqualError(t, err, `unknown backend "cudaa" (forgotten import?)`)
	_, err = Lookup(bg, "cudaa:0")
	require.EqualError(t, err, `unknown backend "cudaa" (forgotten import?)`)
	_, err = DriverOf("cudaa")
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
	withRegistry(t, map[string]Driver{
		"c":     &staticDriver{devs: []Device{c}},
		"cblas": &staticDriver{devs: []Device{cblas}},
		"gpu":   &staticDriver{devs: []Device{gpu0, gpu1}},
		"tt":    &staticDriver{devs: []Device{tt, emu}},
		"none":  &staticDriver{err: errors.New("no card")},
	})
	for _, tc := range []struct {
		selector string
		want     Device
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
			require.Same(t, tc.want, d)
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
	name := fmt.Sprintf("test-slow-open-%d", countingRuns.Add(1))
	release := make(chan struct{})
	entered := make(chan struct{})
	dev := &fakeDevice{name: name + ":0", backend: name}
	Register(name, DriverFunc(func(context.Context, *Config) ([]Device, error) {
		close(entered)
		<-release
		return []Device{dev}, nil
	}))
	done := make(chan BackendStatus)
	go func() {
		st, _ := Backend(bg, name)
		done <- st
	}()
	<-entered
	// The backend is still opening: CloseAll must neither wait for it nor
	// touch its half-built state (the race detector watches this).
	require.NoError(t, CloseAll())
	close(release)
	st := <-done
	require.NoError(t, st.Err)
	require.Equal(t, []Device{dev}, st.Devices)
}
