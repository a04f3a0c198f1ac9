package backendtest

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// chargeUnit is a pool that charges allocations in whole units (the
// Tenstorrent pools charge whole DRAM pages).
type chargeUnit interface{ ChargeUnit() int64 }

// RunPoolConformance checks what every device pool must do: free-bytes
// accounting, writes and reads at offsets, ranges outside a buffer and bad
// sizes refused, transfers larger than a staging chunk (3 MiB), a copy
// inside the pool and to the host pool through backends.Copy, retain and
// release with the last release freeing, and ErrUnknownBuffer for a freed
// id and for a host-pool id. The pool ends as it began.
func RunPoolConformance(t *testing.T, p *backends.Pool) {
	t.Helper()
	ctx := context.Background()
	free := p.FreeBytes()
	id, err := p.Alloc(ctx, 1024)
	require.NoError(t, err)
	charge := int64(1024)
	if c, ok := p.Driver().(chargeUnit); ok {
		unit := c.ChargeUnit()
		charge = (charge + unit - 1) / unit * unit
	}
	require.Equal(t, free-charge, p.FreeBytes())
	src := make([]byte, 1024)
	for i := range src {
		src[i] = byte(i * 7)
	}
	require.NoError(t, p.Write(ctx, id, 0, src))
	require.NoError(t, p.Write(ctx, id, 100, []byte{1, 2, 3}))
	got := make([]byte, 1024)
	require.NoError(t, p.Read(ctx, id, 0, got))
	copy(src[100:], []byte{1, 2, 3})
	require.Equal(t, src, got)
	part := make([]byte, 10)
	require.NoError(t, p.Read(ctx, id, 1014, part))
	require.Equal(t, src[1014:], part)

	require.ErrorIs(t, p.Read(ctx, id, 1020, make([]byte, 8)), backends.ErrInvalidArgument)
	require.ErrorIs(t, p.Write(ctx, id, -1, []byte{1}), backends.ErrInvalidArgument)
	_, err = p.Alloc(ctx, 0)
	require.ErrorIs(t, err, backends.ErrInvalidArgument)
	_, err = p.Alloc(ctx, math.MaxInt64)
	require.ErrorIs(t, err, driver.ErrOutOfMemory)

	// Bigger than a staging chunk where the pool has one: chunked.
	big := make([]byte, 3<<20+5)
	for i := range big {
		big[i] = byte(i * 13)
	}
	bid, err := p.Alloc(ctx, int64(len(big)))
	require.NoError(t, err)
	require.NoError(t, p.Write(ctx, bid, 0, big))
	back := make([]byte, len(big)-7)
	require.NoError(t, p.Read(ctx, bid, 7, back))
	require.Equal(t, big[7:], back)
	require.NoError(t, p.Release(bid))

	// A copy inside the pool, through backends.Copy.
	id2, err := p.Alloc(ctx, 1024)
	require.NoError(t, err)
	require.NoError(t, backends.Copy(ctx, p, id2, 0, p, id, 0, 1024))
	require.NoError(t, p.Read(ctx, id2, 0, got))
	require.Equal(t, src, got)

	// Out to host pool memory (shm), and a host-pool id is not this pool's.
	requireCopiesToHost(t, p, id2, src, func(hid driver.BufferID) error { return p.Write(ctx, hid, 0, src[:4]) })

	requireLastReleaseFrees(t, p, id)
	require.NoError(t, p.Release(id2))
	require.Equal(t, free, p.FreeBytes())
}

// RunReadOnlyPoolConformance checks what a pool whose buffers are made
// outside Alloc (the disk pool) must do, as far as it applies: newBuffer makes
// a buffer holding content. Reads at offsets, ranges outside a buffer
// refused, a copy out to the host pool through backends.Copy, retain and
// release with the last release freeing, ErrUnknownBuffer for a freed id and
// for a host-pool id, and writes refused as unsupported.
func RunReadOnlyPoolConformance(t *testing.T, p *backends.Pool, newBuffer func(content []byte) driver.BufferID) {
	t.Helper()
	ctx := context.Background()
	src := make([]byte, 3<<20+5)
	for i := range src {
		src[i] = byte(i * 13)
	}
	id := newBuffer(src)
	size, err := p.Size(id)
	require.NoError(t, err)
	require.EqualValues(t, len(src), size)
	part := make([]byte, 10)
	require.NoError(t, p.Read(ctx, id, int64(len(src))-10, part))
	require.Equal(t, src[len(src)-10:], part)
	require.ErrorIs(t, p.Read(ctx, id, int64(len(src))-9, part), backends.ErrInvalidArgument)
	require.ErrorIs(t, p.Read(ctx, id, -1, part), backends.ErrInvalidArgument)
	require.ErrorIs(t, p.Write(ctx, id, 0, part), driver.ErrUnsupported)

	requireCopiesToHost(t, p, id, src, func(hid driver.BufferID) error { return p.Read(ctx, hid, 0, part) })

	requireLastReleaseFrees(t, p, id)
}

// requireCopiesToHost copies buffer id of p, which holds want, to a new
// host-pool buffer through backends.Copy and checks the bytes; then that a
// host-pool id is not one of p's, for Retain and for use (an operation of
// p on the host-pool id).
func requireCopiesToHost(t *testing.T, p *backends.Pool, id driver.BufferID, want []byte, use func(hostID driver.BufferID) error) {
	t.Helper()
	ctx := context.Background()
	host, err := backends.HostPool()
	require.NoError(t, err)
	hid, err := host.Alloc(ctx, int64(len(want)))
	require.NoError(t, err)
	defer func() { require.NoError(t, host.Release(hid)) }()
	require.NoError(t, backends.Copy(ctx, host, hid, 0, p, id, 0, int64(len(want))))
	hb, err := host.Bytes(hid)
	require.NoError(t, err)
	require.Equal(t, want, hb)
	require.ErrorIs(t, p.Retain(hid), driver.ErrUnknownBuffer, "a host-pool id")
	require.ErrorIs(t, use(hid), driver.ErrUnknownBuffer, "a host-pool id")
}

// requireLastReleaseFrees checks reference counting on id, which holds one
// reference: a Retain adds one, two Releases drop both and free it, and the
// freed id is ErrUnknownBuffer for Release, Size and Read.
func requireLastReleaseFrees(t *testing.T, p *backends.Pool, id driver.BufferID) {
	t.Helper()
	require.NoError(t, p.Retain(id))
	require.NoError(t, p.Release(id))
	require.NoError(t, p.Release(id))
	require.ErrorIs(t, p.Release(id), driver.ErrUnknownBuffer)
	_, err := p.Size(id)
	require.ErrorIs(t, err, driver.ErrUnknownBuffer)
	require.ErrorIs(t, p.Read(context.Background(), id, 0, make([]byte, 1)), driver.ErrUnknownBuffer)
}
