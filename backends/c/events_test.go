package c

import (
	"testing"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
)

func TestEvents(t *testing.T) {
	backendtest.RunEventConformance(t, device(t), backendtest.VaddStep(t, 4096))
}

// emptyProgram does nothing over one work group: its launch is all cost.
var emptyProgram = &driver.Program{
	Name:     "empty",
	Params:   []driver.Param{backendtest.GlobalMut("x", driver.F32)},
	Grid:     []driver.GwsDim{driver.ConstDim(1)},
	Variants: []driver.Variant{{Format: driver.FormatC, Code: &driver.SourceVariant{Entry: "empty", Source: "void empty(float *x, uint64_t g0, uint64_t g1, uint64_t g2) { (void)x; }"}}},
}

// BenchmarkQueuedLaunches: 10,000 empty launches, each waited for, against
// 10,000 queued with one wait (sync-µs/launch, queued-µs/launch).
func BenchmarkQueuedLaunches(b *testing.B) {
	backendtest.BenchmarkQueuedLaunches(b, device(b), emptyProgram, []backendtest.Arg{backendtest.BufferArg(4)}, 10000)
}

// BenchmarkPipeline: 64 MiB per input through vadd in 4 MiB chunks,
// overlapped with events against one step after another. The c device
// computes on the host pool, so its transfers are host copies and there
// is little to overlap; the benchmark shows the event path works.
func BenchmarkPipeline(b *testing.B) {
	backendtest.BenchmarkPipeline(b, device(b), backendtest.Vadd(b), 64<<20, 4<<20)
}
