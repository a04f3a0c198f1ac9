package dummy_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/dummy"
)

var ctx = context.Background()

func parse(t *testing.T, s string) *backends.Config {
	t.Helper()
	cfg, err := backends.ParseConfig([]byte(s))
	require.NoError(t, err)
	return cfg
}

func TestDriverIsGatedByConfig(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config string
		memory int64  // expected pool size when a device opens
		reason string // expected error text when none does
	}{
		{"no section", `{}`, 0, "disabled in config (set dummy.enabled)"},
		{"empty section", `{"dummy": {}}`, 0, "disabled in config (set dummy.enabled)"},
		{"explicitly off", `{"dummy": {"enabled": false}}`, 0, "disabled in config (set dummy.enabled)"},
		{"on", `{"dummy": {"enabled": true}}`, dummy.DefaultMemory, ""},
		{"on with memory", `{"dummy": {"enabled": true, "memory": 4096}}`, 4096, ""},
		{"zero memory", `{"dummy": {"enabled": true, "memory": 0}}`, 0, "config:1:39: dummy.memory: must be ≥ 1 bytes, got 0"},
		{"negative memory", `{"dummy": {"enabled": true, "memory": -1}}`, 0, "dummy.memory: must be ≥ 1 bytes, got -1"},
		{"bad enabled", `{"dummy": {"enabled": "yes"}}`, 0, `config:1:23: dummy.enabled: want true or false, got "yes"`},
		{"unknown key", `{"dummy": {"enabled": true, "memroy": 4096}}`, 0, `dummy: unknown key "memroy"; did you mean "memory"?`},
		{"device_ids none", `{"dummy": {"enabled": true, "device_ids": []}}`, 0, "leaves out device 0"},
		{"device_ids other", `{"dummy": {"enabled": true, "device_ids": [1]}}`, 0, "leaves out device 0"},
		{"device_ids zero", `{"dummy": {"enabled": true, "device_ids": [0]}}`, dummy.DefaultMemory, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			devs, err := dummy.Driver{}.Open(ctx, backendtest.DriverEnv(t, parse(t, tc.config)))
			if tc.reason != "" {
				require.ErrorContains(t, err, tc.reason)
				require.Empty(t, devs)
				return
			}
			require.NoError(t, err)
			require.Len(t, devs, 1)
			d := devs[0]
			require.Equal(t, "dummy", d.Name())
			require.Equal(t, "dummy", d.Backend())
			require.Equal(t, tc.memory, d.Pool().FreeBytes())
			require.NoError(t, d.Close())
		})
	}
	_, err := dummy.Driver{}.Open(ctx, backendtest.DriverEnv(t, nil))
	require.ErrorIs(t, err, driver.ErrNoDevice, "no config at all means disabled")
	for _, memory := range []int64{0, -1} {
		_, err = dummy.New(dummy.Config{Memory: memory})
		require.ErrorIs(t, err, driver.ErrInvalidArgument, "New checks what the config's bounds check")
		require.ErrorContains(t, err, "must be positive")
	}
}

func TestRegisteredAndSelectable(t *testing.T) {
	require.Contains(t, backends.Registered(), "dummy")
	rt, err := backends.Open(ctx, backends.Options{Config: parse(t, `{"dummy": {"enabled": true, "memory": 1048576}}`)})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })

	st, err := rt.Backend(ctx, "dummy")
	require.NoError(t, err)
	require.NoError(t, st.Err)
	require.Len(t, st.Devices, 1)
	d, err := rt.Lookup(ctx, "dummy")
	require.NoError(t, err)
	require.Same(t, st.Devices[0], d, "the registry opens the backend once")
	require.EqualValues(t, 1<<20, d.Pool().FreeBytes())

	prog := &driver.Program{Name: "only-c", Variants: []driver.Variant{{Format: driver.FormatC, Code: &driver.SourceVariant{Source: "void k(void){}", Entry: "k"}}}}
	require.True(t, prog.Accepts(d.Info().Formats), "the dummy accepts every format")
	dev, exe, err := rt.CompileOn(ctx, prog, "dummy")
	require.NoError(t, err)
	require.Same(t, d, dev)
	require.NoError(t, exe.Launch(ctx, nil))
	require.NoError(t, exe.Release())
}

func newDevice(t *testing.T, memory int64) *dummy.Device {
	t.Helper()
	d, err := dummy.New(dummy.Config{Enabled: true, Memory: memory})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return d
}

func TestPoolAccounting(t *testing.T) {
	d := newDevice(t, 1000)
	p := backends.DeviceOf(d).Pool()
	require.Equal(t, "dummy", p.Name())

	for _, n := range []int64{0, -1} {
		_, err := p.Alloc(ctx, n)
		require.ErrorIs(t, err, driver.ErrInvalidArgument)
	}
	a, err := p.Alloc(ctx, 600)
	require.NoError(t, err)
	_, err = p.Alloc(ctx, 401)
	require.ErrorIs(t, err, driver.ErrOutOfMemory)
	require.EqualValues(t, 400, p.FreeBytes())

	require.NoError(t, p.Retain(a))
	require.NoError(t, p.Release(a))
	require.EqualValues(t, 400, p.FreeBytes())
	require.NoError(t, p.Write(ctx, a, 598, []byte("hi")))
	got := make([]byte, 2)
	require.NoError(t, p.Read(ctx, a, 598, got))
	require.Equal(t, "hi", string(got))
	require.ErrorIs(t, p.Write(ctx, a, 599, []byte("hi")), driver.ErrInvalidArgument)
	require.ErrorIs(t, p.Read(ctx, a, -1, got), driver.ErrInvalidArgument)

	require.NoError(t, p.Release(a))
	require.EqualValues(t, 1000, p.FreeBytes())
	require.Zero(t, d.Memory().Live())
	require.ErrorIs(t, p.Release(a), driver.ErrUnknownBuffer, "double release")
	require.ErrorIs(t, p.Retain(a), driver.ErrUnknownBuffer, "retain after free")
	_, err = p.Size(a)
	require.ErrorIs(t, err, driver.ErrUnknownBuffer)
	require.EqualValues(t, 1000, p.FreeBytes())

	b, err := p.Alloc(ctx, 1000)
	require.NoError(t, err)
	require.NotEqual(t, a, b, "ids are not reused")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = p.Alloc(cancelled, 1)
	require.ErrorIs(t, err, context.Canceled)
}

func TestPoolConformance(t *testing.T) {
	backendtest.RunPoolConformance(t, backends.PoolOf(newDevice(t, 64<<20).Pool()))
}

func TestPoolConcurrentAccounting(t *testing.T) {
	const memory = 1 << 24
	d := newDevice(t, memory)
	p := d.Pool()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var held int64
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := range 300 {
				n := int64(1 + (w*131+i*17)%4096)
				id, err := p.Alloc(ctx, n)
				if err == nil {
					err = p.Retain(id)
				}
				if err == nil {
					err = p.Release(id)
				}
				if err == nil && i%7 != 0 {
					err = p.Release(id)
				} else if err == nil {
					mu.Lock()
					held += n
					mu.Unlock()
				}
				if err != nil {
					errs <- fmt.Errorf("worker %d round %d: %w", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, memory-held, p.FreeBytes())
}

func vaddProgram() *driver.Program {
	return &driver.Program{
		Name:   "vadd",
		Params: []driver.Param{backendtest.Global("a", driver.F32), backendtest.GlobalMut("out", driver.F32), backendtest.Variable("n", driver.U32)},
		Grid:   []driver.GwsDim{driver.BinaryDim(driver.GwsCeilDiv, driver.ParamDim(2), driver.ConstDim(256))},
		// The dummy prepares every format; the variant is only what makes
		// the program compilable at all.
		Variants: []driver.Variant{backendtest.CVariant()},
	}
}

func TestCompileAndLaunch(t *testing.T) {
	d := newDevice(t, 1<<20)
	p := d.Pool()
	in, err := p.Alloc(ctx, 4000)
	require.NoError(t, err)
	out, err := p.Alloc(ctx, 4000)
	require.NoError(t, err)

	_, err = backends.DeviceOf(d).Compile(ctx, &driver.Program{Params: []driver.Param{{DType: 200}}, Variants: []driver.Variant{backendtest.CVariant()}})
	require.ErrorIs(t, err, driver.ErrInvalidArgument, "an invalid program does not compile")

	exe, err := backends.DeviceOf(d).Compile(ctx, vaddProgram())
	require.NoError(t, err)
	args := []driver.LaunchArg{driver.BufArg(in), driver.BufArg(out), driver.VarArg(driver.UintConst(driver.U32, 1000))}
	require.NoError(t, exe.Launch(ctx, args))
	require.EqualValues(t, 1, d.Launches())
	require.Equal(t, []uint64{4}, exe.Driver().(*dummy.Executable).LastGrid(), "ceil(1000/256)")

	elapsed, err := exe.LaunchTimed(ctx, args)
	require.NoError(t, err)
	require.Positive(t, elapsed)
	require.EqualValues(t, 2, d.Launches())

	for _, tc := range []struct {
		name string
		args []driver.LaunchArg
		want error
	}{
		{"too few args", args[:2], driver.ErrInvalidArgument},
		{"scalar for buffer", []driver.LaunchArg{args[2], args[1], args[2]}, driver.ErrInvalidArgument},
		{"buffer for scalar", []driver.LaunchArg{args[0], args[1], args[0]}, driver.ErrInvalidArgument},
		{"wrong scalar dtype", []driver.LaunchArg{args[0], args[1], driver.VarArg(driver.IntConst(driver.I64, 1))}, driver.ErrInvalidArgument},
		{"unknown buffer", []driver.LaunchArg{driver.BufArg(999), args[1], args[2]}, driver.ErrUnknownBuffer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, exe.Launch(ctx, tc.args), tc.want)
			_, err := exe.LaunchTimed(ctx, tc.args)
			require.ErrorIs(t, err, tc.want)
		})
	}
	require.EqualValues(t, 2, d.Launches(), "failed launches are not counted")

	// A grid that divides by zero is refused at launch.
	bad := vaddProgram()
	bad.Grid[0] = driver.BinaryDim(driver.GwsDiv, driver.ConstDim(8), driver.ParamDim(2))
	badExe, err := backends.DeviceOf(d).Compile(ctx, bad)
	require.NoError(t, err)
	zero := []driver.LaunchArg{args[0], args[1], driver.VarArg(driver.UintConst(driver.U32, 0))}
	require.ErrorIs(t, badExe.Launch(ctx, zero), driver.ErrGridExpr)

	require.NoError(t, exe.Release())
	require.NoError(t, exe.Release(), "a second Release does nothing")
	require.ErrorIs(t, exe.Launch(ctx, args), driver.ErrClosed)
}

func TestCompileKeepsItsOwnCopy(t *testing.T) {
	d := newDevice(t, 1<<20)
	prog := vaddProgram()
	exe, err := backends.DeviceOf(d).Compile(ctx, prog)
	require.NoError(t, err)
	prog.Params[2].DType = driver.I64 // the caller reuses its program
	prog.Grid[0] = driver.ConstDim(99)
	id, err := d.Pool().Alloc(ctx, 4)
	require.NoError(t, err)
	require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(id), driver.BufArg(id), driver.VarArg(driver.UintConst(driver.U32, 512))}))
	require.Equal(t, []uint64{2}, exe.Driver().(*dummy.Executable).LastGrid())
}

func TestClosedDevice(t *testing.T) {
	d, err := dummy.New(dummy.Config{Memory: 100})
	require.NoError(t, err)
	id, err := d.Pool().Alloc(ctx, 10)
	require.NoError(t, err)
	exe, err := backends.DeviceOf(d).Compile(ctx, &driver.Program{Name: "empty", Variants: []driver.Variant{backendtest.CVariant()}})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "Close is idempotent")

	_, err = backends.DeviceOf(d).Compile(ctx, &driver.Program{Name: "empty", Variants: []driver.Variant{backendtest.CVariant()}})
	require.ErrorIs(t, err, driver.ErrClosed)
	require.ErrorIs(t, exe.Launch(ctx, nil), driver.ErrClosed)
	_, err = d.Pool().Alloc(ctx, 1)
	require.ErrorIs(t, err, driver.ErrClosed)
	require.ErrorIs(t, d.Pool().Release(id), driver.ErrClosed)
	require.Zero(t, d.Pool().FreeBytes())
}
