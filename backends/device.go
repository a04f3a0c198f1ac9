package backends

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zyxtt/zyxtt/backends/driver"
)

// The user API wraps the driver's objects, as database/sql wraps
// database/sql/driver: every span, launch argument and grid is checked here,
// once, before a driver sees it, and a driver trusts what it is given.

// Device is a device of a backend: it compiles programs that run on the
// memory of its Pool. Every method is safe for concurrent use.
type Device struct {
	drv    driver.Device
	pool   *Pool
	closed atomic.Bool
}

// Pool is a device's memory. Buffers are refcounted: Alloc starts the count
// at one and the last Release frees the buffer. An unknown, freed or foreign
// id is ErrUnknownBuffer. Every method is safe for concurrent use.
type Pool struct {
	drv driver.Pool
}

// Executable is a program compiled on one device.
type Executable struct {
	drv      driver.Executable
	dev      *Device
	prog     *Program // as the device runs it: the grid of the variant it compiled
	maxGrid  []uint64
	released atomic.Bool
}

// wrappers keeps one wrapper per driver object, so that a device's pool is
// the same *Pool however it was reached (the host pool, shared by every CPU
// device, above all).
var wrappers struct {
	sync.Mutex
	devices map[driver.Device]*Device
	pools   map[driver.Pool]*Pool
}

// DeviceOf is the user-side Device of a driver's device: what a test or a
// tool that opened a driver's device itself (without a Runtime) uses. The
// same driver device always gives the same *Device.
func DeviceOf(d driver.Device) *Device {
	if d == nil {
		return nil
	}
	wrappers.Lock()
	defer wrappers.Unlock()
	if w, ok := wrappers.devices[d]; ok {
		return w
	}
	if wrappers.devices == nil {
		wrappers.devices = map[driver.Device]*Device{}
	}
	w := &Device{drv: d, pool: poolOfLocked(d.Pool())}
	wrappers.devices[d] = w
	return w
}

// PoolOf is the user-side Pool of a driver's pool (the host pool, a disk
// pool, a device's pool); the same driver pool always gives the same *Pool.
func PoolOf(p driver.Pool) *Pool {
	if p == nil {
		return nil
	}
	if w, ok := p.(*Pool); ok {
		return w // already the user's
	}
	wrappers.Lock()
	defer wrappers.Unlock()
	return poolOfLocked(p)
}

func poolOfLocked(p driver.Pool) *Pool {
	if p == nil {
		return nil
	}
	if w, ok := wrappers.pools[p]; ok {
		return w
	}
	if wrappers.pools == nil {
		wrappers.pools = map[driver.Pool]*Pool{}
	}
	w := &Pool{drv: p}
	wrappers.pools[p] = w
	return w
}

// forget drops the wrappers of a closed device (its pool too, unless it is
// shared: the host pool outlives every device on it).
func forget(d *Device, shared bool) {
	wrappers.Lock()
	defer wrappers.Unlock()
	delete(wrappers.devices, d.drv)
	if !shared {
		delete(wrappers.pools, d.pool.drv)
	}
}

// Name is the selector that names the device ("cuda:0", "c", "tt:1").
func (d *Device) Name() string { return d.drv.Name() }

// Backend is the registered backend name ("cuda", "c", "tt").
func (d *Device) Backend() string { return d.drv.Backend() }

// Info describes the device.
func (d *Device) Info() *DeviceInfo { return d.drv.Info() }

// Pool is the device's memory.
func (d *Device) Pool() *Pool { return d.pool }

// Driver is the driver's own device, for what only its backend offers (the
// Tenstorrent runtime's chip description, say).
func (d *Device) Driver() driver.Device { return d.drv }

// Close releases the device; its pool's buffers become invalid unless the
// pool is shared (the host pool). Compile and launches of its executables
// are ErrClosed afterwards.
func (d *Device) Close() error {
	d.closed.Store(true)
	return d.drv.Close()
}

func (d *Device) String() string { return d.Name() }

// Compile builds the program's variant for this device: the first of its
// variants in a format the device prepares (Info().Formats, in its order of
// preference). A program with no such variant is ErrNoVariant; an invalid
// program ErrInvalidArgument.
func (d *Device) Compile(ctx context.Context, p *Program) (*Executable, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d.closed.Load() {
		return nil, driver.Errorf(d.Backend(), "compile", ErrClosed, "device %s is closed", d.Name())
	}
	info := d.drv.Info()
	if p == nil {
		return nil, driver.Errorf(d.Backend(), "compile", ErrNoVariant, "a nil program has no variant")
	}
	v := p.Variant(info.Formats...)
	if v == nil {
		return nil, driver.Errorf(d.Backend(), "compile", ErrNoVariant, "program %q has no variant in a format %s prepares (%v)", p.Name, d.Name(), info.Formats)
	}
	if err := p.Validate(); err != nil {
		return nil, &Error{Backend: d.Backend(), Op: "compile", Err: err}
	}
	x, err := d.drv.Compile(ctx, p)
	if err != nil {
		return nil, err
	}
	// The executable keeps its own copy of what launches are checked
	// against: the caller may reuse its Program.
	prog := p.WithVariant(v)
	prog.Params = slices.Clone(prog.Params)
	prog.Grid = slices.Clone(prog.Grid)
	if fi, ok := LookupFormat(v.Format); ok && fi.NoGrid {
		prog.Grid = nil // it runs whole: one group
	}
	return &Executable{drv: x, dev: d, prog: prog, maxGrid: info.MaxGlobalWorkDims}, nil
}

// Device is the device the executable runs on.
func (x *Executable) Device() *Device { return x.dev }

// Driver is the driver's own executable.
func (x *Executable) Driver() driver.Executable { return x.drv }

// Launch runs the program with args in parameter order and waits for it to
// finish. The grid is evaluated from the program's grid expressions.
func (x *Executable) Launch(ctx context.Context, args []LaunchArg) error {
	l, err := x.check(args)
	if err != nil {
		return err
	}
	return x.drv.Launch(ctx, l)
}

// Submit queues a run of the program on the device's queue, after every
// event in after (of any device, or HostEvents), and returns its event at
// once. The args are checked before anything is queued (an error, nothing
// queued); a failed run is the event's error, and work submitted after that
// event fails with ErrDependency wrapping it. The buffers and the program
// stay alive until the run has ended, whatever is released meanwhile. When
// ctx ends before the run starts, the run is cancelled where the backend can
// (docs/api.md, "Events").
func (x *Executable) Submit(ctx context.Context, args []LaunchArg, after ...Event) (Event, error) {
	l, err := x.check(args)
	if err != nil {
		return nil, err
	}
	return x.drv.Submit(ctx, l, after...)
}

// LaunchTimed runs the program once, uncontended, and returns the run time
// the device measured.
func (x *Executable) LaunchTimed(ctx context.Context, args []LaunchArg) (time.Duration, error) {
	l, err := x.check(args)
	if err != nil {
		return 0, err
	}
	return x.drv.LaunchTimed(ctx, l)
}

// Grid is the grid a launch with args runs: the executable's grid
// expressions evaluated (one entry per axis the program has).
func (x *Executable) Grid(args []LaunchArg) ([]uint64, error) {
	l, err := x.check(args)
	if err != nil {
		return nil, err
	}
	return slices.Clone(l.Grid[:len(x.prog.Grid)]), nil
}

// Release frees the compiled program once the runs that use it have ended.
// Later launches are ErrClosed; a second Release does nothing.
func (x *Executable) Release() error {
	if x.released.Swap(true) {
		return nil
	}
	return x.drv.Release()
}

// AllocParam allocates the buffer for param i as the program declares it
// (a Tenstorrent program's L1 or sharded placement, page size, tile layout
// or block-float storage) for hostBytes of host data (the param's elements
// in its dtype, row-major), on the device's pool. A device whose programs
// declare nothing allocates hostBytes in its pool.
func (x *Executable) AllocParam(ctx context.Context, i int, hostBytes int64) (BufferID, error) {
	if i < 0 || i >= len(x.prog.Params) || !x.prog.Params[i].Kind.IsBuffer() {
		return 0, driver.Errorf(x.dev.Backend(), "alloc", ErrInvalidArgument, "param %d of program %q is not a buffer param", i, x.prog.Name)
	}
	if a, ok := x.drv.(driver.ParamAllocator); ok {
		return a.AllocParam(ctx, i, hostBytes)
	}
	return x.dev.pool.Alloc(ctx, hostBytes)
}

// check is the one check of a launch: the executable is not released, the
// args match the params (buffers of the device's pool, scalars of the
// param's dtype), and the grid's axes evaluate within the device's limits.
func (x *Executable) check(args []LaunchArg) (*driver.Launch, error) {
	if x.released.Load() {
		return nil, driver.Errorf(x.dev.Backend(), "launch", ErrClosed, "program %q was released", x.prog.Name)
	}
	if x.dev.closed.Load() {
		return nil, driver.Errorf(x.dev.Backend(), "launch", ErrClosed, "program %q: device %s is closed", x.prog.Name, x.dev.Name())
	}
	l, err := checkLaunch(x.prog, x.dev.pool.drv, args, x.maxGrid)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, err
		}
		return nil, &Error{Backend: x.dev.Backend(), Op: "launch", Err: fmt.Errorf("program %q: %w", x.prog.Name, err)}
	}
	return l, nil
}

// checkLaunch checks args against p's params and pool, and evaluates p's
// grid: each axis within maxGrid (an absent or zero entry is no limit) and
// the total number of groups within 2^64.
func checkLaunch(p *Program, pool driver.Pool, args []LaunchArg, maxGrid []uint64) (*driver.Launch, error) {
	box := new(launchBox) // one allocation for the launch and, mostly, its sizes
	sizes := box.sizes[:0]
	if len(args) > len(box.sizes) {
		sizes = nil
	}
	sizes, err := checkArgs(p, pool, args, sizes)
	if err != nil {
		return nil, err
	}
	l := &box.launch
	*l = driver.Launch{Args: args, Sizes: sizes, Grid: [3]uint64{1, 1, 1}}
	if len(p.Grid) > 3 {
		return nil, fmt.Errorf("%w: the grid has %d axes; at most 3", ErrInvalidArgument, len(p.Grid))
	}
	for i, g := range p.Grid {
		v, err := g.Eval(args)
		if err != nil {
			return nil, fmt.Errorf("%w: grid axis %d: %w", ErrInvalidArgument, i, err)
		}
		if i < len(maxGrid) && maxGrid[i] > 0 && v > maxGrid[i] {
			return nil, fmt.Errorf("%w: grid axis %d is %d; the device allows %d", ErrInvalidArgument, i, v, maxGrid[i])
		}
		l.Grid[i] = v
		l.Empty = l.Empty || v == 0
	}
	if hi, lo := bits.Mul64(l.Grid[0], l.Grid[1]); hi != 0 || !fitsMul(lo, l.Grid[2]) {
		return nil, fmt.Errorf("%w: grid %v has more than 2^64 groups", ErrInvalidArgument, l.Grid)
	}
	return l, nil
}

// launchBox is a checked launch with room for the sizes of a launch of up
// to six args: a launch is on the submission path, where each allocation
// shows.
type launchBox struct {
	launch driver.Launch
	sizes  [6]int64
}

func fitsMul(a, b uint64) bool {
	hi, _ := bits.Mul64(a, b)
	return hi == 0
}

// checkArgs checks a launch's args against the program's params: the count,
// buffer or scalar per param, scalar dtypes, and that every buffer belongs to
// pool. It returns the buffer sizes by param ordinal (0 for scalars),
// appended to sizes (whose room it uses when it has enough).
func checkArgs(p *Program, pool driver.Pool, args []LaunchArg, sizes []int64) ([]int64, error) {
	if len(args) != len(p.Params) {
		return nil, fmt.Errorf("%w: %d args for %d params", ErrInvalidArgument, len(args), len(p.Params))
	}
	sizes = slices.Grow(sizes[:0], len(args))[:len(args)]
	clear(sizes)
	for i, a := range args {
		prm := p.Params[i]
		if prm.Kind == Variable {
			if !a.IsVar() {
				return nil, fmt.Errorf("%w: param %d (%s) is a variable, got a buffer", ErrInvalidArgument, i, prm.Name)
			}
			if a.Value.DType != prm.DType {
				return nil, fmt.Errorf("%w: param %d (%s) is %s, got %s", ErrInvalidArgument, i, prm.Name, prm.DType, a.Value.DType)
			}
			continue
		}
		if a.IsVar() {
			return nil, fmt.Errorf("%w: param %d (%s) is a buffer, got a variable", ErrInvalidArgument, i, prm.Name)
		}
		n, err := pool.Size(a.Buffer)
		if err != nil {
			return nil, fmt.Errorf("param %d (%s): %w", i, prm.Name, err)
		}
		sizes[i] = n
	}
	return sizes, nil
}

// Name identifies the pool ("host", "cuda:0", "tt:1").
func (p *Pool) Name() string { return p.drv.Name() }

// Driver is the driver's own pool.
func (p *Pool) Driver() driver.Pool { return p.drv }

func (p *Pool) String() string { return p.Name() }

// Alloc allocates a buffer of bytes (> 0).
func (p *Pool) Alloc(ctx context.Context, bytes int64) (BufferID, error) {
	if bytes <= 0 {
		return 0, driver.Errorf(p.Name(), "alloc", ErrInvalidArgument, "size %d (want > 0)", bytes)
	}
	return p.drv.Alloc(ctx, bytes)
}

// Retain adds a reference to a buffer.
func (p *Pool) Retain(id BufferID) error { return p.drv.Retain(id) }

// Release drops a reference; the last frees the buffer.
func (p *Pool) Release(id BufferID) error { return p.drv.Release(id) }

// Size is the buffer's size in bytes.
func (p *Pool) Size(id BufferID) (int64, error) { return p.drv.Size(id) }

// FreeBytes is how many more bytes the pool can hand out.
func (p *Pool) FreeBytes() int64 { return p.drv.FreeBytes() }

// span checks [off, off+n) against the buffer.
func (p *Pool) span(op string, id BufferID, off int64, n int) error {
	size, err := p.drv.Size(id)
	if err != nil {
		return err
	}
	return checkSpan(p.Name(), op, id, off, int64(n), size)
}

// checkSpan says whether bytes [off, off+n) lie inside buffer id of size
// bytes, without overflowing on hostile offsets.
func checkSpan(backend, op string, id BufferID, off, n, size int64) error {
	if off < 0 || n < 0 || off > size || n > size-off {
		return driver.Errorf(backend, op, ErrInvalidArgument, "range [%d,+%d) outside buffer %d of %d bytes", off, n, id, size)
	}
	return nil
}

// Bytes is a buffer's memory, for a pool whose buffers the host addresses
// (the host pool, a disk pool); other pools are ErrUnsupported.
func (p *Pool) Bytes(id BufferID) ([]byte, error) {
	hm, ok := p.drv.(driver.HostMemory)
	if !ok {
		return nil, driver.Errorf(p.Name(), "bytes", ErrUnsupported, "pool %s is not host memory", p.Name())
	}
	return hm.Bytes(id)
}

// Write copies src into the buffer at off. When src lies in host-pool
// memory a backend may read it in place (the Tenstorrent runtime does).
func (p *Pool) Write(ctx context.Context, dst BufferID, off int64, src []byte) error {
	if err := p.span("write", dst, off, len(src)); err != nil {
		return err
	}
	return p.drv.Write(ctx, dst, off, src)
}

// Read copies the buffer's bytes at off into dst.
func (p *Pool) Read(ctx context.Context, src BufferID, off int64, dst []byte) error {
	if err := p.span("read", src, off, len(dst)); err != nil {
		return err
	}
	return p.drv.Read(ctx, src, off, dst)
}

// WriteAsync queues Write's copy after every event in after and returns its
// event; src must stay unchanged until the event is done. The range and the
// buffer are checked at once (an error, nothing queued); a failure while the
// copy runs is the event's.
func (p *Pool) WriteAsync(ctx context.Context, dst BufferID, off int64, src []byte, after ...Event) (Event, error) {
	if err := p.span("write", dst, off, len(src)); err != nil {
		return nil, err
	}
	return p.drv.WriteAsync(ctx, dst, off, src, after...)
}

// ReadAsync queues Read's copy after every event in after and returns its
// event; dst holds the bytes once the event has succeeded.
func (p *Pool) ReadAsync(ctx context.Context, src BufferID, off int64, dst []byte, after ...Event) (Event, error) {
	if err := p.span("read", src, off, len(dst)); err != nil {
		return nil, err
	}
	return p.drv.ReadAsync(ctx, src, off, dst, after...)
}

// Warnings returns what the device noticed during the executable's
// synchronous launches since the last call and did not stop for (the
// Tenstorrent emulator's watcher, docs/emulator.md "Debugging kernels"),
// and forgets them; nil for backends that report none.
func (e *Executable) Warnings() []string {
	if w, ok := e.drv.(driver.Warner); ok {
		return w.Warnings()
	}
	return nil
}
