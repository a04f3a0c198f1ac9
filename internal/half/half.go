// Package half converts between float32 and the 16-bit float encodings:
// IEEE binary16, which the GPU backends give f16 scalars when they pass them
// to a kernel, and bfloat16.
package half

import "math"

// FromF32 converts f to IEEE binary16, rounding to nearest even: NaN stays
// a (quiet) NaN, values beyond the half range become infinities, and tiny
// values become subnormals or zero.
func FromF32(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case b&0x7fffffff > 0x7f800000: // NaN
		return sign | 0x7e00
	case exp >= 31: // overflow and infinity
		return sign | 0x7c00
	case exp <= 0: // subnormal or zero
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		half := uint32(1) << (shift - 1)
		r := mant >> shift
		if rem := mant & (1<<shift - 1); rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(exp)<<10 | mant>>13
	if rem := mant & 0x1fff; rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, which is the correct rounding
	}
	return sign | uint16(r)
}

// ToF32 decodes IEEE binary16 exactly: every half value is a float32 value.
func ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h >> 10 & 0x1f)
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		v := float32(mant) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// BF16FromF32 converts f to bfloat16 (the high half of its float32 bits),
// rounding to nearest even; NaN stays a (quiet) NaN.
func BF16FromF32(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}
