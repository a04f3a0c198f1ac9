package cuda

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/hostpool"
)

// directLimit is the unit of the bounce budget: a device keeps at most
// max(4 staging chunks, 64 × directLimit) bytes of bounce buffers for
// copies of ordinary (Go) memory in flight; a copy that does not fit is
// staged in order by the worker (copyInStaged, copyOutStaged).
const directLimit = 1 << 20

// pins tracks the host-pool arena segments registered as pinned memory.
// Registration is portable (valid in every context), so it is process-wide:
// each segment is registered once, on first use.
//
// The arena unmaps a dedicated segment when its last buffer is freed, and
// nothing tells this package. A registration that outlives its mapping is
// dangerous: the driver still takes that address range for pinned memory,
// so a later mapping at the same addresses (the Go heap, say) would be
// copied from the old pages, and device allocations can fail with
// CUDA_ERROR_ALREADY_MAPPED. So every copy, allocation and GEMM first
// sweeps: any registered segment the arena no longer maps at the same
// address is unregistered before the driver is used.
var pins struct {
	sync.Mutex
	segs map[string]pinnedSeg
}

type pinnedSeg struct {
	base unsafe.Pointer // the segment's first byte (mapped memory, not Go heap)
	size int64
}

// arenaView is what the package needs from the host pool's arena.
type arenaView interface {
	Locate([]byte) (string, int64, bool)
	Segments() map[string]int64
}

// hostPool is the device's host pool: the runtime's, or the process-wide
// one for a device opened on its own.
func (d *Device) hostPool() (*hostpool.Pool, error) {
	if d.cfg.HostPool != nil {
		return d.cfg.HostPool, nil
	}
	return hostpool.Default()
}

// hostArena finds the device's host-pool arena; nil when there is none.
func (d *Device) hostArena() arenaView {
	hp, err := d.hostPool()
	if err != nil {
		return nil
	}
	return hp.Arena()
}

// sweepPinsLocked unregisters every pinned segment that the arena no longer
// maps where it was registered. pins must be locked.
func sweepPinsLocked(drv *driverAPI, arena arenaView) {
	for name, s := range pins.segs {
		got, off, ok := arena.Locate(unsafe.Slice((*byte)(s.base), 1))
		if ok && got == name && off == 0 {
			continue
		}
		drv.call(drv.memHostUnregister, uintptr(s.base))
		delete(pins.segs, name)
		driver.Debug(driver.DebugDevice, "cuda: unpinned a segment the host pool unmapped", "segment", name, "bytes", s.size)
	}
}

// sweepPins is sweepPinsLocked for callers that do not hold pins; the
// context must be current.
func (d *Device) sweepPins() {
	pins.Lock()
	defer pins.Unlock()
	if len(pins.segs) == 0 {
		return
	}
	if arena := d.hostArena(); arena != nil {
		sweepPinsLocked(d.drv, arena)
	}
}

// pinned reports whether b lies in host-pool memory that is registered as
// pinned, registering its segment on first use, after sweeping stale
// registrations. The context must be current. A failed registration is
// logged and b is treated as pageable.
func (d *Device) pinned(b []byte) bool {
	pins.Lock()
	defer pins.Unlock()
	arena := d.hostArena()
	if arena == nil {
		return false
	}
	if len(pins.segs) > 0 {
		sweepPinsLocked(d.drv, arena)
	}
	if len(b) == 0 {
		return false
	}
	name, off, ok := arena.Locate(b)
	if !ok {
		return false
	}
	base := unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), -off)
	if s, ok := pins.segs[name]; ok && s.base == base {
		return true
	}
	size, ok := arena.Segments()[name]
	if !ok {
		return false
	}
	if d.numaNode >= 0 {
		placeOnNode(base, size, d.numaNode)
	}
	drv := d.drv
	r := drv.call(drv.memHostRegister, uintptr(base), uintptr(size), hostRegisterPortable)
	if r == cudaErrorHostMemAlreadyRegistered {
		// Only this package registers host-pool memory, and this segment is
		// not in pins: the registration is a stale one, left by a segment
		// the arena unmapped at these addresses before the sweep could
		// unregister it. Drop it and register the memory mapped there now.
		drv.call(drv.memHostUnregister, uintptr(base))
		r = drv.call(drv.memHostRegister, uintptr(base), uintptr(size), hostRegisterPortable)
	}
	if r != cudaSuccess {
		driver.Debug(driver.DebugDevice, "cuda: host-pool segment not pinned; copies from it are staged",
			"segment", name, "bytes", size, "err", drv.name(r))
		return false
	}
	if pins.segs == nil {
		pins.segs = map[string]pinnedSeg{}
	}
	pins.segs[name] = pinnedSeg{base: base, size: size}
	driver.Debug(driver.DebugDevice, "cuda: pinned host-pool segment", "segment", name, "bytes", size)
	return true
}

// inHostPool reports whether b lies in the device's host-pool arena.
func (d *Device) inHostPool(b []byte) bool {
	arena := d.hostArena()
	if arena == nil {
		return false
	}
	_, _, ok := arena.Locate(b)
	return ok
}

// bounceBuf is host-pool memory an asynchronous copy of ordinary memory
// goes through: the GPU copies it by DMA while the caller's slice is copied
// in (at submission) or out (once the DMA has ended) by the CPU. It belongs
// to the copy until the copy's work has ended.
type bounceBuf struct {
	d    *Device
	host hostpoolAPI
	id   driver.BufferID
	mem  []byte
}

// hostpoolAPI is what a bounce buffer needs of the host pool.
type hostpoolAPI interface {
	Release(driver.BufferID) error
}

// bounceBudget is how many bytes of bounce buffers a device has in flight
// at most.
func (d *Device) bounceBudget() int64 {
	return max(4*d.cfg.StagingChunk, 64*directLimit)
}

// bounce is a bounce buffer of n bytes, or nil when the budget is spent or
// the host pool has none (the copy is then staged by the worker).
func (d *Device) bounce(n int) *bounceBuf {
	if d.bounceBytes.Add(int64(n)) > d.bounceBudget() {
		d.bounceBytes.Add(-int64(n))
		return nil
	}
	bb, err := d.newBounce(n)
	if err != nil {
		d.bounceBytes.Add(-int64(n))
		driver.Debug(driver.DebugDevice, "cuda: no bounce buffer; the copy is staged in order", "bytes", n, "err", err)
		return nil
	}
	return bb
}

func (d *Device) newBounce(n int) (*bounceBuf, error) {
	host, err := d.hostPool()
	if err != nil {
		return nil, err
	}
	id, err := host.Alloc(context.Background(), int64(n))
	if err != nil {
		return nil, err
	}
	mem, err := host.Bytes(id)
	if err != nil {
		_ = host.Release(id)
		return nil, err
	}
	return &bounceBuf{d: d, host: host, id: id, mem: mem[:n]}, nil
}

func (b *bounceBuf) release() {
	_ = b.host.Release(b.id)
	b.d.bounceBytes.Add(-int64(len(b.mem)))
}

// copyInStaged copies src (ordinary memory) to device address dst on
// stream s through the device's two pinned staging buffers, and returns
// once the copy has ended. Without a host pool the driver stages it. The
// worker runs it with the context current.
func (d *Device) copyInStaged(ctx context.Context, s uintptr, dst uint64, src []byte) error {
	d.sweepPins()
	st, err := d.stagingBuffers()
	if err != nil {
		driver.Debug(driver.DebugDevice, "cuda: no staging buffers; the driver stages the copy", "err", err)
		if r := d.drv.call(d.drv.memcpyHtoDAsync, uintptr(dst), uintptr(unsafe.Pointer(unsafe.SliceData(src))), uintptr(len(src)), s); r != cudaSuccess {
			return d.fail("cuMemcpyHtoDAsync_v2", r)
		}
		return d.syncStream(s)
	}
	return st.htod(ctx, d, s, dst, src)
}

// copyOutStaged copies device address src into dst (ordinary memory) on
// stream s, as copyInStaged.
func (d *Device) copyOutStaged(ctx context.Context, s uintptr, dst []byte, src uint64) error {
	d.sweepPins()
	st, err := d.stagingBuffers()
	if err != nil {
		driver.Debug(driver.DebugDevice, "cuda: no staging buffers; the driver stages the copy", "err", err)
		if r := d.drv.call(d.drv.memcpyDtoHAsync, uintptr(unsafe.Pointer(unsafe.SliceData(dst))), uintptr(src), uintptr(len(dst)), s); r != cudaSuccess {
			return d.fail("cuMemcpyDtoHAsync_v2", r)
		}
		return d.syncStream(s)
	}
	return st.dtoh(ctx, d, s, dst, src)
}

// stager is a device's pair of pinned host-pool staging buffers. While the
// GPU copies one, the CPU fills (or drains) the other.
type stager struct {
	mu     sync.Mutex
	host   *hostpool.Pool
	ids    [2]driver.BufferID
	bufs   [2][]byte
	events [2]uintptr
	chunk  int
}

// stagingBuffers makes the stager on first use; the context must be current.
func (d *Device) stagingBuffers() (*stager, error) {
	d.stagingOnce.Do(func() { d.staging, d.stagingErr = newStager(d) })
	return d.staging, d.stagingErr
}

func newStager(d *Device) (*stager, error) {
	host, err := d.hostPool()
	if err != nil {
		return nil, fmt.Errorf("cuda: staging buffers: %w", err)
	}
	st := &stager{host: host, chunk: int(d.cfg.StagingChunk)}
	for i := range st.ids {
		id, err := host.Alloc(context.Background(), int64(st.chunk))
		if err != nil {
			st.close(d)
			return nil, fmt.Errorf("cuda: staging buffers: %w", err)
		}
		st.ids[i] = id
		if st.bufs[i], err = host.Bytes(id); err != nil {
			st.close(d)
			return nil, err
		}
		d.pinned(st.bufs[i])
		if r := d.drv.call(d.drv.eventCreate, uintptr(unsafe.Pointer(&st.events[i])), eventDisableTiming); r != cudaSuccess {
			st.close(d)
			return nil, d.fail("cuEventCreate", r)
		}
	}
	return st, nil
}

func (st *stager) close(d *Device) {
	for i := range st.ids {
		if st.events[i] != 0 {
			d.drv.call(d.drv.eventDestroy, st.events[i])
			st.events[i] = 0
		}
		if st.ids[i] != 0 {
			_ = st.host.Release(st.ids[i])
			st.ids[i] = 0
		}
	}
}

func (st *stager) htod(ctx context.Context, d *Device, s uintptr, dst uint64, src []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	drv := d.drv
	n := len(src)
	for i, off := 0, 0; off < n; i, off = i+1, off+st.chunk {
		if err := ctx.Err(); err != nil {
			_ = d.syncStream(s)
			return err
		}
		k := i % 2
		if i >= 2 {
			if r := drv.call(drv.eventSynchronize, st.events[k]); r != cudaSuccess {
				return d.fail("cuEventSynchronize", r)
			}
		}
		l := min(st.chunk, n-off)
		parallelCopy(st.bufs[k][:l], src[off:off+l])
		if r := drv.call(drv.memcpyHtoDAsync, uintptr(dst)+uintptr(off), uintptr(unsafe.Pointer(unsafe.SliceData(st.bufs[k]))), uintptr(l), s); r != cudaSuccess {
			return d.fail("cuMemcpyHtoDAsync_v2", r)
		}
		if r := drv.call(drv.eventRecord, st.events[k], s); r != cudaSuccess {
			return d.fail("cuEventRecord", r)
		}
	}
	return d.syncStream(s)
}

func (st *stager) dtoh(ctx context.Context, d *Device, s uintptr, dst []byte, src uint64) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	drv := d.drv
	n := len(dst)
	chunks := (n + st.chunk - 1) / st.chunk
	issue := func(i int) error {
		k, off := i%2, i*st.chunk
		l := min(st.chunk, n-off)
		if r := drv.call(drv.memcpyDtoHAsync, uintptr(unsafe.Pointer(unsafe.SliceData(st.bufs[k]))), uintptr(src)+uintptr(off), uintptr(l), s); r != cudaSuccess {
			return d.fail("cuMemcpyDtoHAsync_v2", r)
		}
		if r := drv.call(drv.eventRecord, st.events[k], s); r != cudaSuccess {
			return d.fail("cuEventRecord", r)
		}
		return nil
	}
	for i := 0; i < min(2, chunks); i++ {
		if err := issue(i); err != nil {
			return err
		}
	}
	for i := 0; i < chunks; i++ {
		k, off := i%2, i*st.chunk
		if r := drv.call(drv.eventSynchronize, st.events[k]); r != cudaSuccess {
			return d.fail("cuEventSynchronize", r)
		}
		if err := ctx.Err(); err != nil {
			_ = d.syncStream(s)
			return err
		}
		l := min(st.chunk, n-off)
		parallelCopy(dst[off:off+l], st.bufs[k][:l])
		if i+2 < chunks {
			if err := issue(i + 2); err != nil {
				return err
			}
		}
	}
	return nil
}

// parallelCopy copies src into dst with a few goroutines: one core's memcpy
// is well below what a PCIe 5 link moves.
func parallelCopy(dst, src []byte) {
	const piece = 2 << 20
	workers := min(runtime.GOMAXPROCS(0), 8, (len(src)+piece-1)/piece)
	if workers <= 1 {
		copy(dst, src)
		return
	}
	var wg sync.WaitGroup
	step := (len(src) + workers - 1) / workers
	for lo := 0; lo < len(src); lo += step {
		hi := min(lo+step, len(src))
		wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
	}
	wg.Wait()
}
