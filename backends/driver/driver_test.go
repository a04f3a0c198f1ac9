package driver_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/dummy"
)

func TestRegisterRefusesNil(t *testing.T) {
	require.PanicsWithValue(t, "backends: Register driver is nil", func() { driver.Register("test-nil-driver", nil) })
}

// envSeen is the Env the test driver was last opened with. The test
// drivers and formats register in init, as real drivers do, so that
// -count=N runs each test again against the same registrations (Register
// refuses a second time).
var envSeen *driver.Env

func init() {
	driver.Register("test-driver-env", driver.DriverFunc(func(_ context.Context, env *driver.Env) ([]driver.Device, error) {
		envSeen = env
		return nil, driver.ErrUnsupported
	}))
	driver.RegisterFormat("test-exotic", "exotic.json", reflect.TypeFor[*exoticCode]())
}

func TestRegisteredDriverOpensThroughARuntime(t *testing.T) {
	envSeen = nil
	cfg, err := backends.ParseConfig([]byte(`{"test-driver-env": {"device_ids": [2]}}`))
	require.NoError(t, err)
	rt, err := backends.Open(context.Background(), backends.Options{Config: cfg, Backends: []string{"test-driver-env"}})
	require.NoError(t, err)
	defer rt.Close()
	st, err := rt.Backend(context.Background(), "test-driver-env")
	require.NoError(t, err)
	require.ErrorIs(t, st.Err, driver.ErrUnsupported)
	require.NotNil(t, envSeen)
	require.Same(t, cfg, envSeen.Config, "the driver sees the runtime's config")
	host, err := rt.HostPool()
	require.NoError(t, err)
	require.Same(t, host.Driver(), envSeen.HostPool, "and its host pool")
	require.False(t, driver.Common(envSeen, "test-driver-env").Allows(0))
	require.True(t, driver.Common(envSeen, "test-driver-env").Allows(2))
}

type exoticCode struct{ Blob []byte }

func TestRegisterFormat(t *testing.T) {
	fi, ok := driver.LookupFormat("test-exotic")
	require.True(t, ok)
	require.Equal(t, "exotic.json", fi.File)
	p := &driver.Program{Name: "x", Variants: []driver.Variant{{Format: "test-exotic", Code: &exoticCode{}}}}
	require.NoError(t, p.Validate())
	p.Variants[0].Code = &driver.SourceVariant{}
	require.ErrorIs(t, p.Validate(), driver.ErrInvalidArgument, "code of the wrong type")
	p.Variants[0] = driver.Variant{Format: "nope", Code: &exoticCode{}}
	require.ErrorContains(t, p.Validate(), `unknown format "nope"`)
	require.Panics(t, func() { driver.RegisterFormat("test-exotic", "other.json", reflect.TypeFor[*exoticCode]()) })
}

func TestReleaseOnce(t *testing.T) {
	var mu sync.Mutex
	released, frees := false, 0
	free := func() error { frees++; return errors.New("freed with an error") }
	require.EqualError(t, driver.ReleaseOnce(&mu, &released, free), "freed with an error", "the first release reports what free did")
	require.True(t, released)
	require.NoError(t, driver.ReleaseOnce(&mu, &released, free), "a second release does nothing")
	require.Equal(t, 1, frees)
	require.True(t, mu.TryLock(), "the lock is given back")
}

func TestCheckReleased(t *testing.T) {
	var mu sync.Mutex
	released := false
	require.NoError(t, driver.CheckReleased("x", &mu, &released))
	require.NoError(t, driver.ReleaseOnce(&mu, &released, func() error { return nil }))
	err := driver.CheckReleased("x", &mu, &released)
	require.ErrorIs(t, err, driver.ErrClosed)
	var be *driver.Error
	require.ErrorAs(t, err, &be)
	require.Equal(t, "x", be.Backend)
	require.Equal(t, "launch", be.Op)
	require.ErrorContains(t, err, "executable released")
}

func TestCheckOpen(t *testing.T) {
	var mu sync.Mutex
	closed := false
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, driver.CheckOpen(ctx, "x", "alloc", "x:0", &mu, &closed))
	closed = true
	err := driver.CheckOpen(ctx, "x", "alloc", "x:0", &mu, &closed)
	require.ErrorIs(t, err, driver.ErrClosed)
	var be *driver.Error
	require.ErrorAs(t, err, &be)
	require.Equal(t, "x", be.Backend)
	require.Equal(t, "alloc", be.Op)
	require.ErrorContains(t, err, "x:0", "the error names the device")
	require.True(t, mu.TryLock(), "the lock is given back")
	mu.Unlock()
	cancel()
	require.ErrorIs(t, driver.CheckOpen(ctx, "x", "alloc", "x:0", &mu, &closed), context.Canceled, "ctx's error comes first")
}

func TestSectionDriver(t *testing.T) {
	type section struct {
		Memory int64 `json:"memory"`
	}
	var got section
	drv := driver.SectionDriver("one", func(_ context.Context, s section) ([]driver.Device, error) {
		got = s
		return nil, driver.ErrNoDevice
	})
	cfg, err := backends.ParseConfig([]byte(`{"one": {"memory": 64}}`))
	require.NoError(t, err)
	_, err = drv.Open(context.Background(), &driver.Env{Config: cfg})
	require.ErrorIs(t, err, driver.ErrNoDevice)
	require.Equal(t, section{Memory: 64}, got, "open gets the decoded section")

	cfg, err = backends.ParseConfig([]byte(`{"one": {"memory": "lots"}}`))
	require.NoError(t, err)
	_, err = drv.Open(context.Background(), &driver.Env{Config: cfg})
	require.ErrorContains(t, err, `config:1:20: one.memory: want a whole number, got "lots"`)
}

func TestOpenEach(t *testing.T) {
	ctx := context.Background()
	var opened []int
	open := func(i int) (driver.Device, error) {
		opened = append(opened, i)
		if i == 1 {
			return nil, errors.New("broken")
		}
		return dummy.New(dummy.Config{Memory: 64})
	}
	ids := []int{0, 1, 3}
	devs, err := driver.OpenEach(ctx, "x", 4, backends.Common{DeviceIDs: &ids}, open, nil, "none")
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 3}, opened, "only the kept ordinals, in order")
	require.Len(t, devs, 2, "a device that does not open is skipped")
	for _, d := range devs {
		require.NoError(t, d.Close())
	}

	opened = nil
	ids = []int{1}
	_, err = driver.OpenEach(ctx, "x", 4, backends.Common{DeviceIDs: &ids}, open, []error{errors.New("platform 2: gone")}, "none")
	require.ErrorIs(t, err, driver.ErrNoDevice)
	require.ErrorContains(t, err, "platform 2: gone\nx:1: broken", "the caller's reasons, then each device's")

	ids = []int{}
	_, err = driver.OpenEach(ctx, "x", 4, backends.Common{DeviceIDs: &ids}, open, nil, "device_ids leaves no device")
	require.ErrorIs(t, err, driver.ErrNoDevice)
	require.ErrorContains(t, err, "device_ids leaves no device")

	// A ctx done part way closes what was opened.
	cctx, cancel := context.WithCancel(ctx)
	var first driver.Device
	_, err = driver.OpenEach(cctx, "x", 4, backends.Common{}, func(i int) (driver.Device, error) {
		d, err := open(i)
		if i == 0 {
			first = d
			cancel()
		}
		return d, err
	}, nil, "none")
	require.ErrorIs(t, err, context.Canceled)
	_, err = first.Compile(ctx, &driver.Program{Name: "p"})
	require.ErrorIs(t, err, driver.ErrClosed, "the device opened before the cancel is closed")
}

func TestHoldExecutable(t *testing.T) {
	var mu sync.Mutex
	var refs atomic.Int32
	refs.Store(1)
	released := false
	require.NoError(t, driver.HoldExecutable("x", &mu, &released, &refs))
	require.Equal(t, int32(2), refs.Load(), "a launch holds a reference")
	released = true
	err := driver.HoldExecutable("x", &mu, &released, &refs)
	require.ErrorIs(t, err, driver.ErrClosed)
	require.ErrorContains(t, err, "executable released")
	require.Equal(t, int32(2), refs.Load(), "a released executable gets no reference")
	require.True(t, mu.TryLock(), "the lock is given back")
}

func TestSplitArgs(t *testing.T) {
	p := &driver.Program{Params: []driver.Param{
		{Name: "x", Kind: driver.Global, DType: driver.F32},
		{Name: "n", Kind: driver.Variable, DType: driver.U32},
		{Name: "y", Kind: driver.GlobalMut, DType: driver.F32},
		{Name: "s", Kind: driver.Variable, DType: driver.F16},
	}}
	args := []driver.LaunchArg{
		driver.BufArg(7),
		driver.VarArg(driver.UintConst(driver.U32, 5)),
		driver.BufArg(9),
		driver.VarArg(driver.FloatConst(driver.F16, 1)),
	}
	got := map[int][]byte{}
	ids, err := driver.SplitArgs("x", p, args, func(c driver.Constant) ([]byte, error) { return c.NativeBytes(), nil },
		func(i int, v []byte) { got[i] = v })
	require.NoError(t, err)
	require.Equal(t, []driver.BufferID{7, 9}, ids, "the buffers in param order")
	require.Equal(t, map[int][]byte{1: {5, 0, 0, 0}, 3: {0x00, 0x3c}}, got, "each scalar by its param index")

	_, err = driver.SplitArgs("x", p, args, func(driver.Constant) ([]byte, error) { return nil, errors.New("no such type") },
		func(int, []byte) { t.Fatal("a refused scalar is not set") })
	require.ErrorIs(t, err, driver.ErrUnsupported)
	require.ErrorContains(t, err, "param 1: no such type")
}
