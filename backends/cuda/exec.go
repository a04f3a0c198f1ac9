package cuda

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// compiles counts NVRTC runs, so tests can see the module cache work.
var compiles atomic.Int64

// compileKernel builds the CUDA C variant with NVRTC (or takes it from the
// module cache) and loads it into the device's context.
func (d *Device) compileKernel(ctx context.Context, p *backends.Program) (backends.Executable, error) {
	v := p.Source(backends.FormatCUDA)
	if v.Entry == "" {
		return nil, backends.Errorf(Name, "compile", backends.ErrInvalidArgument, "program %q: CUDA variant has no entry", p.Name)
	}
	block := blockDims(v.Local)
	if err := d.checkBlock(block, d.limits.maxThreads); err != nil {
		return nil, err
	}
	nv, err := loadNVRTC(d.cfg.NVRTC)
	if err != nil {
		return nil, &backends.Error{Backend: Name, Op: "compile", Native: err.Error(),
			Err: fmt.Errorf("%w: NVRTC is needed to build CUDA C", backends.ErrUnsupported)}
	}
	want := int(d.cc[0])*10 + int(d.cc[1])
	t, err := pickTarget(want, nv.supportedArchs(), nv.getCUBIN != 0 && nv.getCUBINSize != 0)
	if err != nil {
		return nil, backends.Errorf(Name, "compile", backends.ErrCompile, "%v", err)
	}
	opts := compileOptions(v.Options, t)
	nvVersion := strconv.Itoa(int(nv.major)) + "." + strconv.Itoa(int(nv.minor))
	key := moduleKey(v.Source, v.Entry, opts, t, nvVersion, d.drv.version)
	dir := d.cfg.cacheDir()
	mod := readCachedModule(dir, key)
	if mod == nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		compiles.Add(1)
		mod, err = nv.compile(v.Source, v.Entry, opts, t)
		if err != nil {
			return nil, fmt.Errorf("%s: program %q: %w", d.name, p.Name, err)
		}
		if mod.fromLog != "" {
			driver.Debug(driver.DebugCompile, "cuda: NVRTC log", "program", p.Name, "log", mod.fromLog)
		}
		writeCachedModule(dir, key, mod)
	}
	driver.Debug(driver.DebugCompile, "cuda: module ready", "program", p.Name, "target", t.arch, "kind", mod.kind, "symbol", mod.symbol)

	k := &kernelExec{dev: d, prog: p, block: block}
	err = d.run("load module", func() error {
		drv := d.drv
		if r := drv.call(drv.moduleLoadData, uintptr(unsafe.Pointer(&k.module)), uintptr(unsafe.Pointer(&mod.image[0]))); r != cudaSuccess {
			return d.fail("cuModuleLoadData", r)
		}
		sym, ptrs, _, err := cStrings(mod.symbol)
		if err != nil {
			return err
		}
		defer sym.free()
		if r := drv.call(drv.moduleGetFunction, uintptr(unsafe.Pointer(&k.fn)), k.module, ptrs[0]); r != cudaSuccess {
			drv.call(drv.moduleUnload, k.module)
			err := d.fail("cuModuleGetFunction", r)
			return fmt.Errorf("%w: entry %q (symbol %q) not in the module", backends.ErrCompile, v.Entry, mod.symbol+": "+err.Error())
		}
		var maxThreads int32
		if drv.call(drv.funcGetAttribute, uintptr(unsafe.Pointer(&maxThreads)), funcAttrMaxThreadsPerBlock, k.fn) == cudaSuccess && maxThreads > 0 {
			k.maxThreads = maxThreads
		} else {
			k.maxThreads = d.limits.maxThreads
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: program %q: %w", d.name, p.Name, err)
	}
	if err := d.checkBlock(block, k.maxThreads); err != nil {
		_ = k.Release()
		return nil, err
	}
	if k.params, err = newCBlock(paramBlockSize(len(p.Params))); err != nil {
		_ = k.Release()
		return nil, err
	}
	return k, nil
}

// blockDims is the variant's Local with zeros read as 1.
func blockDims(local [3]uint32) [3]uint32 {
	for i := range local {
		if local[i] == 0 {
			local[i] = 1
		}
	}
	return local
}

// checkBlock rejects a block the device (or the compiled kernel, whose
// register use may lower the bound) cannot run.
func (d *Device) checkBlock(b [3]uint32, maxThreads int32) error {
	total := uint64(b[0]) * uint64(b[1]) * uint64(b[2])
	for i := range b {
		if lim := d.limits.maxBlock[i]; lim > 0 && b[i] > uint32(lim) {
			return backends.Errorf(Name, "launch", backends.ErrInvalidArgument, "block %v: axis %d exceeds the device's %d", b, i, lim)
		}
	}
	if maxThreads > 0 && total > uint64(maxThreads) {
		return backends.Errorf(Name, "launch", backends.ErrInvalidArgument, "block %v has %d threads; at most %d fit", b, total, maxThreads)
	}
	return nil
}

// gridDims checks the args and evaluates the program's grid against the
// device's limits (driver.CheckLaunch); missing axes are 1. A zero axis
// means there is nothing to run.
func (d *Device) gridDims(p *backends.Program, args []backends.LaunchArg) ([3]uint32, bool, error) {
	maxGrid := make([]uint64, 3)
	for i, l := range d.limits.maxGrid {
		maxGrid[i] = math.MaxUint32
		if l > 0 {
			maxGrid[i] = uint64(l)
		}
	}
	l, err := driver.CheckLaunch(p, d.pool, args, maxGrid)
	if err != nil {
		return [3]uint32{}, false, &backends.Error{Backend: Name, Op: "launch", Err: err}
	}
	return [3]uint32{uint32(l.Grid[0]), uint32(l.Grid[1]), uint32(l.Grid[2])}, l.Empty, nil
}

// kernelExec is a loaded CUDA C kernel.
type kernelExec struct {
	dev        *Device
	prog       *backends.Program
	module, fn uintptr
	block      [3]uint32
	maxThreads int32

	mu       sync.Mutex // guards params (reused by every launch) and events
	params   *cBlock
	events   timing
	released bool
}

// argValues are the bytes each kernel parameter receives: a buffer's
// device address or a scalar's value. gridDims has checked the args.
func (d *Device) argValues(p *backends.Program, args []backends.LaunchArg) ([][]byte, func(), error) {
	var held []func()
	release := func() {
		for _, f := range held {
			f()
		}
	}
	vals := make([][]byte, len(args))
	for i, a := range args {
		if a.IsVar() {
			vals[i] = a.Value.Bytes()
			continue
		}
		b, done, err := d.pool.hold("launch", a.Buffer)
		if err != nil {
			release()
			return nil, nil, err
		}
		held = append(held, done)
		v := make([]byte, 8)
		putU64(v, b.ptr)
		vals[i] = v
	}
	return vals, release, nil
}

func putU64(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

// Launch runs the kernel over the program's grid and waits for it.
func (k *kernelExec) Launch(ctx context.Context, args []backends.LaunchArg) error {
	_, err := k.launch(ctx, args, false)
	return err
}

// LaunchTimed runs the kernel once and returns the time between two events
// recorded around it on the device's stream.
func (k *kernelExec) LaunchTimed(ctx context.Context, args []backends.LaunchArg) (time.Duration, error) {
	return k.launch(ctx, args, true)
}

func (k *kernelExec) launch(ctx context.Context, args []backends.LaunchArg, timed bool) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	d := k.dev
	// A released program or a closed device is ErrClosed before the args
	// are looked at: a closed device's buffers are gone.
	if err := k.live(); err != nil {
		return 0, err
	}
	grid, empty, err := d.gridDims(k.prog, args)
	if err != nil {
		return 0, err
	}
	vals, release, err := d.argValues(k.prog, args)
	if err != nil {
		return 0, err
	}
	defer release()
	if empty {
		return 0, nil
	}
	var elapsed time.Duration
	err = d.run("cuLaunchKernel", func() error {
		drv := d.drv
		k.mu.Lock()
		if k.released {
			k.mu.Unlock()
			return backends.Errorf(Name, "launch", backends.ErrClosed, "program %q was released", k.prog.Name)
		}
		if timed {
			if err := k.events.create(d); err != nil {
				k.mu.Unlock()
				return err
			}
			if r := drv.call(drv.eventRecord, k.events[0], d.stream); r != cudaSuccess {
				k.mu.Unlock()
				return d.fail("cuEventRecord", r)
			}
		}
		if err := packParams(k.params.mem, k.params.addr(0), vals); err != nil {
			k.mu.Unlock()
			return err
		}
		r := drv.call(drv.launchKernel, k.fn,
			uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
			uintptr(k.block[0]), uintptr(k.block[1]), uintptr(k.block[2]),
			0, d.stream, k.params.addr(0), 0)
		if r == cudaSuccess && timed {
			r = drv.call(drv.eventRecord, k.events[1], d.stream)
		}
		k.mu.Unlock()
		if r != cudaSuccess {
			return d.fail("cuLaunchKernel", r)
		}
		if timed {
			ms, err := d.elapsed(k.events[0], k.events[1])
			elapsed = ms
			return err
		}
		return d.sync()
	})
	if err != nil {
		return 0, fmt.Errorf("%s: launch %q: %w", d.name, k.prog.Name, err)
	}
	return elapsed, nil
}

// live is nil unless the program was released or its device closed or
// lost.
func (k *kernelExec) live() error {
	if err := k.dev.usable("launch"); err != nil {
		return fmt.Errorf("%s: launch %q: %w", k.dev.name, k.prog.Name, err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.released {
		return backends.Errorf(Name, "launch", backends.ErrClosed, "program %q was released", k.prog.Name)
	}
	return nil
}

// timing is the start and end events of an executable's timed launches,
// created on first use (zero until then), under the executable's lock and
// with the device's context current.
type timing [2]uintptr

// create makes the events not made yet.
func (t *timing) create(d *Device) error {
	for i := range t {
		if t[i] == 0 {
			if r := d.drv.call(d.drv.eventCreate, uintptr(unsafe.Pointer(&t[i])), eventDefault); r != cudaSuccess {
				return d.fail("cuEventCreate", r)
			}
		}
	}
	return nil
}

// destroy destroys the events that were made.
func (t *timing) destroy(d *Device) {
	for _, e := range t {
		if e != 0 {
			d.drv.call(d.drv.eventDestroy, e)
		}
	}
}

// elapsed waits for end and returns the time from start to end.
func (d *Device) elapsed(start, end uintptr) (time.Duration, error) {
	drv := d.drv
	if r := drv.call(drv.eventSynchronize, end); r != cudaSuccess {
		return 0, d.fail("cuEventSynchronize", r)
	}
	var ms float32
	if r := drv.call(drv.eventElapsedTime, uintptr(unsafe.Pointer(&ms)), start, end); r != cudaSuccess {
		return 0, d.fail("cuEventElapsedTime", r)
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// Release unloads the module.
func (k *kernelExec) Release() error {
	return driver.ReleaseOnce(&k.mu, &k.released, func() error {
		var err error
		if k.dev.usable("release") == nil {
			err = k.dev.run("cuModuleUnload", func() error {
				k.events.destroy(k.dev)
				if k.module != 0 {
					return k.dev.fail("cuModuleUnload", k.dev.drv.call(k.dev.drv.moduleUnload, k.module))
				}
				return nil
			})
		}
		if ferr := k.params.free(); err == nil {
			err = ferr
		}
		return err
	})
}
