package dl

import (
	"sync"

	"github.com/ebitengine/purego"
)

// The CallN functions call the C function at fn with N integer or pointer
// arguments through purego.SyscallN and return its integer result. They
// exist because SyscallN's variadic argument slice escapes, so each direct
// call allocates it: these copy the arguments into a pooled array instead
// and allocate nothing in steady state. Like SyscallN (and syscall.Syscall)
// they are go:uintptrescapes: an argument written as
// uintptr(unsafe.Pointer(p)) in the call keeps what p points to alive and
// off the stack until the call returns.

var argBlocks = sync.Pool{New: func() any { return new([maxCallArgs]uintptr) }}

const maxCallArgs = 12

func callBlock(fn uintptr, a *[maxCallArgs]uintptr, n int) uintptr {
	r, _, _ := purego.SyscallN(fn, a[:n]...)
	argBlocks.Put(a)
	return r
}

// Call0 calls fn with 0 arguments.
//
//go:uintptrescapes
func Call0(fn uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn)
	return r
}

// Call1 calls fn with 1 argument.
//
//go:uintptrescapes
func Call1(fn, a1 uintptr) uintptr {
	a := argBlocks.Get().(*[maxCallArgs]uintptr)
	a[0] = a1
	return callBlock(fn, a, 1)
}

// Call2 calls fn with 2 arguments.
//
//go:uintptrescapes
func Call2(fn, a1, a2 uintptr) uintptr {
	a := argBlocks.Get().(*[maxCallArgs]uintptr)
	a[0], a[1] = a1, a2
	return callBlock(fn, a, 2)
}

// Call3 calls fn with 3 arguments.
//
//go:uintptrescapes
func Call3(fn, a1, a2, a3 uintptr) uintptr {
	a := argBlocks.Get().(*[maxCallArgs]uintptr)
	a[0], a[1], a[2] = a1, a2, a3
	return callBlock(fn, a, 3)
}

// Call4 calls fn with 4 arguments.
//
//go:uintptrescapes
func Call4(fn, a1, a2, a3, a4 uintptr) uintptr {
	a := argBlocks.Get().(*[maxCallArgs]uintptr)
	a[0], a[1], a[2], a[3] = a1, a2, a3, a4
	return callBlock(fn, a, 4)
}

// Call5 calls fn with 5 arguments.
//
//go:uintptrescapes
func Call5(fn, a1, a2, a3, a4, a5 uintptr) uintptr {
	a := argBlocks.Get().(*[maxCallArgs]uintptr)
	a[0], a[1], a[2], a[3], a[4] = a1, a2, a3, a4, a5
	return callBlock(fn, a, 5)
}

// Call6 calls fn with 6 arguments.
//
//go:uintptrescapes
func Call6(fn, a1, a2, a3, a4, a5, a6 uintptr) uintptr {
	a := argBlocks.Get().(*[maxCallArgs]uintptr)
	a[0], a[1], a[2], a[3], a[4], a[5] = a1, a2, a3, a4, a5, a6
	return callBlock(fn, a, 6)
}

// Call7 calls fn with 7 arguments.
//
//go:uintptrescapes
func Call7(fn, a1, a2, a3, a4, a5, a6, a7 uintptr) uintptr {
	a := argBlocks.Get().(*[maxCallArgs]uintptr)
	a[0], a[1], a[2], a[3], a[4], a[5], a[6] = a1, a2, a3, a4, a5, a6, a7
	return callBlock(fn, a, 7)
}

// Call8 calls fn with 8 arguments.
//
//go:uintptrescapes
func Call8(fn, a1, a2, a3, a4, a5, a6, a7, a8 uintptr) uintptr {
	a := argBlocks.Get().(*[maxCallArgs]uintptr)
	a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7] = a1, a2, a3, a4, a5, a6, a7, a8
	return callBlock(fn, a, 8)
}

// Call9 calls fn with 9 arguments.
//
//go:uintptrescapes
func Call9(fn, a1, a2, a3, a4, a5, a6, a7, a8, a9 uintptr) uintptr {
	a := argBlocks.Get().(*[maxCallArgs]uintptr)
	a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8] = a1, a2, a3, a4, a5, a6, a7, a8, a9
	return callBlock(fn, a, 9)
}

// Call10 calls fn with 10 arguments.
//
//go:uintptrescapes
func Call10(fn, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10 uintptr) uintptr {
	a := argBlocks.Get().(*[maxCallArgs]uintptr)
	a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9] = a1, a2, a3, a4, a5, a6, a7, a8, a9, a10
	return callBlock(fn, a, 10)
}

// Call11 calls fn with 11 arguments.
//
//go:uintptrescapes
func Call11(fn, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11 uintptr) uintptr {
	a := argBlocks.Get().(*[maxCallArgs]uintptr)
	a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10] = a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11
	return callBlock(fn, a, 11)
}

// Call12 calls fn with 12 arguments.
//
//go:uintptrescapes
func Call12(fn, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12 uintptr) uintptr {
	a := argBlocks.Get().(*[maxCallArgs]uintptr)
	a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11] = a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12
	return callBlock(fn, a, 12)
}
