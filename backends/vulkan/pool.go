package vulkan

import (
	"context"
	"time"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
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
}

func (b *buffer) bytes() []byte { return unsafe.Slice((*byte)(b.mapped), b.size) }

// newBuffer creates a buffer of n bytes in memory with the wanted
// properties, preferring prefer too.
func (d *device) newBuffer(n int64, want, prefer uint32) (*buffer, error) {
	l := d.l
	var p pins
	defer p.Unpin()
	info := &vkBufferCreateInfo{SType: stBufferCreateInfo, Size: uint64(n), Usage: bufferUsageStorage | bufferUsageTransferSrc | bufferUsageTransferDst}
	p.Pin(info)
	b := &buffer{size: n}
	var err error
	if b.buf, err = l.CreateBuffer(d.handle, info); err != nil {
		return nil, err
	}
	var req vkMemoryRequirements
	l.GetBufferMemoryRequirements(d.handle, b.buf, &req)
	typ, ok := d.mem.pick(req.MemoryTypeBits, want, prefer)
	if !ok {
		l.DestroyBuffer(d.handle, b.buf)
		return nil, backends.Errorf(Name, "alloc", backends.ErrUnsupported, "no memory type with properties %#x for a buffer", want)
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
// it on first use. The caller holds d.mu.
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
		return nil, backends.Errorf(Name, "staging", backends.ErrUnsupported, "staging memory could not be mapped")
	}
	d.staging = b
	return b, nil
}

// pool is one device's memory.
type pool struct {
	dev  *device
	bufs *buftable.Table[*buffer]
}

var (
	_ backends.Pool       = (*pool)(nil)
	_ backends.PeerCopier = (*pool)(nil)
)

func newPool(d *device) *pool {
	return &pool{dev: d, bufs: buftable.New(buftable.NotInPool(Name, d.name), func(b *buffer) error {
		d.freeBuffer(b)
		return nil
	})}
}

func (p *pool) Name() string { return p.dev.name }

func (p *pool) FreeBytes() int64 { return max(p.dev.mem.deviceMem-p.bufs.Used(), 0) }

func (p *pool) Alloc(ctx context.Context, n int64) (backends.BufferID, error) {
	if err := p.dev.checkOpen(ctx, "alloc"); err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, backends.Errorf(Name, "alloc", backends.ErrInvalidArgument, "size %d must be positive", n)
	}
	if free := p.FreeBytes(); n > free {
		return 0, backends.Errorf(Name, "alloc", backends.ErrOutOfMemory, "%d bytes with %d free", n, free)
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

func (p *pool) Retain(id backends.BufferID) error  { return p.bufs.Retain(id) }
func (p *pool) Release(id backends.BufferID) error { return p.bufs.Release(id) }

func (p *pool) Size(id backends.BufferID) (int64, error) { return p.bufs.Size(id) }

// Write copies src into the buffer: in place when the buffer's memory is
// mapped, else through the staging buffer in chunks.
func (p *pool) Write(ctx context.Context, dst backends.BufferID, off int64, src []byte) error {
	return p.transfer(ctx, "write", dst, off, src, true)
}

// Read copies the buffer's bytes into dst, the same way as Write.
func (p *pool) Read(ctx context.Context, src backends.BufferID, off int64, dst []byte) error {
	return p.transfer(ctx, "read", src, off, dst, false)
}

func (p *pool) transfer(ctx context.Context, op string, id backends.BufferID, off int64, host []byte, write bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d := p.dev
	bufs, release, err := p.bufs.Acquire(op, id)
	if err != nil {
		return err
	}
	defer release()
	b := bufs[0]
	if err := driver.CheckSpan(Name, op, id, off, int64(len(host)), b.size); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return backends.Errorf(Name, op, backends.ErrClosed, "%s", d.name)
	}
	if len(host) == 0 {
		return nil
	}
	if b.mapped != nil && !d.stageAlways {
		// Every submission ends with a barrier to the host and waits for
		// its fence, so the device is idle here and the memory coherent.
		if write {
			copy(b.bytes()[off:], host)
		} else {
			copy(host, b.bytes()[off:])
		}
		return nil
	}
	st, err := d.stagingBuffer()
	if err != nil {
		return err
	}
	stage := st.bytes()
	for done := int64(0); done < int64(len(host)); {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(int64(len(host))-done, st.size)
		region := vkBufferCopy{Size: uint64(n)}
		src, dst := st.buf, b.buf
		if write {
			copy(stage, host[done:done+n])
			region.DstOffset = uint64(off + done)
		} else {
			src, dst = b.buf, st.buf
			region.SrcOffset = uint64(off + done)
		}
		if err := d.copyCommand(src, dst, region); err != nil {
			return err
		}
		if !write {
			copy(host[done:done+n], stage[:n])
		}
		done += n
	}
	return nil
}

// CopyFrom copies between two buffers of this pool with vkCmdCopyBuffer.
// Other pools get ErrUnsupported and stage through the host.
func (p *pool) CopyFrom(ctx context.Context, dst backends.BufferID, dstOff int64, src backends.Pool, srcID backends.BufferID, srcOff, n int64) error {
	if src != backends.Pool(p) {
		return backends.Errorf(Name, "copy", backends.ErrUnsupported, "from %s", src.Name())
	}
	_, err := p.copyBuffer(ctx, dst, dstOff, srcID, srcOff, n, false)
	return err
}

// copyBuffer runs a device-side copy; when timed it returns the time the
// device's timestamps measured.
func (p *pool) copyBuffer(ctx context.Context, dst backends.BufferID, dstOff int64, src backends.BufferID, srcOff, n int64, timed bool) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	d := p.dev
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
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, backends.Errorf(Name, "copy", backends.ErrClosed, "%s", d.name)
	}
	if n == 0 {
		return 0, nil
	}
	d.hot.regions[0] = vkBufferCopy{SrcOffset: uint64(srcOff), DstOffset: uint64(dstOff), Size: uint64(n)}
	from, to := bufs[0].buf, bufs[1].buf
	return d.run(timed, func(cmd vkCommandBuffer) { d.l.CmdCopyBuffer(cmd, from, to, d.hot.regions[:]) })
}

// copyCommand submits one buffer copy and waits for it. The caller holds
// d.mu.
func (d *device) copyCommand(src, dst vkBuffer, region vkBufferCopy) error {
	d.hot.regions[0] = region
	return d.submit(func(cmd vkCommandBuffer) { d.l.CmdCopyBuffer(cmd, src, dst, d.hot.regions[:]) })
}

// run submits record's commands, bracketed by timestamps when timed. The
// caller holds d.mu.
func (d *device) run(timed bool, record func(cmd vkCommandBuffer)) (time.Duration, error) {
	if timed && d.queryPool == 0 {
		return 0, backends.Errorf(Name, "launch_timed", backends.ErrUnsupported, "%s's compute queue has no timestamps", d.name)
	}
	l := d.l
	err := d.submit(func(cmd vkCommandBuffer) {
		if timed {
			l.CmdResetQueryPool(cmd, d.queryPool, 0, 2)
			l.CmdWriteTimestamp(cmd, stageTopOfPipe, d.queryPool, 0)
		}
		record(cmd)
		if timed {
			l.CmdWriteTimestamp(cmd, stageBottomOfPipe, d.queryPool, 1)
		}
	})
	if err != nil || !timed {
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
