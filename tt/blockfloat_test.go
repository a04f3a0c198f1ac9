package tt

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The golden tile is shared with the emulator's C++ packer test
// (cpp/emu/tests/compute_tests.cpp): both must produce these bytes.
func TestBlockfloatGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "blockfloat_golden.bin"))
	require.NoError(t, err)
	require.Len(t, data, 8+4096+1088+576)
	require.Equal(t, "ZYXBFP1\n", string(data[:8]))
	vals := make([]float32, TileValues)
	for i := range vals {
		vals[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[8+4*i:]))
	}
	b8, err := PackBlockFloat(Bfp8b, vals, false)
	require.NoError(t, err)
	require.True(t, bytes.Equal(b8, data[8+4096:8+4096+1088]), "Bfp8_b bytes differ from the C++ packer")
	b4, err := PackBlockFloat(Bfp4b, vals, false)
	require.NoError(t, err)
	require.True(t, bytes.Equal(b4, data[8+4096+1088:]), "Bfp4_b bytes differ from the C++ packer")
}

func TestBlockfloatLayout(t *testing.T) {
	v := make([]float32, TileValues)
	v[0], v[1], v[16] = 1.0, -0.5, 3.0 // face order: group 0 and group 1
	b, err := PackBlockFloat(Bfp8b, v, false)
	require.NoError(t, err)
	require.Len(t, b, 1088)
	require.Equal(t, byte(127), b[0])
	require.Equal(t, byte(128), b[1])
	require.Equal(t, byte(0x40), b[64])
	require.Equal(t, byte(0xa0), b[65])
	require.Equal(t, byte(0x60), b[64+16])
	// Row-major input: element (0, 16) is face 1's first value, group 16.
	rm := make([]float32, TileValues)
	rm[16] = 2.0
	b, err = PackBlockFloat(Bfp8b, rm, true)
	require.NoError(t, err)
	require.Equal(t, byte(128), b[16])
	require.Equal(t, byte(0x40), b[64+256])
}

func TestBlockfloatRoundTrip(t *testing.T) {
	v := make([]float32, 2*TileValues)
	for i := range v {
		v[i] = float32(math.Sin(float64(i)*0.37) * 4)
	}
	for _, f := range []BlockFloatFormat{Bfp8b, Bfp4b} {
		b, err := PackBlockFloat(f, v, true)
		require.NoError(t, err)
		require.Len(t, b, 2*f.TileBytes())
		got, err := UnpackBlockFloat(f, b, true)
		require.NoError(t, err)
		// within half a mantissa step of the shared exponent (4 = 2^2 bounds |v|)
		step := 4.0 / 64
		if f == Bfp4b {
			step = 4.0 / 4
		}
		for i := range v {
			require.InDelta(t, v[i], got[i], step/2+1e-7, "%s element %d", f, i)
		}
		// packing the decoded values again is exact
		b2, err := PackBlockFloat(f, got, true)
		require.NoError(t, err)
		require.Equal(t, b, b2)
	}
}

func TestBlockfloatErrors(t *testing.T) {
	_, err := PackBlockFloat(Bfp8b, make([]float32, 100), false)
	require.ErrorIs(t, err, ErrBlockFloat)
	_, err = UnpackBlockFloat(Bfp4b, make([]byte, 577), false)
	require.ErrorIs(t, err, ErrBlockFloat)
	_, err = PackBlockFloat(BlockFloatFormat(9), make([]float32, TileValues), false)
	require.ErrorIs(t, err, ErrBlockFloat)
	require.Equal(t, "Bfp4_b", Bfp4b.String())
}
