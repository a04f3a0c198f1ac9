package backends

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/zyxtt/zyxtt/internal/half"
)

// Element is a Go type that WriteSlice and ReadSlice move to and from a pool
// as the dtype of the same width: the integer and float dtypes as their Go
// types, and bf16 and f16 as uint16 bits (BF16Bits, F16Bits and Float32Of
// convert).
type Element interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// littleEndian is true on every host zyx-tt runs on; elsewhere the helpers
// encode element by element.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// asBytes is v's memory as bytes (little-endian hosts).
func asBytes[T Element](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(zero)))
}

// WriteSlice writes v into buffer id of p at byte offset off, as
// little-endian elements. The buffer must hold off + len(v)·size bytes.
func WriteSlice[T Element](ctx context.Context, p *Pool, id BufferID, off int64, v []T) error {
	if littleEndian {
		return p.Write(ctx, id, off, asBytes(v))
	}
	b, err := binary.Append(nil, binary.LittleEndian, v)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	return p.Write(ctx, id, off, b)
}

// ReadSlice reads n elements from buffer id of p at byte offset off.
func ReadSlice[T Element](ctx context.Context, p *Pool, id BufferID, off int64, n int) ([]T, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: read %d elements", ErrInvalidArgument, n)
	}
	out := make([]T, n)
	return out, ReadInto(ctx, p, id, off, out)
}

// ReadInto fills dst with elements read from buffer id of p at byte offset
// off.
func ReadInto[T Element](ctx context.Context, p *Pool, id BufferID, off int64, dst []T) error {
	if littleEndian {
		return p.Read(ctx, id, off, asBytes(dst))
	}
	b := make([]byte, len(dst)*elemSize[T]())
	if err := p.Read(ctx, id, off, b); err != nil {
		return err
	}
	_, err := binary.Decode(b, binary.LittleEndian, dst)
	return err
}

// AllocSlice allocates a buffer in p holding v.
func AllocSlice[T Element](ctx context.Context, p *Pool, v []T) (BufferID, error) {
	id, err := p.Alloc(ctx, int64(len(v)*elemSize[T]()))
	if err != nil {
		return 0, err
	}
	if err := WriteSlice(ctx, p, id, 0, v); err != nil {
		_ = p.Release(id)
		return 0, err
	}
	return id, nil
}

func elemSize[T Element]() int {
	var zero T
	return int(unsafe.Sizeof(zero))
}

// BF16Bits is the bfloat16 nearest f (round to nearest even; NaN stays NaN).
func BF16Bits(f float32) uint16 { return half.BF16FromF32(f) }

// F16Bits is the IEEE binary16 nearest f.
func F16Bits(f float32) uint16 { return half.FromF32(f) }

// Float32OfBF16 is the value of bfloat16 bits.
func Float32OfBF16(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// Float32OfF16 is the value of IEEE binary16 bits.
func Float32OfF16(b uint16) float32 { return half.ToF32(b) }
