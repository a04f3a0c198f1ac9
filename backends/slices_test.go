package backends_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
)

func roundTrip[T backends.Element](t *testing.T, p *backends.Pool, v []T) {
	t.Helper()
	ctx := t.Context()
	id, err := backends.AllocSlice(ctx, p, v)
	require.NoError(t, err)
	defer p.Release(id)
	got, err := backends.ReadSlice[T](ctx, p, id, 0, len(v))
	require.NoError(t, err)
	require.Equal(t, v, got)
}

func TestTypedSlices(t *testing.T) {
	rt, err := backends.Open(t.Context(), backends.Options{Config: &backends.Config{}, Backends: []string{}})
	require.NoError(t, err)
	defer rt.Close()
	host, err := rt.HostPool()
	require.NoError(t, err)
	roundTrip(t, host, []float32{1.5, -2, float32(math.Inf(1))})
	roundTrip(t, host, []float64{math.Pi, -0})
	roundTrip(t, host, []int8{-128, 127})
	roundTrip(t, host, []uint16{backends.BF16Bits(1.5), backends.F16Bits(-0.25)})
	roundTrip(t, host, []int64{math.MinInt64, 1 << 60})
	roundTrip(t, host, []uint32{0xdeadbeef})

	ctx := t.Context()
	id, err := backends.AllocSlice(ctx, host, []int32{1, 2, 3, 4})
	require.NoError(t, err)
	defer host.Release(id)
	mem, err := host.Bytes(id)
	require.NoError(t, err)
	require.Equal(t, []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}, mem, "little-endian elements")
	require.NoError(t, backends.WriteSlice(ctx, host, id, 4, []int32{-1}))
	tail, err := backends.ReadSlice[int32](ctx, host, id, 4, 3)
	require.NoError(t, err)
	require.Equal(t, []int32{-1, 3, 4}, tail)
	_, err = backends.ReadSlice[int32](ctx, host, id, 8, 3)
	require.ErrorIs(t, err, backends.ErrInvalidArgument, "past the end")

	require.Equal(t, float32(1.5), backends.Float32OfBF16(backends.BF16Bits(1.5)))
	require.Equal(t, float32(-0.25), backends.Float32OfF16(backends.F16Bits(-0.25)))
	require.Equal(t, uint16(0x3fc0), backends.BF16Bits(1.5))
}
