package dl

// The CallN functions call the C function at fn with N integer or pointer
// arguments and return its integer result. They are the hot path of every
// backend (a CUDA launch and its wait are four to six of them), so they
// allocate nothing and copy only what they pass: the arguments go into a
// frame on the caller's stack, and invoke hands the frame to the C
// function through the runtime's cgo call (call_amd64.s), or through
// purego.SyscallN where this package has no trampoline of its own
// (call_other.go). Like SyscallN (and syscall.Syscall) they are
// go:uintptrescapes: an argument written as uintptr(unsafe.Pointer(p)) in
// the call keeps what p points to alive and off the stack until the call
// returns.

// maxCallArgs is the most arguments a call passes: the twelfth is the
// last that CUDA's, OpenCL's and Vulkan's entry points take.
const maxCallArgs = 12

// frame is one call: the function, its arguments and its result.
type frame struct {
	fn uintptr
	a  [maxCallArgs]uintptr
	n  uintptr // how many of a the call passes (the purego path reads it)
	r  uintptr
}

// Call0 calls fn with 0 arguments.
//
//go:uintptrescapes
func Call0(fn uintptr) uintptr {
	f := frame{fn: fn}
	return invoke(&f)
}

// Call1 calls fn with 1 argument.
//
//go:uintptrescapes
func Call1(fn, a1 uintptr) uintptr {
	f := frame{fn: fn, n: 1, a: [maxCallArgs]uintptr{a1}}
	return invoke(&f)
}

// Call2 calls fn with 2 arguments.
//
//go:uintptrescapes
func Call2(fn, a1, a2 uintptr) uintptr {
	f := frame{fn: fn, n: 2, a: [maxCallArgs]uintptr{a1, a2}}
	return invoke(&f)
}

// Call3 calls fn with 3 arguments.
//
//go:uintptrescapes
func Call3(fn, a1, a2, a3 uintptr) uintptr {
	f := frame{fn: fn, n: 3, a: [maxCallArgs]uintptr{a1, a2, a3}}
	return invoke(&f)
}

// Call4 calls fn with 4 arguments.
//
//go:uintptrescapes
func Call4(fn, a1, a2, a3, a4 uintptr) uintptr {
	f := frame{fn: fn, n: 4, a: [maxCallArgs]uintptr{a1, a2, a3, a4}}
	return invoke(&f)
}

// Call5 calls fn with 5 arguments.
//
//go:uintptrescapes
func Call5(fn, a1, a2, a3, a4, a5 uintptr) uintptr {
	f := frame{fn: fn, n: 5, a: [maxCallArgs]uintptr{a1, a2, a3, a4, a5}}
	return invoke(&f)
}

// Call6 calls fn with 6 arguments.
//
//go:uintptrescapes
func Call6(fn, a1, a2, a3, a4, a5, a6 uintptr) uintptr {
	f := frame{fn: fn, n: 6, a: [maxCallArgs]uintptr{a1, a2, a3, a4, a5, a6}}
	return invoke(&f)
}

// Call7 calls fn with 7 arguments.
//
//go:uintptrescapes
func Call7(fn, a1, a2, a3, a4, a5, a6, a7 uintptr) uintptr {
	f := frame{fn: fn, n: 7, a: [maxCallArgs]uintptr{a1, a2, a3, a4, a5, a6, a7}}
	return invoke(&f)
}

// Call8 calls fn with 8 arguments.
//
//go:uintptrescapes
func Call8(fn, a1, a2, a3, a4, a5, a6, a7, a8 uintptr) uintptr {
	f := frame{fn: fn, n: 8, a: [maxCallArgs]uintptr{a1, a2, a3, a4, a5, a6, a7, a8}}
	return invoke(&f)
}

// Call9 calls fn with 9 arguments.
//
//go:uintptrescapes
func Call9(fn, a1, a2, a3, a4, a5, a6, a7, a8, a9 uintptr) uintptr {
	f := frame{fn: fn, n: 9, a: [maxCallArgs]uintptr{a1, a2, a3, a4, a5, a6, a7, a8, a9}}
	return invoke(&f)
}

// Call10 calls fn with 10 arguments.
//
//go:uintptrescapes
func Call10(fn, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10 uintptr) uintptr {
	f := frame{fn: fn, n: 10, a: [maxCallArgs]uintptr{a1, a2, a3, a4, a5, a6, a7, a8, a9, a10}}
	return invoke(&f)
}

// Call11 calls fn with 11 arguments.
//
//go:uintptrescapes
func Call11(fn, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11 uintptr) uintptr {
	f := frame{fn: fn, n: 11, a: [maxCallArgs]uintptr{a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11}}
	return invoke(&f)
}

// Call12 calls fn with 12 arguments.
//
//go:uintptrescapes
func Call12(fn, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12 uintptr) uintptr {
	f := frame{fn: fn, n: 12, a: [maxCallArgs]uintptr{a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12}}
	return invoke(&f)
}
