package ttruntime_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/ttruntime"
)

// Cores lists each range row-major, or column-major on request, skips an
// empty range, and counts a range ending at the largest coordinate.
func TestCoreRangeSetCores(t *testing.T) {
	s := ttruntime.CoreRangeSet{ttruntime.Rect(1, 2, 2, 4), ttruntime.Rect(3, 3, 2, 3), ttruntime.Rect(5, 0, 5, 0)}
	require.Equal(t, []ttruntime.CoreCoord{{1, 2}, {1, 3}, {1, 4}, {2, 2}, {2, 3}, {2, 4}, {5, 0}}, s.Cores(false))
	require.Equal(t, []ttruntime.CoreCoord{{1, 2}, {2, 2}, {1, 3}, {2, 3}, {1, 4}, {2, 4}, {5, 0}}, s.Cores(true))
	const top = math.MaxUint32
	edge := ttruntime.CoreRangeSet{ttruntime.Rect(top-1, top, top, top)}
	require.Equal(t, []ttruntime.CoreCoord{{top - 1, top}, {top, top}}, edge.Cores(false))
	require.Equal(t, []ttruntime.CoreCoord{{top - 1, top}, {top, top}}, edge.Cores(true))
}
