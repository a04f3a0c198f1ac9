package cuda

import (
	"context"
	"fmt"
	"sync"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/buftable"
)

type devBuf struct {
	ptr  uint64 // CUdeviceptr
	size int64
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
	_ backends.Pool       = (*Pool)(nil)
	_ backends.PeerCopier = (*Pool)(nil)
	_ backends.Device     = (*Device)(nil)
)

// Name is the device's name ("cuda:0").
func (p *Pool) Name() string { return p.dev.name }

// Alloc returns a device buffer of n bytes.
func (p *Pool) Alloc(ctx context.Context, n int64) (backends.BufferID, error) {
	if n <= 0 {
		return 0, backends.Errorf(Name, "alloc", backends.ErrInvalidArgument, "%d bytes: size must be positive", n)
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

func (p *Pool) unknown(op string, id backends.BufferID) error {
	return backends.Errorf(Name, op, backends.ErrUnknownBuffer, "buffer %d is not a live buffer of %s", id, p.dev.name)
}

// Retain adds a reference.
func (p *Pool) Retain(id backends.BufferID) error { return p.bufs.Retain(id) }

// Release drops a reference; the last one frees the memory.
func (p *Pool) Release(id backends.BufferID) error { return p.bufs.Release(id) }

// free returns a buffer's memory to the driver when its last reference goes.
func (p *Pool) free(b *devBuf) error {
	if p.dev.usable("cuMemFree_v2") != nil {
		return nil // a lost or closed context took the memory with it
	}
	return p.dev.run("cuMemFree_v2", func() error {
		return p.dev.fail("cuMemFree_v2", p.dev.drv.call(p.dev.drv.memFree, uintptr(b.ptr)))
	})
}

// hold takes a temporary reference for the length of an operation, so a
// concurrent Release cannot free memory a copy or launch is using.
func (p *Pool) hold(op string, id backends.BufferID) (*devBuf, func(), error) {
	bufs, done, err := p.bufs.Acquire(op, id)
	if err != nil {
		return nil, nil, err
	}
	return bufs[0], done, nil
}

// Size is the buffer's length.
func (p *Pool) Size(id backends.BufferID) (int64, error) { return p.bufs.Size(id) }

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

// Write copies src into the buffer at off. Host-pool memory is copied in
// place at pinned bandwidth; other memory goes through pinned staging.
func (p *Pool) Write(ctx context.Context, dst backends.BufferID, off int64, src []byte) error {
	b, done, err := p.hold("write", dst)
	if err != nil {
		return err
	}
	defer done()
	if err := driver.CheckSpan(Name, "write", dst, off, int64(len(src)), b.size); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	return p.dev.run("write", func() error { return p.dev.htod(ctx, b.ptr+uint64(off), src) })
}

// Read copies the buffer's bytes at off into dst.
func (p *Pool) Read(ctx context.Context, src backends.BufferID, off int64, dst []byte) error {
	b, done, err := p.hold("read", src)
	if err != nil {
		return err
	}
	defer done()
	if err := driver.CheckSpan(Name, "read", src, off, int64(len(dst)), b.size); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	return p.dev.run("read", func() error { return p.dev.dtoh(ctx, dst, b.ptr+uint64(off)) })
}

// CopyFrom copies n bytes from another CUDA pool without the host: on one
// device with a device-to-device copy, between two devices with a peer copy
// when cuDeviceCanAccessPeer allows it. Any other pair is ErrUnsupported,
// and backends.Copy then stages through the host pool.
func (p *Pool) CopyFrom(ctx context.Context, dst backends.BufferID, dstOff int64, src backends.Pool, srcID backends.BufferID, srcOff, n int64) error {
	sp, ok := src.(*Pool)
	if !ok {
		return backends.Errorf(Name, "copy", backends.ErrUnsupported, "source pool %s is not a CUDA pool", src.Name())
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if sp.dev.drv != p.dev.drv {
		return backends.Errorf(Name, "copy", backends.ErrUnsupported, "pools of different driver instances")
	}
	if sp != p {
		ok, err := p.dev.peerReady(sp.dev)
		if err != nil {
			return err
		}
		if !ok {
			return backends.Errorf(Name, "copy", backends.ErrUnsupported, "%s cannot access %s as a peer", p.dev.name, sp.dev.name)
		}
	}
	db, ddone, err := p.hold("copy", dst)
	if err != nil {
		return err
	}
	defer ddone()
	sb, sdone, err := sp.hold("copy", srcID)
	if err != nil {
		return err
	}
	defer sdone()
	if err := driver.CheckSpan(Name, "copy", dst, dstOff, n, db.size); err != nil {
		return err
	}
	if err := driver.CheckSpan(Name, "copy", srcID, srcOff, n, sb.size); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if err := sp.dev.usable("copy"); err != nil {
		return err
	}
	drv := p.dev.drv
	return p.dev.run("copy", func() error {
		dptr, sptr := uintptr(db.ptr+uint64(dstOff)), uintptr(sb.ptr+uint64(srcOff))
		var r cuResult
		op := "cuMemcpyDtoDAsync_v2"
		if sp == p {
			r = drv.call(drv.memcpyDtoDAsync, dptr, sptr, uintptr(n), p.dev.stream)
		} else {
			op = "cuMemcpyPeerAsync"
			r = drv.call(drv.memcpyPeerAsync, dptr, p.dev.ctx, sptr, sp.dev.ctx, uintptr(n), p.dev.stream)
		}
		if r != cudaSuccess {
			return p.dev.fail(op, r)
		}
		return p.dev.sync()
	})
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
func (p *Pool) devicePtr(id backends.BufferID) (uint64, error) {
	b, err := p.bufs.Get("pointer", id)
	if err != nil {
		return 0, err
	}
	return b.ptr, nil
}
