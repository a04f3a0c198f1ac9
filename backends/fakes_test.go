package backends

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/registry"
)

// driverFunc adapts a function to a driver.
type driverFunc = driver.DriverFunc

// opener is a driver.
type opener = driver.Driver

// withRegistry makes the default runtime, for the length of the test, a
// private one whose only backends are drivers. Tests that use it must not
// run in parallel.
func withRegistry(t *testing.T, drivers map[string]opener) *Runtime {
	t.Helper()
	rt := privateRuntime(t, drivers)
	defaultRT.Lock()
	saved := defaultRT.rt
	defaultRT.rt = rt
	defaultRT.Unlock()
	t.Cleanup(func() {
		defaultRT.Lock()
		defaultRT.rt = saved
		defaultRT.Unlock()
		_ = rt.Close()
	})
	return rt
}

// privateRuntime is a runtime over drivers alone, with an empty config and
// a host pool of its own.
func privateRuntime(t *testing.T, drivers map[string]opener) *Runtime {
	t.Helper()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	lookup := func(name string) (any, error) {
		d, ok := drivers[name]
		if !ok {
			return nil, fmt.Errorf("unknown backend %q (forgotten import?)", name)
		}
		return d, nil
	}
	rt, err := openRuntime(bg, Options{Config: &Config{}}, lookup, names)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

// fakeDevice is a device that compiles by rule and runs nothing.
type fakeDevice struct {
	name, backend string
	info          DeviceInfo
	pool          driver.Pool
	compileErr    error
	compiles      atomic.Int32
	closed        atomic.Bool
}

func (d *fakeDevice) Name() string    { return d.name }
func (d *fakeDevice) Backend() string { return d.backend }
func (d *fakeDevice) Info() *DeviceInfo {
	if d.info.Formats == nil {
		d.info.Formats = fakeFormats(d.backend)
	}
	return &d.info
}
func (d *fakeDevice) Pool() driver.Pool { return d.pool }
func (d *fakeDevice) Close() error      { d.closed.Store(true); return nil }
func (d *fakeDevice) Compile(ctx context.Context, p *Program) (driver.Executable, error) {
	d.compiles.Add(1)
	if !p.Accepts(d.Info().Formats) {
		return nil, fmt.Errorf("%s: %w", d.name, ErrNoVariant)
	}
	if d.compileErr != nil {
		return nil, d.compileErr
	}
	return fakeExe{}, nil
}

// fakeFormats are the formats a fake device of backend prepares: those the
// real backend of that name prepares.
func fakeFormats(backend string) []Format {
	switch backend {
	case "cuda":
		return []Format{FormatGEMM, FormatCUDA}
	case "cblas":
		return []Format{FormatGEMM}
	case "vulkan":
		return []Format{FormatSPIRV}
	}
	return []Format{Format(backend)}
}

type fakeExe struct{}

func (fakeExe) Launch(context.Context, *driver.Launch) error { return nil }
func (fakeExe) LaunchTimed(context.Context, *driver.Launch) (time.Duration, error) {
	return time.Microsecond, nil
}
func (fakeExe) Submit(context.Context, *driver.Launch, ...Event) (Event, error) {
	return Completed(nil), nil
}
func (fakeExe) Release() error { return nil }

// fakePool is a small in-memory pool that the host cannot address, so
// copies to and from it stage through the host pool.
type fakePool struct {
	name string
	mu   sync.Mutex
	bufs map[BufferID][]byte
	next BufferID
	free int64
	// reads and writes count the calls, to show that copies are chunked.
	reads, writes atomic.Int32
}

func newFakePool(name string, free int64) *fakePool {
	return &fakePool{name: name, bufs: map[BufferID][]byte{}, next: 1, free: free}
}

func (p *fakePool) Name() string { return p.name }
func (p *fakePool) Alloc(_ context.Context, n int64) (BufferID, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n <= 0 {
		return 0, ErrInvalidArgument
	}
	id := p.next
	p.next++
	p.bufs[id] = make([]byte, n)
	p.free -= n
	return id, nil
}
func (p *fakePool) Retain(id BufferID) error { _, err := p.get(id); return err }
func (p *fakePool) Release(id BufferID) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.bufs[id]
	if !ok {
		return ErrUnknownBuffer
	}
	p.free += int64(len(b))
	delete(p.bufs, id)
	return nil
}
func (p *fakePool) get(id BufferID) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.bufs[id]
	if !ok {
		return nil, fmt.Errorf("%s: buffer %d: %w", p.name, id, ErrUnknownBuffer)
	}
	return b, nil
}
func (p *fakePool) Size(id BufferID) (int64, error) {
	b, err := p.get(id)
	return int64(len(b)), err
}
func (p *fakePool) FreeBytes() int64 { p.mu.Lock(); defer p.mu.Unlock(); return p.free }
func (p *fakePool) WriteAsync(ctx context.Context, id BufferID, off int64, src []byte, after ...Event) (Event, error) {
	if err := WaitAll(ctx, after...); err != nil {
		return Completed(err), nil
	}
	return Completed(p.Write(ctx, id, off, src)), nil
}
func (p *fakePool) ReadAsync(ctx context.Context, id BufferID, off int64, dst []byte, after ...Event) (Event, error) {
	if err := WaitAll(ctx, after...); err != nil {
		return Completed(err), nil
	}
	return Completed(p.Read(ctx, id, off, dst)), nil
}
func (p *fakePool) Write(_ context.Context, id BufferID, off int64, src []byte) error {
	p.writes.Add(1)
	b, err := p.span(id, off, len(src))
	copy(b, src) // nil on error: copies nothing
	return err
}
func (p *fakePool) Read(_ context.Context, id BufferID, off int64, dst []byte) error {
	p.reads.Add(1)
	b, err := p.span(id, off, len(dst))
	copy(dst, b) // nil on error: copies nothing
	return err
}

// span is the n bytes of buffer id from off, or ErrInvalidArgument where
// they do not lie inside it.
func (p *fakePool) span(id BufferID, off int64, n int) ([]byte, error) {
	b, err := p.get(id)
	if err != nil {
		return nil, err
	}
	if off < 0 || off+int64(n) > int64(len(b)) {
		return nil, ErrInvalidArgument
	}
	return b[off : off+int64(n)], nil
}

// staticDriver returns fixed devices or a fixed reason, counting opens.
type staticDriver struct {
	devs  []driver.Device
	err   error
	opens atomic.Int32
}

func (d *staticDriver) Open(context.Context, *registry.Env) ([]driver.Device, error) {
	d.opens.Add(1)
	return d.devs, d.err
}

// wrapAll is the user-side devices of fake driver devices.
func wrapAll(devs ...driver.Device) []*Device {
	out := make([]*Device, len(devs))
	for i, d := range devs {
		out[i] = DeviceOf(d)
	}
	return out
}
