// Command zyx-tt-mockrt is a stand-in for zyx-tt-runtime that speaks the
// same protocol (docs/protocol.md) with exact buffer semantics through shm,
// records and checks programs without running them, and injects faults on
// demand. Tests and benchmarks use it; point ZYX_TT_RUNTIME at it to try the
// tt backend without the C++ runtime. Flags are listed by -h; extra flags
// may also come from $ZYX_TT_MOCKRT_FLAGS.
package main

import (
	"os"

	"github.com/zyxtt/zyxtt/internal/mockrt"
)

func main() {
	os.Exit(mockrt.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
