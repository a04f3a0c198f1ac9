package driver

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDTypeSizesAndNames(t *testing.T) {
	for _, tc := range []struct {
		d      DType
		name   string
		size   int
		float  bool
		signed bool
	}{
		{BF16, "bf16", 2, true, true},
		{F16, "f16", 2, true, true},
		{F32, "f32", 4, true, true},
		{F64, "f64", 8, true, true},
		{F8E4M3, "f8e4m3", 1, true, true},
		{F8E5M2, "f8e5m2", 1, true, true},
		{I8, "i8", 1, false, true},
		{I16, "i16", 2, false, true},
		{I32, "i32", 4, false, true},
		{I64, "i64", 8, false, true},
		{U8, "u8", 1, false, false},
		{U16, "u16", 2, false, false},
		{U32, "u32", 4, false, false},
		{U64, "u64", 8, false, false},
		{Bool, "bool", 1, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, tc.d.Valid())
			require.Equal(t, tc.name, tc.d.String())
			require.Equal(t, tc.size, tc.d.Size())
			require.Equal(t, tc.float, tc.d.IsFloat())
			require.Equal(t, tc.signed, tc.d.IsSigned())
		})
	}
	require.Len(t, AllDTypes(), NumDTypes)
	require.Equal(t, 15, NumDTypes, "every dtype above is listed")
}

func TestDTypeParseRoundTrip(t *testing.T) {
	for _, d := range AllDTypes() {
		got, err := ParseDType(d.String())
		require.NoError(t, err)
		require.Equal(t, d, got)

		text, err := d.MarshalText()
		require.NoError(t, err)
		var back DType
		require.NoError(t, back.UnmarshalText(text))
		require.Equal(t, d, back)
	}
	for alias, want := range map[string]DType{
		"float32": F32, "float": F32, " F32 ": F32, "double": F64, "half": F16, "bfloat16": BF16,
		"int": I32, "int8": I8, "int64": I64, "uint8": U8, "uint32": U32, "BOOL": Bool,
	} {
		got, err := ParseDType(alias)
		require.NoError(t, err, alias)
		require.Equal(t, want, got, alias)
	}
	for _, bad := range []string{"", "f128", "float8", "i", "u7"} {
		_, err := ParseDType(bad)
		require.ErrorContains(t, err, "unknown dtype", bad)
	}
}

func TestInvalidDType(t *testing.T) {
	d := DType(200)
	require.False(t, d.Valid())
	require.Zero(t, d.Size())
	require.False(t, d.IsFloat())
	require.False(t, d.IsSigned())
	require.Equal(t, "dtype(200)", d.String())
	_, err := d.MarshalText()
	require.Error(t, err)
	var back DType = F64
	require.Error(t, back.UnmarshalText([]byte("nope")))
	require.Equal(t, F64, back, "a failed unmarshal leaves the value alone")
}

func TestConstants(t *testing.T) {
	for _, tc := range []struct {
		name  string
		c     Constant
		i     int64
		ierr  bool
		bytes int
	}{
		{"i8 negative", IntConst(I8, -5), -5, false, 1},
		{"i16", IntConst(I16, -300), -300, false, 2},
		{"i32", IntConst(I32, math.MinInt32), math.MinInt32, false, 4},
		{"i64", IntConst(I64, math.MaxInt64), math.MaxInt64, false, 8},
		{"u8 wraps to its width", UintConst(U8, 0x1ff), 0xff, false, 1},
		{"u16", UintConst(U16, 65535), 65535, false, 2},
		{"u32", UintConst(U32, math.MaxUint32), math.MaxUint32, false, 4},
		{"u64 fits", UintConst(U64, math.MaxInt64), math.MaxInt64, false, 8},
		{"u64 too large", UintConst(U64, math.MaxUint64), 0, true, 8},
		{"bool", UintConst(Bool, 3), 1, false, 1},
		{"f32 is not an int", FloatConst(F32, 1.5), 0, true, 4},
		{"f16 travels as f32 bits", FloatConst(F16, 1.5), 0, true, 4},
		{"f64", FloatConst(F64, 2.25), 0, true, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.c.Int()
			if tc.ierr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
				require.Equal(t, tc.i, v)
			}
			require.Len(t, tc.c.Bytes(), tc.bytes)
			require.NotEmpty(t, tc.c.String())
		})
	}
	require.InDelta(t, 2.25, FloatConst(F64, 2.25).Float(), 0)
	require.InDelta(t, 1.5, FloatConst(F32, 1.5).Float(), 0)
	require.InDelta(t, -7, IntConst(I32, -7).Float(), 0)
	require.Equal(t, []byte{0xfb, 0xff}, IntConst(I16, -5).Bytes(), "little endian in the type's width")
	require.Equal(t, "-5:i8", IntConst(I8, -5).String())
}

func TestConstantNativeBytes(t *testing.T) {
	for _, tc := range []struct {
		c    Constant
		want []byte
	}{
		{FloatConst(F16, 1.5), []byte{0x00, 0x3e}},
		{FloatConst(F16, 1), []byte{0, 0x3c}},
		{FloatConst(F16, -2), []byte{0, 0xc0}},
		{FloatConst(BF16, 1.5), []byte{0xc0, 0x3f}},
		{FloatConst(BF16, 1), []byte{0x80, 0x3f}},
		{FloatConst(BF16, 1+1.0/256), []byte{0x80, 0x3f}},             // a tie rounds to even
		{FloatConst(BF16, 1+3.0/256), []byte{0x82, 0x3f}},             // a tie rounds to even
		{Constant{DType: BF16, Bits: 0x7f800001}, []byte{0xc0, 0x7f}}, // a NaN stays a NaN, not +inf
		{Constant{DType: BF16, Bits: 0x7fffffff}, []byte{0xff, 0x7f}}, // a NaN stays a NaN, not -0
		{FloatConst(F8E4M3, 1.5), []byte{0x3c}},
		{FloatConst(F8E5M2, 1.5), []byte{0x3e}},
		{FloatConst(F32, 1.5), []byte{0x00, 0x00, 0xc0, 0x3f}},
		{FloatConst(F32, 1), []byte{0, 0, 0x80, 0x3f}},
		{FloatConst(F64, 0.5), []byte{0, 0, 0, 0, 0, 0, 0xe0, 0x3f}},
		{IntConst(I16, -5), []byte{0xfb, 0xff}},
		{IntConst(I64, -1), []byte{255, 255, 255, 255, 255, 255, 255, 255}},
		{UintConst(U32, 7), []byte{7, 0, 0, 0}},
		{UintConst(U8, 9), []byte{9}},
	} {
		require.Equal(t, tc.want, tc.c.NativeBytes(), "%s", tc.c)
	}
}

func TestDTypeCapability(t *testing.T) {
	c := CapNone.Include(CapAdd | CapMul)
	require.True(t, c.Any())
	require.True(t, c.Has(CapAdd))
	require.True(t, c.Has(CapAdd|CapMul))
	require.False(t, c.Has(CapAdd|CapDiv), "Has needs every bit")
	require.Equal(t, "add|mul", c.String())

	c = c.Exclude(CapAdd)
	require.False(t, c.Has(CapAdd))
	require.True(t, c.Has(CapMul))
	c = c.Exclude(CapMul | CapSin) // clearing an unset bit is harmless
	require.False(t, c.Any())
	require.Equal(t, "none", c.String())
	require.Equal(t, CapNone, c)

	require.True(t, CapAll.Has(CapFloatOps|CapIntOps))
	require.Len(t, capNames, 31, "one name per bit of CapAll")
	require.Equal(t, CapAll, capsOfFirst(t, len(capNames)))
	require.False(t, CapFloatOps.Has(CapBitXor))
	require.True(t, CapIntOps.Has(CapBitShiftLeft))

	var info DeviceInfo
	info.DTypeCaps[F32] = CapFloatOps
	require.Equal(t, CapFloatOps, info.Supports(F32))
	require.Equal(t, CapNone, info.Supports(I8))
	require.Equal(t, CapNone, info.Supports(DType(99)), "an invalid dtype supports nothing")
}

// capsOfFirst sets the lowest n operation bits.
func capsOfFirst(t *testing.T, n int) DTypeCapability {
	t.Helper()
	var c DTypeCapability
	for i := range n {
		c = c.Include(1 << i)
	}
	return c
}
