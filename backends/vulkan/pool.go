package vulkan

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/internal/gpupool"
	"github.com/zyxtt/zyxtt/backends/internal/gpuqueue"
	"github.com/zyxtt/zyxtt/internal/buftable"
)

// buffer is a VkBuffer with its own memory. mapped is set when that memory
// is host-visible and coherent (CPU implementations, resizable-BAR memory):
// transfers then copy in place with no staging.
type buffer struct {
	buf    vkBuffer
	mem    vkDeviceMemory
	size   int64
	mapped unsafe.Pointer
	serial uint64 // never reused: the key of descriptor sets that bind it
}

// bufferSerials numbers buffers for the descriptor-set caches.
var bufferSerials atomic.Uint64

func (b *buffer) bytes() []byte { return unsafe.Slice((*byte)(b.mapped), b.size) }

// Bytes is the buffer's size.
func (b *buffer) Bytes() int64 { return b.size }

// newBuffer creates a buffer of n bytes in memory with the wanted
// properties, preferring prefer too.
func (d *device) newBuffer(n int64, want, prefer uint32) (*buffer, error) {
	l := d.l
	var p pins
	defer p.Unpin()
	info := &vkBufferCreateInfo{SType: stBufferCreateInfo, Size: uint64(n), Usage: bufferUsageStorage | bufferUsageTransferSrc | bufferUsageTransferDst}
	p.Pin(info)
	b := &buffer{size: n, serial: bufferSerials.Add(1)}
	var err error
	if b.buf, err = l.CreateBuffer(d.handle, info); err != nil {
		return nil, err
	}
	var req vkMemoryRequirements
	l.GetBufferMemoryRequirements(d.handle, b.buf, &req)
	typ, ok := d.mem.pick(req.MemoryTypeBits, want, prefer)
	if !ok {
		l.DestroyBuffer(d.handle, b.buf)
		return nil, driver.Errorf(Name, "alloc", driver.ErrUnsupported, "no memory type with properties %#x for a buffer", want)
	}
	alloc := &vkMemoryAllocateInfo{SType: stMemoryAllocateInfo, AllocationSize: req.Size, MemoryTypeIndex: typ}
	p.Pin(alloc)
	if b.mem, err = l.AllocateMemory(d.handle, alloc); err != nil {
		l.DestroyBuffer(d.handle, b.buf)
		return nil, err
	}
	if err := l.BindBufferMemory(d.handle, b.buf, b.mem, 0); err != nil {
		d.freeBuffer(b)
		return nil, err
	}
	if f := d.mem.props.MemoryTypes[typ].PropertyFlags; f&(memHostVisible|memHostCoherent) == memHostVisible|memHostCoherent {
		if m, err := l.MapMemory(d.handle, b.mem, 0, wholeSize); err == nil {
			b.mapped = m
		}
	}
	return b, nil
}

func (d *device) freeBuffer(b *buffer) {
	if b.mapped != nil {
		d.l.UnmapMemory(d.handle, b.mem)
	}
	d.l.DestroyBuffer(d.handle, b.buf)
	d.l.FreeMemory(d.handle, b.mem)
}

// stagingBuffer returns the device's host-visible transfer buffer, making
// it on first use. The caller holds d.q.Mu; the completer reads it (for the
// reads it copies out) only for batches recorded after it was made.
func (d *device) stagingBuffer() (*buffer, error) {
	if d.staging != nil {
		return d.staging, nil
	}
	b, err := d.newBuffer(d.stagingBytes, memHostVisible|memHostCoherent, memHostCached)
	if err != nil {
		return nil, err
	}
	if b.mapped == nil {
		d.freeBuffer(b)
		return nil, driver.Errorf(Name, "staging", driver.ErrUnsupported, "staging memory could not be mapped")
	}
	d.staging = b
	return b, nil
}

// pool is one device's memory.
type pool struct {
	gpupool.Base[*buffer] // Retain, Release, Size and the transfers
	dev                   *device
	bufs                  *buftable.Table[*buffer]
}

var (
	_ driver.Pool       = (*pool)(nil)
	_ driver.PeerCopier = (*pool)(nil)
)

func newPool(d *device) *pool {
	p := &pool{dev: d, bufs: buftable.New(buftable.NotInPool(Name, d.name), func(b *buffer) error {
		d.freeBuffer(b)
		return nil
	})}
	p.Base = gpupool.NewBase(Name, p.bufs, d.q.CheckOpen, p.transfer)
	return p
}

func (p *pool) Name() string { return p.dev.name }

func (p *pool) FreeBytes() int64 { return max(p.dev.mem.deviceMem-p.bufs.Used(), 0) }

func (p *pool) Alloc(ctx context.Context, n int64) (driver.BufferID, error) {
	if err := p.dev.q.CheckOpen(ctx, "alloc"); err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, driver.Errorf(Name, "alloc", driver.ErrInvalidArgument, "size %d must be positive", n)
	}
	if free := p.FreeBytes(); n > free {
		return 0, driver.Errorf(Name, "alloc", driver.ErrOutOfMemory, "%d bytes with %d free", n, free)
	}
	b, err := p.dev.newBuffer(n, memDeviceLocal, 0)
	if err != nil {
		// No device-local type for storage buffers: any memory will do.
		if b, err = p.dev.newBuffer(n, 0, 0); err != nil {
			return 0, err
		}
	}
	return p.bufs.Insert(b, n), nil
}

// transfer is the pool's WriteAsync and ReadAsync: it copies host into b
// at off (write) or b's bytes into host. When the buffer's memory is
// mapped and nothing is pending on the device, the copy is made at once in
// place; otherwise a write's bytes are copied into the staging buffer and
// a vkCmdCopyBuffer from there is recorded (a read's the other way, its
// bytes copied into host when its batch has ended), in chunks when host is
// larger than the free staging memory.
func (p *pool) transfer(ctx context.Context, op string, b *buffer, release func(), off int64, host []byte, write bool, after []driver.Event) (driver.Event, error) {
	d := p.dev
	inPlace := func() bool { return b.mapped != nil && !d.stageAlways && d.idle() }
	w := &work{Item: gpuqueue.Item{Ctx: ctx, After: after, Done: release}, op: op, kind: transfers,
		fits: func() bool { return inPlace() || int64(len(host)) <= d.ring.available() },
		record: func(canWait bool) error {
			if len(host) == 0 {
				return nil
			}
			if inPlace() {
				// Every batch ends with a barrier to the host and nothing
				// is pending, so the memory is coherent and unused.
				if write {
					copy(b.bytes()[off:], host)
				} else {
					copy(host, b.bytes()[off:])
				}
				return nil
			}
			return d.recordStaged(b, off, host, write, canWait)
		}}
	return d.submit(w)
}

// idle reports whether no work of the device is recorded or in flight.
// The caller holds d.q.Mu.
func (d *device) idle() bool {
	return (d.open == nil || d.open.n == 0) && len(d.inflight) == 0
}

// recordStaged records a transfer through the staging buffer: a write's
// bytes are copied into staging now, a read's out of it when its batch
// has ended. Each chunk takes the staging memory that follows the last
// one taken; when none is free and canWait is set, it waits for a batch to
// end. The caller holds d.q.Mu.
func (d *device) recordStaged(b *buffer, off int64, host []byte, write, canWait bool) error {
	st, err := d.stagingBuffer()
	if err != nil {
		return err
	}
	stage := st.bytes()
	for done := int64(0); done < int64(len(host)); {
		so, n := d.ring.take(int64(len(host)) - done)
		if n == 0 {
			if !canWait {
				return fmt.Errorf("%w: %s: the staging memory is in use", driver.ErrOutOfMemory, d.name)
			}
			if err := d.waitRoom(); err != nil {
				return err
			}
			continue
		}
		bt, err := d.openBatch()
		if err != nil {
			d.ring.untake(n)
			return err
		}
		bt.span += n
		region := vkBufferCopy{Size: uint64(n)}
		src, dst := st.buf, b.buf
		if write {
			copy(stage[so:so+n], host[done:done+n])
			region.SrcOffset, region.DstOffset = uint64(so), uint64(off+done)
		} else {
			src, dst = b.buf, st.buf
			region.SrcOffset, region.DstOffset = uint64(off+done), uint64(so)
			bt.reads = append(bt.reads, stagedRead{dst: host[done : done+n], off: so})
		}
		d.recordCopy(bt, src, dst, region)
		done += n
		if bt.n >= maxBatch {
			d.flush()
		}
	}
	return nil
}

// recordCopy records a buffer copy, after a full barrier, into bt (the open
// batch). The caller holds d.q.Mu.
func (d *device) recordCopy(bt *batch, src, dst vkBuffer, region vkBufferCopy) {
	d.fullBarrier(bt.cmd)
	d.hot.regions[0] = region
	d.l.CmdCopyBuffer(bt.cmd, src, dst, d.hot.regions[:])
	bt.n++
}

// CopyFrom copies between two buffers of this pool with vkCmdCopyBuffer,
// in order with the device's other work. Other pools get ErrUnsupported
// and stage through the host.
func (p *pool) CopyFrom(ctx context.Context, dst driver.BufferID, dstOff int64, src driver.Pool, srcID driver.BufferID, srcOff, n int64) error {
	if src != driver.Pool(p) {
		return driver.Errorf(Name, "copy", driver.ErrUnsupported, "from %s", src.Name())
	}
	_, err := p.copyBuffer(ctx, dst, dstOff, srcID, srcOff, n, false)
	return err
}

// copyBuffer runs a device-side copy and waits for it; when timed it
// returns the time the device's timestamps measured.
func (p *pool) copyBuffer(ctx context.Context, dst driver.BufferID, dstOff int64, src driver.BufferID, srcOff, n int64, timed bool) (time.Duration, error) {
	from, to, release, err := gpupool.HoldCopy(ctx, &p.Base, src, srcOff, dst, dstOff, n)
	if err != nil || release == nil {
		return 0, err
	}
	d := p.dev
	region := vkBufferCopy{SrcOffset: uint64(srcOff), DstOffset: uint64(dstOff), Size: uint64(n)}
	fromBuf, toBuf := from.buf, to.buf
	return d.run(ctx, "copy", transfers, timed, release, func(bt *batch) { d.recordCopy(bt, fromBuf, toBuf, region) })
}

// run submits the commands record puts in a batch, waits for them and,
// when timed, returns the time between timestamps around them: a timed run
// has a batch of its own, submitted at once.
func (d *device) run(ctx context.Context, op string, kind int, timed bool, release func(), record func(bt *batch)) (time.Duration, error) {
	if timed && d.queryPool == 0 {
		release()
		return 0, driver.Errorf(Name, "launch_timed", driver.ErrUnsupported, "%s's compute queue has no timestamps", d.name)
	}
	if timed {
		d.timedMu.Lock()
		defer d.timedMu.Unlock()
	}
	l := d.l
	w := &work{Item: gpuqueue.Item{Ctx: ctx, Done: release}, op: op, kind: kind, record: func(bool) error {
		if timed {
			d.flush() // the timestamps bracket this run only
		}
		bt, err := d.openBatch()
		if err != nil {
			return err
		}
		if timed {
			d.fullBarrier(bt.cmd) // earlier work, timed runs' stamps too, has ended
			l.CmdResetQueryPool(bt.cmd, d.queryPool, 0, 2)
			l.CmdWriteTimestamp(bt.cmd, stageTopOfPipe, d.queryPool, 0)
		}
		record(bt)
		if timed {
			l.CmdWriteTimestamp(bt.cmd, stageBottomOfPipe, d.queryPool, 1)
			d.flush()
		}
		return nil
	}}
	ev, err := d.submit(w)
	if err := driver.Wait(ctx, ev, err); err != nil || !timed {
		return 0, err
	}
	ts := &d.hot.stamps
	if err := l.GetQueryPoolResults(d.handle, d.queryPool, 0, 2, ts[:], 8, queryResult64Wait); err != nil {
		return 0, err
	}
	mask := ^uint64(0)
	if d.tsBits < 64 {
		mask = 1<<d.tsBits - 1
	}
	ticks := (ts[1] - ts[0]) & mask
	return time.Duration(float64(ticks) * float64(d.props.Limits.TimestampPeriod)), nil
}

// freeAll releases every buffer; the device is closing.
func (p *pool) freeAll() {
	for _, b := range p.bufs.Drain() {
		p.dev.freeBuffer(b)
	}
}
