package cuda

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/buftable"
	"github.com/zyxtt/zyxtt/internal/core"
)

type devBuf struct {
	ptr  uint64 // CUdeviceptr
	size int64

	// The last work that wrote the buffer and, per stream, the last that
	// read it since (queue.go): later work on another stream waits for
	// them on the GPU. Guarded by the device's submission lock.
	lastWrite *event
	reads     [numStreams]*event
}

// Pool is a CUDA device's memory: buffers from cuMemAlloc_v2 (never managed
// memory). It copies from other CUDA pools natively (PeerCopier). Buffer
// ids come from buftable's process-wide counter: they start far above the
// host pool's and no two pools share one, so a buffer handed to the wrong
// pool is always reported as unknown.
type Pool struct {
	dev  *Device
	bufs *buftable.Table[*devBuf]
}

func newPool(d *Device) *Pool {
	p := &Pool{dev: d}
	p.bufs = buftable.New(p.unknown, p.free)
	return p
}

var (
	_ driver.Pool       = (*Pool)(nil)
	_ driver.PeerCopier = (*Pool)(nil)
	_ driver.Device     = (*Device)(nil)
)

// Name is the device's name ("cuda:0").
func (p *Pool) Name() string { return p.dev.name }

// Alloc returns a device buffer of n bytes.
func (p *Pool) Alloc(ctx context.Context, n int64) (driver.BufferID, error) {
	if n <= 0 {
		return 0, driver.Errorf(Name, "alloc", driver.ErrInvalidArgument, "%d bytes: size must be positive", n)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var ptr uint64
	err := p.dev.run("cuMemAlloc_v2", func() error {
		p.dev.sweepPins()
		return p.dev.fail("cuMemAlloc_v2", p.dev.drv.call(p.dev.drv.memAlloc, uintptr(unsafe.Pointer(&ptr)), uintptr(n)))
	})
	if err != nil {
		return 0, fmt.Errorf("%s: alloc %d bytes: %w", p.dev.name, n, err)
	}
	id := p.bufs.Insert(&devBuf{ptr: ptr, size: n}, n)
	driver.Debug(driver.DebugDevice, "cuda alloc", "device", p.dev.name, "id", id, "bytes", n)
	return id, nil
}

func (p *Pool) unknown(op string, id driver.BufferID) error {
	return driver.Errorf(Name, op, driver.ErrUnknownBuffer, "buffer %d is not a live buffer of %s", id, p.dev.name)
}

// Retain adds a reference.
func (p *Pool) Retain(id driver.BufferID) error { return p.bufs.Retain(id) }

// Release drops a reference; the last one frees the memory.
func (p *Pool) Release(id driver.BufferID) error { return p.bufs.Release(id) }

// free returns a buffer's memory to the driver when its last reference goes.
func (p *Pool) free(b *devBuf) error {
	if p.dev.usable("cuMemFree_v2") != nil {
		return nil // a lost or closed context took the memory with it
	}
	return p.dev.run("cuMemFree_v2", func() error {
		return p.dev.fail("cuMemFree_v2", p.dev.drv.call(p.dev.drv.memFree, uintptr(b.ptr)))
	})
}

// retain takes a reference to id for pending work (given back by the
// work's holds) and returns its buffer; an unknown id is an error naming
// op.
func (p *Pool) retain(op string, id driver.BufferID) (*devBuf, error) {
	b, err := p.bufs.Get(op, id)
	if err != nil {
		return nil, err
	}
	if p.bufs.Retain(id) != nil {
		return nil, p.unknown(op, id) // freed meanwhile
	}
	return b, nil
}

// Size is the buffer's length.
func (p *Pool) Size(id driver.BufferID) (int64, error) { return p.bufs.Size(id) }

// FreeBytes is the device's free memory now (cuMemGetInfo_v2); zero when
// the device cannot be asked.
func (p *Pool) FreeBytes() int64 {
	var free, total uint64
	err := p.dev.run("cuMemGetInfo_v2", func() error {
		return p.dev.fail("cuMemGetInfo_v2", p.dev.drv.call(p.dev.drv.memGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total))))
	})
	if err != nil {
		return 0
	}
	return int64(free)
}

// Write copies src into the buffer at off: WriteAsync and a wait.
// Host-pool memory is copied in place at pinned bandwidth; other memory
// goes through pinned staging. When ctx ends first, Write returns once the
// copy can no longer read src.
func (p *Pool) Write(ctx context.Context, dst driver.BufferID, off int64, src []byte) error {
	ev, err := p.writeAsync(ctx, dst, off, src, true)
	return waitTransfer(ctx, ev, err)
}

// Read copies the buffer's bytes at off into dst: ReadAsync and a wait.
// When ctx ends first, Read returns once the copy can no longer write dst.
func (p *Pool) Read(ctx context.Context, src driver.BufferID, off int64, dst []byte) error {
	ev, err := p.readAsync(ctx, src, off, dst, true)
	return waitTransfer(ctx, ev, err)
}

// waitTransfer waits for a transfer of the caller's memory. When ctx ends
// first it still waits until the copy has ended or been cancelled (a copy
// still in the gate is cancelled at once; one on a stream runs to its
// end), so that the caller may reuse its memory, and returns ctx's error.
func waitTransfer(ctx context.Context, ev driver.Event, err error) error {
	if err != nil {
		return err
	}
	err = ev.Wait(ctx)
	if cerr := ctx.Err(); err == nil || cerr == nil || !errors.Is(err, cerr) {
		return err
	}
	_ = ev.Wait(context.Background())
	return err
}

// transfer checks a copy of n bytes at off of buffer id and makes its event
// on stream, holding the buffer.
func (p *Pool) transfer(ctx context.Context, kind string, stream int, id driver.BufferID, off int64, n int) (*event, *devBuf, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	d := p.dev
	if err := d.usable(kind); err != nil {
		return nil, nil, err
	}
	b, err := p.retain(kind, id) // package backends checked the span
	if err != nil {
		return nil, nil, err
	}
	e := d.newEvent(stream, ctx, kind, "")
	e.op.holds.add(p, id)
	e.op.addAccess(b, kind == "write")
	return e, b, nil
}

// WriteAsync queues the copy of src into the buffer at off on the device's
// host-to-device stream, after the events in after, and returns its event.
// Host-pool memory is copied in place by DMA (src must not change until
// the event has ended); other memory is copied into a pinned bounce buffer
// at once, in the caller, and the bounce buffer is copied by DMA; a copy
// larger than the bounce budget is staged in order by the device's worker.
func (p *Pool) WriteAsync(ctx context.Context, dst driver.BufferID, off int64, src []byte, after ...driver.Event) (driver.Event, error) {
	return p.writeAsync(ctx, dst, off, src, false, after...)
}

// writeAsync is WriteAsync; waited says the caller waits for the copy
// itself (Write).
func (p *Pool) writeAsync(ctx context.Context, dst driver.BufferID, off int64, src []byte, waited bool, after ...driver.Event) (driver.Event, error) {
	e, b, err := p.transfer(ctx, "write", streamH2D, dst, off, len(src))
	if err != nil {
		return nil, err
	}
	e.op.after, e.op.waited = after, waited
	d := p.dev
	addr, n := b.ptr+uint64(off), len(src)
	htod := func(s uintptr, from []byte) error {
		return d.fail("cuMemcpyHtoDAsync_v2", d.drv.cuMemcpyHtoDAsync(addr, unsafe.Pointer(unsafe.SliceData(from)), n, s))
	}
	switch {
	case n == 0:
	case d.inHostPool(src):
		// Pinned on first use; should pinning fail the driver stages the
		// pageable copy, and src is the caller's until the event ends.
		e.op.issue = func(s uintptr) error { d.pinned(src); return htod(s, src) }
	default:
		// The CPU reads src, so it must wait on the host for what src may
		// still be waiting for (a read into it, say): with events pending
		// the copy goes through the gate, which waits for all of them.
		decided := d.decided(after)
		e.op.hostWait = !decided
		if bb := d.bounce(n); bb != nil {
			e.op.holds.bounce = bb
			fill := func() { parallelCopy(bb.mem, src) }
			if decided {
				fill() // now, in the caller
			} else {
				e.op.prep = fill
			}
			e.op.issue = func(s uintptr) error { d.pinned(bb.mem); return htod(s, bb.mem) }
		} else {
			e.op.job = func(ctx context.Context, s uintptr) error { return d.copyInStaged(ctx, s, addr, src) }
		}
	}
	return d.submit(e)
}

// decided reports whether every event in after has ended.
func (d *Device) decided(after []driver.Event) bool {
	for _, dep := range after {
		if x, ok := dep.(*event); dep == nil || ok && x == nil {
			continue
		}
		if x := d.own(dep); x != nil {
			if x.state.Load() != evDone {
				return false
			}
			continue
		}
		if ended, _ := core.Ended(dep); !ended {
			return false
		}
	}
	return true
}

// ReadAsync queues the copy of the buffer's bytes at off into dst on the
// device's device-to-host stream, after the events in after, and returns
// its event; dst holds the bytes once it has succeeded. Host-pool memory
// is written in place by DMA; other memory receives the bytes from a pinned
// bounce buffer when the DMA has ended (the event completes after that
// copy); a copy larger than the bounce budget is staged in order by the
// device's worker.
func (p *Pool) ReadAsync(ctx context.Context, src driver.BufferID, off int64, dst []byte, after ...driver.Event) (driver.Event, error) {
	return p.readAsync(ctx, src, off, dst, false, after...)
}

// readAsync is ReadAsync; waited says the caller waits for the copy
// itself (Read).
func (p *Pool) readAsync(ctx context.Context, src driver.BufferID, off int64, dst []byte, waited bool, after ...driver.Event) (driver.Event, error) {
	e, b, err := p.transfer(ctx, "read", streamD2H, src, off, len(dst))
	if err != nil {
		return nil, err
	}
	e.op.after, e.op.waited = after, waited
	d := p.dev
	addr, n := b.ptr+uint64(off), len(dst)
	dtoh := func(s uintptr, into []byte) error {
		return d.fail("cuMemcpyDtoHAsync_v2", d.drv.cuMemcpyDtoHAsync(unsafe.Pointer(unsafe.SliceData(into)), addr, n, s))
	}
	switch {
	case n == 0:
	case d.inHostPool(dst):
		// Should pinning fail, the pageable copy returns only once it has
		// ended: correct, but it holds the submission lock meanwhile.
		e.op.issue = func(s uintptr) error { d.pinned(dst); return dtoh(s, dst) }
	default:
		if bb := d.bounce(n); bb != nil {
			e.op.holds.bounce = bb
			e.op.issue = func(s uintptr) error { d.pinned(bb.mem); return dtoh(s, bb.mem) }
			e.op.finish = func() { parallelCopy(dst, bb.mem[:n]) }
		} else {
			e.op.job = func(ctx context.Context, s uintptr) error { return d.copyOutStaged(ctx, s, dst, addr) }
		}
	}
	return d.submit(e)
}

// CopyFrom copies n bytes from another CUDA pool without the host: on one
// device with a device-to-device copy, between two devices with a peer copy
// when cuDeviceCanAccessPeer allows it. Any other pair is ErrUnsupported,
// and backends.Copy then stages through the host pool. The copy runs on
// the destination's compute stream after the work pending on both buffers
// (on another device, waited for on the host) and CopyFrom waits for it.
func (p *Pool) CopyFrom(ctx context.Context, dst driver.BufferID, dstOff int64, src driver.Pool, srcID driver.BufferID, srcOff, n int64) error {
	sp, ok := src.(*Pool)
	if !ok {
		return driver.Errorf(Name, "copy", driver.ErrUnsupported, "source pool %s is not a CUDA pool", src.Name())
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if sp.dev.drv != p.dev.drv {
		return driver.Errorf(Name, "copy", driver.ErrUnsupported, "pools of different driver instances")
	}
	if sp != p {
		ok, err := p.dev.peerReady(sp.dev)
		if err != nil {
			return err
		}
		if !ok {
			return driver.Errorf(Name, "copy", driver.ErrUnsupported, "%s cannot access %s as a peer", p.dev.name, sp.dev.name)
		}
	}
	d := p.dev
	if err := d.usable("copy"); err != nil {
		return err
	}
	if err := sp.dev.usable("copy"); err != nil {
		return err
	}
	db, err := p.retain("copy", dst)
	if err != nil {
		return err
	}
	e := d.newEvent(streamCompute, ctx, "copy", "")
	e.op.holds.add(p, dst)
	sb, err := sp.retain("copy", srcID)
	if err != nil {
		e.op.holds.drop()
		return err
	}
	e.op.holds.add(sp, srcID) // package backends checked both spans
	if n == 0 {
		e.op.holds.drop()
		return nil
	}
	e.op.addAccess(db, true)
	dptr, sptr := uintptr(db.ptr+uint64(dstOff)), uintptr(sb.ptr+uint64(srcOff))
	drv := d.drv
	if sp == p {
		e.op.addAccess(sb, false)
		e.op.issue = func(s uintptr) error {
			return d.fail("cuMemcpyDtoDAsync_v2", drv.call(drv.memcpyDtoDAsync, dptr, sptr, uintptr(n), s))
		}
	} else {
		// The source's pending writes are on the other device: a host wait.
		if w := sp.dev.lastWriteOf(sb); w != nil {
			e.op.after = []driver.Event{w}
		}
		e.op.issue = func(s uintptr) error {
			return d.fail("cuMemcpyPeerAsync", drv.call(drv.memcpyPeerAsync, dptr, d.ctx, sptr, sp.dev.ctx, uintptr(n), s))
		}
	}
	ev, err := d.submit(e)
	return waitTransfer(ctx, ev, err)
}

// lastWriteOf is the last work submitted to d that writes b, or nil.
func (d *Device) lastWriteOf(b *devBuf) *event {
	d.subMu.Lock()
	defer d.subMu.Unlock()
	if w := b.lastWrite; w != nil && w.state.Load() != evDone {
		return w
	}
	return nil
}

// peer records, per ordered device pair, whether peer copies work.
var peer struct {
	sync.Mutex
	ready map[[2]*Device]bool
}

// peerReady reports whether d can copy from o as a peer, enabling peer
// access in both directions the first time.
func (d *Device) peerReady(o *Device) (bool, error) {
	peer.Lock()
	defer peer.Unlock()
	key := [2]*Device{d, o}
	if ok, seen := peer.ready[key]; seen {
		return ok, nil
	}
	drv := d.drv
	var can, back int32
	if err := drv.check("cuDeviceCanAccessPeer", drv.call(drv.deviceCanAccessPeer, uintptr(unsafe.Pointer(&can)), uintptr(d.dev), uintptr(o.dev))); err != nil {
		return false, err
	}
	if err := drv.check("cuDeviceCanAccessPeer", drv.call(drv.deviceCanAccessPeer, uintptr(unsafe.Pointer(&back)), uintptr(o.dev), uintptr(d.dev))); err != nil {
		return false, err
	}
	ok := can != 0 && back != 0
	if ok {
		enable := func(a, b *Device) error {
			return a.run("cuCtxEnablePeerAccess", func() error {
				r := drv.call(drv.ctxEnablePeerAccess, b.ctx, 0)
				if r == cudaSuccess || r == cudaErrorPeerAccessAlreadyEnabled {
					return nil
				}
				return a.fail("cuCtxEnablePeerAccess", r)
			})
		}
		if err := enable(d, o); err != nil {
			return false, err
		}
		if err := enable(o, d); err != nil {
			return false, err
		}
	}
	if peer.ready == nil {
		peer.ready = map[[2]*Device]bool{}
	}
	peer.ready[key] = ok
	peer.ready[[2]*Device{o, d}] = ok
	driver.Debug(driver.DebugDevice, "cuda peer access", "dst", d.name, "src", o.name, "enabled", ok)
	return ok, nil
}

// freeAll frees every buffer at Close.
func (p *Pool) freeAll(healthy bool) {
	for _, b := range p.bufs.Drain() {
		if healthy {
			p.dev.drv.call(p.dev.drv.memFree, uintptr(b.ptr))
		}
	}
}

// Live is the number of buffers not yet freed.
func (p *Pool) Live() int { return p.bufs.Len() }

// devicePtr is the buffer's device address, for tests and interop.
func (p *Pool) devicePtr(id driver.BufferID) (uint64, error) {
	b, err := p.bufs.Get("pointer", id)
	if err != nil {
		return 0, err
	}
	return b.ptr, nil
}
