package half

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestF8Values(t *testing.T) {
	// Known codes (OCP FP8): E4M3 0x7e = 448, 0x08 = 2^-6, 0x01 = 2^-9;
	// E5M2 0x7b = 57344, 0x7c = +Inf, 0x04 = 2^-14, 0x01 = 2^-16.
	require.Equal(t, 448.0, F8E4M3ToFloat(0x7e))
	require.True(t, math.IsNaN(F8E4M3ToFloat(0x7f)))
	require.Equal(t, math.Ldexp(1, -6), F8E4M3ToFloat(0x08))
	require.Equal(t, math.Ldexp(1, -9), F8E4M3ToFloat(0x01))
	require.Equal(t, -1.5, F8E4M3ToFloat(0xbc))
	require.Equal(t, 57344.0, F8E5M2ToFloat(0x7b))
	require.True(t, math.IsInf(F8E5M2ToFloat(0x7c), 1))
	require.True(t, math.IsNaN(F8E5M2ToFloat(0x7d)))
	require.Equal(t, math.Ldexp(1, -14), F8E5M2ToFloat(0x04))
	require.Equal(t, math.Ldexp(1, -16), F8E5M2ToFloat(0x01))
}

func TestF8RoundTripAndRounding(t *testing.T) {
	for c := range 256 {
		b := uint8(c)
		for _, f := range []struct {
			enc func(float64) uint8
			dec func(uint8) float64
		}{{F8E4M3FromFloat, F8E4M3ToFloat}, {F8E5M2FromFloat, F8E5M2ToFloat}} {
			v := f.dec(b)
			if math.IsNaN(v) {
				require.True(t, math.IsNaN(f.dec(f.enc(v))))
				continue
			}
			if v == 0 {
				continue // ±0 keeps its sign bit below
			}
			require.Equal(t, b, f.enc(v), "code %#x (%g) round-trips", b, v)
		}
	}
	require.Equal(t, uint8(0x80), F8E4M3FromFloat(math.Copysign(0, -1)))
	// 1.0625 lies halfway between 1.0 (0x38) and 1.125 (0x39): ties to even.
	require.Equal(t, uint8(0x38), F8E4M3FromFloat(1.0625))
	require.Equal(t, uint8(0x39), F8E4M3FromFloat(1.07))
	require.Equal(t, uint8(0x7e), F8E4M3FromFloat(1e6), "E4M3 saturates")
	require.Equal(t, uint8(0xfe), F8E4M3FromFloat(-1e6))
	require.Equal(t, uint8(0x7c), F8E5M2FromFloat(1e6), "E5M2 overflows to infinity")
	require.Equal(t, uint8(0x7b), F8E5M2FromFloat(60000), "below the rounding point stays finite")
}
