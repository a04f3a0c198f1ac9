package cuda

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends/driver"
)

// compiles counts NVRTC runs, so tests can see the module cache work.
var compiles atomic.Int64

// compileKernel builds the CUDA C variant with NVRTC (or takes it from the
// module cache) and loads it into the device's context.
func (d *Device) compileKernel(ctx context.Context, p *driver.Program) (driver.Executable, error) {
	v := p.Source(driver.FormatCUDA)
	if v.Entry == "" {
		return nil, driver.Errorf(Name, "compile", driver.ErrInvalidArgument, "program %q: CUDA variant has no entry", p.Name)
	}
	block := blockDims(v.Local)
	if err := d.checkBlock(block, d.limits.maxThreads); err != nil {
		return nil, err
	}
	nv, err := loadNVRTC(d.cfg.NVRTC)
	if err != nil {
		return nil, &driver.Error{Backend: Name, Op: "compile", Native: err.Error(),
			Err: fmt.Errorf("%w: NVRTC is needed to build CUDA C", driver.ErrUnsupported)}
	}
	want := int(d.cc[0])*10 + int(d.cc[1])
	t, err := pickTarget(want, nv.supportedArchs(), nv.getCUBIN != 0 && nv.getCUBINSize != 0)
	if err != nil {
		return nil, driver.Errorf(Name, "compile", driver.ErrCompile, "%v", err)
	}
	opts := compileOptions(v.Options, t)
	nvVersion := strconv.Itoa(int(nv.major)) + "." + strconv.Itoa(int(nv.minor))
	key := moduleKey(v.Source, v.Entry, opts, t, nvVersion, d.drv.version)
	dir := d.cache
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

	k := &kernelExec{launcher: launcher{dev: d, prog: p, what: "launch"}, block: block}
	k.prepareRun = k.prepare
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
			return fmt.Errorf("%w: entry %q (symbol %q) not in the module", driver.ErrCompile, v.Entry, mod.symbol+": "+err.Error())
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
			return driver.Errorf(Name, "launch", driver.ErrInvalidArgument, "block %v: axis %d exceeds the device's %d", b, i, lim)
		}
	}
	if maxThreads > 0 && total > uint64(maxThreads) {
		return driver.Errorf(Name, "launch", driver.ErrInvalidArgument, "block %v has %d threads; at most %d fit", b, total, maxThreads)
	}
	return nil
}

// gridDims is a checked launch's grid as cuLaunchKernel takes it (package
// backends checked each axis against the device's MaxGlobalWorkDims, which
// are at most 2^32-1).
func gridDims(l *driver.Launch) [3]uint32 {
	return [3]uint32{uint32(l.Grid[0]), uint32(l.Grid[1]), uint32(l.Grid[2])}
}

// kernelRun is a kernel launch to issue: the kernel, its grid, and whether
// timing events go around it.
type kernelRun struct {
	k     *kernelExec
	grid  [3]uint32
	timed bool
}

// kernelExec is a loaded CUDA C kernel.
type kernelExec struct {
	launcher
	module, fn uintptr
	block      [3]uint32
	maxThreads int32
	// params is the cuLaunchKernel parameter array and value slots, written
	// right before each launch under the device's submission lock (the
	// driver copies the values at the call).
	params *cBlock
}

// launcher is what the kernel and the GEMM executables share: the device
// and program they run on, the runs that keep them loaded, the events
// LaunchTimed records around a run, and Launch, Submit and LaunchTimed over
// the executable's own prepare.
type launcher struct {
	dev  *Device
	prog *driver.Program
	// what names a run in errors ("launch", "gemm").
	what string
	// prepareRun is the executable's prepare: it holds a checked run's
	// buffers and makes its event, timed or not.
	prepareRun func(ctx context.Context, l *driver.Launch, timed bool) (*event, error)

	runs    runs
	timedMu sync.Mutex // one LaunchTimed at a time: they share events
	events  timing     // used under the submission lock
}

// runs counts an executable's pending work, so that Release unloads it only
// once the last run has ended. A run counts itself before it looks at
// gone, and Release sets gone before it looks at the count, so either the
// run sees gone (and gives its count back) or Release sees the run (and
// the run's end unloads): no run starts after the unload.
type runs struct {
	mu         sync.Mutex // guards released
	released   bool
	gone       atomic.Bool // released: the last run unloads
	pending    atomic.Int64
	unloadOnce sync.Once
	unloadErr  error
}

// begin counts a new run; false once the executable is released (then
// unloading it, with unload, if it was the last run to give back).
func (r *runs) begin(unload func() error) bool {
	r.pending.Add(1)
	if r.gone.Load() {
		if r.end() {
			r.unload(unload)
		}
		return false
	}
	return true
}

// end counts a run's end and reports whether it was the last of a released
// executable, which must then be unloaded.
func (r *runs) end() bool { return r.pending.Add(-1) == 0 && r.gone.Load() }

func (r *runs) unload(f func() error) {
	r.unloadOnce.Do(func() { r.unloadErr = f() })
}

// release marks the executable released and unloads it now when nothing is
// pending (else its last run does). Only the first call counts.
func (r *runs) release(unload func() error) error {
	first := false
	_ = driver.ReleaseOnce(&r.mu, &r.released, func() error { first = true; return nil })
	if !first {
		return nil
	}
	r.gone.Store(true)
	if r.pending.Load() == 0 {
		r.unload(unload)
		return r.unloadErr
	}
	return nil
}

func (r *runs) isReleased() bool { return r.gone.Load() }

func (k *kernelExec) endRun() {
	if k.runs.end() {
		k.runs.unload(k.unload)
	}
}

// varBits is a scalar's value as its kernel parameter slot holds it: the
// bytes Constant.Bytes gives, little endian, zero above.
func varBits(c driver.Constant) uint64 {
	n := c.DType.Size()
	if c.DType.IsFloat() && c.DType != driver.F64 && n < 4 {
		n = 4 // narrow floats travel as f32 bits
	}
	if n >= 8 {
		return c.Bits
	}
	return c.Bits & (1<<(8*uint(n)) - 1)
}

// packSlots lays out a cuLaunchKernel parameter array in mem, which lies at
// address base, as packParams does, from 64-bit slot values: entry i of the
// pointer array points at value slot i, which holds vals[i].
func packSlots(mem []byte, base uintptr, vals []uint64) error {
	n := len(vals)
	if len(mem) < paramBlockSize(n) {
		return fmt.Errorf("cuda: parameter block of %d bytes is too small for %d params", len(mem), n)
	}
	for i, v := range vals {
		slot := 8*n + paramSlot*i
		binary.LittleEndian.PutUint64(mem[slot:], v)
		binary.LittleEndian.PutUint64(mem[8*i:], uint64(base)+uint64(slot))
	}
	return nil
}

// Launch runs the work and waits for it: Submit and a wait. When ctx ends
// while the work runs, Launch returns at once and the work runs to its end,
// holding its buffers until then. The event of a launch waited for on its
// stream (submit: syncTail) is recycled.
func (l *launcher) Launch(ctx context.Context, run *driver.Launch) error {
	ev, err := l.submit(ctx, run, true)
	if err != nil {
		return err
	}
	err = ev.Wait(ctx)
	if e, ok := ev.(*event); ok {
		switch {
		case e.alone:
			poolEvent(e)
		case e.synced:
			l.dev.recycle(e)
		}
	}
	return err
}

// Submit holds the buffers and the executable, and queues the work on the
// device's compute stream after the events in after.
func (l *launcher) Submit(ctx context.Context, run *driver.Launch, after ...driver.Event) (driver.Event, error) {
	return l.submit(ctx, run, false, after...)
}

// submit is Submit; waited says the caller waits for the work itself.
func (l *launcher) submit(ctx context.Context, run *driver.Launch, waited bool, after ...driver.Event) (driver.Event, error) {
	e, err := l.prepareRun(ctx, run, false)
	if err != nil {
		return nil, err
	}
	e.op.after = after
	e.op.waited = waited
	e.op.mayRunAlone = waited
	ev, err := l.dev.submit(e)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %q: %w", l.dev.name, l.what, l.prog.Name, err)
	}
	return ev, nil
}

// LaunchTimed runs the work once and returns the time between two events
// recorded around it on the compute stream (after its waits, so the time is
// the work's alone).
func (l *launcher) LaunchTimed(ctx context.Context, run *driver.Launch) (time.Duration, error) {
	l.timedMu.Lock()
	defer l.timedMu.Unlock()
	e, err := l.prepareRun(ctx, run, true)
	if err != nil {
		return 0, err
	}
	empty := e.op.issue == nil && e.op.kernel.k == nil // an empty grid or GEMM runs nothing
	e.op.waited = true
	ev, err := l.dev.submit(e)
	if err != nil {
		return 0, fmt.Errorf("%s: %s %q: %w", l.dev.name, l.what, l.prog.Name, err)
	}
	if err := ev.Wait(ctx); err != nil || empty {
		return 0, err
	}
	return l.dev.elapsedOf(l.events)
}

// prepare makes a checked launch's event: the buffers and the executable
// held, the parameter values resolved, the work to issue.
func (k *kernelExec) prepare(ctx context.Context, l *driver.Launch, timed bool) (*event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := k.dev
	// A released program or a closed device is ErrClosed before the args
	// are looked at: a closed device's buffers are gone.
	if err := k.live(); err != nil {
		return nil, err
	}
	grid, empty, args := gridDims(l), l.Empty, l.Args
	e := d.newEvent(streamCompute, ctx, "launch", k.prog.Name)
	o := e.op
	o.vals = o.valsInline[:0]
	for i, a := range args {
		if a.IsVar() {
			o.vals = append(o.vals, varBits(a.Value))
			continue
		}
		b, err := d.pool.retain("launch", a.Buffer)
		if err != nil {
			o.holds.drop()
			return nil, err
		}
		o.holds.add(d.pool, a.Buffer)
		o.addAccess(b, k.prog.Params[i].Kind == driver.GlobalMut)
		o.vals = append(o.vals, b.ptr)
	}
	if !k.runs.begin(k.unload) {
		o.holds.drop()
		return nil, driver.Errorf(Name, "launch", driver.ErrClosed, "program %q was released", k.prog.Name)
	}
	o.holds.run = k
	if empty {
		return e, nil // nothing to run; the event still orders what waits for it
	}
	o.kernel = kernelRun{k: k, grid: grid, timed: timed}
	return e, nil
}

// issue launches the kernel on stream s (the submission lock is held and
// the context current), between timing events when timed.
func (k *kernelExec) issue(s uintptr, e *event, grid [3]uint32, timed bool) error {
	d, drv := k.dev, k.dev.drv
	if timed {
		if err := k.events.create(d); err != nil {
			return err
		}
		if r := drv.cuEventRecord(k.events[0], s); r != cudaSuccess {
			return d.fail("cuEventRecord", r)
		}
	}
	if err := k.launch(s, e.op.vals, grid); err != nil {
		return err
	}
	if timed {
		if r := drv.cuEventRecord(k.events[1], s); r != cudaSuccess {
			return d.fail("cuEventRecord", r)
		}
	}
	return nil
}

// launch packs vals into the kernel's parameter block and launches it on
// stream s. The block is the kernel's alone: the submission lock or the
// issue lock (issuer.go) is held, the context current.
func (k *kernelExec) launch(s uintptr, vals []uint64, grid [3]uint32) error {
	if err := packSlots(k.params.mem, k.params.addr(0), vals); err != nil {
		return err
	}
	if r := k.dev.drv.cuLaunchKernel(k.fn, grid, k.block, s, k.params.addr(0)); r != cudaSuccess {
		return k.dev.fail("cuLaunchKernel", r)
	}
	return nil
}

// live is nil unless the program was released or its device closed or
// lost.
func (k *kernelExec) live() error {
	if err := k.dev.usable("launch"); err != nil {
		return fmt.Errorf("%s: launch %q: %w", k.dev.name, k.prog.Name, err)
	}
	if k.runs.isReleased() {
		return driver.Errorf(Name, "launch", driver.ErrClosed, "program %q was released", k.prog.Name)
	}
	return nil
}

// timing is the start and end events of an executable's timed launches,
// created on first use (zero until then), under the submission lock and
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

// elapsedOf is the time between two timing events that have both ended.
func (d *Device) elapsedOf(t timing) (time.Duration, error) {
	var elapsed time.Duration
	err := d.run("cuEventElapsedTime", func() error {
		var err error
		elapsed, err = d.elapsed(t[0], t[1])
		return err
	})
	return elapsed, err
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

// Release unloads the module once the launches pending on it have ended
// (at once when none are); launches after it are ErrClosed.
func (k *kernelExec) Release() error { return k.runs.release(k.unload) }

func (k *kernelExec) unload() error {
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
}
