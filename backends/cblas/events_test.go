package cblas

import (
	"testing"

	"github.com/zyxtt/zyxtt/backends/backendtest"
)

func TestEvents(t *testing.T) {
	backendtest.RunEventConformance(t, device(t), backendtest.MatmulStep(t, 64))
}

// BenchmarkQueuedLaunches: 10,000 1×1×1 GEMMs, each waited for, against
// 10,000 queued with one wait (sync-µs/launch, queued-µs/launch).
func BenchmarkQueuedLaunches(b *testing.B) {
	backendtest.BenchmarkQueuedLaunches(b, device(b), backendtest.ExampleProgram(b, "matmul"), backendtest.MatmulArgs(1, 1, 1), 10000)
}
