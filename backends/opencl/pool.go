package opencl

import (
	"context"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/internal/buftable"
)

type buffer struct {
	mem  uintptr // cl_mem
	size int64
}

// pool is one device's memory: cl_mem buffers in the device's context.
type pool struct {
	dev   *device
	total int64
	bufs  *buftable.Table[*buffer]
}

var (
	_ backends.Pool       = (*pool)(nil)
	_ backends.PeerCopier = (*pool)(nil)
)

func newPool(d *device, total uint64) *pool {
	p := &pool{dev: d, total: int64(min(total, 1<<62))}
	p.bufs = buftable.New(buftable.NotInPool(Name, d.name), p.release)
	return p
}

// release frees a buffer whose last reference went.
func (p *pool) release(b *buffer) error {
	if st := call(p.dev.l.releaseMemObject, b.mem); st != clSuccess {
		return clError("clReleaseMemObject", st)
	}
	return nil
}

func (p *pool) Name() string { return p.dev.name }

func (p *pool) FreeBytes() int64 { return max(p.total-p.bufs.Used(), 0) }

func (p *pool) Alloc(ctx context.Context, n int64) (backends.BufferID, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := p.dev.checkOpen("alloc"); err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, backends.Errorf(Name, "alloc", backends.ErrInvalidArgument, "size %d must be positive", n)
	}
	if uint64(n) > p.dev.lim.maxAlloc && p.dev.lim.maxAlloc > 0 {
		return 0, backends.Errorf(Name, "alloc", backends.ErrOutOfMemory, "%d bytes exceed the device's largest allocation (%d)", n, p.dev.lim.maxAlloc)
	}
	if n > p.FreeBytes() {
		return 0, backends.Errorf(Name, "alloc", backends.ErrOutOfMemory, "%d bytes with %d free", n, p.FreeBytes())
	}
	mem, st := callHandle(p.dev.l.createBuffer, p.dev.context, clMemReadWrite, uintptr(n), 0)
	if st != clSuccess {
		return 0, clError("clCreateBuffer", st)
	}
	return p.bufs.Insert(&buffer{mem: mem, size: n}, n), nil
}

func (p *pool) Retain(id backends.BufferID) error  { return p.bufs.Retain(id) }
func (p *pool) Release(id backends.BufferID) error { return p.bufs.Release(id) }

func (p *pool) Size(id backends.BufferID) (int64, error) { return p.bufs.Size(id) }

func checkSpan(op string, b *buffer, off int64, n int) error {
	if off < 0 || off > b.size || int64(n) > b.size-off {
		return backends.Errorf(Name, op, backends.ErrInvalidArgument, "range [%d,%d) outside a buffer of %d bytes", off, off+int64(n), b.size)
	}
	return nil
}

// Write copies src into the buffer with a blocking clEnqueueWriteBuffer
// straight from src: host-pool (shm) memory is read in place, and a Go
// slice is pinned for the call.
func (p *pool) Write(ctx context.Context, dst backends.BufferID, off int64, src []byte) error {
	return p.transfer(ctx, "write", p.dev.l.enqueueWriteBuffer, "clEnqueueWriteBuffer", dst, off, src)
}

// Read copies the buffer's bytes into dst with a blocking
// clEnqueueReadBuffer that lands in dst directly.
func (p *pool) Read(ctx context.Context, src backends.BufferID, off int64, dst []byte) error {
	return p.transfer(ctx, "read", p.dev.l.enqueueReadBuffer, "clEnqueueReadBuffer", src, off, dst)
}

func (p *pool) transfer(ctx context.Context, op string, fn uintptr, native string, id backends.BufferID, off int64, host []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := p.dev.checkOpen(op); err != nil {
		return err
	}
	bufs, release, err := p.bufs.Acquire(op, id)
	if err != nil {
		return err
	}
	defer release()
	if err := checkSpan(op, bufs[0], off, len(host)); err != nil {
		return err
	}
	if len(host) == 0 {
		return nil
	}
	var pin runtime.Pinner
	pin.Pin(&host[0])
	defer pin.Unpin()
	st := call(fn, p.dev.queue, bufs[0].mem, clTrue, uintptr(off), uintptr(len(host)), uintptr(unsafe.Pointer(&host[0])), 0, 0, 0)
	if st != clSuccess {
		return clError(native, st)
	}
	return nil
}

// CopyFrom copies between two buffers of this pool with
// clEnqueueCopyBuffer. Other pools get ErrUnsupported and stage through the
// host.
func (p *pool) CopyFrom(ctx context.Context, dst backends.BufferID, dstOff int64, src backends.Pool, srcID backends.BufferID, srcOff, n int64) error {
	if src != backends.Pool(p) {
		return backends.Errorf(Name, "copy", backends.ErrUnsupported, "from %s", src.Name())
	}
	_, err := p.copyBuffer(ctx, dst, dstOff, srcID, srcOff, n, false)
	return err
}

// copyBuffer runs a device-side copy and, when timed, returns the time the
// device measured for it.
func (p *pool) copyBuffer(ctx context.Context, dst backends.BufferID, dstOff int64, src backends.BufferID, srcOff, n int64, timed bool) (float64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := p.dev.checkOpen("copy"); err != nil {
		return 0, err
	}
	bufs, release, err := p.bufs.Acquire("copy", src, dst)
	if err != nil {
		return 0, err
	}
	defer release()
	if err := checkSpan("copy", bufs[0], srcOff, int(n)); err != nil {
		return 0, err
	}
	if err := checkSpan("copy", bufs[1], dstOff, int(n)); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	var ev uintptr
	st := call(p.dev.l.enqueueCopyBuffer, p.dev.queue, bufs[0].mem, bufs[1].mem, uintptr(srcOff), uintptr(dstOff), uintptr(n), 0, 0, uintptr(unsafe.Pointer(&ev)))
	if st != clSuccess {
		return 0, clError("clEnqueueCopyBuffer", st)
	}
	return p.dev.waitEvent(ev, timed)
}

// waitEvent waits for a command and releases its event; when timed it
// returns the command's device run time in nanoseconds.
func (d *device) waitEvent(ev uintptr, timed bool) (float64, error) {
	defer call(d.l.releaseEvent, ev)
	if st := call(d.l.waitForEvents, 1, uintptr(unsafe.Pointer(&ev))); st != clSuccess {
		return 0, clError("clWaitForEvents", st)
	}
	if !timed {
		return 0, nil
	}
	var start, end uint64
	if st := call(d.l.getEventProfilingInfo, ev, clProfilingCommandStart, 8, uintptr(unsafe.Pointer(&start)), 0); st != clSuccess {
		return 0, clError("clGetEventProfilingInfo", st)
	}
	if st := call(d.l.getEventProfilingInfo, ev, clProfilingCommandEnd, 8, uintptr(unsafe.Pointer(&end)), 0); st != clSuccess {
		return 0, clError("clGetEventProfilingInfo", st)
	}
	if end < start {
		return 0, fmt.Errorf("%s: profiling end %d before start %d", Name, end, start)
	}
	return float64(end - start), nil
}

// freeAll releases every buffer; the device is closing.
func (p *pool) freeAll() {
	for _, b := range p.bufs.Drain() {
		call(p.dev.l.releaseMemObject, b.mem)
	}
}
