package tt

import (
	"context"
	"fmt"
	"sync"

	"github.com/zyxtt/zyxtt/backends"
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
	rid    uint64 // the runtime's buffer id
	size   int64
	charge int64 // bytes charged against the pool: size rounded up to pages
}

// Pool is one chip's DRAM. Buffers live in the runtime; the pool keeps
// their refcounts (in the one buffer table, so another pool's ids are
// unknown here) and exact accounting: FreeBytes is the chip's DRAM (banks ×
// bank size) minus every live buffer rounded up to whole pages.
type Pool struct {
	name  string
	rt    *ttruntime.Client
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

func newPool(name string, rt *ttruntime.Client, host *hostpool.Pool) *Pool {
	total := rt.Info().DRAM.Total()
	if total > 1<<62 {
		total = 1 << 62
	}
	p := &Pool{name: name, rt: rt, host: host, total: int64(total), mapped: map[string]bool{}}
	p.bufs = buftable.New(buftable.NotInPool(ttruntime.Backend, name), p.free)
	return p
}

// Name is the device's name ("tt:0", "tt-emu:0").
func (p *Pool) Name() string { return p.name }

func (p *Pool) errf(op string, sentinel error, format string, args ...any) error {
	return backends.Errorf(ttruntime.Backend, p.name+": "+op, sentinel, format, args...)
}

// Alloc reserves n bytes of device memory.
func (p *Pool) Alloc(ctx context.Context, n int64) (backends.BufferID, error) {
	if n <= 0 {
		return 0, p.errf("alloc", backends.ErrInvalidArgument, "size %d must be positive", n)
	}
	const page = ttruntime.DefaultPageSize
	if n > p.total {
		return 0, p.errf("alloc", backends.ErrOutOfMemory, "%d bytes asked; the chip has %d", n, p.total)
	}
	charge := (n + page - 1) / page * page
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return 0, p.errf("alloc", backends.ErrClosed, "")
	}
	if charge > p.total-p.used {
		free := p.total - p.used
		p.mu.Unlock()
		return 0, p.errf("alloc", backends.ErrOutOfMemory, "%d bytes asked, %d free", n, free)
	}
	p.used += charge // reserved while the runtime allocates
	p.mu.Unlock()

	r, err := p.rt.Alloc(ctx, ttruntime.AllocRequest{Size: uint64(n), PageSize: page})
	if err != nil {
		p.mu.Lock()
		p.used -= charge
		p.mu.Unlock()
		return 0, err
	}
	return p.bufs.Insert(&devBuf{rid: r.Buffer, size: n, charge: charge}, n), nil
}

// free gives a buffer whose last reference went back to the runtime.
func (p *Pool) free(b *devBuf) error {
	p.mu.Lock()
	p.used -= b.charge
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil // the runtime's exit frees the device memory
	}
	// Release has no context. The free waits for the call slot as long as
	// the call in flight takes (that call has its own bounds); once sent,
	// its reply is bounded by cleanupTimeout (5 s), not the
	// 120 s call timeout: a runtime that does not answer a free that long
	// is presumed hung (typically still inside a kernel whose launch was
	// abandoned) and killed, as on any call's timeout, so the device is
	// lost and every later call, and every later free, fails at once.
	return p.rt.Free(context.Background(), ttruntime.BufferRequest{Buffer: b.rid})
}

func (p *Pool) checkOpen(op string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return p.errf(op, backends.ErrClosed, "")
	}
	return nil
}

func (p *Pool) lookup(op string, id backends.BufferID) (*devBuf, error) {
	if err := p.checkOpen(op); err != nil {
		return nil, err
	}
	return p.bufs.Get(op, id)
}

// Retain adds a reference.
func (p *Pool) Retain(id backends.BufferID) error {
	if err := p.checkOpen("retain"); err != nil {
		return err
	}
	return p.bufs.Retain(id)
}

// Release drops a reference; the last one frees the device memory.
func (p *Pool) Release(id backends.BufferID) error {
	if err := p.checkOpen("release"); err != nil {
		return err
	}
	return p.bufs.Release(id)
}

// Size is the buffer's length in bytes.
func (p *Pool) Size(id backends.BufferID) (int64, error) {
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

// ChargeUnit is the granularity of the pool's accounting: every buffer is
// charged whole DRAM pages.
func (p *Pool) ChargeUnit() int64 { return ttruntime.DefaultPageSize }

// TotalBytes is the chip's DRAM.
func (p *Pool) TotalBytes() int64 { return p.total }

// Live is the number of live buffers.
func (p *Pool) Live() int { return p.bufs.Len() }

// runtimeID is the runtime's id of a live buffer.
func (p *Pool) runtimeID(id backends.BufferID) (uint64, error) {
	b, err := p.lookup("launch", id)
	if err != nil {
		return 0, err
	}
	return b.rid, nil
}

// span checks [off, off+n) against the buffer and returns its runtime id.
func (p *Pool) span(op string, id backends.BufferID, off int64, n int) (uint64, error) {
	b, err := p.lookup(op, id)
	if err != nil {
		return 0, err
	}
	if err := driver.CheckSpan(ttruntime.Backend, p.name+": "+op, id, off, int64(n), b.size); err != nil {
		return 0, err
	}
	return b.rid, nil
}

// Write copies src into the buffer at off. When src lies in host-pool
// memory the runtime reads it in place (no copy on the Go side);
// otherwise it goes through the pool's staging region in chunks.
func (p *Pool) Write(ctx context.Context, dst backends.BufferID, off int64, src []byte) error {
	rid, err := p.span("write", dst, off, len(src))
	if err != nil || len(src) == 0 {
		return err
	}
	if seg, soff, ok := p.host.Arena().Locate(src); ok {
		return p.transfer(ctx, ttruntime.CmdWrite, rid, off, seg, soff, len(src))
	}
	return p.staged(ctx, len(src), func(st []byte, done, n int) error {
		copy(st[:n], src[done:done+n])
		return p.transfer(ctx, ttruntime.CmdWrite, rid, off+int64(done), p.staging.Segment(), p.staging.Offset(), n)
	})
}

// Read copies the buffer's bytes at off into dst: straight into dst when it
// is host-pool memory, else through the staging region.
func (p *Pool) Read(ctx context.Context, src backends.BufferID, off int64, dst []byte) error {
	rid, err := p.span("read", src, off, len(dst))
	if err != nil || len(dst) == 0 {
		return err
	}
	if seg, soff, ok := p.host.Arena().Locate(dst); ok {
		return p.transfer(ctx, ttruntime.CmdRead, rid, off, seg, soff, len(dst))
	}
	return p.staged(ctx, len(dst), func(st []byte, done, n int) error {
		if err := p.transfer(ctx, ttruntime.CmdRead, rid, off+int64(done), p.staging.Segment(), p.staging.Offset(), n); err != nil {
			return err
		}
		copy(dst[done:done+n], st[:n])
		return nil
	})
}

// staged runs step over total bytes in staging-sized chunks, holding the
// staging region (allocated once, from the host pool's arena).
func (p *Pool) staged(ctx context.Context, total int, step func(st []byte, done, n int) error) error {
	p.segMu.Lock()
	defer p.segMu.Unlock()
	if p.staging.IsZero() {
		r, err := p.host.Arena().Alloc(StagingBytes)
		if err != nil {
			return p.errf("staging", backends.ErrOutOfMemory, "%v", err)
		}
		p.staging = r
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
	p.mu.Lock()
	if len(p.mapped) == 0 {
		p.mu.Unlock()
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
	p.mu.Unlock()
	for _, s := range gone {
		if err := p.rt.Unmap(ctx, ttruntime.SegmentRequest{Segment: s}); err != nil {
			return err
		}
	}
	return nil
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

var _ backends.Pool = (*Pool)(nil)
