// Package buftable is the one refcounted buffer table behind every pool
// (host, disk, Tenstorrent and the device pools): it issues buffer ids,
// counts references, keeps the bytes in use, and frees a buffer's native
// memory when its last reference goes, including a reference an operation
// holds only while it runs.
package buftable

import (
	"sync"
	"sync/atomic"

	"github.com/zyxtt/zyxtt/internal/core"
)

// firstSharedID is where the process-wide ids start: far above the host
// pool's own ids, so a host-pool buffer handed to another pool is never taken
// for one of that pool's.
const firstSharedID = 1 << 40

// sharedIDs numbers buffers across every table of the process that uses it,
// so an id from another pool (of any backend, or another chip) is always
// unknown to this one.
var sharedIDs atomic.Uint64

func init() { sharedIDs.Store(firstSharedID) }

// UnknownFunc builds the error for an id that a table does not hold; op is
// the operation that looked it up ("retain", "write", "launch" …).
type UnknownFunc func(op string, id core.BufferID) error

// NotInPool is the unknown-buffer error most pools use: a *core.Error of
// backend for op, wrapping core.ErrUnknownBuffer, that says "buffer <id> is
// not in pool <pool>".
func NotInPool(backend, pool string) UnknownFunc {
	return func(op string, id core.BufferID) error {
		return core.Errorf(backend, op, core.ErrUnknownBuffer, "buffer %d is not in pool %s", id, pool)
	}
}

type entry[T any] struct {
	val  T
	size int64
	refs int
}

// Table maps buffer ids to native buffers of type T. Every method is safe
// for concurrent use. A zero Table is not usable; make one with New or
// NewLocal.
type Table[T any] struct {
	unknown UnknownFunc
	free    func(T) error
	ids     *atomic.Uint64

	mu   sync.Mutex
	bufs map[core.BufferID]*entry[T]
	used int64
}

// New makes an empty table whose ids come from the process-wide counter.
// free releases a buffer's native memory when its last reference goes; it
// runs outside the table's lock and may be nil (memory the garbage collector
// frees). unknown builds the error for an id the table does not hold.
func New[T any](unknown UnknownFunc, free func(T) error) *Table[T] {
	return &Table[T]{unknown: unknown, free: free, ids: &sharedIDs, bufs: map[core.BufferID]*entry[T]{}}
}

// NewLocal makes a table whose ids are its own, counting from 1: the host
// pool's. They stay below the process-wide ids, so they never collide with
// another table's.
func NewLocal[T any](unknown UnknownFunc, free func(T) error) *Table[T] {
	t := New(unknown, free)
	t.ids = new(atomic.Uint64)
	return t
}

// Insert adds a buffer of size bytes with one reference and returns its new
// id.
func (t *Table[T]) Insert(val T, size int64) core.BufferID {
	id := core.BufferID(t.ids.Add(1))
	t.mu.Lock()
	t.bufs[id] = &entry[T]{val: val, size: size, refs: 1}
	t.used += size
	t.mu.Unlock()
	return id
}

// Retain adds a reference to id.
func (t *Table[T]) Retain(id core.BufferID) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.bufs[id]
	if !ok {
		return t.unknown("retain", id)
	}
	e.refs++
	return nil
}

// Release drops a reference to id. The last one removes the buffer and
// returns what free returned for it.
func (t *Table[T]) Release(id core.BufferID) error {
	t.mu.Lock()
	e, ok := t.bufs[id]
	if !ok {
		t.mu.Unlock()
		return t.unknown("release", id)
	}
	last := t.drop(id, e)
	t.mu.Unlock()
	if last {
		return t.freeVal(e.val)
	}
	return nil
}

// drop takes one reference from e (the entry of id, or an entry Drain has
// already taken out) and reports whether the caller must free it. The
// caller holds t.mu.
func (t *Table[T]) drop(id core.BufferID, e *entry[T]) bool {
	e.refs--
	if e.refs > 0 || t.bufs[id] != e {
		return false
	}
	delete(t.bufs, id)
	t.used -= e.size
	return true
}

func (t *Table[T]) freeVal(v T) error {
	if t.free == nil {
		return nil
	}
	return t.free(v)
}

// Size is the size id was inserted with.
func (t *Table[T]) Size(id core.BufferID) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.bufs[id]
	if !ok {
		return 0, t.unknown("size", id)
	}
	return e.size, nil
}

// Get is id's buffer, without taking a reference: use it where the buffer
// cannot be freed under the caller (Go memory), else Acquire.
func (t *Table[T]) Get(op string, id core.BufferID) (T, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.bufs[id]
	if !ok {
		var zero T
		return zero, t.unknown(op, id)
	}
	return e.val, nil
}

// Acquire takes a reference on each of ids for the length of an operation,
// so a concurrent Release cannot free memory a command still uses, and
// returns their buffers in the same order. The caller must call release
// once, when the operation is done; it frees any buffer whose last
// reference it drops (ignoring free's error: the operation has its own
// outcome to report). An unknown id takes no reference at all. The same id
// may appear more than once.
func (t *Table[T]) Acquire(op string, ids ...core.BufferID) (vals []T, release func(), err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	held := make([]*entry[T], len(ids))
	for i, id := range ids {
		e, ok := t.bufs[id]
		if !ok {
			for _, h := range held[:i] {
				h.refs--
			}
			return nil, nil, t.unknown(op, id)
		}
		e.refs++
		held[i] = e
	}
	vals = make([]T, len(held))
	for i, e := range held {
		vals[i] = e.val
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			t.mu.Lock()
			var free []T
			for i, e := range held {
				if t.drop(ids[i], e) {
					free = append(free, e.val)
				}
			}
			t.mu.Unlock()
			for _, v := range free {
				_ = t.freeVal(v)
			}
		})
	}
	return vals, release, nil
}

// Used is the total size of the buffers in the table.
func (t *Table[T]) Used() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.used
}

// Len is the number of buffers in the table.
func (t *Table[T]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.bufs)
}

// Drain empties the table, whatever the reference counts, and returns the
// buffers for the caller to free (its device is closing). References that
// operations still hold are dropped without freeing again, and every id
// becomes unknown.
func (t *Table[T]) Drain() []T {
	t.mu.Lock()
	bufs := t.bufs
	t.bufs = map[core.BufferID]*entry[T]{}
	t.used = 0
	t.mu.Unlock()
	out := make([]T, 0, len(bufs))
	for _, e := range bufs {
		out = append(out, e.val)
	}
	return out
}
