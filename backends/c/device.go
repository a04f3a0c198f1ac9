//go:build darwin || freebsd || linux || netbsd

package c

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"

	"github.com/zyxtt/zyxtt/backends/c/cpuinfo"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/hostpool"
	"github.com/zyxtt/zyxtt/internal/dl"
)

// Device is the C device: programs compiled by the system compiler, run on
// the host pool.
type Device struct {
	tc      *toolchain
	pool    *hostpool.Pool
	info    *driver.DeviceInfo
	threads int
	closed  atomic.Bool

	// queue runs the device's launches one after another on a goroutine
	// of its own (docs/api.md, "Events").
	queue *driver.Queue
}

var _ driver.Device = (*Device)(nil)

// Open probes the compiler described by cfg and returns the C device.
func Open(ctx context.Context, cfg Config) (*Device, error) {
	if cfg.Threads < 0 {
		return nil, fmt.Errorf("%w: c: threads must be >= 0, got %d", driver.ErrInvalidArgument, cfg.Threads)
	}
	pool, err := hostPoolOf(cfg.HostPool)
	if err != nil {
		return nil, fmt.Errorf("c: host pool: %w", err)
	}
	tc, err := probeToolchain(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("c: %w", err)
	}
	threads := cfg.Threads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	d := &Device{tc: tc, pool: pool, threads: threads, queue: driver.NewQueue()}
	d.info = hostInfo(tc, threads)
	return d, nil
}

// hostInfo describes the host CPU as the C backend sees it.
func hostInfo(tc *toolchain, threads int) *driver.DeviceInfo {
	cpu := cpuinfo.Host()
	info := &driver.DeviceInfo{
		Formats:             []driver.Format{driver.FormatC},
		Name:                cpu.Model,
		Kind:                driver.KindCPU,
		Compute:             cpu.PeakFLOPs(),
		MaxGlobalWorkDims:   []uint64{math.MaxInt64, math.MaxInt64, math.MaxInt64},
		MaxLocalThreads:     1,
		MaxLocalWorkDims:    []uint32{1, 1, 1},
		PreferredVectorSize: uint8(min(cpu.VectorBytes, math.MaxUint8)),
		LocalMemSize:        uint64(cpu.CacheBytes("L1d")),
		MaxRegisterBytes:    uint64(cpu.VectorRegisters * cpu.VectorBytes),
		WarpSize:            1,
		SupportedVecLens:    []uint8{1, 2, 4, 8, 16},
		HasOpenMP:           tc.openmp,
		Cores:               cpu.Cores,
		Extra:               cpu.Extra(),
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		info.Memory = uint64(si.Totalram) * uint64(si.Unit)
	}
	for _, t := range driver.AllDTypes() {
		info.DTypeCaps[t] = dtypeCaps(t)
	}
	version, _, _ := strings.Cut(strings.TrimSpace(tc.version), "\n")
	info.Extra["compiler"] = tc.compiler
	info.Extra["compiler_version"] = version
	info.Extra["flags"] = strings.Join(tc.flags, " ")
	info.Extra["openmp"] = strconv.FormatBool(tc.openmp)
	info.Extra["threads"] = strconv.Itoa(threads)
	info.Extra["cache_dir"] = tc.cache.Path()
	return info
}

// dtypeCaps is what generated C can do with an element type. Narrow floats
// reach C as raw bits, so C offers them no arithmetic.
func dtypeCaps(t driver.DType) driver.DTypeCapability {
	switch {
	case t == driver.F32 || t == driver.F64:
		return driver.CapFloatOps
	case t == driver.Bool:
		return driver.CapBitNot | driver.CapOr | driver.CapAnd | driver.CapBitXor | driver.CapBitOr |
			driver.CapBitAnd | driver.CapEq | driver.CapNotEq
	case t.IsFloat():
		return driver.CapNone
	case t.IsSigned():
		return driver.CapIntOps
	}
	return driver.CapIntOps.Exclude(driver.CapNeg | driver.CapAbs)
}

// Name is the device selector, "c".
func (d *Device) Name() string { return BackendName }

// Backend is "c".
func (d *Device) Backend() string { return BackendName }

// Info describes the host CPU and the compiler.
func (d *Device) Info() *driver.DeviceInfo { return d.info }

// Pool is the process-wide host pool.
func (d *Device) Pool() driver.Pool { return d.pool }

// Close stops the device: Compile and launches of programs compiled on it
// return ErrClosed afterwards (Release still unloads them). Queued launches
// that have not started are cancelled (their events fail with ErrClosed);
// a running one is not waited for, since a native call cannot be stopped:
// it runs to its end and then gives its buffers back. The shared host pool
// stays open.
func (d *Device) Close() error {
	if !d.closed.Swap(true) {
		d.queue.Abandon(driver.Errorf(BackendName, "launch", driver.ErrClosed, "the device was closed before the launch started"))
		d.tc.close() // loaded objects stay mapped; only the files go
	}
	return nil
}

func compileError(format string, args ...any) *driver.Error {
	return driver.Errorf(BackendName, "compile", driver.ErrCompile, format, args...)
}

// Compile builds p's C variant (or takes it from the object cache), loads
// it and checks that it exports the entry.
func (d *Device) Compile(ctx context.Context, p *driver.Program) (driver.Executable, error) {
	if d.closed.Load() {
		return nil, driver.Errorf(BackendName, "compile", driver.ErrClosed, "")
	}
	p = p.WithVariant(p.Variant(driver.FormatC))
	v := p.Source(driver.FormatC)
	if !isIdentifier(v.Entry) {
		return nil, driver.Errorf(BackendName, "compile", driver.ErrInvalidArgument, "entry %q is not a C identifier", v.Entry)
	}
	if strings.HasPrefix(v.Entry, "zyx_") {
		return nil, driver.Errorf(BackendName, "compile", driver.ErrInvalidArgument, "entry %q uses the reserved zyx_ prefix", v.Entry)
	}
	tu := translationUnit(p, v)
	driver.Debug(driver.DebugAssembly, "c: translation unit", "program", p.Name, "source", tu)

	handle, err := d.buildAndLoad(ctx, p, tu)
	if err != nil {
		return nil, err
	}
	if _, err := purego.Dlsym(handle, v.Entry); err != nil {
		_ = purego.Dlclose(handle)
		return nil, compileError("program %q: the object does not export entry %q (the entry must be a non-static, visible function): %v", p.Name, v.Entry, err)
	}
	launch, err := purego.Dlsym(handle, launchSymbol)
	if err != nil {
		_ = purego.Dlclose(handle)
		return nil, compileError("program %q: the object has no %s: %v", p.Name, launchSymbol, err)
	}
	prog := *p // the grid and params are all a launch reads
	return &executable{dev: d, prog: &prog, handle: handle, launch: launch}, nil
}

// buildAndLoad builds (or finds in the cache) and loads the object. A
// cached object that no longer loads (a damaged cache) is removed and built
// again once.
func (d *Device) buildAndLoad(ctx context.Context, p *driver.Program, tu string) (uintptr, error) {
	v := p.Source(driver.FormatC)
	for attempt := 0; ; attempt++ {
		path, hit, err := d.tc.build(ctx, tu, v.Options)
		if err != nil {
			if be, ok := err.(*buildError); ok {
				return 0, &driver.Error{Backend: BackendName, Op: "compile", Native: be.diagnostics,
					Err: fmt.Errorf("%w: program %q: %s", driver.ErrCompile, p.Name, explain(be.diagnostics, p, v.Entry))}
			}
			return 0, &driver.Error{Backend: BackendName, Op: "compile", Err: err}
		}
		driver.Debug(driver.DebugCompile, "c: object", "program", p.Name, "path", path, "cached", hit)
		handle, err := dl.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err == nil {
			return handle, nil
		}
		msg := err.Error()
		if strings.Contains(msg, "undefined symbol: "+v.Entry) {
			return 0, compileError("program %q: the C source declares entry %q but does not define it", p.Name, v.Entry)
		}
		if hit && attempt == 0 {
			driver.Debug(driver.DebugCompile, "c: cached object does not load; rebuilding", "path", path, "err", msg)
			if rmErr := os.Remove(path); rmErr == nil || os.IsNotExist(rmErr) {
				continue
			}
		}
		return 0, &driver.Error{Backend: BackendName, Op: "dlopen", Native: msg,
			Err: fmt.Errorf("%w: program %q: the compiled object does not load", driver.ErrCompile, p.Name)}
	}
}

// explain names the likely cause of a compile failure in the terms of the
// calling convention, ahead of the raw diagnostics.
func explain(diag string, p *driver.Program, entry string) string {
	switch {
	case strings.Contains(diag, "implicit declaration of function '"+entry+"'"),
		strings.Contains(diag, "call to undeclared function '"+entry+"'"):
		return fmt.Sprintf("the C source does not define entry %q", entry)
	case strings.Contains(diag, "too many arguments to function '"+entry+"'"),
		strings.Contains(diag, "too few arguments to function '"+entry+"'"),
		strings.Contains(diag, "too many arguments to function call"),
		strings.Contains(diag, "too few arguments to function call"):
		return fmt.Sprintf("entry %q does not take the program's %d params plus 3 group indices; want %s",
			entry, len(p.Params), CPrototype(p, entry))
	case strings.Contains(diag, "incompatible pointer type"), strings.Contains(diag, "incompatible-pointer-types"):
		return fmt.Sprintf("entry %q has parameter types that do not match the program's params; want %s",
			entry, CPrototype(p, entry))
	}
	return "the C compiler failed"
}

// executable is a loaded object and the program it runs.
type executable struct {
	dev    *Device
	prog   *driver.Program
	handle uintptr
	launch uintptr

	mu       sync.RWMutex // launch setup holds it shared; Release exclusively
	released bool

	running       atomic.Int32 // native calls under way, abandoned ones too
	closeWhenIdle atomic.Bool  // released: the last run unloads the object
	unloadOnce    sync.Once
	unloadErr     error
}

// Launch is Submit followed by a wait for its event. When ctx ends while
// the kernel runs, Launch returns ctx's error at once and the kernel runs on
// to its end (a native call cannot be stopped), holding its buffers and the
// object until then; the device's later work waits for it.
func (e *executable) Launch(ctx context.Context, l *driver.Launch) error {
	ev, err := e.Submit(ctx, l)
	return driver.Wait(ctx, ev, err)
}

// LaunchTimed runs the grid once and returns the wall time of the native
// call. Runs on this device are queued one after another, so the call has
// the device's threads to itself.
func (e *executable) LaunchTimed(ctx context.Context, l *driver.Launch) (time.Duration, error) {
	c, err := e.prepare(ctx, l)
	if err != nil {
		return 0, err
	}
	var elapsed time.Duration
	ev, err := e.dev.queue.Submit(ctx, nil, func() (err error) { elapsed, err = c.exec(); return err }, c.drop)
	if err != nil {
		c.drop()
		return 0, launchError(err, "program %q", e.prog.Name)
	}
	if err := ev.Wait(ctx); err != nil {
		return 0, err
	}
	return elapsed, nil
}

// Submit takes a reference to every buffer and to the object, and queues
// the native call on the device's queue after the events in after.
func (e *executable) Submit(ctx context.Context, l *driver.Launch, after ...driver.Event) (driver.Event, error) {
	c, err := e.prepare(ctx, l)
	if err != nil {
		return nil, err
	}
	ev, err := e.dev.queue.Submit(ctx, after, func() error { _, err := c.exec(); return err }, c.drop)
	if err != nil {
		c.drop()
		return nil, launchError(err, "program %q", e.prog.Name)
	}
	return ev, nil
}

func launchError(sentinel error, format string, args ...any) *driver.Error {
	return driver.Errorf(BackendName, "launch", sentinel, format, args...)
}

// call is one checked launch: its argument block, the buffers and the
// object it holds until exec or drop gives them back.
type call struct {
	e     *executable
	block []uint64
	held  []driver.BufferID
	grid  [3]uint64
}

// prepare holds what a launch uses.
func (e *executable) prepare(ctx context.Context, l *driver.Launch) (*call, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.released {
		return nil, launchError(driver.ErrClosed, "program %q was released", e.prog.Name)
	}
	if e.dev.closed.Load() {
		return nil, launchError(driver.ErrClosed, "program %q: the device is closed", e.prog.Name)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pool := e.dev.pool
	args := l.Args
	// One 64-bit slot per param. The block holds no Go pointers: buffer
	// memory is shm mapped outside the Go heap.
	c := &call{e: e, block: make([]uint64, max(len(args), 1)), held: make([]driver.BufferID, 0, len(args)), grid: l.Grid}
	e.running.Add(1)
	for i, a := range args {
		if a.IsVar() {
			c.block[i] = a.Value.Bits
			continue
		}
		// Hold a reference so a Release cannot free the memory under the
		// queued or running kernel.
		if err := pool.Retain(a.Buffer); err != nil {
			c.drop()
			return nil, &driver.Error{Backend: BackendName, Op: "launch", Err: fmt.Errorf("param %d: %w", i, err)}
		}
		c.held = append(c.held, a.Buffer)
		mem, err := pool.Bytes(a.Buffer)
		if err != nil {
			c.drop()
			return nil, &driver.Error{Backend: BackendName, Op: "launch", Err: fmt.Errorf("param %d: %w", i, err)}
		}
		c.block[i] = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(mem))))
	}
	return c, nil
}

// exec makes the native call and then gives back what the call held.
func (c *call) exec() (time.Duration, error) {
	e := c.e
	start := time.Now()
	r1, _, _ := purego.SyscallN(e.launch, uintptr(unsafe.Pointer(&c.block[0])),
		uintptr(c.grid[0]), uintptr(c.grid[1]), uintptr(c.grid[2]), uintptr(e.dev.threads))
	elapsed := time.Since(start)
	runtime.KeepAlive(c.block)
	// Give the buffers and the object back before the event completes, so
	// that what its waiter does next sees them free.
	c.drop()
	if int32(r1) != 0 {
		return elapsed, launchError(driver.ErrInvalidArgument, "launcher returned %d", int32(r1))
	}
	driver.Debug(driver.DebugPerf, "c: launch", "program", e.prog.Name, "grid", c.grid, "elapsed", elapsed)
	return elapsed, nil
}

// drop gives back the buffers and the object a call holds.
func (c *call) drop() {
	for _, id := range c.held {
		_ = c.e.dev.pool.Release(id)
	}
	c.held = nil
	c.e.runEnded()
}

// runEnded closes the object when the last queued or running call of a
// released executable ends.
func (e *executable) runEnded() {
	if e.running.Add(-1) == 0 && e.closeWhenIdle.Load() {
		e.unload()
	}
}

func (e *executable) unload() {
	e.unloadOnce.Do(func() { e.unloadErr = purego.Dlclose(e.handle) })
}

// Release unloads the object once running launches finish; a launch that
// was abandoned (its ctx cancelled while the kernel ran) keeps the object
// until it returns, so Release never waits for it. Releasing again does
// nothing.
func (e *executable) Release() error {
	return driver.ReleaseOnce(&e.mu, &e.released, func() error {
		e.closeWhenIdle.Store(true)
		if e.running.Load() != 0 {
			return nil // the last abandoned run unloads it
		}
		e.unload()
		if e.unloadErr != nil {
			return &driver.Error{Backend: BackendName, Op: "dlclose", Native: e.unloadErr.Error(), Err: e.unloadErr}
		}
		return nil
	})
}
