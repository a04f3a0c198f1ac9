// Package dummy is a config-gated test backend: one device whose memory is
// ordinary Go memory with exact refcount and free-bytes accounting, and
// which compiles every valid program and launches it by checking its
// arguments and evaluating its grid (against the device's grid limits),
// without computing anything.
//
// It is off unless the config's "dummy" section sets "enabled": true, so a
// user never sees it by accident:
//
//	{"dummy": {"enabled": true, "memory": 268435456}}
package dummy

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/buftable"
	"github.com/zyxtt/zyxtt/internal/core"
)

// Name is the backend's registry name, its device's name and its pool's name.
const Name = "dummy"

// DefaultMemory is the pool size when the config gives none.
const DefaultMemory = 1 << 30

// Config is the config file's "dummy" section.
type Config struct {
	// Enabled turns the backend on; it is off by default.
	Enabled bool `json:"enabled"`
	// Memory is the pool's size in bytes.
	Memory int64 `json:"memory" min:"1" unit:"bytes"`
}

func init() {
	driver.Register(Name, Driver{})
	driver.RegisterSection(Name, Config{Memory: DefaultMemory})
}

// Driver opens the dummy backend from the "dummy" config section.
type Driver struct{}

// Open returns the dummy device when the config enables it, else the reason
// it does not.
func (Driver) Open(_ context.Context, env *driver.Env) ([]driver.Device, error) {
	cfg := env.Config
	c := Config{Memory: DefaultMemory}
	if err := cfg.Section(Name, &c); err != nil {
		return nil, err
	}
	if !c.Enabled {
		return nil, fmt.Errorf("%w: disabled in config (set dummy.enabled)", driver.ErrNoDevice)
	}
	if !cfg.Common(Name).Allows(0) {
		return nil, fmt.Errorf("%w: dummy.device_ids leaves out device 0", driver.ErrNoDevice)
	}
	d, err := New(c)
	if err != nil {
		return nil, err
	}
	return []driver.Device{d}, nil
}

// New makes a dummy device directly, whatever c.Enabled says. Tests use it
// to get a private device; the registry goes through Driver.
func New(c Config) (*Device, error) {
	if c.Memory <= 0 {
		return nil, fmt.Errorf("dummy: memory %d: %w: must be positive", c.Memory, driver.ErrInvalidArgument)
	}
	d := &Device{pool: newPool(c.Memory)}
	var formats []driver.Format
	for _, f := range driver.Formats() {
		formats = append(formats, f.Name) // it accepts every program
	}
	d.info = driver.DeviceInfo{
		Formats:           formats,
		Name:              "zyx-tt dummy device",
		Kind:              driver.KindOther,
		Compute:           1,
		ComputeEstimated:  true,
		MaxGlobalWorkDims: []uint64{1 << 31, 1 << 16, 1 << 16},
		MaxLocalThreads:   1,
		MaxLocalWorkDims:  []uint32{1, 1, 1},
		WarpSize:          1,
		// It computes nothing, so auto selection ranks it with the
		// emulators, after every real device.
		Emulated: true,
		Memory:   uint64(c.Memory),
		Extra:    map[string]string{"purpose": "tests: checks launch args and grids, computes nothing"},
	}
	for _, t := range driver.AllDTypes() {
		if t.IsFloat() {
			d.info.DTypeCaps[t] = driver.CapFloatOps
		} else {
			d.info.DTypeCaps[t] = driver.CapIntOps
		}
	}
	return d, nil
}

// Device is the dummy device.
type Device struct {
	pool     *Pool
	info     driver.DeviceInfo
	launches atomic.Uint64
	closed   atomic.Bool
}

var _ driver.Device = (*Device)(nil)

// Name is "dummy".
func (d *Device) Name() string { return Name }

// Backend is "dummy".
func (d *Device) Backend() string { return Name }

// Info describes the device.
func (d *Device) Info() *driver.DeviceInfo { return &d.info }

// Pool is the device's memory.
func (d *Device) Pool() driver.Pool { return d.pool }

// Memory is the device's memory with its dummy-only extras (Live, Close).
func (d *Device) Memory() *Pool { return d.pool }

// Launches is how many launches have succeeded on this device.
func (d *Device) Launches() uint64 { return d.launches.Load() }

// Compile accepts every program that validates.
func (d *Device) Compile(ctx context.Context, p *driver.Program) (driver.Executable, error) {
	if d.closed.Load() {
		return nil, fmt.Errorf("dummy: compile: %w", driver.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		if p == nil {
			return nil, fmt.Errorf("dummy: compile: %w", err)
		}
		return nil, fmt.Errorf("dummy: compile %s: %w", p.Name, err)
	}
	// Keep a copy: the caller may reuse its Program value. The dummy
	// accepts every format; the first variant's grid is the one it checks.
	if len(p.Variants) > 0 {
		p = p.WithVariant(&p.Variants[0])
	}
	prog := *p
	prog.Params = append([]driver.Param(nil), p.Params...)
	prog.Grid = append([]driver.GwsDim(nil), p.Grid...)
	driver.Debug(driver.DebugCompile, "dummy: compiled", "program", p.Name)
	return &Executable{dev: d, prog: &prog}, nil
}

// Close closes the device and frees its pool.
func (d *Device) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	d.pool.Close()
	return nil
}

// Executable is a program compiled for the dummy device.
type Executable struct {
	dev      *Device
	prog     *driver.Program
	released atomic.Bool

	mu   sync.Mutex
	grid []uint64
}

var _ driver.Executable = (*Executable)(nil)

// Launch records the grid of a checked launch; it computes nothing.
func (e *Executable) Launch(ctx context.Context, l *driver.Launch) error {
	if e.released.Load() {
		return fmt.Errorf("dummy: launch %s: program %w", e.prog.Name, driver.ErrClosed)
	}
	if e.dev.closed.Load() {
		return fmt.Errorf("dummy: launch %s: device %w", e.prog.Name, driver.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	grid := slices.Clone(l.Grid[:len(e.prog.Grid)])
	e.mu.Lock()
	e.grid = grid
	e.mu.Unlock()
	e.dev.launches.Add(1)
	return nil
}

// Submit counts the launch once every event in after has succeeded (at once
// when nothing is left to wait for).
func (e *Executable) Submit(ctx context.Context, l *driver.Launch, after ...driver.Event) (driver.Event, error) {
	if e.released.Load() {
		return nil, fmt.Errorf("dummy: submit %s: program %w", e.prog.Name, driver.ErrClosed)
	}
	if e.dev.closed.Load() {
		return nil, fmt.Errorf("dummy: submit %s: device %w", e.prog.Name, driver.ErrClosed)
	}
	return core.After(ctx, after, nil, nil, func() error { return e.Launch(ctx, l) })
}

// LaunchTimed launches once and returns the host time the launch took.
func (e *Executable) LaunchTimed(ctx context.Context, l *driver.Launch) (time.Duration, error) {
	start := time.Now()
	if err := e.Launch(ctx, l); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// LastGrid is the grid the last successful launch evaluated, nil before any.
func (e *Executable) LastGrid() []uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]uint64(nil), e.grid...)
}

// Release frees the program; releasing again does nothing.
func (e *Executable) Release() error {
	e.released.Store(true)
	return nil
}

// errClosedPool is returned by every pool operation after Close.
var errClosedPool = fmt.Errorf("dummy: pool: %w", driver.ErrClosed)

// Pool is the dummy device's memory. Buffers are plain Go byte slices: the
// pool stands in for device memory that the host cannot address, so it must
// not be host memory that copies could read in place, and Go memory needs
// no mapping, no file descriptor and no cleanup if a test forgets to close.
type Pool struct {
	// mu guards closed and makes Alloc's free-bytes check and insert one
	// step, so the limit holds exactly under concurrent allocations.
	mu     sync.Mutex
	closed bool
	limit  int64
	bufs   *buftable.Table[[]byte]
}

var _ driver.Pool = (*Pool)(nil)

func newPool(limit int64) *Pool {
	unknown := func(_ string, id driver.BufferID) error {
		return fmt.Errorf("dummy: pool: buffer %d: %w", id, driver.ErrUnknownBuffer)
	}
	// The garbage collector frees the bytes: no free function.
	return &Pool{limit: limit, bufs: buftable.New[[]byte](unknown, nil)}
}

// Name is "dummy".
func (p *Pool) Name() string { return Name }

// Alloc returns a zeroed buffer of n bytes with one reference.
func (p *Pool) Alloc(ctx context.Context, n int64) (driver.BufferID, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, fmt.Errorf("dummy: pool: alloc %d bytes: %w: size must be positive", n, driver.ErrInvalidArgument)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, errClosedPool
	}
	if free := p.limit - p.bufs.Used(); n > free {
		return 0, fmt.Errorf("dummy: pool: alloc %d bytes with %d free: %w", n, free, driver.ErrOutOfMemory)
	}
	return p.bufs.Insert(make([]byte, n), n), nil
}

// open runs f unless the pool is closed; Close waits for it.
func (p *Pool) open(f func() error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errClosedPool
	}
	return f()
}

// Retain adds a reference.
func (p *Pool) Retain(id driver.BufferID) error {
	return p.open(func() error { return p.bufs.Retain(id) })
}

// Release drops a reference; the last one frees the buffer.
func (p *Pool) Release(id driver.BufferID) error {
	return p.open(func() error { return p.bufs.Release(id) })
}

// Size is the buffer's length.
func (p *Pool) Size(id driver.BufferID) (n int64, err error) {
	err = p.open(func() error {
		n, err = p.bufs.Size(id)
		return err
	})
	return n, err
}

// FreeBytes is how many more bytes the pool hands out.
func (p *Pool) FreeBytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0
	}
	return p.limit - p.bufs.Used()
}

// TotalBytes is the pool's size.
func (p *Pool) TotalBytes() int64 { return p.limit }

// Live is the number of buffers not yet freed.
func (p *Pool) Live() int { return p.bufs.Len() }

// Write copies src into the buffer at off.
func (p *Pool) Write(ctx context.Context, dst driver.BufferID, off int64, src []byte) error {
	mem, err := p.span(ctx, "write", dst, off, len(src))
	if err == nil {
		copy(mem, src)
	}
	return err
}

// Read copies the buffer's bytes at off into dst.
func (p *Pool) Read(ctx context.Context, src driver.BufferID, off int64, dst []byte) error {
	mem, err := p.span(ctx, "read", src, off, len(dst))
	if err == nil {
		copy(dst, mem)
	}
	return err
}

// WriteAsync is Write once every event in after has succeeded; the buffer
// is held meanwhile.
func (p *Pool) WriteAsync(ctx context.Context, dst driver.BufferID, off int64, src []byte, after ...driver.Event) (driver.Event, error) {
	mem, err := p.span(ctx, "write", dst, off, len(src))
	if err != nil {
		return nil, err
	}
	return p.after(ctx, dst, after, func() { copy(mem, src) })
}

// ReadAsync is Read once every event in after has succeeded.
func (p *Pool) ReadAsync(ctx context.Context, src driver.BufferID, off int64, dst []byte, after ...driver.Event) (driver.Event, error) {
	mem, err := p.span(ctx, "read", src, off, len(dst))
	if err != nil {
		return nil, err
	}
	return p.after(ctx, src, after, func() { copy(dst, mem) })
}

func (p *Pool) after(ctx context.Context, id driver.BufferID, events []driver.Event, f func()) (driver.Event, error) {
	return core.After(ctx, events, func() error { return p.Retain(id) }, func() { _ = p.Release(id) },
		func() error { f(); return nil })
}

// span is bytes [off, off+n) of buffer id, for op: the checks a transfer
// makes (ctx live, pool open, id known, range inside) before it copies.
func (p *Pool) span(ctx context.Context, op string, id driver.BufferID, off int64, n int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var data []byte
	if err := p.open(func() (err error) {
		data, err = p.bufs.Get(op, id)
		return err
	}); err != nil {
		return nil, err
	}
	return data[off : off+int64(n)], nil // the range was checked by package backends
}

// Close frees every buffer; every later call reports ErrClosed.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.bufs.Drain()
}
