// Package hostpool is the host RAM pool: refcounted buffers whose memory
// lives in shm arena segments. The C and CBLAS devices compute on it directly,
// every cross-pool copy stages through it, and the Tenstorrent runtime reads
// and writes it by segment name without a copy.
package hostpool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/zyxtt/zyxtt/internal/buftable"
	"github.com/zyxtt/zyxtt/internal/core"
	"github.com/zyxtt/zyxtt/shm"
)

// BufferID names a buffer inside one pool (internal/core). The host pool's
// ids count from 1 on their own; every other pool's come from a process-wide
// counter far above them, so a stale or foreign id is always unknown.
type BufferID = core.BufferID

// Errors shared with every pool; package backends re-exports them.
var (
	ErrUnknownBuffer   = core.ErrUnknownBuffer
	ErrOutOfMemory     = core.ErrOutOfMemory
	ErrInvalidArgument = core.ErrInvalidArgument
)

// Pool is the host memory pool. It is safe for concurrent use.
type Pool struct {
	arena   *shm.Arena
	bufs    *buftable.Table[shm.Region]
	limit   int64
	ownsAll bool

	mu       sync.Mutex
	reserved int64 // bytes of allocations whose segments are being made
}

// Config sets up a Pool.
type Config struct {
	// Limit caps the bytes the pool hands out. Zero means the host's
	// physical memory or the size of the shm filesystem, whichever is less.
	Limit int64
	// Arena is the shm arena to allocate from. Nil creates a private one
	// that Close releases.
	Arena *shm.Arena
	// Dir is the shm directory of the private arena (shm.Options.Dir);
	// ignored when Arena is set.
	Dir string
}

// New returns a pool over cfg.Arena, or over a fresh arena of its own.
func New(cfg Config) (*Pool, error) {
	p := &Pool{limit: cfg.Limit, arena: cfg.Arena}
	if p.arena == nil {
		a, err := shm.NewArena(shm.WithDir(cfg.Dir))
		if err != nil {
			return nil, fmt.Errorf("hostpool: %w", err)
		}
		p.arena, p.ownsAll = a, true
	}
	p.bufs = buftable.NewLocal(func(op string, id BufferID) error {
		return fmt.Errorf("hostpool: %s: buffer %d: %w", op, id, ErrUnknownBuffer)
	}, p.arena.Free)
	if p.limit <= 0 {
		p.limit = physicalMemory()
		// Segments cannot outgrow the tmpfs that holds them.
		if c, err := shm.Capacity(p.arena.Dir()); err == nil && c > 0 && c < p.limit {
			p.limit = c
		}
	}
	return p, nil
}

var (
	defaultOnce sync.Once
	defaultPool *Pool
	defaultErr  error
)

// Default is the process-wide host pool, created on first use and shared by
// every backend.
func Default() (*Pool, error) {
	defaultOnce.Do(func() { defaultPool, defaultErr = New(Config{}) })
	if defaultClosed.Load() {
		return nil, errDefaultClosed
	}
	return defaultPool, defaultErr
}

var (
	defaultClosed    atomic.Bool
	errDefaultClosed = errors.New("hostpool: the default pool is closed")
)

// CloseDefault frees the process-wide pool's memory and unlinks its shm
// segments, if the pool was ever created. A program calls it once, at exit,
// after every device that uses host memory is closed; the pool must not be
// used afterwards. Segments of a process that exits without it are removed
// by the next process's sweep (shm.Sweep).
func CloseDefault() error {
	created := true
	defaultOnce.Do(func() { created = false })
	if defaultClosed.Swap(true) || !created || defaultPool == nil {
		return nil
	}
	return defaultPool.Close()
}

func physicalMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 1 << 34
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// Name identifies the pool in errors and listings.
func (p *Pool) Name() string { return "host" }

// Arena is the shm arena behind the pool's memory.
func (p *Pool) Arena() *shm.Arena { return p.arena }

// Alloc returns a new buffer of n bytes with a reference count of one.
func (p *Pool) Alloc(_ context.Context, n int64) (BufferID, error) {
	if n <= 0 {
		return 0, fmt.Errorf("hostpool: alloc %d bytes: %w: size must be positive", n, ErrInvalidArgument)
	}
	p.mu.Lock()
	if free := p.limit - p.bufs.Used() - p.reserved; n > free {
		p.mu.Unlock()
		return 0, fmt.Errorf("hostpool: alloc %d bytes with %d free: %w", n, free, ErrOutOfMemory)
	}
	p.reserved += n // held while the (possibly slow) segment is made
	p.mu.Unlock()

	r, err := p.arena.Alloc(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reserved -= n
	if err != nil {
		if errors.Is(err, unix.ENOSPC) {
			// The shm filesystem is full (other processes use it too).
			return 0, fmt.Errorf("hostpool: alloc %d bytes: %w: %w", n, ErrOutOfMemory, err)
		}
		return 0, fmt.Errorf("hostpool: alloc %d bytes: %w", n, err)
	}
	return p.bufs.Insert(r, n), nil
}

// Retain adds a reference to a buffer.
func (p *Pool) Retain(id BufferID) error { return p.bufs.Retain(id) }

// Release drops a reference; the last one frees the buffer. Releasing a
// freed or unknown buffer is an error and changes nothing.
func (p *Pool) Release(id BufferID) error { return p.bufs.Release(id) }

// Size is the buffer's length in bytes.
func (p *Pool) Size(id BufferID) (int64, error) { return p.bufs.Size(id) }

// FreeBytes is how many more bytes the pool will hand out.
func (p *Pool) FreeBytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.limit - p.bufs.Used() - p.reserved
}

// TotalBytes is the pool's limit.
func (p *Pool) TotalBytes() int64 { return p.limit }

// Live is the number of buffers not yet freed.
func (p *Pool) Live() int { return p.bufs.Len() }

// Bytes is the buffer's memory. It stays valid while the caller holds a
// reference.
func (p *Pool) Bytes(id BufferID) ([]byte, error) {
	r, err := p.bufs.Get("bytes", id)
	if err != nil {
		return nil, err
	}
	return r.Bytes(), nil
}

// Region is the shm region that holds the buffer, for handing to another
// process by segment name and offset.
func (p *Pool) Region(id BufferID) (shm.Region, error) { return p.bufs.Get("region", id) }

func (p *Pool) span(op string, id BufferID, off int64, n int) ([]byte, error) {
	mem, err := p.Bytes(id)
	if err != nil {
		return nil, err
	}
	if err := core.CheckSpan("hostpool", op, id, off, int64(n), int64(len(mem))); err != nil {
		return nil, err
	}
	return mem[off : off+int64(n)], nil
}

// Write copies src into the buffer at off.
func (p *Pool) Write(_ context.Context, dst BufferID, off int64, src []byte) error {
	mem, err := p.span("write", dst, off, len(src))
	copy(mem, src) // mem is nil on error: nothing is copied
	return err
}

// Read copies the buffer's bytes at off into dst.
func (p *Pool) Read(_ context.Context, src BufferID, off int64, dst []byte) error {
	mem, err := p.span("read", src, off, len(dst))
	copy(dst, mem) // mem is nil on error: nothing is copied
	return err
}

// WriteAsync is Write once every event in after has succeeded. With nothing
// left to wait for it copies at once and returns a completed event;
// otherwise the copy runs on a goroutine of its own, which holds a
// reference to the buffer until it is done.
func (p *Pool) WriteAsync(ctx context.Context, dst BufferID, off int64, src []byte, after ...core.Event) (core.Event, error) {
	mem, err := p.span("write", dst, off, len(src))
	if err != nil {
		return nil, err
	}
	return p.after(ctx, dst, after, func() { copy(mem, src) })
}

// ReadAsync is Read once every event in after has succeeded, as WriteAsync.
func (p *Pool) ReadAsync(ctx context.Context, src BufferID, off int64, dst []byte, after ...core.Event) (core.Event, error) {
	mem, err := p.span("read", src, off, len(dst))
	if err != nil {
		return nil, err
	}
	return p.after(ctx, src, after, func() { copy(dst, mem) })
}

// after runs f on buffer id's memory once the events have succeeded,
// holding a reference to the buffer meanwhile.
func (p *Pool) after(ctx context.Context, id BufferID, events []core.Event, f func()) (core.Event, error) {
	return core.After(ctx, events, func() error { return p.Retain(id) }, func() { _ = p.Release(id) },
		func() error { f(); return nil })
}

// Close frees every buffer and, when the pool made its own arena, unmaps it.
func (p *Pool) Close() error {
	var errs []error
	for _, r := range p.bufs.Drain() {
		errs = append(errs, p.arena.Free(r))
	}
	if p.ownsAll {
		errs = append(errs, p.arena.Close())
	}
	return errors.Join(errs...)
}
