package driver

import "strings"

// DTypeCapability is a bitmask of the operations a device supports for one
// element type: one bit per unary or binary operation.
type DTypeCapability uint32

// The operation bits, in zyx's order.
const (
	CapNeg DTypeCapability = 1 << iota
	CapBitNot
	CapExp
	CapExp2
	CapLn
	CapLog2
	CapReciprocal
	CapSqrt
	CapSin
	CapCos
	CapFloor
	CapTrunc
	CapAbs
	CapAdd
	CapSub
	CapMul
	CapDiv
	CapPow
	CapMod
	CapCmpLt
	CapCmpGt
	CapMax
	CapOr
	CapAnd
	CapBitXor
	CapBitOr
	CapBitAnd
	CapBitShiftLeft
	CapBitShiftRight
	CapNotEq
	CapEq
)

// CapAll has every operation; CapNone has none.
const (
	CapAll  DTypeCapability = 1<<31 - 1
	CapNone DTypeCapability = 0
)

// CapFloatOps is what a device with ordinary IEEE float support offers.
const CapFloatOps = CapNeg | CapExp | CapExp2 | CapLn | CapLog2 | CapReciprocal | CapSqrt | CapSin | CapCos |
	CapFloor | CapTrunc | CapAbs | CapAdd | CapSub | CapMul | CapDiv | CapPow | CapMod | CapCmpLt | CapCmpGt |
	CapMax | CapNotEq | CapEq

// CapIntOps is what a device with ordinary integer support offers.
const CapIntOps = CapNeg | CapBitNot | CapAbs | CapAdd | CapSub | CapMul | CapDiv | CapMod | CapCmpLt | CapCmpGt |
	CapMax | CapOr | CapAnd | CapBitXor | CapBitOr | CapBitAnd | CapBitShiftLeft | CapBitShiftRight | CapNotEq | CapEq

var capNames = []string{"neg", "bitnot", "exp", "exp2", "ln", "log2", "reciprocal", "sqrt", "sin", "cos",
	"floor", "trunc", "abs", "add", "sub", "mul", "div", "pow", "mod", "cmplt", "cmpgt", "max", "or", "and",
	"bitxor", "bitor", "bitand", "shl", "shr", "noteq", "eq"}

// Include returns c with the bits of o set.
func (c DTypeCapability) Include(o DTypeCapability) DTypeCapability { return c | o }

// Exclude returns c with the bits of o cleared.
func (c DTypeCapability) Exclude(o DTypeCapability) DTypeCapability { return c &^ o }

// Has reports whether every bit of o is set in c.
func (c DTypeCapability) Has(o DTypeCapability) bool { return c&o == o }

// Any reports whether any operation is supported.
func (c DTypeCapability) Any() bool { return c != 0 }

func (c DTypeCapability) String() string {
	if c == 0 {
		return "none"
	}
	var parts []string
	for i, n := range capNames {
		if c&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, "|")
}
