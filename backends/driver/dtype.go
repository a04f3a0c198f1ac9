package driver

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/zyxtt/zyxtt/internal/half"
)

// DType is an element type. The set is zyx's.
type DType uint8

// The element types, in zyx's order.
const (
	BF16 DType = iota
	F16
	F32
	F64
	F8E4M3
	F8E5M2
	I8
	I16
	I32
	I64
	U8
	U16
	U32
	U64
	Bool
	numDTypes
)

// NumDTypes is the number of element types.
const NumDTypes = int(numDTypes)

var dtypeInfo = [NumDTypes]struct {
	name  string
	size  int
	float bool
	sign  bool
}{
	BF16:   {"bf16", 2, true, true},
	F16:    {"f16", 2, true, true},
	F32:    {"f32", 4, true, true},
	F64:    {"f64", 8, true, true},
	F8E4M3: {"f8e4m3", 1, true, true},
	F8E5M2: {"f8e5m2", 1, true, true},
	I8:     {"i8", 1, false, true},
	I16:    {"i16", 2, false, true},
	I32:    {"i32", 4, false, true},
	I64:    {"i64", 8, false, true},
	U8:     {"u8", 1, false, false},
	U16:    {"u16", 2, false, false},
	U32:    {"u32", 4, false, false},
	U64:    {"u64", 8, false, false},
	Bool:   {"bool", 1, false, false},
}

// AllDTypes lists every element type.
func AllDTypes() []DType {
	out := make([]DType, NumDTypes)
	for i := range out {
		out[i] = DType(i)
	}
	return out
}

// Valid reports whether d is one of the defined types.
func (d DType) Valid() bool { return d < numDTypes }

// Size is the element size in bytes.
func (d DType) Size() int {
	if !d.Valid() {
		return 0
	}
	return dtypeInfo[d].size
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d.Valid() && dtypeInfo[d].float }

// IsSigned reports whether d can hold negative values.
func (d DType) IsSigned() bool { return d.Valid() && dtypeInfo[d].sign }

func (d DType) String() string {
	if !d.Valid() {
		return fmt.Sprintf("dtype(%d)", uint8(d))
	}
	return dtypeInfo[d].name
}

// ParseDType reads a type name such as "f32" or "bf16". A few common aliases
// ("float32", "int32", "bfloat16", "half") are accepted.
func ParseDType(s string) (DType, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "float32", "float":
		return F32, nil
	case "float64", "double":
		return F64, nil
	case "float16", "half":
		return F16, nil
	case "bfloat16":
		return BF16, nil
	case "int8":
		return I8, nil
	case "int16":
		return I16, nil
	case "int32", "int":
		return I32, nil
	case "int64":
		return I64, nil
	case "uint8":
		return U8, nil
	case "uint16":
		return U16, nil
	case "uint32":
		return U32, nil
	case "uint64":
		return U64, nil
	}
	for i, inf := range dtypeInfo {
		if inf.name == s {
			return DType(i), nil
		}
	}
	return 0, fmt.Errorf("unknown dtype %q", s)
}

// MarshalText writes the type's name.
func (d DType) MarshalText() ([]byte, error) {
	if !d.Valid() {
		return nil, fmt.Errorf("invalid dtype %d", uint8(d))
	}
	return []byte(d.String()), nil
}

// UnmarshalText reads a type's name.
func (d *DType) UnmarshalText(b []byte) error {
	v, err := ParseDType(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Constant is a scalar of some DType, held as raw little-endian bits. It is
// how Variable params travel to a launch.
type Constant struct {
	DType DType
	Bits  uint64
}

// IntConst makes a signed integer constant of type d.
func IntConst(d DType, v int64) Constant { return Constant{DType: d, Bits: uint64(v)} }

// UintConst makes an unsigned integer constant of type d.
func UintConst(d DType, v uint64) Constant { return Constant{DType: d, Bits: v} }

// FloatConst makes a floating-point constant of type d (F32 or F64; other
// float types are stored as F32 bits rounded by the caller's backend).
func FloatConst(d DType, v float64) Constant {
	if d == F64 {
		return Constant{DType: d, Bits: math.Float64bits(v)}
	}
	return Constant{DType: d, Bits: uint64(math.Float32bits(float32(v)))}
}

// Int returns the value as int64 when it is an integer or bool that fits:
// the type's low Size() bytes of Bits, sign-extended for the signed types.
func (c Constant) Int() (int64, error) {
	d := c.DType
	switch {
	case d == Bool:
		return int64(c.Bits & 1), nil
	case !d.Valid() || d.IsFloat():
		return 0, fmt.Errorf("%s constant is not an integer", d)
	}
	shift := 64 - 8*d.Size()
	if d.IsSigned() {
		return int64(c.Bits<<shift) >> shift, nil
	}
	v := c.Bits << shift >> shift
	if v > math.MaxInt64 {
		return 0, fmt.Errorf("u64 value %d overflows int64", v)
	}
	return int64(v), nil
}

// Float returns the value as float64.
func (c Constant) Float() float64 {
	switch c.DType {
	case F64:
		return math.Float64frombits(c.Bits)
	case F32, F16, BF16, F8E4M3, F8E5M2:
		return float64(math.Float32frombits(uint32(c.Bits)))
	}
	if v, err := c.Int(); err == nil {
		return float64(v)
	}
	return float64(c.Bits)
}

// Bytes is the constant in its type's size, little endian, as a kernel
// receives it by value.
func (c Constant) Bytes() []byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], c.Bits)
	n := c.DType.Size()
	if c.DType.IsFloat() && c.DType != F64 && n < 4 {
		n = 4 // narrow floats travel as f32 bits
	}
	return b[:n]
}

// NativeBytes is the constant in its dtype's own encoding, little endian,
// as a kernel that declares the narrow type reads it: binary16 for F16,
// bfloat16 for BF16, one byte for the f8 formats. Bytes instead passes
// narrow floats as f32 bits.
func (c Constant) NativeBytes() []byte {
	f := math.Float32frombits(uint32(c.Bits))
	switch c.DType {
	case F16:
		return binary.LittleEndian.AppendUint16(nil, half.FromF32(f))
	case BF16:
		return binary.LittleEndian.AppendUint16(nil, half.BF16FromF32(f))
	case F8E4M3:
		return []byte{half.F8E4M3FromFloat(float64(f))}
	case F8E5M2:
		return []byte{half.F8E5M2FromFloat(float64(f))}
	}
	return c.Bytes()
}

func (c Constant) String() string {
	if c.DType.IsFloat() {
		return fmt.Sprintf("%g:%s", c.Float(), c.DType)
	}
	if v, err := c.Int(); err == nil {
		return fmt.Sprintf("%d:%s", v, c.DType)
	}
	return fmt.Sprintf("%d:%s", c.Bits, c.DType)
}
