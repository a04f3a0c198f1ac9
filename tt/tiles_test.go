package tt_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/tt"
)

func TestTileLayoutOfOneTile(t *testing.T) {
	src := make([]float32, 32*32)
	for i := range src {
		src[i] = float32(i) // value = row*32 + col
	}
	dst := make([]float32, len(src))
	require.NoError(t, tt.TilizeF32(dst, src, 32, 32))
	at := func(r, c int) float32 { return float32(r*32 + c) }
	// face 0: rows 0-15, cols 0-15, row-major
	require.Equal(t, at(0, 0), dst[0])
	require.Equal(t, at(0, 15), dst[15])
	require.Equal(t, at(1, 0), dst[16])
	// face 1: rows 0-15, cols 16-31
	require.Equal(t, at(0, 16), dst[256])
	require.Equal(t, at(15, 31), dst[511])
	// face 2: rows 16-31, cols 0-15
	require.Equal(t, at(16, 0), dst[512])
	// face 3: rows 16-31, cols 16-31
	require.Equal(t, at(16, 16), dst[768])
	require.Equal(t, at(31, 31), dst[1023])
}

func TestTilesInRowMajorTileOrder(t *testing.T) {
	const rows, cols = 64, 96
	src := make([]uint16, rows*cols)
	for i := range src {
		src[i] = uint16(i)
	}
	dst := make([]uint16, len(src))
	require.NoError(t, tt.TilizeBF16(dst, src, rows, cols))
	// tile (0,1) starts at element (0,32); tile (1,0) is the fourth tile
	require.Equal(t, uint16(0*cols+32), dst[1*1024])
	require.Equal(t, uint16(32*cols+0), dst[3*1024])
	require.Equal(t, uint16(32*cols+64), dst[5*1024])
}

func TestTileRoundTrip(t *testing.T) {
	for _, shape := range [][2]int{{32, 32}, {64, 32}, {32, 128}, {96, 160}} {
		r, c := shape[0], shape[1]
		f := make([]float32, r*c)
		b := make([]uint16, r*c)
		for i := range f {
			f[i] = rand.Float32()
			b[i] = uint16(rand.Uint32())
		}
		tf, tb := make([]float32, len(f)), make([]uint16, len(b))
		require.NoError(t, tt.TilizeF32(tf, f, r, c))
		require.NoError(t, tt.TilizeBF16(tb, b, r, c))
		if r*c > 1024 {
			require.NotEqual(t, f, tf, "a multi-tile matrix changes order")
		}
		bf, bb := make([]float32, len(f)), make([]uint16, len(b))
		require.NoError(t, tt.UntilizeF32(bf, tf, r, c))
		require.NoError(t, tt.UntilizeBF16(bb, tb, r, c))
		require.Equal(t, f, bf)
		require.Equal(t, b, bb)

		// TilizeBytes moves 4-byte elements as TilizeF32 moves floats.
		raw, tiled, back := f32Bytes(f), make([]byte, 4*len(f)), make([]byte, 4*len(f))
		require.NoError(t, tt.TilizeBytes(tiled, raw, r, c, 4))
		require.Equal(t, f32Bytes(tf), tiled)
		require.NoError(t, tt.UntilizeBytes(back, tiled, r, c, 4))
		require.Equal(t, raw, back)
	}
}

func TestTileShapeErrors(t *testing.T) {
	buf := make([]float32, 32*32)
	require.Error(t, tt.TilizeF32(buf, buf[:100], 10, 10))
	require.Error(t, tt.TilizeF32(buf, buf, 32, 33))
	require.Error(t, tt.TilizeF32(buf, buf, 0, 32))
	require.Error(t, tt.TilizeF32(buf[:10], buf, 32, 32))
	require.Error(t, tt.UntilizeF32(buf, buf, -32, -32))
	raw := make([]byte, 4*len(buf))
	require.Error(t, tt.TilizeBytes(raw[:3*len(buf)], raw[:3*len(buf)], 32, 32, 3))
	require.Error(t, tt.UntilizeBytes(raw, raw[:100], 32, 32, 4))
}
