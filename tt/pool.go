package tt

import (
	"context"
	"fmt"
	"sync"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/hostpool"
	"github.com/zyxtt/zyxtt/internal/buftable"
	"github.com/zyxtt/zyxtt/shm"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// StagingBytes is the size of each pool's reusable staging region, used
// for transfers whose host side is not host-pool memory.
const StagingBytes = 8 << 20

type devBuf struct {
	rid     uint64 // the runtime's buffer id
	size    int64  // host (logical) bytes
	devSize int64  // bytes in the runtime (differs for block-float storage)
	charge  int64  // DRAM bytes charged against the pool: whole pages
	address uint64
	spec    ttruntime.BufferSpec // normalized
	host    hostLayout           // the conversion between host and device bytes
}

// Pool is one chip's memory. Buffers live in the runtime; the pool keeps
// their refcounts (in the one buffer table, so another pool's ids are
// unknown here), the layout each was allocated with, and exact
// accounting: FreeBytes is the chip's DRAM (banks × bank size) minus every
// live DRAM buffer rounded up to whole pages (L1 buffers take none).
type Pool struct {
	name  string
	rt    *ttruntime.Client
	sub   *submitter // the device's: frees go behind queued work
	dev   *Device
	host  *hostpool.Pool
	total int64
	bufs  *buftable.Table[*devBuf]

	mu     sync.Mutex
	used   int64
	closed bool

	segMu   sync.Mutex
	mapped  map[string]bool // arena segments the runtime has mapped
	staging shm.Region
}

func newPool(name string, rt *ttruntime.Client, sub *submitter, host *hostpool.Pool) *Pool {
	total := rt.Info().DRAM.Total()
	if total > 1<<62 {
		total = 1 << 62
	}
	p := &Pool{name: name, rt: rt, sub: sub, host: host, total: int64(total), mapped: map[string]bool{}}
	p.bufs = buftable.New(buftable.NotInPool(ttruntime.Backend, name), p.free)
	return p
}

// Name is the device's name ("tt:0", "tt-emu:0").
func (p *Pool) Name() string { return p.name }

func (p *Pool) errf(op string, sentinel error, format string, args ...any) error {
	return driver.Errorf(ttruntime.Backend, p.name+": "+op, sentinel, format, args...)
}

// Alloc reserves n bytes of DRAM, interleaved in 2 KiB pages.
func (p *Pool) Alloc(ctx context.Context, n int64) (driver.BufferID, error) {
	return p.allocSpec(ctx, n, ttruntime.BufferSpec{PageSize: ttruntime.DefaultPageSize}, hostLayout{})
}

// allocSpec allocates a buffer of n host bytes laid out as spec (with the
// host conversion host): checked with the runtime's own rules first.
func (p *Pool) allocSpec(ctx context.Context, n int64, spec ttruntime.BufferSpec, host hostLayout) (driver.BufferID, error) {
	if n <= 0 {
		return 0, p.errf("alloc", driver.ErrInvalidArgument, "size %d must be positive", n)
	}
	spec = spec.Normal()
	devSize, err := host.devSize(n)
	if err != nil {
		return 0, p.errf("alloc", driver.ErrInvalidArgument, "%v", err)
	}
	if spec.Placement == ttruntime.PlacementDRAM && devSize > p.total {
		return 0, p.errf("alloc", driver.ErrOutOfMemory, "%d bytes asked; the chip has %d", devSize, p.total)
	}
	info := p.rt.Info()
	req := ttruntime.AllocRequest{Size: uint64(devSize), BufferSpec: spec}
	var charge int64
	if spec.Placement == ttruntime.PlacementDRAM {
		align := int64(max(info.DRAM.Alignment, 1))
		page := int64(spec.PageSize)
		charge = (devSize + page - 1) / page * ((page + align - 1) / align * align)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return 0, p.errf("alloc", driver.ErrClosed, "")
	}
	if charge > p.total-p.used {
		free := p.total - p.used
		p.mu.Unlock()
		return 0, p.errf("alloc", driver.ErrOutOfMemory, "%d bytes asked, %d free", n, free)
	}
	p.used += charge // reserved while the runtime allocates
	p.mu.Unlock()

	r, err := p.rt.Alloc(ctx, req)
	if err != nil {
		p.mu.Lock()
		p.used -= charge
		p.mu.Unlock()
		return 0, err
	}
	b := &devBuf{rid: r.Buffer, size: n, devSize: devSize, charge: charge, address: r.Address, spec: spec, host: host}
	return p.bufs.Insert(b, n), nil
}

// free gives a buffer whose last reference went back to the runtime. Work
// still queued on the device may use it: the free then goes to the runtime
// behind that work (which runs requests in order, so a free sent after the
// requests that use a buffer frees it once they have run), and Release
// returns at once. With nothing queued, the free is sent now and its error
// returned; it is answered after what is in flight.
func (p *Pool) free(b *devBuf) error {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil // the runtime's exit frees the device memory
	}
	req := ttruntime.BufferRequest{Buffer: b.rid}
	return p.sub.inOrder(func() error {
		p.uncharge(b)
		// Release has no context. The free waits for the call slot as long
		// as the call in flight takes (that call has its own bounds); once
		// sent, its reply is bounded by cleanupTimeout (5 s) after what is
		// before it has been answered, not the 120 s call timeout: a runtime
		// that does not answer a free that long is presumed hung (typically
		// still inside a kernel whose launch was abandoned, which shortens
		// the wait to the client's AbandonedGrace) and killed, as on any
		// call's timeout, so the device is lost and every later call, and
		// every later free, fails at once.
		return p.rt.Free(context.Background(), req)
	}, func() {
		p.uncharge(b) // the runtime frees it before any later alloc
		_, _ = p.rt.SendFree(context.Background(), req, nil)
	})
}

// uncharge gives a freed buffer's DRAM back to the pool's accounting, as
// its free is sent.
func (p *Pool) uncharge(b *devBuf) {
	p.mu.Lock()
	if !p.closed {
		p.used -= b.charge
	}
	p.mu.Unlock()
}

func (p *Pool) checkOpen(op string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return p.errf(op, driver.ErrClosed, "")
	}
	return nil
}

func (p *Pool) lookup(op string, id driver.BufferID) (*devBuf, error) {
	if err := p.checkOpen(op); err != nil {
		return nil, err
	}
	return p.bufs.Get(op, id)
}

// Retain adds a reference.
func (p *Pool) Retain(id driver.BufferID) error {
	if err := p.checkOpen("retain"); err != nil {
		return err
	}
	return p.bufs.Retain(id)
}

// Release drops a reference; the last one frees the device memory.
func (p *Pool) Release(id driver.BufferID) error {
	if err := p.checkOpen("release"); err != nil {
		return err
	}
	return p.bufs.Release(id)
}

// Size is the buffer's length in bytes on the host side (the logical size:
// a block-float buffer holds fewer bytes on the device).
func (p *Pool) Size(id driver.BufferID) (int64, error) {
	if err := p.checkOpen("size"); err != nil {
		return 0, err
	}
	return p.bufs.Size(id)
}

// FreeBytes is the device memory not held by live buffers.
func (p *Pool) FreeBytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total - p.used
}

// Host is the host pool whose memory the runtime reads and writes in place
// (no copy on the Go side): the runtime's host pool.
func (p *Pool) Host() *hostpool.Pool { return p.host }

// ChargeUnit is the granularity of the pool's accounting for Alloc: a
// plain buffer is charged whole 2 KiB DRAM pages (a buffer of a program's
// declared layout, whole pages of its own size).
func (p *Pool) ChargeUnit() int64 { return ttruntime.DefaultPageSize }

// TotalBytes is the chip's DRAM.
func (p *Pool) TotalBytes() int64 { return p.total }

// Live is the number of live buffers.
func (p *Pool) Live() int { return p.bufs.Len() }

// TransferUnit is the granularity of a buffer's transfers: Write and Read
// ranges must start and end at multiples of it. It is the host size of a
// tile row (32 rows of the matrix) for a tile-layout buffer and 1 for any
// other. A chunked copy (backends.Copy with backends.WithChunk) of a
// tile-layout buffer needs a chunk that is a multiple of it.
func (p *Pool) TransferUnit(id driver.BufferID) (int64, error) {
	b, err := p.lookup("transfer unit", id)
	if err != nil {
		return 0, err
	}
	if b.host.converts() {
		return b.host.hostRowBytes(), nil
	}
	return 1, nil
}

// layoutOf is a live buffer's spec and host layout (for launch checks).
func (p *Pool) layoutOf(id driver.BufferID) (*devBuf, error) { return p.lookup("launch", id) }

// span checks that [off, off+n), which package backends checked against
// the buffer's size, moves whole transfer units, and returns the buffer.
func (p *Pool) span(op string, id driver.BufferID, off int64, n int) (*devBuf, error) {
	b, err := p.lookup(op, id)
	if err != nil {
		return nil, err
	}
	if b.host.converts() {
		if unit := b.host.hostRowBytes(); off%unit != 0 || int64(n)%unit != 0 {
			return nil, p.errf(op, driver.ErrInvalidArgument,
				"range [%d,+%d) of buffer %d is not whole tile rows: a tile-layout buffer moves in tile rows of %d bytes (32 rows of %d %s)",
				off, n, id, unit, b.host.Cols, b.host.DType)
		}
	}
	return b, nil
}

// Write copies src into the buffer at off. When src lies in host-pool
// memory the runtime reads it in place (no copy on the Go side);
// otherwise it goes through the pool's staging region in chunks. It goes
// to the runtime at once, behind the requests in flight but ahead of
// asynchronous work still waiting for its events (as a host pool's copy
// does not wait for queued copies either).
func (p *Pool) Write(ctx context.Context, dst driver.BufferID, off int64, src []byte) error {
	b, err := p.span("write", dst, off, len(src))
	if err != nil || len(src) == 0 {
		return err
	}
	return p.write(ctx, b, off, src)
}

// Read copies the buffer's bytes at off into dst: straight into dst when it
// is host-pool memory, else through the staging region. Like Write, it
// goes to the runtime at once.
func (p *Pool) Read(ctx context.Context, src driver.BufferID, off int64, dst []byte) error {
	b, err := p.span("read", src, off, len(dst))
	if err != nil || len(dst) == 0 {
		return err
	}
	return p.read(ctx, b, off, dst)
}

// write is Write at its turn.
func (p *Pool) write(ctx context.Context, b *devBuf, off int64, src []byte) error {
	return p.move(ctx, ttruntime.CmdWrite, b, off, src)
}

// read is Read at its turn.
func (p *Pool) read(ctx context.Context, b *devBuf, off int64, dst []byte) error {
	return p.move(ctx, ttruntime.CmdRead, b, off, dst)
}

// move is a write (cmd CmdWrite: host into the buffer) or read (CmdRead)
// of host at off: converted for a tile-layout buffer, in place for
// host-pool memory, else in chunks through staging.
func (p *Pool) move(ctx context.Context, cmd string, b *devBuf, off int64, host []byte) error {
	if b.host.converts() {
		return p.converted(ctx, cmd, b, off, host)
	}
	if seg, soff, ok := p.host.Arena().Locate(host); ok {
		return p.transfer(ctx, cmd, b.rid, off, seg, soff, len(host))
	}
	return p.staged(ctx, len(host), func(st []byte, done, n int) error {
		if cmd == ttruntime.CmdWrite {
			copy(st[:n], host[done:done+n])
		}
		if err := p.transfer(ctx, cmd, b.rid, off+int64(done), p.staging.Segment(), p.staging.Offset(), n); err != nil {
			return err
		}
		if cmd == ttruntime.CmdRead {
			copy(host[done:done+n], st[:n])
		}
		return nil
	})
}

// converted moves host data of a tile-layout buffer, whole tile rows at a
// time, through staging: tilized (and block-float packed) on write,
// unpacked and untilized on read. A tile row larger than the staging
// region gets a region of its own for the transfer.
func (p *Pool) converted(ctx context.Context, cmd string, b *devBuf, off int64, host []byte) error {
	hr, dr := b.host.hostRowBytes(), b.host.devRowBytes()
	rows := int64(len(host)) / hr
	devOff := off / hr * dr
	return p.stagedSized(ctx, dr, int(rows), func(st []byte, region shm.Region, done, n int) error {
		h := host[int64(done)*hr : int64(done+n)*hr]
		dev := st[:int64(n)*dr]
		at := devOff + int64(done)*dr
		if cmd == ttruntime.CmdWrite {
			b.host.toDevice(dev, h)
			return p.transfer(ctx, cmd, b.rid, at, region.Segment(), region.Offset(), len(dev))
		}
		if err := p.transfer(ctx, cmd, b.rid, at, region.Segment(), region.Offset(), len(dev)); err != nil {
			return err
		}
		b.host.toHost(h, dev)
		return nil
	})
}

// stagedSized runs step over count units of unit bytes, as many at a time
// as the staging region holds (at least one: a unit larger than the
// region gets a region of its own from the arena for this call).
func (p *Pool) stagedSized(ctx context.Context, unit int64, count int, step func(st []byte, r shm.Region, done, n int) error) error {
	p.segMu.Lock()
	defer p.segMu.Unlock()
	if err := p.ensureStaging(); err != nil {
		return err
	}
	region := p.staging
	if unit > StagingBytes {
		r, err := p.host.Arena().Alloc(unit)
		if err != nil {
			return p.errf("staging", driver.ErrOutOfMemory, "a tile row of %d bytes: %v", unit, err)
		}
		defer func() { _ = p.host.Arena().Free(r) }()
		region = r
	}
	per := max(1, int(int64(len(region.Bytes()))/unit))
	for done := 0; done < count; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(count-done, per)
		if err := step(region.Bytes(), region, done, n); err != nil {
			return err
		}
		done += n
	}
	return nil
}

func (p *Pool) ensureStaging() error {
	if p.staging.IsZero() {
		r, err := p.host.Arena().Alloc(StagingBytes)
		if err != nil {
			return p.errf("staging", driver.ErrOutOfMemory, "%v", err)
		}
		p.staging = r
	}
	return nil
}

// staged runs step over total bytes in staging-sized chunks, holding the
// staging region (allocated once, from the host pool's arena).
func (p *Pool) staged(ctx context.Context, total int, step func(st []byte, done, n int) error) error {
	p.segMu.Lock()
	defer p.segMu.Unlock()
	if err := p.ensureStaging(); err != nil {
		return err
	}
	st := p.staging.Bytes()
	for done := 0; done < total; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(total-done, len(st))
		if err := step(st, done, n); err != nil {
			return err
		}
		done += n
	}
	return nil
}

// transfer sends one write or read. Before it, segments the arena has
// dropped since the last transfer are unmapped in the runtime, so the
// runtime never pins memory the host pool has given back.
func (p *Pool) transfer(ctx context.Context, cmd string, rid uint64, off int64, seg string, soff int64, n int) error {
	req := ttruntime.TransferRequest{
		Buffer: rid, Offset: uint64(off), Segment: seg, SegmentOffset: uint64(soff), Length: uint64(n),
	}
	if err := p.forgetDroppedSegments(ctx); err != nil {
		return err
	}
	// The runtime maps the segment before it touches the device, so a
	// transfer that fails may still have mapped it: record it either way
	// (unmapping a segment the runtime never mapped is harmless).
	p.markMapped(seg)
	if cmd == ttruntime.CmdWrite {
		return p.rt.Write(ctx, req)
	}
	return p.rt.Read(ctx, req)
}

func (p *Pool) markMapped(seg string) {
	p.mu.Lock()
	p.mapped[seg] = true
	p.mu.Unlock()
}

func (p *Pool) forgetDroppedSegments(ctx context.Context) error {
	for _, s := range p.droppedSegments() {
		if err := p.rt.Unmap(ctx, ttruntime.SegmentRequest{Segment: s}); err != nil {
			return err
		}
	}
	return nil
}

// droppedSegments are the segments the runtime has mapped that the arena
// has dropped since; they are forgotten here, and the caller unmaps them.
func (p *Pool) droppedSegments() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.mapped) == 0 {
		return nil
	}
	live := p.host.Arena().Segments()
	var gone []string
	for s := range p.mapped {
		if _, ok := live[s]; !ok {
			gone = append(gone, s)
			delete(p.mapped, s)
		}
	}
	return gone
}

// close marks the pool closed and gives the staging region back; the
// runtime's exit frees the device memory.
func (p *Pool) close() error {
	p.mu.Lock()
	p.closed = true
	p.used = 0
	p.mu.Unlock()
	p.bufs.Drain()
	p.segMu.Lock()
	defer p.segMu.Unlock()
	if p.staging.IsZero() {
		return nil
	}
	err := p.host.Arena().Free(p.staging)
	p.staging = shm.Region{}
	if err != nil {
		return fmt.Errorf("tt: %s: free staging: %w", p.name, err)
	}
	return nil
}

var _ driver.Pool = (*Pool)(nil)
