// Package backendtest is the test support the backend packages share: the
// checks every device pool must pass (RunPoolConformance), the executable
// contract (RunExecutableConformance), the bad input every backend refuses
// (RunBadInputConformance), all of them on every device of a GPU-API
// backend (RunDeviceSuite), the example bundles run on a device and
// compared with their float64 references, vadd as a quick proof that a
// device still computes, a zero-allocation check for hot paths, and the
// vadd bandwidth benchmark and the timing of transfer benchmarks
// (BenchTransfers). It is imported only by tests.
package backendtest

import (
	"context"
	"encoding/binary"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/hostpool"
)

// F32Bytes is v little endian, as device buffers hold it.
func F32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// BytesF32 reads little-endian f32 values.
func BytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// RandomF32 is n values uniform in [lo, hi), the same for the same seed.
func RandomF32(seed uint64, n int, lo, hi float32) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	v := make([]float32, n)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float32()
	}
	return v
}

// Upload allocates a buffer of p holding data, released when the test
// ends.
func Upload(t testing.TB, p *backends.Pool, data []byte) driver.BufferID {
	t.Helper()
	ctx := context.Background()
	id, err := p.Alloc(ctx, int64(len(data)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Release(id) })
	require.NoError(t, p.Write(ctx, id, 0, data))
	return id
}

// Download is the whole content of buffer id of p.
func Download(t testing.TB, p *backends.Pool, id driver.BufferID) []byte {
	t.Helper()
	n, err := p.Size(id)
	require.NoError(t, err)
	out := make([]byte, n)
	require.NoError(t, p.Read(context.Background(), id, 0, out))
	return out
}

// UploadF32 allocates a buffer of p holding v.
func UploadF32(t testing.TB, p *backends.Pool, v []float32) driver.BufferID {
	t.Helper()
	id, err := p.Alloc(context.Background(), int64(4*len(v)))
	require.NoError(t, err)
	require.NoError(t, p.Write(context.Background(), id, 0, F32Bytes(v)))
	return id
}

// DownloadF32 reads the first n f32 values of a buffer.
func DownloadF32(t testing.TB, p *backends.Pool, id driver.BufferID, n int) []float32 {
	t.Helper()
	b := make([]byte, 4*n)
	require.NoError(t, p.Read(context.Background(), id, 0, b))
	return BytesF32(b)
}

// RequireClose fails unless every got[i] is within atol + rtol·|want[i]|
// of want[i]; NaN never is.
func RequireClose(t testing.TB, want []float64, got []float32, atol, rtol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > atol+rtol*math.Abs(want[i]) || math.IsNaN(float64(got[i])) {
			require.Failf(t, "mismatch", "element %d: got %g, want %g (|diff| %g)", i, got[i], want[i], d)
		}
	}
}

// CheckVadd runs exe, compiled from the vadd example, on n elements of pool
// and checks z against the float64 sum: the quick proof that a device
// still computes after something went wrong.
func CheckVadd(t testing.TB, pool *backends.Pool, exe *backends.Executable, n int) {
	t.Helper()
	ctx := context.Background()
	a, b := RandomF32(1, n, -1, 1), RandomF32(2, n, -2, 2)
	ia, ib := UploadF32(t, pool, a), UploadF32(t, pool, b)
	iz, err := pool.Alloc(ctx, int64(4*n))
	require.NoError(t, err)
	defer func() {
		for _, id := range []driver.BufferID{ia, ib, iz} {
			require.NoError(t, pool.Release(id))
		}
	}()
	require.NoError(t, exe.Launch(ctx, vaddArgs([3]driver.BufferID{ia, ib, iz}, int64(n))))
	want := make([]float64, n)
	for i := range want {
		want[i] = float64(a[i]) + float64(b[i])
	}
	RequireClose(t, want, DownloadF32(t, pool, iz, n), 1e-5, 1e-5)
}

// ExamplesDir is the module's examples directory, found from the test's
// working directory upwards.
func ExamplesDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "examples")
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test's directory")
		dir = parent
	}
}

// CheckLaunchTimed compiles the vadd program prog on dev and requires a
// timed launch to report a positive device time, a second Release to be
// harmless, and a released executable to refuse launches with ErrClosed.
func CheckLaunchTimed(t testing.TB, devDriver driver.Device, prog *driver.Program) {
	dev := backends.DeviceOf(devDriver)
	t.Helper()
	ctx := context.Background()
	pool := dev.Pool()
	x, err := dev.Compile(ctx, prog)
	require.NoError(t, err)
	n := 1 << 16
	var ids [3]driver.BufferID
	for i := range ids {
		ids[i] = UploadF32(t, pool, make([]float32, n))
		defer pool.Release(ids[i])
	}
	args := vaddArgs(ids, int64(n))
	dt, err := x.LaunchTimed(ctx, args)
	require.NoError(t, err)
	require.Positive(t, dt)
	require.NoError(t, x.Release())
	require.NoError(t, x.Release(), "a second release is harmless")
	require.ErrorIs(t, x.Launch(ctx, args), driver.ErrClosed)
}

// vaddArgs are the launch args of the vadd example: x, y and z buffers of n
// f32 elements, then n as a u32.
func vaddArgs(xyz [3]driver.BufferID, n int64) []driver.LaunchArg {
	return []driver.LaunchArg{driver.BufArg(xyz[0]), driver.BufArg(xyz[1]), driver.BufArg(xyz[2]),
		driver.VarArg(driver.UintConst(driver.U32, uint64(n)))}
}

// DriverEnv is what a runtime would open a driver with: cfg (nil for no
// config), a host pool of the test's own (closed when the test ends) and the
// default logger.
func DriverEnv(t testing.TB, cfg *backends.Config) *driver.Env {
	t.Helper()
	host, err := hostpool.New(hostpool.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = host.Close() })
	return &driver.Env{Config: cfg, HostPool: host, Logger: slog.Default()}
}
