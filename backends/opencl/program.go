package opencl

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/bits"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/internal/gpupool"
	"github.com/zyxtt/zyxtt/backends/internal/gpuqueue"
)

// executable is a built cl_program and its kernel on one device.
type executable struct {
	dev     *device
	prog    *driver.Program
	program clProgram
	kernel  clKernel
	local   [3]uint64
	dims    int

	mu       sync.Mutex // clSetKernelArg and enqueue are one step
	released bool
	// refs counts the caller's reference (until Release) and one per
	// submitted launch that has not ended; the last frees the kernel.
	refs atomic.Int32
	// The work sizes the enqueue reads, kept here (under the device's q.Mu) so that a
	// launch hands the loader heap memory and allocates nothing for it.
	globalSize, localSize [3]uintptr
	// set is the value each kernel argument was last given (under mu):
	// the kernel object keeps its arguments between enqueues, so a launch
	// with the same buffers and values as the last makes no
	// clSetKernelArg call, as a native program that sets them once.
	set []argValue
}

// argValue is a kernel argument as last set: a buffer's handle or a
// scalar's bytes (at most 8).
type argValue struct {
	ok    bool // set at least once
	n     uint8
	bytes [8]byte
}

// same reports whether v holds b, and makes it hold b.
func (v *argValue) same(b []byte) bool {
	if v.ok && int(v.n) == len(b) && string(v.bytes[:v.n]) == string(b) {
		return true
	}
	v.ok = len(b) <= len(v.bytes)
	if v.ok {
		v.n = uint8(copy(v.bytes[:], b))
	}
	return false
}

// Compile builds the program's OpenCL C variant, from the binary cache when
// the same source, options, device and driver were built before.
func (d *device) Compile(ctx context.Context, p *driver.Program) (driver.Executable, error) {
	if err := d.q.CheckOpen(ctx, "compile"); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, &driver.Error{Backend: Name, Op: "compile", Err: err}
	}
	v := p.Source(driver.FormatOpenCL)
	if v == nil {
		return nil, driver.Errorf(Name, "compile", driver.ErrNoVariant, "program %q has no OpenCL variant", p.Name)
	}
	p = p.WithVariant(p.Variant(driver.FormatOpenCL))
	if v.Entry == "" {
		return nil, driver.Errorf(Name, "compile", driver.ErrInvalidArgument, "program %q: OpenCL variant has no entry", p.Name)
	}
	local, dims, err := d.checkLocal(p, v.Local)
	if err != nil {
		return nil, err
	}
	options := strings.Join(v.Options, " ")
	program, err := d.buildCached(v.Source, options)
	if err != nil {
		return nil, err
	}
	kernel, err := d.l.CreateKernel(program, v.Entry)
	if err != nil {
		_ = d.l.ReleaseProgram(program)
		e := err.(*driver.Error)
		e.Err = fmt.Errorf("%w: no kernel %q in program %q", driver.ErrCompile, v.Entry, p.Name)
		return nil, e
	}
	x := &executable{dev: d, prog: p, program: program, kernel: kernel, local: local, dims: dims}
	x.refs.Store(1)
	for i := range local {
		x.localSize[i] = uintptr(local[i])
	}
	var nargs uint32
	if err := d.l.GetKernelInfo(kernel, clKernelNumArgs, unsafe.Sizeof(nargs), unsafe.Pointer(&nargs)); err == nil && int(nargs) != len(p.Params) {
		_ = x.Release()
		return nil, driver.Errorf(Name, "compile", driver.ErrInvalidArgument, "kernel %s takes %d arguments, program %q has %d params", v.Entry, nargs, p.Name, len(p.Params))
	}
	var wg uintptr
	if err := d.l.GetKernelWorkGroupInfo(kernel, d.id, clKernelWorkGroupSize, unsafe.Sizeof(wg), unsafe.Pointer(&wg)); err == nil && wg > 0 {
		if n := local[0] * local[1] * local[2]; n > uint64(wg) {
			_ = x.Release()
			return nil, driver.Errorf(Name, "compile", driver.ErrInvalidArgument, "local size %v (%d work items) exceeds kernel %s's limit of %d on %s", local, n, v.Entry, wg, d.name)
		}
	}
	return x, nil
}

// checkLocal applies the device's work-group limits to the variant's local
// size (zeros mean 1).
func (d *device) checkLocal(p *driver.Program, l [3]uint32) ([3]uint64, int, error) {
	var local [3]uint64
	total := uint64(1)
	for i := range 3 {
		local[i] = uint64(max(l[i], 1))
		if m := d.lim.maxItems[i]; m > 0 && local[i] > m {
			return local, 0, driver.Errorf(Name, "compile", driver.ErrInvalidArgument, "local size %d on axis %d exceeds %s's limit of %d", local[i], i, d.name, m)
		}
		total *= local[i]
	}
	if d.lim.maxWorkGroup > 0 && total > d.lim.maxWorkGroup {
		return local, 0, driver.Errorf(Name, "compile", driver.ErrInvalidArgument, "local size %v (%d work items) exceeds %s's limit of %d", local, total, d.name, d.lim.maxWorkGroup)
	}
	return local, max(len(p.Grid), 1), nil
}

// cacheKey names a compiled binary: the source, the options, and the
// device with its driver version.
func (d *device) cacheKey(source, options string) string {
	h := sha256.New()
	for _, s := range []string{"zyx-opencl-v1", source, options, d.cacheTag} {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (d *device) buildCached(source, options string) (clProgram, error) {
	var name string
	if d.cacheDir != nil {
		name = d.cacheKey(source, options) + ".bin"
		bin, err := d.cacheDir.ReadFile(name, maxCachedBinary)
		switch {
		case err == nil && len(bin) > 0:
			if prog, err := d.buildBinary(bin, options); err == nil {
				driver.Debug(driver.DebugCompile, "opencl binary cache hit", "device", d.name, "file", name)
				return prog, nil
			} else {
				driver.Debug(driver.DebugCompile, "opencl cached binary rejected; building from source", "file", name, "err", err)
			}
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			driver.Debug(driver.DebugCompile, "opencl cached binary not used; building from source", "err", err)
		}
	}
	prog, err := d.buildSource(source, options)
	if err != nil {
		return 0, err
	}
	if name != "" {
		if err := d.saveBinary(prog, name); err != nil {
			driver.Debug(driver.DebugCompile, "opencl binary not cached", "file", name, "err", err)
		}
	}
	return prog, nil
}

func (d *device) buildSource(source, options string) (clProgram, error) {
	if source == "" {
		return 0, driver.Errorf(Name, "compile", driver.ErrCompile, "empty source")
	}
	prog, err := d.l.CreateProgramWithSource(d.context, source)
	return d.build(prog, err, options)
}

func (d *device) buildBinary(bin []byte, options string) (clProgram, error) {
	var pin runtime.Pinner
	pin.Pin(&bin[0])
	defer pin.Unpin()
	prog, err := d.l.CreateProgramWithBinary(d.context, d.id, bin)
	return d.build(prog, err, options)
}

// build runs clBuildProgram on a program just created (unless creating it
// failed: err); a failed build releases the program and carries the whole
// build log.
func (d *device) build(prog clProgram, err error, options string) (clProgram, error) {
	if err != nil {
		return 0, err
	}
	if err = d.l.BuildProgram(prog, d.id, options); err == nil {
		return prog, nil
	}
	log := d.buildLog(prog)
	_ = d.l.ReleaseProgram(prog)
	driver.Debug(driver.DebugCompile, "opencl build failed", "device", d.name, "log", log)
	e := err.(*driver.Error)
	e.Native += "\n" + log
	e.Err = driver.ErrCompile
	return 0, e
}

func (d *device) buildLog(prog clProgram) string {
	size, err := d.l.GetProgramBuildInfo(prog, d.id, clProgramBuildLog, nil)
	if err != nil || size == 0 {
		return "(no build log)"
	}
	buf := make([]byte, size)
	if _, err := d.l.GetProgramBuildInfo(prog, d.id, clProgramBuildLog, buf); err != nil {
		return "(build log unreadable)"
	}
	return strings.TrimSpace(goString(buf))
}

// maxCachedBinary bounds a cached program binary read back: a larger file
// is not one of ours, and is built from source instead.
const maxCachedBinary = 256 << 20

// saveBinary writes the program's binary to the cache entry name through a
// temporary file, so a concurrent reader never sees half a binary.
func (d *device) saveBinary(prog clProgram, name string) error {
	var size uintptr
	if err := d.l.GetProgramInfo(prog, clProgramBinarySizes, unsafe.Sizeof(size), unsafe.Pointer(&size)); err != nil {
		err.(*driver.Error).Op = "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)"
		return err
	}
	if size == 0 {
		return fmt.Errorf("the driver offers no binary")
	}
	bin := make([]byte, size)
	var pin runtime.Pinner
	pin.Pin(&bin[0])
	defer pin.Unpin()
	ptrs := [1]*byte{&bin[0]}
	if err := d.l.GetProgramInfo(prog, clProgramBinaries, unsafe.Sizeof(ptrs), unsafe.Pointer(&ptrs[0])); err != nil {
		err.(*driver.Error).Op = "clGetProgramInfo(CL_PROGRAM_BINARIES)"
		return err
	}
	return d.cacheDir.WriteFile(name, bin)
}

// Launch is Submit and a wait for it.
func (x *executable) Launch(ctx context.Context, l *driver.Launch) error {
	c, err := x.prepare(ctx, l, false)
	if err != nil {
		return err
	}
	c.waited = ctx.Done() == nil // its Wait settles it
	ev, err := x.dev.submit(c)
	return driver.Wait(ctx, ev, err)
}

// Submit sets the kernel's arguments and enqueues the NDRange (without
// blocking) after the events in after; the kernel and the buffers are held
// until the command has ended.
func (x *executable) Submit(ctx context.Context, l *driver.Launch, after ...driver.Event) (driver.Event, error) {
	c, err := x.prepare(ctx, l, false)
	if err != nil {
		return nil, err
	}
	c.After = after
	return x.dev.submit(c)
}

// LaunchTimed runs the kernel and returns the time between the command's
// start and end as the device's profiling clock measured them.
func (x *executable) LaunchTimed(ctx context.Context, l *driver.Launch) (time.Duration, error) {
	c, err := x.prepare(ctx, l, true)
	if err != nil {
		return 0, err
	}
	if c.enqueue == nil { // an empty grid runs nothing
		c.Release()
		return 0, nil
	}
	c.waited = ctx.Done() == nil // its Wait settles it
	ev, err := x.dev.submit(c)
	if err := driver.Wait(ctx, ev, err); err != nil {
		return 0, err
	}
	return time.Duration(c.ns), nil
}

// prepare holds what a checked launch uses: a reference to every buffer
// and to the kernel, given back when the command has ended.
func (x *executable) prepare(ctx context.Context, launch *driver.Launch, timed bool) (*cmd, error) {
	d := x.dev
	if err := d.q.CheckOpen(ctx, "launch"); err != nil {
		return nil, err
	}
	if err := driver.CheckReleased(Name, &x.mu, &x.released); err != nil {
		return nil, err
	}
	args := launch.Args
	var global [3]uintptr
	for i, g := range launch.Grid {
		hi, lo := bits.Mul64(g, x.local[i])
		if hi != 0 || (d.lim.addressBits < 64 && lo > math.MaxUint32) {
			return nil, driver.Errorf(Name, "launch", driver.ErrInvalidArgument, "grid %v × local %v overflows the device's size_t", launch.Grid, x.local)
		}
		global[i] = uintptr(lo)
	}
	scalars := make([][]byte, len(args))
	ids, err := driver.SplitArgs(Name, x.prog, args, scalarBytes, func(i int, val []byte) { scalars[i] = val })
	if err != nil {
		return nil, err
	}
	bufs, release, err := gpupool.HoldLaunch(&d.pool.Base, ids, &x.mu, &x.released, &x.refs)
	if err != nil {
		return nil, err
	}
	c := &cmd{Item: gpuqueue.Item{Ctx: ctx, Done: func() {
		release()
		_ = x.unref()
	}}, op: "launch", kind: launches, timed: timed}
	if launch.Empty {
		return c, nil // a marker: the launch runs nothing
	}
	c.enqueue = func(out *clEvent) error {
		return x.enqueue(bufs, scalars, global, out)
	}
	return c, nil
}

// enqueue sets the kernel's arguments and enqueues it; the two are one
// step under x.mu, since the arguments are the kernel object's state (the
// enqueue copies them).
func (x *executable) enqueue(bufs []*buffer, scalars [][]byte, global [3]uintptr, out *clEvent) error {
	d := x.dev
	x.mu.Lock()
	defer x.mu.Unlock()
	bi := 0
	if len(x.set) != len(x.prog.Params) {
		x.set = make([]argValue, len(x.prog.Params))
	}
	for i := range x.prog.Params {
		var err error
		if x.prog.Params[i].Kind.IsBuffer() {
			// The buffer record is on the heap: its handle is what the
			// kernel argument reads.
			b := bufs[bi]
			bi++
			h := unsafe.Slice((*byte)(unsafe.Pointer(&b.mem)), unsafe.Sizeof(b.mem))
			if x.set[i].same(h) {
				continue
			}
			err = d.l.SetKernelArg(x.kernel, uint32(i), unsafe.Sizeof(b.mem), unsafe.Pointer(&b.mem))
		} else {
			val := scalars[i]
			if x.set[i].same(val) {
				continue
			}
			err = d.l.SetKernelArg(x.kernel, uint32(i), uintptr(len(val)), unsafe.Pointer(&val[0]))
		}
		if err != nil {
			x.set[i] = argValue{} // unknown now: set again next time
			err.(*driver.Error).Op = fmt.Sprintf("clSetKernelArg(%d)", i)
			return err
		}
	}
	x.globalSize = global
	return d.l.EnqueueNDRangeKernel(d.queue, x.kernel, uint32(x.dims), &x.globalSize, &x.localSize, nil, out)
}

// unref drops one reference; the last frees the kernel and the program.
func (x *executable) unref() error {
	if x.refs.Add(-1) != 0 {
		return nil
	}
	return errors.Join(x.dev.l.ReleaseKernel(x.kernel), x.dev.l.ReleaseProgram(x.program))
}

// Release drops the caller's reference: the kernel and program are freed
// now, or when the last launch that holds them has ended. Releasing again
// does nothing.
func (x *executable) Release() error {
	return driver.ReleaseOnce(&x.mu, &x.released, x.unref)
}

// scalarBytes is a Variable's value as an OpenCL kernel receives it by
// value: the dtype's own size, little endian, half floats as IEEE binary16.
func scalarBytes(c driver.Constant) ([]byte, error) {
	if c.DType == driver.F8E4M3 || c.DType == driver.F8E5M2 {
		return nil, fmt.Errorf("%s scalars have no OpenCL C type", c.DType)
	}
	return c.NativeBytes(), nil
}
