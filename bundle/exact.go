package bundle

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/zyxtt/zyxtt/backends"
)

// Integer data is compared exactly: a reference over integer operands with
// an integer result is computed in the dtype's own arithmetic (wrapping at
// its width, as the device does), never through float64, which cannot hold
// every 64-bit value.

// isExact reports whether dt is compared as integers.
func isExact(dt backends.DType) bool { return dt.Valid() && !dt.IsFloat() }

// ToInts decodes a buffer of an integer dtype into int64 values: signed
// dtypes sign-extended, unsigned ones zero-extended (u64 as its bits).
func ToInts(dt backends.DType, src []byte) ([]int64, error) {
	size := dt.Size()
	if !isExact(dt) || size == 0 || len(src)%size != 0 {
		return nil, fmt.Errorf("%w: %d bytes is not a whole number of %s integers", backends.ErrInvalidArgument, len(src), dt)
	}
	out := make([]int64, len(src)/size)
	for i := range out {
		var u uint64
		switch size {
		case 1:
			u = uint64(src[i])
		case 2:
			u = uint64(binary.LittleEndian.Uint16(src[2*i:]))
		case 4:
			u = uint64(binary.LittleEndian.Uint32(src[4*i:]))
		default:
			u = binary.LittleEndian.Uint64(src[8*i:])
		}
		out[i] = wrapInt(dt, u)
	}
	return out, nil
}

// wrapInt truncates u to dt's width and sign-extends it for signed dtypes.
func wrapInt(dt backends.DType, u uint64) int64 {
	bits := uint(dt.Size() * 8)
	if bits >= 64 {
		return int64(u)
	}
	u &= 1<<bits - 1
	if dt.IsSigned() && u&(1<<(bits-1)) != 0 {
		return int64(u | ^uint64(0)<<bits)
	}
	return int64(u)
}

// less orders two values of dt.
func less(dt backends.DType, a, b int64) bool {
	if dt.IsSigned() {
		return a < b
	}
	return uint64(a) < uint64(b)
}

// ComputeExact evaluates the reference in dt's integer arithmetic. ok is
// false for an op with no integer form (exp, sigmoid, …), which the float64
// path computes instead.
func (r *Reference) ComputeExact(dt backends.DType, vals Values, inputs map[int][]int64) (out []int64, ok bool, err error) {
	args := make([][]int64, len(r.Args))
	for i, a := range r.Args {
		d, found := inputs[a]
		if !found {
			return nil, true, fmt.Errorf("%w: reference operand %d has no data", backends.ErrInvalidArgument, a)
		}
		args[i] = d
	}
	w := func(u uint64) int64 { return wrapInt(dt, u) }
	binary := map[string]func(a, b int64) (int64, error){
		"add": func(a, b int64) (int64, error) { return w(uint64(a) + uint64(b)), nil },
		"sub": func(a, b int64) (int64, error) { return w(uint64(a) - uint64(b)), nil },
		"mul": func(a, b int64) (int64, error) { return w(uint64(a) * uint64(b)), nil },
		"div": func(a, b int64) (int64, error) {
			if b == 0 {
				return 0, fmt.Errorf("%w: integer division by zero (the result is undefined)", backends.ErrInvalidArgument)
			}
			if dt.IsSigned() {
				if a == math.MinInt64 && b == -1 {
					return a, nil
				}
				return w(uint64(a / b)), nil
			}
			return w(uint64(a) / uint64(b)), nil
		},
		"max": func(a, b int64) (int64, error) {
			if less(dt, a, b) {
				return b, nil
			}
			return a, nil
		},
		"min": func(a, b int64) (int64, error) {
			if less(dt, b, a) {
				return b, nil
			}
			return a, nil
		},
	}
	unary := map[string]func(a int64) int64{
		"neg": func(a int64) int64 { return w(-uint64(a)) },
		"abs": func(a int64) int64 {
			if dt.IsSigned() && a < 0 {
				return w(-uint64(a))
			}
			return a
		},
		"relu": func(a int64) int64 {
			if dt.IsSigned() && a < 0 {
				return 0
			}
			return a
		},
		"square": func(a int64) int64 { return w(uint64(a) * uint64(a)) },
	}
	if f := binary[r.Op]; f != nil {
		if len(args[0]) != len(args[1]) {
			return nil, true, fmt.Errorf("%w: %s operands have %d and %d elements", backends.ErrInvalidArgument, r.Op, len(args[0]), len(args[1]))
		}
		out := make([]int64, len(args[0]))
		for i := range out {
			if out[i], err = f(args[0][i], args[1][i]); err != nil {
				return nil, true, fmt.Errorf("reference element %d: %w", i, err)
			}
		}
		return out, true, nil
	}
	if r.Op == "file" {
		return nil, false, nil
	}
	if r.Op == "identity" {
		out := make([]int64, len(args[0]))
		for i, x := range args[0] {
			out[i] = w(uint64(x))
		}
		return out, true, nil
	}
	if name, isUnary := strings.CutPrefix(r.Op, "unary:"); isUnary {
		f := unary[name]
		if f == nil {
			return nil, false, nil
		}
		out := make([]int64, len(args[0]))
		for i, x := range args[0] {
			out[i] = f(x)
		}
		return out, true, nil
	}
	if r.Op != "matmul" {
		return nil, false, nil
	}
	dims, err := r.matmulDims(vals)
	if err != nil {
		return nil, true, err
	}
	if out, err = batchedMatmul(r, args[0], args[1], dims); err != nil {
		return nil, true, err
	}
	for i, s := range out {
		out[i] = w(uint64(s))
	}
	return out, true, nil
}

// CompareExact checks integers of dt exactly: every difference is a
// mismatch. MaxAbs and MaxRel report the largest difference in float64.
func CompareExact(dt backends.DType, got, want []int64) (Comparison, error) {
	c := Comparison{Elems: len(got)}
	if len(got) != len(want) {
		return c, fmt.Errorf("%w: %d elements against %d expected", backends.ErrInvalidArgument, len(got), len(want))
	}
	asFloat := func(v int64) float64 {
		if dt.IsSigned() {
			return float64(v)
		}
		return float64(uint64(v))
	}
	worst := -1.0
	for i := range got {
		if got[i] == want[i] {
			continue
		}
		c.Mismatches++
		abs := math.Abs(asFloat(got[i]) - asFloat(want[i]))
		if abs == 0 {
			abs = 1 // the values differ below float64's resolution
		}
		rel := abs / math.Max(math.Abs(asFloat(want[i])), 1)
		c.MaxAbs = math.Max(c.MaxAbs, abs)
		c.MaxRel = math.Max(c.MaxRel, rel)
		if abs > worst {
			worst, c.Worst = abs, i
		}
	}
	return c, nil
}
