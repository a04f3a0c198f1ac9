package tt

// Block-float tile formats (Bfp8_b, Bfp4_b) as Tenstorrent devices and
// tt-metal's host packers lay them out. A 32x32 tile is four 16x16 faces
// (face 0: rows 0-15 cols 0-15, face 1: rows 0-15 cols 16-31, face 2: rows
// 16-31 cols 0-15, face 3: rows 16-31 cols 16-31), each row-major; every face
// row of 16 values shares one exponent byte. A packed tile holds the 64
// exponents (face 0 row 0 first) and then the values in face order: a sign bit
// and a 7-bit (Bfp8_b) or 3-bit (Bfp4_b) magnitude aligned to the shared
// exponent, rounded to nearest with ties to even; Bfp4_b puts two values in a
// byte, the first in the low nibble. The emulator's packer (cpp/emu/src/
// formats.cpp) produces the same bytes (testdata/blockfloat_golden.bin).

import (
	"errors"
	"fmt"
	"math"
)

// BlockFloatFormat is a block-float tile format.
type BlockFloatFormat int

const (
	// Bfp8b is tt-metal's Bfp8_b: 1088 bytes per 32x32 tile.
	Bfp8b BlockFloatFormat = iota
	// Bfp4b is tt-metal's Bfp4_b: 576 bytes per 32x32 tile.
	Bfp4b
)

// TileValues is the number of values in one 32x32 tile.
const TileValues = 1024

// ErrBlockFloat is wrapped by every error of the block-float conversions.
var ErrBlockFloat = errors.New("block float")

// String returns the tt-metal name of the format.
func (f BlockFloatFormat) String() string {
	switch f {
	case Bfp8b:
		return "Bfp8_b"
	case Bfp4b:
		return "Bfp4_b"
	}
	return fmt.Sprintf("BlockFloatFormat(%d)", int(f))
}

// TileBytes is the size of one packed 32x32 tile.
func (f BlockFloatFormat) TileBytes() int {
	if f == Bfp4b {
		return 64 + 512
	}
	return 64 + 1024
}

func (f BlockFloatFormat) width() (uint32, error) {
	switch f {
	case Bfp8b:
		return 7, nil
	case Bfp4b:
		return 3, nil
	}
	return 0, fmt.Errorf("%w: unknown format %d", ErrBlockFloat, int(f))
}

// faceIndex maps (row, col) of a 32x32 tile to its position in face order.
func faceIndex(r, c int) int { return ((r>>4)*2+(c>>4))*256 + (r&15)*16 + (c & 15) }

// PackBlockFloat packs whole tiles of f32 values. With rowMajor each tile's
// 1024 values are row-major (row 0 first); otherwise they are already in
// face order, as the device holds them.
func PackBlockFloat(f BlockFloatFormat, values []float32, rowMajor bool) ([]byte, error) {
	width, err := f.width()
	if err != nil {
		return nil, err
	}
	if len(values)%TileValues != 0 {
		return nil, fmt.Errorf("%w: %d values are not whole 32x32 tiles", ErrBlockFloat, len(values))
	}
	ntiles := len(values) / TileValues
	out := make([]byte, ntiles*f.TileBytes())
	var tile [TileValues]uint32
	for t := 0; t < ntiles; t++ {
		src := values[t*TileValues : (t+1)*TileValues]
		for r := 0; r < 32; r++ {
			for c := 0; c < 32; c++ {
				i := faceIndex(r, c)
				if rowMajor {
					tile[i] = math.Float32bits(src[r*32+c])
				} else {
					tile[r*32+c] = math.Float32bits(src[r*32+c])
				}
			}
		}
		packTile(&tile, width, out[t*f.TileBytes():(t+1)*f.TileBytes()])
	}
	return out, nil
}

func packTile(v *[TileValues]uint32, width uint32, out []byte) {
	for g := 0; g < 64; g++ {
		var e uint32
		for i := 0; i < 16; i++ {
			if x := (v[g*16+i] >> 23) & 0xff; x > e {
				e = x
			}
		}
		out[g] = byte(e)
		for i := 0; i < 16; i++ {
			k := g*16 + i
			m := encodeBfp(v[k], e, width)
			switch {
			case width == 7:
				out[64+k] = m
			case k&1 == 1:
				out[64+k/2] |= m << 4
			default:
				out[64+k/2] = m & 0xf
			}
		}
	}
}

// encodeBfp is one value: the 24-bit significand shifted to the shared
// exponent, rounded to `width` bits (nearest, ties to even), saturating.
func encodeBfp(in, sharedExp, width uint32) byte {
	if in&0x7fffffff == 0 {
		return 0
	}
	mant := in&0x007fffff | 1<<23
	exp, sign := (in>>23)&0xff, in>>31
	if sharedExp > exp {
		if d := sharedExp - exp; d >= 32 {
			mant = 0
		} else {
			mant >>= d
		}
	}
	shift := 24 - width
	maxMant := uint32(1)<<width - 1
	round, tie := mant&(1<<shift-1), uint32(1)<<(shift-1)
	mant >>= shift
	if round > tie || (round == tie && mant&1 == 1) {
		mant++
	}
	if mant > maxMant {
		mant = maxMant
	}
	if mant == 0 {
		sign = 0
	}
	return byte(sign<<width | mant)
}

// UnpackBlockFloat decodes whole packed tiles to f32 values, row-major per
// tile with rowMajor, else in face order.
func UnpackBlockFloat(f BlockFloatFormat, data []byte, rowMajor bool) ([]float32, error) {
	width, err := f.width()
	if err != nil {
		return nil, err
	}
	tb := f.TileBytes()
	if len(data)%tb != 0 {
		return nil, fmt.Errorf("%w: %d bytes are not whole %s tiles of %d bytes", ErrBlockFloat, len(data), f, tb)
	}
	ntiles := len(data) / tb
	out := make([]float32, ntiles*TileValues)
	for t := 0; t < ntiles; t++ {
		in := data[t*tb : (t+1)*tb]
		dst := out[t*TileValues : (t+1)*TileValues]
		for r := 0; r < 32; r++ {
			for c := 0; c < 32; c++ {
				k := faceIndex(r, c)
				v := math.Float32frombits(tileValueBits(in, k, width))
				if rowMajor {
					dst[r*32+c] = v
				} else {
					dst[k] = v
				}
			}
		}
	}
	return out, nil
}

// tileValueBits is the f32 bits of value k (in face order) of one packed
// tile: its sign and mantissa byte (bfp8) or nibble (bfp4, low nibble first)
// after the 64 shared exponents, one a 16 values.
func tileValueBits(in []byte, k int, width uint32) uint32 {
	var m uint32
	switch {
	case width == 7:
		m = uint32(in[64+k])
	case k&1 == 1:
		m = uint32(in[64+k/2] >> 4)
	default:
		m = uint32(in[64+k/2] & 0xf)
	}
	return decodeBfp(m, uint32(in[k/16]), width)
}

// decodeBfp normalises the magnitude; the exponent drops by the shift
// (modulo 2^32, as tt-metal's reference decoder computes it).
func decodeBfp(data, sharedExp, width uint32) uint32 {
	sign, mant := data>>width, data&(1<<width-1)
	if mant == 0 {
		return sign << 31
	}
	top, shift := uint32(1)<<(width-1), uint32(0)
	for mant&top == 0 {
		mant <<= 1
		shift++
	}
	mant = (mant << 1) & (1<<width - 1)
	exp := sharedExp - shift
	return sign<<31 | exp<<23 | mant<<(23-width)
}
