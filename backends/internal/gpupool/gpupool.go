// Package gpupool is the part of a device pool that the OpenCL and Vulkan
// pools share: the Pool methods that are their buffer table's (Retain,
// Release, Size), the blocking and asynchronous transfers as one checked
// entry into the backend's own transfer, and holding the buffers of a copy
// (with their spans checked) or of a launch (with its executable).
package gpupool

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/buftable"
)

// Buffer is a device buffer of a pool: its size in bytes.
type Buffer interface {
	Bytes() int64
}

// Transfer moves len(host) bytes between host and b at off: into b when
// write, out of it otherwise, after the events in after, and returns the
// transfer's event. b is held until release is called, which the transfer
// does once it has ended or has failed (whatever it returns).
type Transfer[B Buffer] func(ctx context.Context, op string, b B, release func(), off int64, host []byte, write bool, after []driver.Event) (driver.Event, error)

// Base is what a pool embeds to have Retain, Release, Size, Write, Read,
// WriteAsync and ReadAsync. NewBase makes it.
type Base[B Buffer] struct {
	backend   string
	bufs      *buftable.Table[B]
	checkOpen func(ctx context.Context, op string) error
	transfer  Transfer[B]
}

// NewBase is the Base of a pool of backend whose buffers are in bufs:
// checkOpen is the device's check before every operation (ctx's error,
// then ErrClosed), transfer its own transfer.
func NewBase[B Buffer](backend string, bufs *buftable.Table[B], checkOpen func(ctx context.Context, op string) error, transfer Transfer[B]) Base[B] {
	return Base[B]{backend: backend, bufs: bufs, checkOpen: checkOpen, transfer: transfer}
}

// Retain adds a reference to the buffer id.
func (p *Base[B]) Retain(id driver.BufferID) error { return p.bufs.Retain(id) }

// Release drops a reference to the buffer id; the last one frees it.
func (p *Base[B]) Release(id driver.BufferID) error { return p.bufs.Release(id) }

// Size is the buffer id's size in bytes.
func (p *Base[B]) Size(id driver.BufferID) (int64, error) { return p.bufs.Size(id) }

// Write is WriteAsync and a wait for it.
func (p *Base[B]) Write(ctx context.Context, dst driver.BufferID, off int64, src []byte) error {
	ev, err := p.WriteAsync(ctx, dst, off, src)
	return driver.Wait(ctx, ev, err)
}

// Read is ReadAsync and a wait for it.
func (p *Base[B]) Read(ctx context.Context, src driver.BufferID, off int64, dst []byte) error {
	ev, err := p.ReadAsync(ctx, src, off, dst)
	return driver.Wait(ctx, ev, err)
}

// WriteAsync copies src into the buffer dst at off after the events in
// after, by the backend's transfer.
func (p *Base[B]) WriteAsync(ctx context.Context, dst driver.BufferID, off int64, src []byte, after ...driver.Event) (driver.Event, error) {
	return p.start(ctx, "write", dst, off, src, true, after)
}

// ReadAsync copies the buffer src's bytes at off into dst after the
// events in after, by the backend's transfer.
func (p *Base[B]) ReadAsync(ctx context.Context, src driver.BufferID, off int64, dst []byte, after ...driver.Event) (driver.Event, error) {
	return p.start(ctx, "read", src, off, dst, false, after)
}

// start checks the device and holds the buffer, and hands the transfer to
// the backend (package backends checked the span).
func (p *Base[B]) start(ctx context.Context, op string, id driver.BufferID, off int64, host []byte, write bool, after []driver.Event) (driver.Event, error) {
	if err := p.checkOpen(ctx, op); err != nil {
		return nil, err
	}
	bufs, release, err := p.bufs.Acquire(op, id)
	if err != nil {
		return nil, err
	}
	return p.transfer(ctx, op, bufs[0], release, off, host, write, after)
}

// HoldCopy checks the device and holds the buffers of a copy of n bytes
// from src at srcOff to dst at dstOff, both of p (package backends checked
// both spans); release gives them back. When n is 0 there is nothing to copy: it holds
// nothing, and release is nil.
func HoldCopy[B Buffer](ctx context.Context, p *Base[B], src driver.BufferID, srcOff int64, dst driver.BufferID, dstOff, n int64) (from, to B, release func(), err error) {
	var none B
	if err := p.checkOpen(ctx, "copy"); err != nil {
		return none, none, nil, err
	}
	bufs, release, err := p.bufs.Acquire("copy", src, dst)
	if err != nil {
		return none, none, nil, err
	}
	if n == 0 {
		release()
		return none, none, nil, nil
	}
	return bufs[0], bufs[1], release, nil
}

// HoldLaunch holds the buffers ids of p for a launch and then, unless the
// executable has been released, a reference to it (driver.HoldExecutable
// with its mu, released and refs). release gives back the buffers only:
// the executable's reference is the caller's to drop. On an error it holds
// nothing.
func HoldLaunch[B Buffer](p *Base[B], ids []driver.BufferID, mu sync.Locker, released *bool, refs *atomic.Int32) (bufs []B, release func(), err error) {
	bufs, release, err = p.bufs.Acquire("launch", ids...)
	if err != nil {
		return nil, nil, err
	}
	if err := driver.HoldExecutable(p.backend, mu, released, refs); err != nil {
		release()
		return nil, nil, err
	}
	return bufs, release, nil
}
