package half

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFromF32(t *testing.T) {
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00}, {6.1035156e-05, 0x0400}, {5.9604645e-08, 0x0001}, {1e-8, 0},
	} {
		require.Equal(t, c.want, FromF32(c.f), "%g", c.f)
	}
	require.True(t, math.IsNaN(toF64(FromF32(float32(math.NaN())))))
}

// toF64 decodes IEEE binary16 for checking the encoder.
func toF64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * mant * math.Pow(2, -24)
	case 31:
		if mant != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * (1 + mant/1024) * math.Pow(2, float64(exp-15))
}

// FuzzFromF32 checks that the half encoding is the nearest half value.
func FuzzFromF32(f *testing.F) {
	for _, v := range []float32{0, 1, -1, 65504, 65520, 1e-8, 6e-5, 3.14159, float32(math.Inf(1))} {
		f.Add(math.Float32bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint32) {
		v := math.Float32frombits(bits)
		h := FromF32(v)
		got := toF64(h)
		if v != v {
			require.True(t, math.IsNaN(got))
			return
		}
		if math.Abs(float64(v)) >= 65520 {
			require.True(t, math.IsInf(got, 0), "%g -> %g", v, got)
			return
		}
		// No other half is closer to v than the one chosen.
		for _, n := range []uint16{h - 1, h + 1} {
			if n&0x7c00 == 0x7c00 || (n^h)&0x8000 != 0 {
				continue
			}
			alt := toF64(n)
			require.LessOrEqual(t, math.Abs(got-float64(v)), math.Abs(alt-float64(v)), "%g encoded as %#04x (%g), %#04x (%g) is closer", v, h, got, n, alt)
		}
	})
}

// TestToF32 decodes every half value and checks it against toF64 and
// against re-encoding.
func TestToF32(t *testing.T) {
	for h := range 1 << 16 {
		got, want := float64(ToF32(uint16(h))), toF64(uint16(h))
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(got), "%#04x", h)
			continue
		}
		require.Equal(t, want, got, "%#04x", h)
		require.Equal(t, uint16(h), FromF32(float32(got)), "%#04x round trip", h)
	}
}

func TestBF16FromF32(t *testing.T) {
	for _, c := range []struct {
		bits uint32
		want uint16
	}{
		{math.Float32bits(1), 0x3f80},
		{math.Float32bits(3.14159265), 0x4049},
		{math.Float32bits(-2), 0xc000},
		{0x3f808000, 0x3f80}, // a tie rounds to the even 0x3f80
		{0x3f818000, 0x3f82}, // a tie rounds to the even 0x3f82
		{0x3f808001, 0x3f81}, // past the tie rounds up
		{0x7f7fffff, 0x7f80}, // the largest float32 rounds to infinity
		{0xff800000, 0xff80},
	} {
		require.Equal(t, c.want, BF16FromF32(math.Float32frombits(c.bits)), "%#08x", c.bits)
	}
	nan := BF16FromF32(float32(math.NaN()))
	require.Equal(t, uint16(0x7f80), nan&0x7f80, "exponent all ones")
	require.NotZero(t, nan&0x7f, "a NaN stays a NaN, not an infinity")
}
