package half

import (
	"math"
	"sort"
)

// The 8-bit float formats of the f8 dtypes, as OCP's FP8 specification
// defines them: E4M3 (bias 7, no infinities, the all-ones code is NaN, the
// largest value 448) and E5M2 (bias 15, IEEE-like with infinities and NaNs,
// the largest finite value 57344).

type f8Format struct {
	ebits, mbits, bias int
	ieee               bool // E5M2: exponent all ones is inf/NaN
	pos                []float64
}

func (f *f8Format) decode(b uint8) float64 {
	sign := 1.0
	if b&0x80 != 0 {
		sign = -1
	}
	e := int(b>>f.mbits) & (1<<f.ebits - 1)
	m := int(b) & (1<<f.mbits - 1)
	emax := 1<<f.ebits - 1
	switch {
	case f.ieee && e == emax && m == 0:
		return sign * math.Inf(1)
	case f.ieee && e == emax, !f.ieee && e == emax && m == 1<<f.mbits-1:
		return math.NaN()
	case e == 0:
		return sign * math.Ldexp(float64(m), 1-f.bias-f.mbits)
	}
	return sign * math.Ldexp(float64(m|1<<f.mbits), e-f.bias-f.mbits)
}

// table lists the finite non-negative values by code (0x00 up to the
// largest finite code); codes and values rise together.
func (f *f8Format) table() []float64 {
	if f.pos == nil {
		for c := 0; c < 0x80; c++ {
			v := f.decode(uint8(c))
			if math.IsNaN(v) || math.IsInf(v, 0) {
				break
			}
			f.pos = append(f.pos, v)
		}
	}
	return f.pos
}

func (f *f8Format) encode(x float64) uint8 {
	if math.IsNaN(x) {
		return 0x7f
	}
	var sign uint8
	if math.Signbit(x) {
		sign, x = 0x80, -x
	}
	t := f.table()
	top := len(t) - 1
	if x >= t[top] {
		if !f.ieee || x < t[top]+(t[top]-t[top-1])/2 {
			return sign | uint8(top) // E4M3 saturates
		}
		if x == t[top]+(t[top]-t[top-1])/2 && top&1 == 0 {
			return sign | uint8(top)
		}
		return sign | uint8(top+1) // E5M2: infinity
	}
	i := sort.SearchFloat64s(t, x) // t[i-1] < x <= t[i]
	if t[i] == x || i == 0 {
		return sign | uint8(i)
	}
	lo, hi := t[i-1], t[i]
	switch {
	case x-lo < hi-x:
		return sign | uint8(i-1)
	case x-lo > hi-x:
		return sign | uint8(i)
	case (i-1)&1 == 0: // a tie goes to the even code
		return sign | uint8(i-1)
	}
	return sign | uint8(i)
}

var (
	e4m3 = &f8Format{ebits: 4, mbits: 3, bias: 7}
	e5m2 = &f8Format{ebits: 5, mbits: 2, bias: 15, ieee: true}
)

func init() {
	e4m3.table()
	e5m2.table()
}

// F8E4M3FromFloat rounds x to the nearest E4M3 value (ties to even),
// saturating at ±448; NaN stays NaN.
func F8E4M3FromFloat(x float64) uint8 { return e4m3.encode(x) }

// F8E4M3ToFloat decodes an E4M3 byte exactly.
func F8E4M3ToFloat(b uint8) float64 { return e4m3.decode(b) }

// F8E5M2FromFloat rounds x to the nearest E5M2 value (ties to even); values
// beyond the range become infinities, NaN stays NaN.
func F8E5M2FromFloat(x float64) uint8 { return e5m2.encode(x) }

// F8E5M2ToFloat decodes an E5M2 byte exactly.
func F8E5M2ToFloat(b uint8) float64 { return e5m2.decode(b) }
