package backends

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/buftable"
	"github.com/zyxtt/zyxtt/internal/core"
	"github.com/zyxtt/zyxtt/shm"
)

// DiskPool is a read-only pool of file slices mapped with mmap: the source
// side of loading weights or data from disk. Its buffers are host memory, so
// Copy reads them in place (the kernel pages the file in as the copy goes)
// and never makes a whole-file copy. Buffers are made with Map, not Alloc,
// and cannot be written. It is safe for concurrent use.
type DiskPool struct {
	bufs *buftable.Table[*shm.FileMap]

	mu     sync.Mutex
	closed bool
}

var (
	_ driver.Pool       = (*DiskPool)(nil)
	_ driver.HostMemory = (*DiskPool)(nil)
)

// NewDiskPool returns an empty disk pool. Its ids come from the process-wide
// counter, so another pool's ids are unknown to it.
func NewDiskPool() *DiskPool {
	return &DiskPool{bufs: buftable.New(func(op string, id BufferID) error {
		return fmt.Errorf("disk pool: %s: buffer %d: %w", op, id, ErrUnknownBuffer)
	}, (*shm.FileMap).Close)}
}

// Pool is the disk pool as a Pool of the user API: copies (Copy) take it.
func (p *DiskPool) Pool() *Pool { return PoolOf(p) }

// Name is "disk".
func (p *DiskPool) Name() string { return "disk" }

// Map maps n bytes of the file at path, from byte off, as a new buffer with
// one reference. The offset need not be page aligned. The file must not
// shrink while the buffer lives.
func (p *DiskPool) Map(path string, off, n int64) (BufferID, error) {
	if off < 0 || n <= 0 {
		return 0, fmt.Errorf("disk pool: map %s [%d,%d): %w: offset must be non-negative and length positive",
			path, off, off+n, ErrInvalidArgument)
	}
	m, err := shm.MapFile(path, off, n)
	if err != nil {
		return 0, fmt.Errorf("disk pool: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = m.Close()
		return 0, fmt.Errorf("disk pool: map %s: %w", path, ErrClosed)
	}
	return p.bufs.Insert(m, n), nil
}

// Alloc is unsupported: disk buffers come from Map.
func (p *DiskPool) Alloc(context.Context, int64) (BufferID, error) {
	return 0, fmt.Errorf("disk pool: alloc: %w: disk buffers are made with Map", ErrUnsupported)
}

func (p *DiskPool) checkOpen() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return fmt.Errorf("disk pool: %w", ErrClosed)
	}
	return nil
}

// Retain adds a reference.
func (p *DiskPool) Retain(id BufferID) error {
	if err := p.checkOpen(); err != nil {
		return err
	}
	return p.bufs.Retain(id)
}

// Release drops a reference; the last one unmaps the file slice.
func (p *DiskPool) Release(id BufferID) error {
	if err := p.checkOpen(); err != nil {
		return err
	}
	return p.bufs.Release(id)
}

// Size is the mapped slice's length.
func (p *DiskPool) Size(id BufferID) (int64, error) {
	if err := p.checkOpen(); err != nil {
		return 0, err
	}
	return p.bufs.Size(id)
}

// FreeBytes is zero: nothing can be allocated in a disk pool.
func (p *DiskPool) FreeBytes() int64 { return 0 }

// Live is the number of mapped buffers.
func (p *DiskPool) Live() int { return p.bufs.Len() }

// Bytes is the mapped slice, read-only: writing to it faults. It stays
// valid while the caller holds a reference.
func (p *DiskPool) Bytes(id BufferID) ([]byte, error) {
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	m, err := p.bufs.Get("bytes", id)
	if err != nil {
		return nil, err
	}
	return m.Bytes(), nil
}

// Write is unsupported: disk buffers are read-only.
func (p *DiskPool) Write(context.Context, BufferID, int64, []byte) error {
	return fmt.Errorf("disk pool: write: %w: disk buffers are read-only", ErrUnsupported)
}

// Read copies the buffer's bytes at off into dst.
func (p *DiskPool) Read(ctx context.Context, src BufferID, off int64, dst []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	mem, err := p.Bytes(src)
	if err != nil {
		return err
	}
	if err := core.CheckSpan("disk pool", "read", src, off, int64(len(dst)), int64(len(mem))); err != nil {
		return err
	}
	copy(dst, mem[off:])
	return nil
}

// WriteAsync is unsupported: disk buffers are read-only.
func (p *DiskPool) WriteAsync(ctx context.Context, dst BufferID, off int64, src []byte, _ ...Event) (Event, error) {
	return nil, p.Write(ctx, dst, off, src)
}

// ReadAsync is Read once every event in after has succeeded: at once when
// there is nothing to wait for, else on a goroutine of its own that holds a
// reference to the buffer.
func (p *DiskPool) ReadAsync(ctx context.Context, src BufferID, off int64, dst []byte, after ...Event) (Event, error) {
	mem, err := p.Bytes(src)
	if err != nil {
		return nil, err
	}
	if err := core.CheckSpan("disk pool", "read", src, off, int64(len(dst)), int64(len(mem))); err != nil {
		return nil, err
	}
	return core.After(ctx, after, func() error { return p.Retain(src) }, func() { _ = p.Release(src) },
		func() error { copy(dst, mem[off:]); return nil })
}

// Close unmaps every buffer; later calls report ErrClosed.
func (p *DiskPool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	var errs []error
	for _, m := range p.bufs.Drain() {
		errs = append(errs, m.Close())
	}
	return errors.Join(errs...)
}
