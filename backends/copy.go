package backends

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/hostpool"
	"github.com/zyxtt/zyxtt/internal/core"
)

// StagingChunk is the size of one host staging buffer for cross-pool
// copies. Two are used at once so that reading the next chunk overlaps
// writing the last.
const StagingChunk = 16 << 20

// CopyOption adjusts a Copy.
type CopyOption func(*copyOpts)

type copyOpts struct {
	progress func(done, total int64)
	chunk    int64
}

// WithProgress reports the bytes copied so far after every chunk.
func WithProgress(f func(done, total int64)) CopyOption {
	return func(o *copyOpts) { o.progress = f }
}

// WithChunk sets the staging chunk size.
func WithChunk(n int64) CopyOption {
	return func(o *copyOpts) {
		if n > 0 {
			o.chunk = n
		}
	}
}

// Copy is Runtime.Copy on the default Runtime.
func Copy(ctx context.Context, dst *Pool, dstID BufferID, dstOff int64, src *Pool, srcID BufferID, srcOff, n int64, opts ...CopyOption) error {
	rt, err := Default()
	if err != nil {
		return err
	}
	return rt.Copy(ctx, dst, dstID, dstOff, src, srcID, srcOff, n, opts...)
}

// CopyAsync is Runtime.CopyAsync on the default Runtime.
func CopyAsync(ctx context.Context, dst *Pool, dstID BufferID, dstOff int64, src *Pool, srcID BufferID, srcOff, n int64, after []Event, opts ...CopyOption) (Event, error) {
	rt, err := Default()
	if err != nil {
		return nil, err
	}
	return rt.CopyAsync(ctx, dst, dstID, dstOff, src, srcID, srcOff, n, after, opts...)
}

// CopyAsync is Copy once every event in after has succeeded, on a goroutine
// of its own, and returns its event. The ranges are checked at once (an
// error, nothing queued); both buffers are held until the copy has ended.
// A copy that stages through the host runs its chunks in order, so the
// returned event is the copy's as a whole.
func (r *Runtime) CopyAsync(ctx context.Context, dst *Pool, dstID BufferID, dstOff int64, src *Pool, srcID BufferID, srcOff, n int64, after []Event, opts ...CopyOption) (Event, error) {
	if err := r.checkOpen(); err != nil {
		return nil, err
	}
	if err := checkRange(src, "source", srcID, srcOff, n); err != nil {
		return nil, fmt.Errorf("copy from %s: %w", src.Name(), err)
	}
	if err := checkRange(dst, "destination", dstID, dstOff, n); err != nil {
		return nil, fmt.Errorf("copy to %s: %w", dst.Name(), err)
	}
	hold := func() error {
		if err := src.Retain(srcID); err != nil {
			return err
		}
		if err := dst.Retain(dstID); err != nil {
			_ = src.Release(srcID)
			return err
		}
		return nil
	}
	release := func() {
		_ = src.Release(srcID)
		_ = dst.Release(dstID)
	}
	// A copy runs on a goroutine of its own even with nothing to wait for:
	// it takes as long as the data.
	return core.Go(ctx, after, hold, release, func() error {
		return r.Copy(ctx, dst, dstID, dstOff, src, srcID, srcOff, n, opts...)
	})
}

// Copy moves n bytes from src's buffer at srcOff to dst's buffer at dstOff.
// Memory that the host can address (the host pool, the disk pool) is read or
// written in place. A pool that copies from its own backend's pools does so
// natively (PeerCopier). Anything else stages through reused chunks of the
// runtime's host pool: the copy never holds a whole extra copy of the data.
func (r *Runtime) Copy(ctx context.Context, dst *Pool, dstID BufferID, dstOff int64, src *Pool, srcID BufferID, srcOff, n int64, opts ...CopyOption) error {
	if err := r.checkOpen(); err != nil {
		return err
	}
	o := copyOpts{chunk: StagingChunk}
	for _, f := range opts {
		f(&o)
	}
	if err := checkRange(src, "source", srcID, srcOff, n); err != nil {
		return fmt.Errorf("copy from %s: %w", src.Name(), err)
	}
	if err := checkRange(dst, "destination", dstID, dstOff, n); err != nil {
		return fmt.Errorf("copy to %s: %w", dst.Name(), err)
	}
	o.chunk = wholeUnits(o.chunk, transferUnit(src, srcID), transferUnit(dst, dstID))
	if n == 0 {
		return nil
	}
	report := func(done int64) {
		if o.progress != nil {
			o.progress(done, n)
		}
	}
	if dst == src && dstID == srcID && srcOff < dstOff+n && dstOff < srcOff+n {
		return r.copyWithin(ctx, dst, dstID, dstOff, srcOff, n, o.chunk, report)
	}
	if pc, ok := dst.drv.(driver.PeerCopier); ok {
		err := pc.CopyFrom(ctx, dstID, dstOff, src.drv, srcID, srcOff, n)
		if err == nil {
			report(n)
			return nil
		}
		if !errors.Is(err, ErrUnsupported) {
			return err
		}
	}
	if hm, ok := src.drv.(driver.HostMemory); ok {
		return hostChunks(ctx, hm, srcID, srcOff, n, o.chunk, report, func(off int64, mem []byte) error {
			return dst.Write(ctx, dstID, dstOff+off, mem)
		})
	}
	if hm, ok := dst.drv.(driver.HostMemory); ok {
		return hostChunks(ctx, hm, dstID, dstOff, n, o.chunk, report, func(off int64, mem []byte) error {
			return src.Read(ctx, srcID, srcOff+off, mem)
		})
	}
	return r.staged(ctx, dst, dstID, dstOff, src, srcID, srcOff, n, o.chunk, report)
}

// copyWithin moves n bytes between overlapping ranges of one buffer.
// Host memory moves in one memmove. Device memory goes through one staging
// chunk at a time, in the direction that reads every byte before it is
// overwritten: back to front when the destination lies after the source.
func (r *Runtime) copyWithin(ctx context.Context, p *Pool, id BufferID, dstOff, srcOff, n, chunk int64, report func(int64)) error {
	if srcOff == dstOff {
		report(n)
		return nil
	}
	if hm, ok := p.drv.(driver.HostMemory); ok {
		mem, err := hm.Bytes(id)
		if err != nil {
			return err
		}
		if err := p.Write(ctx, id, dstOff, mem[srcOff:srcOff+n]); err != nil {
			return err
		}
		report(n)
		return nil
	}
	chunk = min(chunk, n)
	bufs, release, err := r.staging.pair(r.host, chunk)
	if err != nil {
		return err
	}
	defer release()
	buf := bufs[0]
	var done int64
	for done < n {
		if err := ctx.Err(); err != nil {
			return err
		}
		l := min(chunk, n-done)
		off := done // front to back
		if dstOff > srcOff {
			off = n - done - l // back to front
		}
		if err := p.Read(ctx, id, srcOff+off, buf[:l]); err != nil {
			return err
		}
		if err := p.Write(ctx, id, dstOff+off, buf[:l]); err != nil {
			return err
		}
		done += l
		report(done)
	}
	return nil
}

// transferUnit is the unit buffer id of p moves in: 1 unless the pool is a
// TransferUnitPool.
func transferUnit(p *Pool, id BufferID) int64 {
	if tp, ok := p.drv.(driver.TransferUnitPool); ok {
		if u, err := tp.TransferUnit(id); err == nil && u > 1 {
			return u
		}
	}
	return 1
}

// wholeUnits rounds chunk down to a whole number of both units (their
// least common multiple), and at least one of it.
func wholeUnits(chunk, a, b int64) int64 {
	unit := a / gcd(a, b) * b
	return max(chunk/unit, 1) * unit
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func checkRange(p *Pool, role string, id BufferID, off, n int64) error {
	size, err := p.Size(id)
	if err != nil {
		return err
	}
	return core.CheckSpan("copy", role, id, off, n, size)
}

// hostChunks is chunked over the n bytes from base of buffer id, whose
// memory the host addresses (hm): move is given each chunk's offset and
// its bytes in that memory.
func hostChunks(ctx context.Context, hm driver.HostMemory, id BufferID, base, n, chunk int64, report func(int64), move func(off int64, mem []byte) error) error {
	mem, err := hm.Bytes(id)
	if err != nil {
		return err
	}
	return chunked(ctx, n, chunk, report, func(off, len int64) error {
		return move(off, mem[base+off:base+off+len])
	})
}

func chunked(ctx context.Context, n, chunk int64, report func(int64), f func(off, len int64) error) error {
	for off := int64(0); off < n; off += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		l := min(chunk, n-off)
		if err := f(off, l); err != nil {
			return err
		}
		report(off + l)
	}
	return nil
}

// staged copies device to device through two host-pool chunks: while one
// chunk is written to dst, the next is read from src.
func (r *Runtime) staged(ctx context.Context, dst *Pool, dstID BufferID, dstOff int64, src *Pool, srcID BufferID, srcOff, n, chunk int64, report func(int64)) error {
	chunk = min(chunk, n)
	bufs, release, err := r.staging.pair(r.host, chunk)
	if err != nil {
		return err
	}
	defer release()

	type filled struct {
		buf      []byte
		off, len int64
	}
	ready := make(chan filled, 1)
	free := make(chan []byte, 2)
	free <- bufs[0]
	free <- bufs[1]
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	readErr := make(chan error, 1)
	go func() {
		defer close(ready)
		for off := int64(0); off < n; off += chunk {
			// select picks at random among ready cases, so a free buffer
			// could hide a cancellation: check it first.
			if err := ctx.Err(); err != nil {
				readErr <- err
				return
			}
			l := min(chunk, n-off)
			var b []byte
			select {
			case b = <-free:
			case <-ctx.Done():
				readErr <- ctx.Err()
				return
			}
			if err := src.Read(ctx, srcID, srcOff+off, b[:l]); err != nil {
				readErr <- err
				return
			}
			select {
			case ready <- filled{b, off, l}:
			case <-ctx.Done():
				readErr <- ctx.Err()
				return
			}
		}
		readErr <- nil
	}()
	for f := range ready {
		if err := dst.Write(ctx, dstID, dstOff+f.off, f.buf[:f.len]); err != nil {
			cancel()
			for range ready { //nolint:revive // drain so the reader exits
			}
			<-readErr
			return err
		}
		report(f.off + f.len)
		free <- f.buf
	}
	return <-readErr
}

// stagingCache keeps a runtime's staging buffers between copies so repeated
// transfers reuse the same mapped pages.
type stagingCache struct {
	sync.Mutex
	ids []BufferID
}

// pair takes two staging buffers of at least chunk bytes from host, reusing
// cached ones; release puts them back.
func (c *stagingCache) pair(host *hostpool.Pool, chunk int64) ([2][]byte, func(), error) {
	var out [2][]byte
	var got []BufferID
	fail := func(err error) ([2][]byte, func(), error) {
		for _, g := range got {
			_ = host.Release(g)
		}
		return out, nil, fmt.Errorf("copy: staging buffer: %w", err)
	}
	c.Lock()
	for len(c.ids) > 0 && len(got) < 2 {
		id := c.ids[len(c.ids)-1]
		c.ids = c.ids[:len(c.ids)-1]
		if sz, err := host.Size(id); err == nil && sz >= chunk {
			got = append(got, id)
		} else {
			_ = host.Release(id)
		}
	}
	c.Unlock()
	for len(got) < 2 {
		id, err := host.Alloc(context.Background(), max(chunk, StagingChunk))
		if err != nil {
			return fail(err)
		}
		got = append(got, id)
	}
	for i, id := range got {
		b, err := host.Bytes(id)
		if err != nil {
			return fail(err)
		}
		out[i] = b
	}
	release := func() {
		c.Lock()
		defer c.Unlock()
		c.ids = append(c.ids, got...)
		for len(c.ids) > 4 {
			_ = host.Release(c.ids[0])
			c.ids = c.ids[1:]
		}
	}
	return out, release, nil
}

// release gives every cached staging buffer back to host.
func (c *stagingCache) release(host *hostpool.Pool) error {
	c.Lock()
	defer c.Unlock()
	var errs []error
	for _, id := range c.ids {
		errs = append(errs, host.Release(id))
	}
	c.ids = nil
	return errors.Join(errs...)
}
