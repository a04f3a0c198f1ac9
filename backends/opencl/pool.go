package opencl

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/buftable"
)

type buffer struct {
	mem  memObject
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
func (p *pool) release(b *buffer) error { return p.dev.l.ReleaseMemObject(b.mem) }

func (p *pool) Name() string { return p.dev.name }

func (p *pool) FreeBytes() int64 { return max(p.total-p.bufs.Used(), 0) }

func (p *pool) Alloc(ctx context.Context, n int64) (backends.BufferID, error) {
	if err := p.dev.checkOpen(ctx, "alloc"); err != nil {
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
	mem, err := p.dev.l.CreateBuffer(p.dev.context, clMemReadWrite, uintptr(n))
	if err != nil {
		return 0, err
	}
	return p.bufs.Insert(&buffer{mem: mem, size: n}, n), nil
}

func (p *pool) Retain(id backends.BufferID) error  { return p.bufs.Retain(id) }
func (p *pool) Release(id backends.BufferID) error { return p.bufs.Release(id) }

func (p *pool) Size(id backends.BufferID) (int64, error) { return p.bufs.Size(id) }

// Write copies src into the buffer with a blocking clEnqueueWriteBuffer
// straight from src: host-pool (shm) memory is read in place, and a Go
// slice is pinned for the call.
func (p *pool) Write(ctx context.Context, dst backends.BufferID, off int64, src []byte) error {
	return p.transfer(ctx, "write", dst, off, src, true)
}

// Read copies the buffer's bytes into dst with a blocking
// clEnqueueReadBuffer that lands in dst directly.
func (p *pool) Read(ctx context.Context, src backends.BufferID, off int64, dst []byte) error {
	return p.transfer(ctx, "read", src, off, dst, false)
}

func (p *pool) transfer(ctx context.Context, op string, id backends.BufferID, off int64, host []byte, write bool) error {
	if err := p.dev.checkOpen(ctx, op); err != nil {
		return err
	}
	bufs, release, err := p.bufs.Acquire(op, id)
	if err != nil {
		return err
	}
	defer release()
	if err := driver.CheckSpan(Name, op, id, off, int64(len(host)), bufs[0].size); err != nil {
		return err
	}
	if len(host) == 0 {
		return nil
	}
	var pin runtime.Pinner
	pin.Pin(&host[0])
	defer pin.Unpin()
	l, mem, at := p.dev.l, bufs[0].mem, unsafe.Pointer(&host[0])
	if write {
		return l.EnqueueWriteBuffer(p.dev.queue, mem, true, uintptr(off), uintptr(len(host)), at, nil)
	}
	return l.EnqueueReadBuffer(p.dev.queue, mem, true, uintptr(off), uintptr(len(host)), at, nil)
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
	if err := p.dev.checkOpen(ctx, "copy"); err != nil {
		return 0, err
	}
	bufs, release, err := p.bufs.Acquire("copy", src, dst)
	if err != nil {
		return 0, err
	}
	defer release()
	if err := driver.CheckSpan(Name, "copy", src, srcOff, n, bufs[0].size); err != nil {
		return 0, err
	}
	if err := driver.CheckSpan(Name, "copy", dst, dstOff, n, bufs[1].size); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	w := waiters.Get().(*waiter)
	defer waiters.Put(w)
	if err := p.dev.l.EnqueueCopyBuffer(p.dev.queue, bufs[0].mem, bufs[1].mem, uintptr(srcOff), uintptr(dstOff), uintptr(n), &w.ev[0]); err != nil {
		return 0, err
	}
	return p.dev.waitEvent(w, timed)
}

// waiter is the memory a command's event and its profiling counters live
// in while the loader fills them: on the heap and reused, so that waiting
// for a command allocates nothing.
type waiter struct {
	ev         [1]clEvent
	start, end uint64
}

var waiters = sync.Pool{New: func() any { return new(waiter) }}

// waitEvent waits for the command whose event is w.ev[0] and releases the
// event; when timed it returns the command's device run time in
// nanoseconds.
func (d *device) waitEvent(w *waiter, timed bool) (float64, error) {
	l := d.l
	defer l.ReleaseEvent(w.ev[0])
	if err := l.WaitForEvents(w.ev[:]); err != nil {
		return 0, err
	}
	if !timed {
		return 0, nil
	}
	if err := l.GetEventProfilingInfo(w.ev[0], clProfilingCommandStart, &w.start); err != nil {
		return 0, err
	}
	if err := l.GetEventProfilingInfo(w.ev[0], clProfilingCommandEnd, &w.end); err != nil {
		return 0, err
	}
	if w.end < w.start {
		return 0, fmt.Errorf("%s: profiling end %d before start %d", Name, w.end, w.start)
	}
	return float64(w.end - w.start), nil
}

// freeAll releases every buffer; the device is closing.
func (p *pool) freeAll() {
	for _, b := range p.bufs.Drain() {
		_ = p.dev.l.ReleaseMemObject(b.mem)
	}
}
