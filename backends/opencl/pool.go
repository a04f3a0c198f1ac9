package opencl

import (
	"context"
	"runtime"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/internal/gpupool"
	"github.com/zyxtt/zyxtt/backends/internal/gpuqueue"
	"github.com/zyxtt/zyxtt/internal/buftable"
)

type buffer struct {
	mem  memObject
	size int64
}

// Bytes is the buffer's size.
func (b *buffer) Bytes() int64 { return b.size }

// pool is one device's memory: cl_mem buffers in the device's context.
type pool struct {
	gpupool.Base[*buffer] // Retain, Release, Size and the transfers
	dev                   *device
	total                 int64
	bufs                  *buftable.Table[*buffer]
}

var (
	_ driver.Pool       = (*pool)(nil)
	_ driver.PeerCopier = (*pool)(nil)
)

func newPool(d *device, total uint64) *pool {
	p := &pool{dev: d, total: int64(min(total, 1<<62))}
	p.bufs = buftable.New(buftable.NotInPool(Name, d.name), p.release)
	p.Base = gpupool.NewBase(Name, p.bufs, d.q.CheckOpen, p.transfer)
	return p
}

// release frees a buffer whose last reference went.
func (p *pool) release(b *buffer) error { return p.dev.l.ReleaseMemObject(b.mem) }

func (p *pool) Name() string { return p.dev.name }

func (p *pool) FreeBytes() int64 { return max(p.total-p.bufs.Used(), 0) }

func (p *pool) Alloc(ctx context.Context, n int64) (driver.BufferID, error) {
	if err := p.dev.q.CheckOpen(ctx, "alloc"); err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, driver.Errorf(Name, "alloc", driver.ErrInvalidArgument, "size %d must be positive", n)
	}
	if uint64(n) > p.dev.lim.maxAlloc && p.dev.lim.maxAlloc > 0 {
		return 0, driver.Errorf(Name, "alloc", driver.ErrOutOfMemory, "%d bytes exceed the device's largest allocation (%d)", n, p.dev.lim.maxAlloc)
	}
	if n > p.FreeBytes() {
		return 0, driver.Errorf(Name, "alloc", driver.ErrOutOfMemory, "%d bytes with %d free", n, p.FreeBytes())
	}
	mem, err := p.dev.l.CreateBuffer(p.dev.context, clMemReadWrite, uintptr(n))
	if err != nil {
		return 0, err
	}
	return p.bufs.Insert(&buffer{mem: mem, size: n}, n), nil
}

// transfer enqueues a non-blocking clEnqueueWriteBuffer straight from
// host (write) or clEnqueueReadBuffer straight into it, after the events
// in after: the pool's WriteAsync and ReadAsync. Host-pool (shm) memory is
// used in place; a Go slice is pinned (runtime.Pinner) until the command
// has ended.
func (p *pool) transfer(ctx context.Context, op string, b *buffer, release func(), off int64, host []byte, write bool, after []driver.Event) (driver.Event, error) {
	d := p.dev
	c := &cmd{Item: gpuqueue.Item{Ctx: ctx, After: after, Done: release}, op: op, kind: transfers}
	if len(host) > 0 {
		pin := new(runtime.Pinner)
		pin.Pin(&host[0])
		c.Done = func() {
			pin.Unpin()
			release()
		}
		l, q, mem, at, n := d.l, d.queue, b.mem, unsafe.Pointer(&host[0]), uintptr(len(host))
		if write {
			c.enqueue = func(out *clEvent) error {
				return l.EnqueueWriteBuffer(q, mem, false, uintptr(off), n, at, nil, out)
			}
		} else {
			c.enqueue = func(out *clEvent) error {
				return l.EnqueueReadBuffer(q, mem, false, uintptr(off), n, at, nil, out)
			}
		}
	}
	return d.submit(c)
}

// CopyFrom copies between two buffers of this pool with
// clEnqueueCopyBuffer, in order with the device's other work. Other pools
// get ErrUnsupported and stage through the host.
func (p *pool) CopyFrom(ctx context.Context, dst driver.BufferID, dstOff int64, src driver.Pool, srcID driver.BufferID, srcOff, n int64) error {
	if src != driver.Pool(p) {
		return driver.Errorf(Name, "copy", driver.ErrUnsupported, "from %s", src.Name())
	}
	_, err := p.copyBuffer(ctx, dst, dstOff, srcID, srcOff, n, false)
	return err
}

// copyBuffer runs a device-side copy and waits for it; when timed it
// returns the time the device measured for it.
func (p *pool) copyBuffer(ctx context.Context, dst driver.BufferID, dstOff int64, src driver.BufferID, srcOff, n int64, timed bool) (float64, error) {
	from, to, release, err := gpupool.HoldCopy(ctx, &p.Base, src, srcOff, dst, dstOff, n)
	if err != nil || release == nil {
		return 0, err
	}
	d := p.dev
	l, q := d.l, d.queue
	c := &cmd{Item: gpuqueue.Item{Ctx: ctx, Done: release}, op: "copy", kind: transfers, timed: timed, enqueue: func(out *clEvent) error {
		return l.EnqueueCopyBuffer(q, from.mem, to.mem, uintptr(srcOff), uintptr(dstOff), uintptr(n), nil, out)
	}}
	ev, err := d.submit(c)
	if err := driver.Wait(ctx, ev, err); err != nil {
		return 0, err
	}
	return c.ns, nil
}

// freeAll releases every buffer; the device is closing.
func (p *pool) freeAll() {
	for _, b := range p.bufs.Drain() {
		_ = p.dev.l.ReleaseMemObject(b.mem)
	}
}
