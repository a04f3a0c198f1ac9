package backends

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/zyxtt/zyxtt/internal/half"
)

// WriteSliceAsync is WriteSlice queued after every event in after, as
// Pool.WriteAsync: v must stay unchanged until the returned event is done.
func WriteSliceAsync[T Element](ctx context.Context, p *Pool, id BufferID, off int64, v []T, after ...Event) (Event, error) {
	if !littleEndian {
		return nil, fmt.Errorf("%w: asynchronous typed transfers on a big-endian host", ErrUnsupported)
	}
	return p.WriteAsync(ctx, id, off, asBytes(v), after...)
}

// ReadIntoAsync is ReadInto queued after every event in after, as
// Pool.ReadAsync: dst holds the elements once the returned event has
// succeeded.
func ReadIntoAsync[T Element](ctx context.Context, p *Pool, id BufferID, off int64, dst []T, after ...Event) (Event, error) {
	if !littleEndian {
		return nil, fmt.Errorf("%w: asynchronous typed transfers on a big-endian host", ErrUnsupported)
	}
	return p.ReadAsync(ctx, id, off, asBytes(dst), after...)
}

// Buffer is a typed handle on a buffer of a pool: it knows its element
// type T, its dtype (T's own, or one of the same width that T carries as
// bits: bf16 and f16 in uint16, f8 in uint8) and its shape, and refuses a
// transfer or a launch arg that does not match them. Its methods are safe
// for concurrent use as the pool's are.
type Buffer[T Element] struct {
	pool  *Pool
	id    BufferID
	dtype DType
	shape []int
	n     int
}

// NewBuffer allocates a buffer of T elements in p. shape is its
// dimensions (none: one element); the buffer holds their product.
func NewBuffer[T Element](ctx context.Context, p *Pool, shape ...int) (*Buffer[T], error) {
	n, err := shapeLen(shape)
	if err != nil {
		return nil, err
	}
	id, err := p.Alloc(ctx, int64(n*elemSize[T]()))
	if err != nil {
		return nil, err
	}
	return &Buffer[T]{pool: p, id: id, dtype: dtypeOf[T](), shape: append([]int(nil), shape...), n: n}, nil
}

// BufferOf allocates a buffer in p holding v. shape, when given, must hold
// len(v) elements; without it the buffer is the vector [len(v)].
func BufferOf[T Element](ctx context.Context, p *Pool, v []T, shape ...int) (*Buffer[T], error) {
	if len(shape) == 0 {
		shape = []int{len(v)}
	}
	b, err := NewBuffer[T](ctx, p, shape...)
	if err != nil {
		return nil, err
	}
	if b.n != len(v) {
		_ = b.Release()
		return nil, fmt.Errorf("%w: shape %v holds %d elements, the slice %d", ErrInvalidArgument, shape, b.n, len(v))
	}
	if err := b.Write(ctx, v); err != nil {
		_ = b.Release()
		return nil, err
	}
	return b, nil
}

func shapeLen(shape []int) (int, error) {
	n := 1
	for _, d := range shape {
		if d <= 0 || n > math.MaxInt32/d {
			return 0, fmt.Errorf("%w: shape %v: every dimension must be at least 1, and the whole fit 2^31 elements", ErrInvalidArgument, shape)
		}
		n *= d
	}
	return n, nil
}

// dtypeOf is the dtype of Go element type T.
func dtypeOf[T Element]() DType {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Int8:
		return I8
	case reflect.Int16:
		return I16
	case reflect.Int32:
		return I32
	case reflect.Int64:
		return I64
	case reflect.Uint8:
		return U8
	case reflect.Uint16:
		return U16
	case reflect.Uint32:
		return U32
	case reflect.Uint64:
		return U64
	case reflect.Float32:
		return F32
	}
	return F64
}

// As is the same buffer seen as dtype dt, which T must carry: its own
// dtype, or for uint16 bf16 and f16, for uint8 the f8 types and bool.
func (b *Buffer[T]) As(dt DType) (*Buffer[T], error) {
	k := reflect.TypeFor[T]().Kind()
	ok := dt == dtypeOf[T]() ||
		k == reflect.Uint16 && (dt == BF16 || dt == F16) ||
		k == reflect.Uint8 && (dt == F8E4M3 || dt == F8E5M2 || dt == Bool)
	if !ok {
		return nil, fmt.Errorf("%w: a buffer of %s cannot hold %s", ErrInvalidArgument, reflect.TypeFor[T](), dt)
	}
	c := *b
	c.dtype = dt
	return &c, nil
}

// ID is the buffer's id in its pool.
func (b *Buffer[T]) ID() BufferID { return b.id }

// Pool is the pool the buffer is in.
func (b *Buffer[T]) Pool() *Pool { return b.pool }

// DType is the buffer's element dtype.
func (b *Buffer[T]) DType() DType { return b.dtype }

// Shape is the buffer's dimensions.
func (b *Buffer[T]) Shape() []int { return append([]int(nil), b.shape...) }

// Len is the number of elements.
func (b *Buffer[T]) Len() int { return b.n }

// Release drops the handle's reference (Pool.Release).
func (b *Buffer[T]) Release() error { return b.pool.Release(b.id) }

func (b *Buffer[T]) check(op string, n int) error {
	if n != b.n {
		return fmt.Errorf("%w: %s %d elements: buffer %d of %s has %d (shape %v)", ErrInvalidArgument, op, n, b.id, b.dtype, b.n, b.shape)
	}
	return nil
}

// Write replaces the buffer's elements with v, which must have Len
// elements.
func (b *Buffer[T]) Write(ctx context.Context, v []T) error {
	if err := b.check("write", len(v)); err != nil {
		return err
	}
	return WriteSlice(ctx, b.pool, b.id, 0, v)
}

// Read returns the buffer's elements.
func (b *Buffer[T]) Read(ctx context.Context) ([]T, error) {
	return ReadSlice[T](ctx, b.pool, b.id, 0, b.n)
}

// ReadInto fills dst, which must have Len elements.
func (b *Buffer[T]) ReadInto(ctx context.Context, dst []T) error {
	if err := b.check("read", len(dst)); err != nil {
		return err
	}
	return ReadInto(ctx, b.pool, b.id, 0, dst)
}

// WriteAsync is Write queued after every event in after; v must stay
// unchanged until the event is done.
func (b *Buffer[T]) WriteAsync(ctx context.Context, v []T, after ...Event) (Event, error) {
	if err := b.check("write", len(v)); err != nil {
		return nil, err
	}
	return WriteSliceAsync(ctx, b.pool, b.id, 0, v, after...)
}

// ReadAsync is ReadInto queued after every event in after; dst holds the
// elements once the event has succeeded.
func (b *Buffer[T]) ReadAsync(ctx context.Context, dst []T, after ...Event) (Event, error) {
	if err := b.check("read", len(dst)); err != nil {
		return nil, err
	}
	return ReadIntoAsync(ctx, b.pool, b.id, 0, dst, after...)
}

// typedBuffer is what Executable.Args reads of a *Buffer of any type.
type typedBuffer interface {
	ID() BufferID
	DType() DType
	Pool() *Pool
}

// Args makes the launch args of x's program from Go values, one per param
// in order: a *Buffer (its dtype must be the param's) or a BufferID for a
// buffer param; a Go integer, float or bool for a variable param, which
// takes the param's dtype (an integer that does not fit it, or a float for
// an integer param, is refused).
func (x *Executable) Args(vals ...any) ([]LaunchArg, error) {
	params := x.prog.Params
	if len(vals) != len(params) {
		return nil, fmt.Errorf("%w: program %q: %d values for %d params", ErrInvalidArgument, x.prog.Name, len(vals), len(params))
	}
	args := make([]LaunchArg, len(vals))
	for i, v := range vals {
		p := params[i]
		if p.Kind.IsBuffer() {
			switch b := v.(type) {
			case typedBuffer:
				if b.DType() != p.DType {
					return nil, fmt.Errorf("%w: param %d %q is %s, the buffer %s", ErrInvalidArgument, i, p.Name, p.DType, b.DType())
				}
				args[i] = BufArg(b.ID())
			case BufferID:
				args[i] = BufArg(b)
			default:
				return nil, fmt.Errorf("%w: param %d %q is a buffer, got %T", ErrInvalidArgument, i, p.Name, v)
			}
			continue
		}
		c, err := constantOf(p.DType, v)
		if err != nil {
			return nil, fmt.Errorf("%w: param %d %q: %w", ErrInvalidArgument, i, p.Name, err)
		}
		args[i] = VarArg(c)
	}
	return args, nil
}

// Call launches x with Args(vals...) and waits for it.
func (x *Executable) Call(ctx context.Context, vals ...any) error {
	args, err := x.Args(vals...)
	if err != nil {
		return err
	}
	return x.Launch(ctx, args)
}

// constantOf is v as a constant of dtype dt.
func constantOf(dt DType, v any) (Constant, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return Constant{}, fmt.Errorf("want a %s value, got nil", dt)
	}
	switch {
	case rv.CanInt():
		i := rv.Int()
		return wholeConst(dt, v, float64(i), uint64(i), fitsInt(dt, i), i)
	case rv.CanUint():
		u := rv.Uint()
		return wholeConst(dt, v, float64(u), u, fitsUint(dt, u), u)
	case rv.CanFloat():
		if !dt.IsFloat() {
			return Constant{}, fmt.Errorf("%s takes a whole number, got %v", dt, v)
		}
		return FloatConst(dt, rv.Float()), nil
	case rv.Kind() == reflect.Bool:
		if dt != Bool {
			return Constant{}, fmt.Errorf("%s takes a number, got %v", dt, v)
		}
		return UintConst(Bool, uint64(boolToInt(rv.Bool()))), nil
	}
	return Constant{}, fmt.Errorf("want a %s value, got %T", dt, v)
}

// wholeConst is the whole number v, which is f as a float and bits as its
// two's complement (fits: in dt), as a constant of dtype dt; an error
// shows the number as n.
func wholeConst(dt DType, v any, f float64, bits uint64, fits bool, n any) (Constant, error) {
	switch {
	case dt.IsFloat():
		return FloatConst(dt, f), nil
	case dt == Bool:
		return Constant{}, fmt.Errorf("want a bool, got %v", v)
	case !fits:
		return Constant{}, fmt.Errorf("%d does not fit %s", n, dt)
	case dt.IsSigned():
		return IntConst(dt, int64(bits)), nil
	}
	return UintConst(dt, bits), nil
}

func boolToInt[B ~bool](b B) int {
	if b {
		return 1
	}
	return 0
}

func fitsUint(dt DType, u uint64) bool {
	if dt.IsSigned() {
		return u <= math.MaxInt64 && fitsInt(dt, int64(u))
	}
	return dt.Size() == 8 || u < 1<<(8*dt.Size())
}

func fitsInt(dt DType, i int64) bool {
	bits := 8 * dt.Size()
	if dt.IsSigned() {
		return bits == 64 || i >= -(1<<(bits-1)) && i < 1<<(bits-1)
	}
	return i >= 0 && (bits == 64 || i < 1<<bits)
}

// EncodeFloats converts src to the narrow float dtype dt, in bulk: bf16
// and f16 as uint16 bits, f8e4m3 and f8e5m2 as uint8 bits (round to
// nearest even; out-of-range values saturate as each format does). T must
// be the width of dt.
func EncodeFloats[T uint8 | uint16](dt DType, src []float32) ([]T, error) {
	enc := narrowCodecs[dt].enc
	return convertNarrow[T](dt, src, func(f float32) T { return T(enc(f)) })
}

// DecodeFloats converts the bits of narrow float dtype dt in src to
// float32, in bulk (exactly: every value of these formats is a float32).
func DecodeFloats[T uint8 | uint16](dt DType, src []T) ([]float32, error) {
	dec := narrowCodecs[dt].dec
	return convertNarrow[T](dt, src, func(b T) float32 { return dec(uint16(b)) })
}

// convertNarrow converts each value of src with f once dt is a narrow
// float dtype whose bits T holds.
func convertNarrow[T uint8 | uint16, S, D any](dt DType, src []S, f func(S) D) ([]D, error) {
	if err := narrowFloat[T](dt); err != nil {
		return nil, err
	}
	out := make([]D, len(src))
	for i, v := range src {
		out[i] = f(v)
	}
	return out, nil
}

// narrowCodecs convert one value of each narrow float dtype, its bits held
// in a uint16.
var narrowCodecs = map[DType]struct {
	enc func(float32) uint16
	dec func(uint16) float32
}{
	BF16: {half.BF16FromF32, func(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }},
	F16:  {half.FromF32, half.ToF32},
	F8E4M3: {
		func(f float32) uint16 { return uint16(half.F8E4M3FromFloat(float64(f))) },
		func(b uint16) float32 { return float32(half.F8E4M3ToFloat(uint8(b))) },
	},
	F8E5M2: {
		func(f float32) uint16 { return uint16(half.F8E5M2FromFloat(float64(f))) },
		func(b uint16) float32 { return float32(half.F8E5M2ToFloat(uint8(b))) },
	},
}

func narrowFloat[T uint8 | uint16](dt DType) error {
	want := map[DType]int{BF16: 2, F16: 2, F8E4M3: 1, F8E5M2: 1}
	size, ok := want[dt]
	if !ok {
		var names []string
		for _, d := range []DType{BF16, F16, F8E4M3, F8E5M2} {
			names = append(names, d.String())
		}
		return fmt.Errorf("%w: %s is not a narrow float dtype (%s)", ErrInvalidArgument, dt, strings.Join(names, ", "))
	}
	if size != elemSize[T]() {
		return fmt.Errorf("%w: %s is %d bytes, its bits go in %s", ErrInvalidArgument, dt, size, map[int]string{1: "uint8", 2: "uint16"}[size])
	}
	return nil
}
