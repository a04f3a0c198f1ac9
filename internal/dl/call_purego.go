package dl

import (
	"sync"

	"github.com/ebitengine/purego"
)

// argBlocks holds the argument slices handed to purego.SyscallN: its
// variadic slice escapes, so a slice of the caller's frame would be
// allocated at every call.
var argBlocks = sync.Pool{New: func() any { return new([maxCallArgs]uintptr) }}

// invokePurego calls f.fn with f's arguments through purego.SyscallN: the
// call path where this package has no trampoline of its own, kept on
// every platform so that the tests and BenchmarkCallOverhead compare the
// two.
func invokePurego(f *frame) uintptr {
	a := argBlocks.Get().(*[maxCallArgs]uintptr)
	*a = f.a
	r, _, _ := purego.SyscallN(f.fn, a[:f.n]...)
	argBlocks.Put(a)
	return r
}
