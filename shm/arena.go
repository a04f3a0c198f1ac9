package shm

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DefaultChunk is the size of the arena's ordinary segments. A request larger
// than this gets a segment of its own, which is unmapped once it is empty.
const DefaultChunk = 64 << 20

// align is the alignment of every region; it keeps vector loads and DMA
// engines on natural boundaries.
const align = 64

// ErrClosed is returned by an arena after Close.
var ErrClosed = errors.New("shm: arena is closed")

// Region is a byte range inside one arena segment. The runtime process maps
// the same segment by name, so (Segment, Offset, Len) names these bytes in
// both processes without a copy.
type Region struct {
	seg *arenaSeg
	off int64
	n   int64
}

// Segment is the name of the shm object that holds the region.
func (r Region) Segment() string { return r.seg.Name() }

// Offset is the region's byte offset inside its segment.
func (r Region) Offset() int64 { return r.off }

// Len is the region's length in bytes.
func (r Region) Len() int64 { return r.n }

// Bytes is the region's memory. It stays valid until the region is freed.
func (r Region) Bytes() []byte {
	b := r.seg.Bytes()
	return b[r.off : r.off+r.n : r.off+r.n]
}

// IsZero reports whether r is the zero Region.
func (r Region) IsZero() bool { return r.seg == nil }

type span struct{ off, n int64 }

type arenaSeg struct {
	*Segment
	free      []span // sorted by offset, coalesced
	used      int64
	dedicated bool
}

// Arena hands out regions of shm segments. Each segment is created and mapped
// once and its regions are reused, so a transfer costs no new mapping and no
// new page faults once the arena is warm. An Arena is safe for concurrent use.
type Arena struct {
	dir    string
	mu     sync.Mutex
	chunk  int64
	segs   []*arenaSeg
	closed bool
}

// ArenaOption configures NewArena.
type ArenaOption func(*Arena)

// WithChunk sets the size of ordinary segments.
func WithChunk(n int64) ArenaOption {
	return func(a *Arena) {
		if n > 0 {
			a.chunk = roundUp(n, 4096)
		}
	}
}

// WithDir puts the arena's segments in dir (a directory on tmpfs) instead of
// DefaultDir. Only segments directly under /dev/shm can be handed to the
// Tenstorrent runtime by name.
func WithDir(dir string) ArenaOption {
	return func(a *Arena) {
		if dir != "" {
			a.dir = filepath.Clean(dir)
		}
	}
}

// swept records the directories already swept by this process.
var swept struct {
	sync.Mutex
	dirs map[string]bool
}

// sweepOnce runs Sweep the first time this process makes an arena in dir,
// so segments that crashed or killed processes left behind do not pile up.
func sweepOnce(dir string) {
	swept.Lock()
	defer swept.Unlock()
	if swept.dirs[dir] {
		return
	}
	if swept.dirs == nil {
		swept.dirs = map[string]bool{}
	}
	swept.dirs[dir] = true
	removed, err := Sweep(dir)
	if err != nil {
		slog.Debug("shm: sweep of stale segments failed", "dir", dir, "err", err)
		return
	}
	if len(removed) > 0 {
		slog.Debug("shm: removed stale segments", "dir", dir, "count", len(removed))
	}
}

// NewArena returns an empty arena. No segment exists until the first Alloc.
// The first arena of a process also sweeps segments left behind by dead
// processes (see Sweep).
func NewArena(opts ...ArenaOption) (*Arena, error) {
	a := &Arena{dir: DefaultDir(), chunk: DefaultChunk}
	for _, o := range opts {
		o(a)
	}
	if a.dir == DefaultDir() {
		if err := checkEnvDir(); err != nil {
			return nil, err
		}
	}
	if err := checkDir(a.dir); err != nil {
		return nil, err
	}
	sweepOnce(a.dir)
	return a, nil
}

// noSpace says what is short when the filesystem cannot hold a segment.
func (a *Arena) noSpace(size int64, err error) error {
	total, _ := Capacity(a.dir)
	free, _ := Available(a.dir)
	return fmt.Errorf("shm: %s has %d of %d bytes free and cannot hold a segment of %d bytes (enlarge it, e.g. docker run --shm-size, or point %s at a larger tmpfs): %w",
		a.dir, free, total, size, EnvDir, err)
}

// Dir is the directory that holds the arena's segments.
func (a *Arena) Dir() string { return a.dir }

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }

// Alloc returns a region of n bytes. The memory is not zeroed when a region
// is reused.
func (a *Arena) Alloc(n int64) (Region, error) {
	if n <= 0 {
		return Region{}, fmt.Errorf("shm: alloc of %d bytes: size must be positive", n)
	}
	if n > 1<<50 {
		return Region{}, fmt.Errorf("shm: alloc of %d bytes: too large", n)
	}
	want := roundUp(n, align)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return Region{}, ErrClosed
	}
	for _, s := range a.segs {
		if off, ok := s.take(want); ok {
			return Region{seg: s, off: off, n: n}, nil
		}
	}
	size, dedicated := a.chunk, false
	if want > a.chunk {
		size, dedicated = roundUp(want, 4096), true
	} else if free, err := Available(a.dir); err == nil && free < size {
		// A small filesystem (Docker gives /dev/shm 64 MiB) cannot take
		// whole chunks: make the segment as large as what is asked needs,
		// or half of what is free when that is more.
		size = max(roundUp(want, 4096), free/2/4096*4096)
	}
	seg, err := CreateIn(a.dir, NewName(), size)
	if errors.Is(err, unix.ENOSPC) {
		return Region{}, a.noSpace(size, err)
	}
	if err != nil {
		return Region{}, err
	}
	s := &arenaSeg{Segment: seg, free: []span{{0, size}}, dedicated: dedicated}
	a.segs = append(a.segs, s)
	off, _ := s.take(want)
	return Region{seg: s, off: off, n: n}, nil
}

// Free returns a region to the arena. Freeing the zero Region is a no-op; a
// region from another arena is an error.
func (a *Arena) Free(r Region) error {
	if r.seg == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	idx := -1
	for i, s := range a.segs {
		if s == r.seg {
			idx = i
			break
		}
	}
	if idx < 0 {
		return fmt.Errorf("shm: free: region of segment %s does not belong to this arena", r.seg.Name())
	}
	s := a.segs[idx]
	if err := s.give(span{r.off, roundUp(r.n, align)}); err != nil {
		return err
	}
	if s.dedicated && s.used == 0 {
		a.segs = append(a.segs[:idx], a.segs[idx+1:]...)
		return s.Close()
	}
	return nil
}

// Locate reports which segment and offset hold the first byte of b, when b
// lies wholly inside memory this arena mapped. It lets callers pass arena
// memory to the runtime by name instead of copying it.
func (a *Arena) Locate(b []byte) (segment string, offset int64, ok bool) {
	if len(b) == 0 {
		return "", 0, false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.segs {
		data := s.Bytes()
		base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
		if p >= base && p+uintptr(len(b)) <= base+uintptr(len(data)) {
			return s.Name(), int64(p - base), true
		}
	}
	return "", 0, false
}

// Segments lists the names and sizes of the segments mapped now.
func (a *Arena) Segments() map[string]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]int64, len(a.segs))
	for _, s := range a.segs {
		out[s.Name()] = s.Size()
	}
	return out
}

// Mapped is the total size of the segments mapped now.
func (a *Arena) Mapped() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var n int64
	for _, s := range a.segs {
		n += s.Size()
	}
	return n
}

// Close unmaps and unlinks every segment. Regions handed out before are
// invalid afterwards.
func (a *Arena) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	var errs []error
	for _, s := range a.segs {
		errs = append(errs, s.Close())
	}
	a.segs = nil
	return errors.Join(errs...)
}

// take carves n bytes from the first free span that fits.
func (s *arenaSeg) take(n int64) (int64, bool) {
	for i, f := range s.free {
		if f.n < n {
			continue
		}
		off := f.off
		if f.n == n {
			s.free = append(s.free[:i], s.free[i+1:]...)
		} else {
			s.free[i] = span{f.off + n, f.n - n}
		}
		s.used += n
		return off, true
	}
	return 0, false
}

// give returns a span and merges it with its neighbours. A span that overlaps
// free memory is a double free.
func (s *arenaSeg) give(sp span) error {
	i := sort.Search(len(s.free), func(i int) bool { return s.free[i].off >= sp.off })
	if (i < len(s.free) && s.free[i].off < sp.off+sp.n) || (i > 0 && s.free[i-1].off+s.free[i-1].n > sp.off) {
		return fmt.Errorf("shm: free of [%d,%d) in %s: region is already free", sp.off, sp.off+sp.n, s.Name())
	}
	s.free = append(s.free, span{})
	copy(s.free[i+1:], s.free[i:])
	s.free[i] = sp
	s.used -= sp.n
	// merge with the next, then with the previous
	if i+1 < len(s.free) && s.free[i].off+s.free[i].n == s.free[i+1].off {
		s.free[i].n += s.free[i+1].n
		s.free = append(s.free[:i+1], s.free[i+2:]...)
	}
	if i > 0 && s.free[i-1].off+s.free[i-1].n == s.free[i].off {
		s.free[i-1].n += s.free[i].n
		s.free = append(s.free[:i], s.free[i+1:]...)
	}
	return nil
}
