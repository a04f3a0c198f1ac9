package driver

import (
	"fmt"
	"math/bits"

	"github.com/zyxtt/zyxtt/internal/core"
)

// Launch is what a launch's args come to once they are checked against the
// program and the pool, before a backend touches its device.
type Launch struct {
	// Grid is the number of work groups on each axis; the axes the program
	// leaves out are 1.
	Grid [3]uint64
	// Empty says an axis is 0: the launch runs nothing and succeeds.
	Empty bool
	// Sizes are the buffer args' sizes in bytes, by param ordinal (0 for a
	// scalar).
	Sizes []int64
}

// CheckLaunch runs the checks every backend makes before a launch: the args
// against the params and the pool (CheckArgs), the grid's expressions
// (EvalGrid), each axis against maxGrid (an absent or zero entry is no
// limit) and the total number of groups against 2^64. A bad arg or grid
// wraps ErrInvalidArgument, a foreign buffer
// ErrUnknownBuffer; callers add their backend and op.
func CheckLaunch(p *Program, pool Pool, args []LaunchArg, maxGrid []uint64) (Launch, error) {
	var l Launch
	sizes, err := CheckArgs(p, pool, args)
	if err != nil {
		return l, err
	}
	l.Sizes = sizes
	if len(p.Grid) > 3 {
		return l, fmt.Errorf("%w: the grid has %d axes; at most 3", ErrInvalidArgument, len(p.Grid))
	}
	l.Grid = [3]uint64{1, 1, 1}
	for i, g := range p.Grid {
		v, err := g.Eval(args)
		if err != nil {
			return l, fmt.Errorf("%w: grid axis %d: %w", ErrInvalidArgument, i, err)
		}
		if i < len(maxGrid) && maxGrid[i] > 0 && v > maxGrid[i] {
			return l, fmt.Errorf("%w: grid axis %d is %d; the device allows %d", ErrInvalidArgument, i, v, maxGrid[i])
		}
		l.Grid[i] = v
		l.Empty = l.Empty || v == 0
	}
	if hi, lo := bits.Mul64(l.Grid[0], l.Grid[1]); hi != 0 || !fitsMul(lo, l.Grid[2]) {
		return l, fmt.Errorf("%w: grid %v has more than 2^64 groups", ErrInvalidArgument, l.Grid)
	}
	return l, nil
}

// CheckSpan says whether bytes [off, off+n) lie inside buffer id of size
// bytes, without overflowing on hostile offsets. It returns nil, or a
// *Error of backend and op that wraps ErrInvalidArgument.
func CheckSpan(backend, op string, id BufferID, off, n, size int64) error {
	return core.CheckSpan(backend, op, id, off, n, size)
}

func fitsMul(a, b uint64) bool {
	hi, _ := bits.Mul64(a, b)
	return hi == 0
}
