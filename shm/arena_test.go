package shm

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"
)

func newArena(t *testing.T, opts ...ArenaOption) *Arena {
	t.Helper()
	a, err := NewArena(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	return a
}

// mustAlloc is a region of n bytes of a.
func mustAlloc(t *testing.T, a *Arena, n int64) Region {
	t.Helper()
	r, err := a.Alloc(n)
	require.NoError(t, err)
	return r
}

func TestArenaAllocRejectsBadSizes(t *testing.T) {
	a := newArena(t)
	for _, n := range []int64{0, -1, -1 << 40, 1<<50 + 1} {
		r, err := a.Alloc(n)
		require.Error(t, err, "alloc %d", n)
		require.True(t, r.IsZero())
	}
	require.Empty(t, a.Segments(), "a failed alloc maps nothing")
}

func TestArenaReusesFreedRegions(t *testing.T) {
	a := newArena(t, WithChunk(1<<20))
	r1 := mustAlloc(t, a, 1000)
	require.EqualValues(t, 1000, r1.Len())
	require.Len(t, r1.Bytes(), 1000)
	require.Equal(t, 1000, cap(r1.Bytes()), "a region's slice cannot grow into its neighbour")
	r2 := mustAlloc(t, a, 1000)
	require.Equal(t, r1.Segment(), r2.Segment(), "small regions share a segment")
	require.Zero(t, r2.Offset()%align, "offsets are %d-byte aligned", align)
	require.GreaterOrEqual(t, r2.Offset(), r1.Offset()+r1.Len())

	copy(r1.Bytes(), "first tenant")
	require.NoError(t, a.Free(r1))
	r3 := mustAlloc(t, a, 900)
	require.Equal(t, r1.Segment(), r3.Segment())
	require.Equal(t, r1.Offset(), r3.Offset(), "the freed region is handed out again")
	require.Equal(t, "first tenant", string(r3.Bytes()[:12]), "reuse maps no new memory (and does not zero it)")
	require.Len(t, a.Segments(), 1)
	require.EqualValues(t, 1<<20, a.Mapped())
}

func TestArenaCoalescesInAnyFreeOrder(t *testing.T) {
	const chunk = 4096
	orders := [][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for _, order := range orders {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			a := newArena(t, WithChunk(chunk))
			var rs [3]Region
			for i, n := range []int64{1024, 1024, 2048} {
				r := mustAlloc(t, a, n)
				rs[i] = r
			}
			require.Len(t, a.Segments(), 1, "the three regions fill one chunk exactly")
			for _, i := range order {
				require.NoError(t, a.Free(rs[i]))
			}
			whole := mustAlloc(t, a, chunk)
			require.Zero(t, whole.Offset(), "the freed spans merged back into one")
			require.Equal(t, rs[0].Segment(), whole.Segment())
			require.Len(t, a.Segments(), 1)
		})
	}
}

func TestArenaDetectsDoubleAndForeignFree(t *testing.T) {
	a := newArena(t, WithChunk(1<<16))
	r := mustAlloc(t, a, 512)
	keep := mustAlloc(t, a, 512)
	require.NoError(t, a.Free(r))
	require.ErrorContains(t, a.Free(r), "already free")
	require.NoError(t, a.Free(Region{}), "freeing the zero region is a no-op")

	other := newArena(t, WithChunk(1<<16))
	require.ErrorContains(t, other.Free(keep), "does not belong")

	// The failed frees changed nothing: the kept region is still allocated
	// and the rest of the chunk is still whole.
	rest := mustAlloc(t, a, 1<<16-1024)
	require.Equal(t, keep.Segment(), rest.Segment())
	require.NoError(t, a.Free(keep))
	require.ErrorContains(t, a.Free(keep), "already free")
}

func TestArenaLocate(t *testing.T) {
	a := newArena(t, WithChunk(1<<16))
	mustAlloc(t, a, 4096)
	r := mustAlloc(t, a, 4096)

	for _, tc := range []struct {
		name   string
		b      []byte
		ok     bool
		offset int64
	}{
		{"whole region", r.Bytes(), true, r.Offset()},
		{"inside region", r.Bytes()[100:200], true, r.Offset() + 100},
		{"Go heap", make([]byte, 64), false, 0},
		{"empty", r.Bytes()[:0], false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seg, off, ok := a.Locate(tc.b)
			require.Equal(t, tc.ok, ok)
			if tc.ok {
				require.Equal(t, r.Segment(), seg)
				require.Equal(t, tc.offset, off)
			}
		})
	}
	other := newArena(t)
	_, _, ok := other.Locate(r.Bytes())
	require.False(t, ok, "another arena does not claim this memory")
}

func TestArenaDedicatedSegmentUnmappedWhenEmpty(t *testing.T) {
	a := newArena(t, WithChunk(1<<16))
	small := mustAlloc(t, a, 100)
	big := mustAlloc(t, a, 1<<16+1)
	require.NotEqual(t, small.Segment(), big.Segment())
	segs := a.Segments()
	require.Len(t, segs, 2)
	require.EqualValues(t, 1<<16+4096, segs[big.Segment()], "a dedicated segment is rounded up to whole pages")
	big.Bytes()[1<<16] = 7

	require.NoError(t, a.Free(big))
	require.NotContains(t, a.Segments(), big.Segment())
	_, err := os.Stat(filepath.Join(DefaultDir(), big.Segment()))
	require.ErrorIs(t, err, os.ErrNotExist, "an empty dedicated segment is unlinked")

	require.NoError(t, a.Free(small))
	require.Contains(t, a.Segments(), small.Segment(), "ordinary segments stay mapped for reuse")
}

func TestArenaCloseIsIdempotentAndFinal(t *testing.T) {
	a, err := NewArena(WithChunk(1 << 16))
	require.NoError(t, err)
	r := mustAlloc(t, a, 10)
	path := filepath.Join(DefaultDir(), r.Segment())
	require.FileExists(t, path)

	require.NoError(t, a.Close())
	require.NoError(t, a.Close())
	require.NoFileExists(t, path)
	require.Empty(t, a.Segments())
	_, err = a.Alloc(10)
	require.ErrorIs(t, err, ErrClosed)
	require.Error(t, a.Free(r), "regions of a closed arena are gone")
}

func TestArenaConcurrentRegionsNeverOverlap(t *testing.T) {
	a := newArena(t, WithChunk(1<<18))
	const workers, rounds = 8, 200
	var g errgroup.Group
	for w := range workers {
		g.Go(func() error {
			for i := range rounds {
				n := int64(1 + (w*rounds+i)%5000)
				r, err := a.Alloc(n)
				if err != nil {
					return err
				}
				b := r.Bytes()
				for j := range b {
					b[j] = byte(w)
				}
				for j := range b {
					if b[j] != byte(w) {
						return fmt.Errorf("worker %d: byte %d of %s@%d overwritten", w, j, r.Segment(), r.Offset())
					}
				}
				if err := a.Free(r); err != nil {
					return err
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	// Everything was freed, so one chunk's worth of allocation fits in the
	// first segment again.
	r := mustAlloc(t, a, 1<<18)
	require.Zero(t, r.Offset())
}

// smallTmpfs mounts a tmpfs of size bytes for the test, or skips when this
// process may not mount (not root, no CAP_SYS_ADMIN).
func smallTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a tmpfs to stand for a small /dev/shm: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, 0) })
	return dir
}

// On a /dev/shm smaller than a chunk (Docker's default is 64 MiB) the arena
// makes segments that fit, and says what is short when nothing does.
func TestSmallShmFilesystem(t *testing.T) {
	dir := smallTmpfs(t, 16<<20)
	a, err := NewArena(WithDir(dir))
	require.NoError(t, err)
	defer a.Close()
	r, err := a.Alloc(1 << 20)
	require.NoError(t, err, "a 1 MiB region on a 16 MiB tmpfs")
	require.LessOrEqual(t, r.seg.Size(), int64(8<<20), "the segment shrank to fit")
	r2 := mustAlloc(t, a, 2<<20)
	require.NoError(t, a.Free(r2))
	_, err = a.Alloc(64 << 20)
	require.ErrorIs(t, err, unix.ENOSPC)
	require.ErrorContains(t, err, "cannot hold a segment of 67108864 bytes")
	require.ErrorContains(t, err, "free")
	require.NoError(t, a.Free(r))
}
