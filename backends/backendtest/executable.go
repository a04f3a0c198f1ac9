package backendtest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/hostpool"
)

// Arg is one launch argument described apart from any device, so that a
// suite can make it on each device it uses: a buffer of Bytes zero bytes,
// or, when Scalar is set, the scalar Value.
type Arg struct {
	Bytes  int64
	Value  driver.Constant
	Scalar bool
}

// BufferArg is a zeroed buffer of bytes bytes.
func BufferArg(bytes int64) Arg { return Arg{Bytes: bytes} }

// ScalarArg is the scalar c.
func ScalarArg(c driver.Constant) Arg { return Arg{Value: c, Scalar: true} }

// VaddArgs are the vadd example's args for n elements: x, y and z buffers
// of n f32, then n as a u32.
func VaddArgs(n int) []Arg {
	return []Arg{BufferArg(4 * int64(n)), BufferArg(4 * int64(n)), BufferArg(4 * int64(n)), ScalarArg(driver.UintConst(driver.U32, uint64(n)))}
}

// MatmulArgs are the matmul example's args: a (m×k), b (k×n) and c (m×n)
// f32 buffers, then m, n and k as u32.
func MatmulArgs(m, n, k int) []Arg {
	u32 := func(v int) Arg { return ScalarArg(driver.UintConst(driver.U32, uint64(v))) }
	return []Arg{BufferArg(4 * int64(m*k)), BufferArg(4 * int64(k*n)), BufferArg(4 * int64(m*n)), u32(m), u32(n), u32(k)}
}

// MakeArgs makes args on pool: each buffer allocated and zeroed, each
// scalar as it is. The buffers are released when the test ends; a pool
// that is closed by then is not an error.
func MakeArgs(t testing.TB, pool *backends.Pool, args []Arg) []driver.LaunchArg {
	t.Helper()
	ctx := context.Background()
	out := make([]driver.LaunchArg, len(args))
	for i, a := range args {
		if a.Scalar {
			out[i] = driver.VarArg(a.Value)
			continue
		}
		id, err := pool.Alloc(ctx, a.Bytes)
		require.NoError(t, err, "arg %d: %d bytes", i, a.Bytes)
		t.Cleanup(func() { _ = pool.Release(id) })
		require.NoError(t, pool.Write(ctx, id, 0, make([]byte, a.Bytes)))
		out[i] = driver.BufArg(id)
	}
	return out
}

// Opener opens a device of the backend under test for a check of its own,
// which closes it. It skips the test, naming what is missing, where the
// backend has no device.
type Opener func(t testing.TB) driver.Device

// RunExecutableConformance checks the executable contract every backend
// keeps, with prog compiled on dev and launched with args (made on dev's
// pool):
//
//   - Compile then Launch works, more than once, and LaunchTimed reports a
//     positive time or ErrUnsupported;
//   - Release is idempotent: a second Release, and Releases racing each
//     other, return nil;
//   - Launch and LaunchTimed after Release return an error wrapping
//     ErrClosed, and so does every launch that loses a race with Release;
//   - on a device of its own from open: once the device is closed (Close
//     twice is nil), Launch and LaunchTimed of an executable compiled
//     before wrap ErrClosed, Compile wraps ErrClosed, Alloc in its pool
//     wraps ErrClosed (unless the pool is the shared host pool), and
//     Release (of a live or an already released executable) is still nil.
//
// dev stays open; every error names the backend.
func RunExecutableConformance(t *testing.T, devDriver driver.Device, open Opener, prog *driver.Program, args ...Arg) {
	dev := backends.DeviceOf(devDriver)
	t.Helper()
	ctx := context.Background()
	backend := dev.Backend()
	launchArgs := MakeArgs(t, dev.Pool(), args)
	compile := func(t *testing.T, d *backends.Device) *backends.Executable {
		t.Helper()
		exe, err := d.Compile(ctx, prog)
		require.NoError(t, err)
		require.NotNil(t, exe)
		return exe
	}

	t.Run("compile and launch", func(t *testing.T) {
		exe := compile(t, dev)
		defer exe.Release()
		require.NoError(t, exe.Launch(ctx, launchArgs))
		require.NoError(t, exe.Launch(ctx, launchArgs), "a compiled program launches again")
		dt, err := exe.LaunchTimed(ctx, launchArgs)
		if errors.Is(err, driver.ErrUnsupported) {
			t.Logf("%s: LaunchTimed: %v", dev.Name(), err)
		} else {
			require.NoError(t, err)
			require.Positive(t, dt)
		}
	})

	t.Run("release is idempotent", func(t *testing.T) {
		exe := compile(t, dev)
		require.NoError(t, exe.Release())
		require.NoError(t, exe.Release(), "a second Release")
		exe = compile(t, dev)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() { errs[i] = exe.Release() })
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "concurrent Release %d", i)
		}
	})

	t.Run("launch after release", func(t *testing.T) {
		exe := compile(t, dev)
		require.NoError(t, exe.Release())
		requireClosed(t, backend, exe.Launch(ctx, launchArgs), "Launch after Release")
		_, err := exe.LaunchTimed(ctx, launchArgs)
		requireClosed(t, backend, err, "LaunchTimed after Release")
	})

	t.Run("launches racing release", func(t *testing.T) {
		exe := compile(t, dev)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for range 4 {
			wg.Go(func() {
				for range 8 {
					if err := exe.Launch(ctx, launchArgs); err != nil {
						errs <- err
					}
				}
			})
		}
		require.NoError(t, exe.Release())
		wg.Wait()
		close(errs)
		for err := range errs {
			requireClosed(t, backend, err, "a launch that lost the race with Release")
		}
		requireClosed(t, backend, exe.Launch(ctx, launchArgs), "Launch after the race")
	})

	t.Run("closed device", func(t *testing.T) {
		own := backends.DeviceOf(open(t))
		t.Cleanup(func() { _ = own.Close() })
		ownArgs := MakeArgs(t, own.Pool(), args)
		live := compile(t, own)
		require.NoError(t, live.Launch(ctx, ownArgs), "the device works before it closes")
		released := compile(t, own)
		require.NoError(t, released.Release())

		require.NoError(t, own.Close())
		require.NoError(t, own.Close(), "a second Close")
		requireClosed(t, backend, live.Launch(ctx, ownArgs), "Launch after Device.Close")
		_, err := live.LaunchTimed(ctx, ownArgs)
		requireClosed(t, backend, err, "LaunchTimed after Device.Close")
		exe, err := own.Compile(ctx, prog)
		requireClosed(t, backend, err, "Compile after Device.Close")
		require.Nil(t, exe)
		if _, shared := own.Pool().Driver().(*hostpool.Pool); !shared {
			// A device's own memory goes with it; the host pool stays.
			_, err := own.Pool().Alloc(ctx, 16)
			requireClosed(t, backend, err, "Alloc in a closed device's pool")
		}
		require.NoError(t, live.Release(), "Release after Device.Close")
		require.NoError(t, live.Release(), "a second Release after Device.Close")
		require.NoError(t, released.Release(), "Release after Device.Close of one released before")
	})
}

// requireClosed fails unless err wraps ErrClosed and names the backend.
func requireClosed(t testing.TB, backend string, err error, what string) {
	t.Helper()
	require.ErrorIs(t, err, driver.ErrClosed, what)
	requireNamesBackend(t, backend, err, what)
}

// requireNamesBackend fails unless err's message names the backend
// ("opencl: …", "cuda:0: …"), so a user can tell which layer refused.
func requireNamesBackend(t testing.TB, backend string, err error, what string) {
	t.Helper()
	require.True(t, strings.Contains(err.Error(), backend+":"), "%s: the error %q does not name backend %s", what, err, backend)
}
