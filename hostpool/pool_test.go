package hostpool

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/zyxtt/zyxtt/internal/shmtest"
	"github.com/zyxtt/zyxtt/shm"
)

// Keep this package's segments in a private tmpfs directory.
func TestMain(m *testing.M) { shmtest.Main(m) }

var ctx = context.Background()

func newPool(t *testing.T, limit int64) *Pool {
	t.Helper()
	a, err := shm.NewArena(shm.WithChunk(1 << 20))
	require.NoError(t, err)
	p, err := New(Config{Limit: limit, Arena: a})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, p.Close())
		require.NoError(t, a.Close())
	})
	return p
}

func TestAllocRejectsNonPositiveSizes(t *testing.T) {
	p := newPool(t, 1<<20)
	for _, n := range []int64{0, -1, -1 << 62} {
		id, err := p.Alloc(ctx, n)
		require.ErrorIs(t, err, ErrInvalidArgument, "alloc %d", n)
		require.Zero(t, id)
	}
	require.EqualValues(t, 1<<20, p.FreeBytes())
	require.Zero(t, p.Live())
}

func TestUnknownIDsAreErrors(t *testing.T) {
	p := newPool(t, 1<<20)
	live, err := p.Alloc(ctx, 10)
	require.NoError(t, err)
	for _, id := range []BufferID{0, live + 1, 1 << 60} {
		t.Run(fmt.Sprint(id), func(t *testing.T) {
			require.ErrorIs(t, p.Retain(id), ErrUnknownBuffer)
			require.ErrorIs(t, p.Release(id), ErrUnknownBuffer)
			_, err := p.Size(id)
			require.ErrorIs(t, err, ErrUnknownBuffer)
			_, err = p.Bytes(id)
			require.ErrorIs(t, err, ErrUnknownBuffer)
			_, err = p.Region(id)
			require.ErrorIs(t, err, ErrUnknownBuffer)
			require.ErrorIs(t, p.Write(ctx, id, 0, []byte{1}), ErrUnknownBuffer)
			require.ErrorIs(t, p.Read(ctx, id, 0, make([]byte, 1)), ErrUnknownBuffer)
		})
	}
	require.EqualValues(t, 1<<20-10, p.FreeBytes(), "errors change no accounting")
	require.Equal(t, 1, p.Live())
}

func TestRefcountLifecycle(t *testing.T) {
	p := newPool(t, 1<<20)
	id, err := p.Alloc(ctx, 1000)
	require.NoError(t, err)
	require.EqualValues(t, 1<<20-1000, p.FreeBytes())
	size, err := p.Size(id)
	require.NoError(t, err)
	require.EqualValues(t, 1000, size)

	require.NoError(t, p.Retain(id))
	require.NoError(t, p.Release(id))
	require.EqualValues(t, 1<<20-1000, p.FreeBytes(), "one reference is still held")
	require.NoError(t, p.Write(ctx, id, 0, []byte("alive")))

	require.NoError(t, p.Release(id))
	require.EqualValues(t, 1<<20, p.FreeBytes(), "the last release frees")
	require.Zero(t, p.Live())

	require.ErrorIs(t, p.Release(id), ErrUnknownBuffer, "double release")
	require.ErrorIs(t, p.Retain(id), ErrUnknownBuffer, "retain after free")
	require.ErrorIs(t, p.Write(ctx, id, 0, []byte("x")), ErrUnknownBuffer, "write after free")
	require.EqualValues(t, 1<<20, p.FreeBytes())

	again, err := p.Alloc(ctx, 1000)
	require.NoError(t, err)
	require.NotEqual(t, id, again, "ids are never reused, so a stale id stays unknown")
	require.ErrorIs(t, p.Release(id), ErrUnknownBuffer)
}

func TestOutOfMemoryWithLimit(t *testing.T) {
	p := newPool(t, 1000)
	require.EqualValues(t, 1000, p.TotalBytes())
	a, err := p.Alloc(ctx, 600)
	require.NoError(t, err)
	_, err = p.Alloc(ctx, 401)
	require.ErrorIs(t, err, ErrOutOfMemory)
	require.ErrorContains(t, err, "400 free")
	require.EqualValues(t, 400, p.FreeBytes(), "a refused alloc reserves nothing")
	b, err := p.Alloc(ctx, 400)
	require.NoError(t, err)
	require.Zero(t, p.FreeBytes())
	_, err = p.Alloc(ctx, 1)
	require.ErrorIs(t, err, ErrOutOfMemory)
	require.NoError(t, p.Release(a))
	require.EqualValues(t, 600, p.FreeBytes())
	require.NoError(t, p.Release(b))
	require.EqualValues(t, 1000, p.FreeBytes())
}

func TestReadWriteRanges(t *testing.T) {
	p := newPool(t, 1<<20)
	id, err := p.Alloc(ctx, 16)
	require.NoError(t, err)
	require.NoError(t, p.Write(ctx, id, 4, []byte("abcd")))
	got := make([]byte, 6)
	require.NoError(t, p.Read(ctx, id, 3, got))
	require.Equal(t, []byte{0, 'a', 'b', 'c', 'd', 0}, got, "reads see writes")
	require.NoError(t, p.Write(ctx, id, 16, nil), "an empty write at the end is in range")

	for _, tc := range []struct {
		name string
		off  int64
		n    int
	}{
		{"negative offset", -1, 1},
		{"past the end", 10, 7},
		{"offset past the end", 17, 0},
		{"huge offset", 1 << 62, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, p.Write(ctx, id, tc.off, make([]byte, tc.n)), ErrInvalidArgument)
			require.ErrorIs(t, p.Read(ctx, id, tc.off, make([]byte, tc.n)), ErrInvalidArgument)
		})
	}
}

func TestRegionAndBytesNameTheSameMemory(t *testing.T) {
	p := newPool(t, 1<<22)
	id, err := p.Alloc(ctx, 3000)
	require.NoError(t, err)
	r, err := p.Region(id)
	require.NoError(t, err)
	require.EqualValues(t, 3000, r.Len())
	b, err := p.Bytes(id)
	require.NoError(t, err)
	require.Len(t, b, 3000)
	copy(b, "shared")
	require.Equal(t, "shared", string(r.Bytes()[:6]))

	seg, off, ok := p.Arena().Locate(b)
	require.True(t, ok, "host buffers live in the pool's arena")
	require.Equal(t, r.Segment(), seg)
	require.Equal(t, r.Offset(), off)

	// Another process sees the bytes through the segment name.
	peer, err := shm.Open(r.Segment())
	require.NoError(t, err)
	defer peer.Close()
	require.Equal(t, "shared", string(peer.Bytes()[r.Offset():r.Offset()+6]))
}

func TestConcurrentAccountingIsExact(t *testing.T) {
	const limit = 64 << 20
	p := newPool(t, limit)
	const workers, rounds = 16, 150
	var g errgroup.Group
	kept := make([][]BufferID, workers)
	keptBytes := make([]int64, workers)
	for w := range workers {
		g.Go(func() error {
			for i := range rounds {
				n := int64(1 + (w*7919+i*104729)%20000)
				id, err := p.Alloc(ctx, n)
				if err != nil {
					return err
				}
				if err := p.Retain(id); err != nil {
					return err
				}
				if err := p.Write(ctx, id, n-1, []byte{byte(w)}); err != nil {
					return err
				}
				if err := p.Release(id); err != nil {
					return err
				}
				if i%10 == 0 { // keep some buffers alive
					kept[w] = append(kept[w], id)
					keptBytes[w] += n
					continue
				}
				if err := p.Release(id); err != nil {
					return err
				}
				if err := p.Release(id); err == nil {
					return fmt.Errorf("worker %d: double release of %d succeeded", w, id)
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	var held int64
	var live int
	for w := range workers {
		held += keptBytes[w]
		live += len(kept[w])
	}
	require.Equal(t, limit-held, p.FreeBytes())
	require.Equal(t, live, p.Live())
	for w := range workers {
		for _, id := range kept[w] {
			b, err := p.Bytes(id)
			require.NoError(t, err)
			require.Equal(t, byte(w), b[len(b)-1], "buffers of different workers never overlap")
			require.NoError(t, p.Release(id))
		}
	}
	require.EqualValues(t, limit, p.FreeBytes())
	require.Zero(t, p.Live())
}

func TestConcurrentAllocNeverExceedsLimit(t *testing.T) {
	const limit = 1 << 20
	p := newPool(t, limit)
	var mu sync.Mutex
	var total int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for {
				n := int64(1000 + w*100)
				if _, err := p.Alloc(ctx, n); err != nil {
					return // out of memory: stop and hold what we got
				}
				mu.Lock()
				total += n
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, total, int64(limit))
	require.Equal(t, limit-total, p.FreeBytes())
	require.Less(t, p.FreeBytes(), int64(1000), "every worker stopped only when its size no longer fit")
}

func TestCloseFreesEverything(t *testing.T) {
	p, err := New(Config{Limit: 1 << 20})
	require.NoError(t, err)
	id, err := p.Alloc(ctx, 100)
	require.NoError(t, err)
	r, err := p.Region(id)
	require.NoError(t, err)
	require.FileExists(t, shm.DefaultDir()+"/"+r.Segment())
	require.NoError(t, p.Close())
	require.Zero(t, p.Live())
	require.EqualValues(t, 1<<20, p.FreeBytes())
	require.NoFileExists(t, shm.DefaultDir()+"/"+r.Segment(), "a pool's private arena is unlinked on Close")
	_, err = p.Alloc(ctx, 1)
	require.Error(t, err)
}

func TestDefaultIsShared(t *testing.T) {
	a, err := Default()
	require.NoError(t, err)
	b, err := Default()
	require.NoError(t, err)
	require.Same(t, a, b)
	require.Equal(t, "host", a.Name())
	require.Positive(t, a.TotalBytes())
}

func TestFullShmFilesystemIsOutOfMemory(t *testing.T) {
	capacity, err := shm.Capacity(shm.DefaultDir())
	require.NoError(t, err)
	p := newPool(t, 1<<62)
	_, err = p.Alloc(ctx, capacity+1<<20)
	require.ErrorIs(t, err, ErrOutOfMemory, "a full /dev/shm is out of memory, not a crash")
	require.EqualValues(t, 1<<62, p.FreeBytes(), "the failed alloc reserved nothing")

	def, err := New(Config{})
	require.NoError(t, err)
	defer def.Close()
	require.LessOrEqual(t, def.TotalBytes(), capacity, "the default limit fits the shm filesystem")
}

func TestCloseDefaultUnlinksItsSegmentsInAHelperProcess(t *testing.T) {
	if dir := os.Getenv("ZYX_HOSTPOOL_CLOSE_HELPER"); dir != "" {
		require.Equal(t, dir, shm.DefaultDir(), "the helper inherits the parent's directory")
		p, err := Default()
		require.NoError(t, err)
		id, err := p.Alloc(context.Background(), 1<<20)
		require.NoError(t, err)
		r, err := p.Region(id)
		require.NoError(t, err)
		fmt.Println("segment", r.Segment())
		require.NoError(t, CloseDefault())
		_, err = Default()
		require.Error(t, err, "the default pool is not reborn after CloseDefault")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestCloseDefaultUnlinksItsSegmentsInAHelperProcess$", "-test.v")
	cmd.Env = append(os.Environ(), "ZYX_HOSTPOOL_CLOSE_HELPER="+shm.DefaultDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var seg string
	for _, line := range strings.Split(string(out), "\n") {
		if name, ok := strings.CutPrefix(line, "segment "); ok {
			seg = strings.TrimSpace(name)
		}
	}
	require.NotEmpty(t, seg, "helper output: %s", out)
	require.True(t, strings.HasPrefix(seg, shm.Prefix), "segment %q", seg)
	require.NoFileExists(t, filepath.Join(shm.DefaultDir(), seg))
}
