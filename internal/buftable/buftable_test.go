package buftable_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/zyxtt/zyxtt/internal/buftable"
	"github.com/zyxtt/zyxtt/internal/core"
)

// mem stands in for a native buffer; freed counts the frees of each one.
type mem struct {
	name  string
	freed *atomic.Int32
}

func newMem(name string) mem { return mem{name: name, freed: new(atomic.Int32)} }

func newTable(t *testing.T) *buftable.Table[mem] {
	t.Helper()
	return buftable.New(buftable.NotInPool("test", "test:0"), func(m mem) error {
		if m.freed.Add(1) > 1 {
			t.Errorf("%s freed twice", m.name)
		}
		return nil
	})
}

func TestLifecycle(t *testing.T) {
	tab := newTable(t)
	a := newMem("a")
	id := tab.Insert(a, 100)
	require.EqualValues(t, 100, tab.Used())
	require.Equal(t, 1, tab.Len())
	n, err := tab.Size(id)
	require.NoError(t, err)
	require.EqualValues(t, 100, n)
	got, err := tab.Get("read", id)
	require.NoError(t, err)
	require.Equal(t, a, got)

	require.NoError(t, tab.Retain(id))
	require.NoError(t, tab.Release(id))
	require.Zero(t, a.freed.Load(), "a retained buffer survives one release")
	require.EqualValues(t, 100, tab.Used())
	require.NoError(t, tab.Release(id))
	require.EqualValues(t, 1, a.freed.Load(), "the last release frees")
	require.Zero(t, tab.Used())
	require.Zero(t, tab.Len())

	// Every operation on a freed id is ErrUnknownBuffer, naming the op.
	for op, f := range map[string]func() error{
		"release": func() error { return tab.Release(id) },
		"retain":  func() error { return tab.Retain(id) },
		"size":    func() error { _, err := tab.Size(id); return err },
		"read":    func() error { _, err := tab.Get("read", id); return err },
		"launch":  func() error { _, _, err := tab.Acquire("launch", id); return err },
	} {
		err := f()
		require.ErrorIs(t, err, core.ErrUnknownBuffer, op)
		var be *core.Error
		require.ErrorAs(t, err, &be, op)
		require.Equal(t, "test", be.Backend)
		require.Equal(t, op, be.Op)
		require.Equal(t, fmt.Sprintf("test: %s: unknown buffer: buffer %d is not in pool test:0", op, id), err.Error())
	}
	require.EqualValues(t, 1, a.freed.Load(), "a double release frees nothing")
}

func TestReleaseReturnsFreeError(t *testing.T) {
	boom := errors.New("native free failed")
	tab := buftable.New(buftable.NotInPool("test", "p"), func(int) error { return boom })
	id := tab.Insert(1, 8)
	require.NoError(t, tab.Retain(id))
	require.NoError(t, tab.Release(id), "not the last reference: nothing freed")
	require.ErrorIs(t, tab.Release(id), boom)
	require.Zero(t, tab.Len(), "the buffer is gone even when its free failed")
	require.Zero(t, tab.Used())
}

func TestNilFree(t *testing.T) {
	tab := buftable.New[[]byte](buftable.NotInPool("test", "p"), nil)
	id := tab.Insert(make([]byte, 4), 4)
	_, release, err := tab.Acquire("write", id)
	require.NoError(t, err)
	require.NoError(t, tab.Release(id))
	release()
	require.Zero(t, tab.Len())
	require.Zero(t, tab.Used())
}

func TestCustomUnknownError(t *testing.T) {
	custom := errors.New("custom")
	tab := buftable.New[int](func(op string, id core.BufferID) error {
		return fmt.Errorf("%s %d: %w", op, id, custom)
	}, nil)
	err := tab.Retain(7)
	require.ErrorIs(t, err, custom)
	require.EqualError(t, err, "retain 7: custom")
}

func TestIdsAreUniqueAcrossTables(t *testing.T) {
	t1, t2 := newTable(t), newTable(t)
	seen := map[core.BufferID]bool{}
	for range 50 {
		for _, tab := range []*buftable.Table[mem]{t1, t2} {
			id := tab.Insert(newMem("x"), 1)
			require.False(t, seen[id], "id %d issued twice", id)
			seen[id] = true
		}
	}
	// An id of one table is unknown to another.
	id := t1.Insert(newMem("only in t1"), 1)
	require.ErrorIs(t, t2.Retain(id), core.ErrUnknownBuffer)
	_, _, err := t2.Acquire("copy", id)
	require.ErrorIs(t, err, core.ErrUnknownBuffer)
	require.NoError(t, t1.Retain(id))
}

func TestLocalIdsAreUnknownToSharedTables(t *testing.T) {
	local := buftable.NewLocal[mem](buftable.NotInPool("host", "host"), nil)
	lid := local.Insert(newMem("host"), 64)
	require.Equal(t, core.BufferID(1), lid, "a local table counts from 1")
	tab := newTable(t)
	for range 3 {
		tab.Insert(newMem("device"), 64)
	}
	require.ErrorIs(t, tab.Retain(lid), core.ErrUnknownBuffer, "a host-pool id is never a device buffer's")
	other := buftable.NewLocal[mem](buftable.NotInPool("host", "other"), nil)
	require.Equal(t, core.BufferID(1), other.Insert(newMem("x"), 1), "local tables count on their own")
}

func TestAcquireHoldsTheBuffer(t *testing.T) {
	tab := newTable(t)
	a, b := newMem("a"), newMem("b")
	ia, ib := tab.Insert(a, 10), tab.Insert(b, 20)

	vals, release, err := tab.Acquire("copy", ib, ia)
	require.NoError(t, err)
	require.Equal(t, []mem{b, a}, vals, "buffers come back in the order of the ids")

	// The owner lets go while the operation runs: nothing is freed yet,
	// the ids are gone for everyone else, and the bytes still count.
	require.NoError(t, tab.Release(ia))
	require.NoError(t, tab.Release(ib))
	require.Zero(t, a.freed.Load())
	require.Zero(t, b.freed.Load())
	require.EqualValues(t, 30, tab.Used())
	require.Equal(t, 2, tab.Len())

	release()
	require.EqualValues(t, 1, a.freed.Load())
	require.EqualValues(t, 1, b.freed.Load())
	require.Zero(t, tab.Used())
	require.Zero(t, tab.Len())
	release() // a second call changes nothing
	require.EqualValues(t, 1, a.freed.Load())
	require.Zero(t, tab.Used())
}

func TestAcquireWithoutReleaseByOwner(t *testing.T) {
	tab := newTable(t)
	a := newMem("a")
	id := tab.Insert(a, 10)
	_, release, err := tab.Acquire("write", id)
	require.NoError(t, err)
	release()
	require.Zero(t, a.freed.Load(), "the operation's reference was not the last")
	require.NoError(t, tab.Release(id))
	require.EqualValues(t, 1, a.freed.Load())
}

func TestAcquireSameIdTwice(t *testing.T) {
	tab := newTable(t)
	a := newMem("a")
	id := tab.Insert(a, 10)
	vals, release, err := tab.Acquire("launch", id, id)
	require.NoError(t, err)
	require.Equal(t, []mem{a, a}, vals)
	require.NoError(t, tab.Release(id))
	require.Zero(t, a.freed.Load())
	release()
	require.EqualValues(t, 1, a.freed.Load())
	require.Zero(t, tab.Len())
}

func TestAcquireUnknownTakesNothing(t *testing.T) {
	tab := newTable(t)
	a, b := newMem("a"), newMem("b")
	ia, ib := tab.Insert(a, 10), tab.Insert(b, 20)
	_, release, err := tab.Acquire("launch", ia, ib, 12345)
	require.ErrorIs(t, err, core.ErrUnknownBuffer)
	require.Nil(t, release)
	require.Contains(t, err.Error(), "buffer 12345")
	// The references taken before the unknown id were given back: one
	// release each frees them.
	require.NoError(t, tab.Release(ia))
	require.NoError(t, tab.Release(ib))
	require.EqualValues(t, 1, a.freed.Load())
	require.EqualValues(t, 1, b.freed.Load())
	require.Zero(t, tab.Used())
}

func TestAcquireNothing(t *testing.T) {
	tab := newTable(t)
	vals, release, err := tab.Acquire("launch")
	require.NoError(t, err)
	require.Empty(t, vals)
	release()
}

func TestDrain(t *testing.T) {
	tab := newTable(t)
	a, b := newMem("a"), newMem("b")
	ia, ib := tab.Insert(a, 10), tab.Insert(b, 20)
	require.NoError(t, tab.Retain(ib))
	_, release, err := tab.Acquire("read", ia)
	require.NoError(t, err)
	require.NoError(t, tab.Release(ia), "the operation's reference is now the last")

	got := tab.Drain()
	require.ElementsMatch(t, []mem{a, b}, got)
	require.Zero(t, tab.Used())
	require.Zero(t, tab.Len())
	require.ErrorIs(t, tab.Release(ib), core.ErrUnknownBuffer, "every id is unknown after a drain")

	// An operation that still held a buffer lets go without freeing it a
	// second time (the drainer frees it) or skewing the accounting.
	release()
	require.Zero(t, a.freed.Load())
	require.Zero(t, tab.Used())

	// The table keeps working.
	c := newMem("c")
	ic := tab.Insert(c, 5)
	require.EqualValues(t, 5, tab.Used())
	require.NoError(t, tab.Release(ic))
	require.EqualValues(t, 1, c.freed.Load())
}

// TestConcurrentAccounting runs inserts, retains, releases and acquires
// from many goroutines and checks, at the end, that every buffer was freed
// exactly once when its last reference went and that Used is exact.
func TestConcurrentAccounting(t *testing.T) {
	tab := newTable(t)
	const workers, rounds = 8, 400
	var g errgroup.Group
	var kept atomic.Int64
	var keptIDs sync.Map
	shared := newMem("shared")
	sharedID := tab.Insert(shared, 1000)
	for w := range workers {
		g.Go(func() error {
			for i := range rounds {
				size := int64(1 + (w*131+i*17)%4096)
				m := newMem(fmt.Sprintf("w%d/%d", w, i))
				id := tab.Insert(m, size)
				// Hold the buffer and the shared one as an operation would.
				vals, release, err := tab.Acquire("launch", id, sharedID)
				if err != nil {
					return err
				}
				if vals[0] != m || vals[1] != shared {
					return fmt.Errorf("worker %d: acquire returned the wrong buffers", w)
				}
				if err := tab.Retain(id); err != nil {
					return err
				}
				if err := tab.Release(id); err != nil {
					return err
				}
				if i%5 == 0 {
					kept.Add(size)
					keptIDs.Store(id, m)
				} else if err := tab.Release(id); err != nil {
					return err
				}
				release()
				if i%5 != 0 && m.freed.Load() != 1 {
					return fmt.Errorf("worker %d round %d: buffer freed %d times after its last reference", w, i, m.freed.Load())
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	require.Equal(t, 1000+kept.Load(), tab.Used())
	require.Equal(t, 1+workers*rounds/5, tab.Len())
	require.Zero(t, shared.freed.Load())
	keptIDs.Range(func(k, v any) bool {
		require.Zero(t, v.(mem).freed.Load())
		require.NoError(t, tab.Release(k.(core.BufferID)))
		require.EqualValues(t, 1, v.(mem).freed.Load())
		return true
	})
	require.NoError(t, tab.Release(sharedID))
	require.Zero(t, tab.Used())
	require.Zero(t, tab.Len())
}

// TestConcurrentReleaseAndAcquire races the owner's release against
// operations on the same buffer: whoever drops the last reference frees it,
// once.
func TestConcurrentReleaseAndAcquire(t *testing.T) {
	tab := newTable(t)
	for round := range 200 {
		m := newMem(fmt.Sprintf("r%d", round))
		id := tab.Insert(m, 64)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if _, release, err := tab.Acquire("read", id); err == nil {
					release()
				}
			})
		}
		wg.Go(func() { _ = tab.Release(id) })
		wg.Wait()
		require.EqualValues(t, 1, m.freed.Load(), "round %d", round)
		require.ErrorIs(t, tab.Retain(id), core.ErrUnknownBuffer)
	}
	require.Zero(t, tab.Used())
	require.Zero(t, tab.Len())
}
