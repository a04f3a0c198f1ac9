package onedevice_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/dummy"
	"github.com/zyxtt/zyxtt/backends/internal/onedevice"
	"github.com/zyxtt/zyxtt/hostpool"
)

type section struct {
	Memory int64 `json:"memory"`
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	var opened []section
	open := func(_ context.Context, s section, host *hostpool.Pool) (*dummy.Device, error) {
		require.NotNil(t, host, "the runtime's host pool reaches the device")
		opened = append(opened, s)
		if s.Memory < 0 {
			return nil, errors.New("negative memory")
		}
		return dummy.New(dummy.Config{Memory: max(s.Memory, 1)})
	}
	for _, tc := range []struct {
		name, config string
		want         string // error text, "" for a device
		memory       int64
	}{
		{"section", `{"one": {"memory": 4096}}`, "", 4096},
		{"no section", `{}`, "", 0},
		{"no config", "", "", 0},
		{"device 0 allowed", `{"one": {"device_ids": [0], "memory": 8}}`, "", 8},
		{"device 0 left out", `{"one": {"device_ids": [1]}}`, "no device: device_ids in the config excludes the one device", 0},
		{"bad section", `{"one": {"memory": "lots"}}`, `config:1:20: one.memory: want a whole number, got "lots"`, 0},
		{"open fails", `{"one": {"memory": -1}}`, "negative memory", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg *backends.Config
			if tc.config != "" {
				var err error
				cfg, err = backends.ParseConfig([]byte(tc.config))
				require.NoError(t, err)
			}
			opened = nil
			devs, err := onedevice.Open(ctx, backendtest.DriverEnv(t, cfg), "one", open)
			if tc.want != "" {
				require.ErrorContains(t, err, tc.want)
				require.Empty(t, devs)
				if tc.name == "device 0 left out" {
					require.ErrorIs(t, err, driver.ErrNoDevice)
					require.Empty(t, opened, "nothing is opened for an excluded device")
				}
				return
			}
			require.NoError(t, err)
			require.Len(t, devs, 1)
			require.Equal(t, []section{{Memory: tc.memory}}, opened)
			require.EqualValues(t, max(tc.memory, 1), devs[0].Pool().FreeBytes())
			require.NoError(t, devs[0].Close())
		})
	}
}

// TestDriver: the registered form opens what Open opens, from the same
// section, and refuses what it refuses.
func TestDriver(t *testing.T) {
	ctx := context.Background()
	drv := onedevice.Driver("one", func(_ context.Context, s section, host *hostpool.Pool) (*dummy.Device, error) {
		require.NotNil(t, host)
		return dummy.New(dummy.Config{Memory: s.Memory})
	})
	cfg, err := backends.ParseConfig([]byte(`{"one": {"memory": 4096}}`))
	require.NoError(t, err)
	devs, err := drv.Open(ctx, backendtest.DriverEnv(t, cfg))
	require.NoError(t, err)
	require.Len(t, devs, 1)
	require.EqualValues(t, 4096, devs[0].Pool().FreeBytes())
	require.NoError(t, devs[0].Close())

	cfg, err = backends.ParseConfig([]byte(`{"one": {"device_ids": [1]}}`))
	require.NoError(t, err)
	_, err = drv.Open(ctx, backendtest.DriverEnv(t, cfg))
	require.ErrorIs(t, err, driver.ErrNoDevice)
}

// TestRegister: Register makes the driver and the section known, and the
// driver it returns is the one a runtime opens.
func TestRegister(t *testing.T) {
	const name = "onedevice-register-test"
	drv := onedevice.Register(name, func(_ context.Context, s section, host *hostpool.Pool) (*dummy.Device, error) {
		require.NotNil(t, host)
		return dummy.New(dummy.Config{Memory: s.Memory})
	})
	bad, err := backends.ParseConfig([]byte(`{"` + name + `": {"memory": 4096, "nope": 1}}`))
	require.NoError(t, err)
	rt, err := backends.Open(context.Background(), backends.Options{Config: bad, Backends: []string{name}})
	require.NoError(t, err)
	require.Contains(t, strings.Join(rt.ConfigProblems(), "\n"), "nope", "the section's type is registered: its unknown keys are problems")
	require.NoError(t, rt.Close())

	cfg, err := backends.ParseConfig([]byte(`{"` + name + `": {"memory": 4096}}`))
	require.NoError(t, err)
	rt, err = backends.Open(context.Background(), backends.Options{Config: cfg, Backends: []string{name}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	require.Empty(t, rt.ConfigProblems())
	require.Contains(t, rt.Registered(), name)
	devs := rt.Devices(context.Background())
	require.Len(t, devs, 1)
	require.EqualValues(t, 4096, devs[0].Pool().FreeBytes())
	own, err := drv.Open(context.Background(), backendtest.DriverEnv(t, cfg))
	require.NoError(t, err)
	require.Len(t, own, 1)
	require.NoError(t, own[0].Close())
}
