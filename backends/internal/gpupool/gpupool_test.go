package gpupool_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/internal/gpupool"
	"github.com/zyxtt/zyxtt/internal/buftable"
	"github.com/zyxtt/zyxtt/internal/core"
)

// mem is a fake device buffer: host bytes standing in for device memory.
type mem struct {
	data  []byte
	freed *atomic.Int32
}

func (m *mem) Bytes() int64 { return int64(len(m.data)) }

// fakePool is a pool whose transfers copy at once and end their event.
type fakePool struct {
	gpupool.Base[*mem]
	bufs   *buftable.Table[*mem]
	closed error // what checkOpen returns
	calls  []string
	afters [][]driver.Event
}

func newPool() *fakePool {
	p := &fakePool{}
	p.bufs = buftable.New(buftable.NotInPool("fake", "fake:0"), func(m *mem) error {
		m.freed.Add(1)
		return nil
	})
	p.Base = gpupool.NewBase("fake", p.bufs, func(ctx context.Context, op string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return p.closed
	}, p.transfer)
	return p
}

func (p *fakePool) transfer(_ context.Context, op string, b *mem, release func(), off int64, host []byte, write bool, after []driver.Event) (driver.Event, error) {
	defer release()
	p.calls = append(p.calls, op)
	p.afters = append(p.afters, after)
	if write {
		copy(b.data[off:], host)
	} else {
		copy(host, b.data[off:])
	}
	ev := core.NewHostEvent()
	ev.Complete(nil)
	return ev, nil
}

func (p *fakePool) alloc(n int) (driver.BufferID, *mem) {
	m := &mem{data: make([]byte, n), freed: new(atomic.Int32)}
	return p.bufs.Insert(m, int64(n)), m
}

// requireFreedByRelease releases id, the test's own reference, and
// checks that this freed m: nothing else held it.
func requireFreedByRelease(t *testing.T, p *fakePool, id driver.BufferID, m *mem, msg string) {
	t.Helper()
	require.NoError(t, p.Release(id))
	require.EqualValues(t, 1, m.freed.Load(), msg)
}

// Retain, Release and Size are the table's; the last release frees.
func TestTableMethods(t *testing.T) {
	p := newPool()
	id, m := p.alloc(16)
	size, err := p.Size(id)
	require.NoError(t, err)
	require.EqualValues(t, 16, size)
	require.NoError(t, p.Retain(id))
	require.NoError(t, p.Release(id))
	require.Zero(t, m.freed.Load(), "one reference is left")
	require.NoError(t, p.Release(id))
	require.EqualValues(t, 1, m.freed.Load())
	_, err = p.Size(id)
	require.ErrorIs(t, err, driver.ErrUnknownBuffer)
	require.ErrorIs(t, p.Retain(id), driver.ErrUnknownBuffer)
}

// Write and Read go through the backend's transfer, which gets the
// buffer, the op and the events; they move the bytes at the offset.
func TestTransfers(t *testing.T) {
	ctx := context.Background()
	p := newPool()
	id, m := p.alloc(8)
	require.NoError(t, p.Write(ctx, id, 2, []byte{1, 2, 3}))
	require.Equal(t, []byte{0, 0, 1, 2, 3, 0, 0, 0}, m.data)
	got := make([]byte, 4)
	require.NoError(t, p.Read(ctx, id, 1, got))
	require.Equal(t, []byte{0, 1, 2, 3}, got)

	before := core.NewHostEvent()
	before.Complete(nil)
	ev, err := p.WriteAsync(ctx, id, 0, []byte{9}, before)
	require.NoError(t, err)
	require.NoError(t, ev.Wait(ctx))
	ev, err = p.ReadAsync(ctx, id, 0, got[:1], nil, before)
	require.NoError(t, err)
	require.NoError(t, ev.Wait(ctx))
	require.EqualValues(t, 9, got[0])
	require.Equal(t, []string{"write", "read", "write", "read"}, p.calls)
	require.Equal(t, []driver.Event{before}, p.afters[2])
	require.Equal(t, []driver.Event{nil, before}, p.afters[3])

	requireFreedByRelease(t, p, id, m, "every transfer gave its hold back")
}

// An unknown buffer, a closed device or an ended ctx fail before the
// backend's transfer, holding nothing. (Spans are checked by package
// backends before a pool is called.)
func TestTransferChecks(t *testing.T) {
	ctx := context.Background()
	p := newPool()
	id, m := p.alloc(8)

	require.ErrorIs(t, p.Read(ctx, id+1000, 0, make([]byte, 1)), driver.ErrUnknownBuffer)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, p.Write(cctx, id, 0, []byte{1}), context.Canceled)
	p.closed = driver.ErrClosed
	require.ErrorIs(t, p.Write(ctx, id, 0, []byte{1}), driver.ErrClosed)
	require.Empty(t, p.calls, "no check that failed reached the transfer")

	requireFreedByRelease(t, p, id, m, "the failed checks held nothing")
}

// HoldCopy holds both buffers, holds nothing for an empty copy, and fails on
// an unknown buffer or a closed device.
func TestHoldCopy(t *testing.T) {
	ctx := context.Background()
	p := newPool()
	a, ma := p.alloc(8)
	b, mb := p.alloc(4)

	from, to, release, err := gpupool.HoldCopy(ctx, &p.Base, a, 4, b, 0, 4)
	require.NoError(t, err)
	require.Same(t, ma, from)
	require.Same(t, mb, to)
	require.NotNil(t, release)
	require.NoError(t, p.Release(a))
	require.Zero(t, ma.freed.Load(), "HoldCopy holds the source")
	release()
	require.EqualValues(t, 1, ma.freed.Load())

	_, _, release, err = gpupool.HoldCopy(ctx, &p.Base, b, 4, b, 0, 0)
	require.NoError(t, err)
	require.Nil(t, release, "an empty copy holds nothing")

	_, _, _, err = gpupool.HoldCopy(ctx, &p.Base, b, 0, a, 0, 1)
	require.ErrorIs(t, err, driver.ErrUnknownBuffer)
	p.closed = errors.New("closed")
	_, _, _, err = gpupool.HoldCopy(ctx, &p.Base, b, 0, b, 0, 1)
	require.ErrorIs(t, err, p.closed)

	requireFreedByRelease(t, p, b, mb, "the failed holds gave everything back")
}

// HoldLaunch holds a launch's buffers and a reference to its executable,
// and holds nothing when the executable is released or a buffer unknown.
func TestHoldLaunch(t *testing.T) {
	p := newPool()
	a, ma := p.alloc(8)
	b, mb := p.alloc(8)
	var mu sync.Mutex
	var released bool
	var refs atomic.Int32
	refs.Store(1) // the executable's own

	bufs, release, err := gpupool.HoldLaunch(&p.Base, []driver.BufferID{a, b}, &mu, &released, &refs)
	require.NoError(t, err)
	require.Equal(t, []*mem{ma, mb}, bufs)
	require.EqualValues(t, 2, refs.Load(), "the launch holds the executable")
	require.NoError(t, p.Release(a))
	require.Zero(t, ma.freed.Load(), "the launch holds its buffers")
	release()
	require.EqualValues(t, 1, ma.freed.Load())
	require.EqualValues(t, 2, refs.Load(), "release leaves the executable's reference to the caller")
	refs.Store(1)

	_, _, err = gpupool.HoldLaunch(&p.Base, []driver.BufferID{b, a}, &mu, &released, &refs)
	require.ErrorIs(t, err, driver.ErrUnknownBuffer)
	require.EqualValues(t, 1, refs.Load())

	released = true
	_, _, err = gpupool.HoldLaunch(&p.Base, []driver.BufferID{b}, &mu, &released, &refs)
	require.ErrorIs(t, err, driver.ErrClosed)
	require.EqualValues(t, 1, refs.Load())
	requireFreedByRelease(t, p, b, mb, "the failed holds gave the buffers back")
}
