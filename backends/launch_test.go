package backends

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
)

func vars(vals ...uint64) []driver.LaunchArg {
	out := make([]driver.LaunchArg, len(vals))
	for i, v := range vals {
		out[i] = driver.VarArg(driver.UintConst(driver.U64, v))
	}
	return out
}

func TestCheckLaunch(t *testing.T) {
	twoVars := []driver.Param{{Name: "n", Kind: driver.Variable, DType: driver.U64}, {Name: "m", Kind: driver.Variable, DType: driver.U64}}
	grid := []driver.GwsDim{driver.BinaryDim(driver.GwsCeilDiv, driver.ParamDim(0), driver.ConstDim(32)), driver.ParamDim(1)}
	cases := []struct {
		name      string
		grid      []driver.GwsDim
		args      []driver.LaunchArg
		maxGrid   []uint64
		want      [3]uint64
		wantEmpty bool
		wantErr   string
	}{
		{name: "missing axes are 1", grid: grid, args: vars(100, 3), want: [3]uint64{4, 3, 1}},
		{name: "no grid is one group", args: vars(1, 1), want: [3]uint64{1, 1, 1}},
		{name: "a zero axis is empty", grid: grid, args: vars(100, 0), want: [3]uint64{4, 0, 1}, wantEmpty: true},
		{name: "a zero limit is no limit", grid: grid, args: vars(100, 3), maxGrid: []uint64{0, 3}, want: [3]uint64{4, 3, 1}},
		{name: "an axis over the device's limit", grid: grid, args: vars(100, 4), maxGrid: []uint64{8, 3}, wantErr: "grid axis 1 is 4; the device allows 3"},
		{name: "an arg count mismatch", grid: grid, args: vars(100), wantErr: "1 args for 2 params"},
		{name: "a grid expression that divides by zero", grid: []driver.GwsDim{driver.BinaryDim(driver.GwsDiv, driver.ConstDim(1), driver.ParamDim(1))}, args: vars(1, 0), wantErr: "grid axis 0"},
		{name: "four axes", grid: []driver.GwsDim{driver.ConstDim(1), driver.ConstDim(1), driver.ConstDim(1), driver.ConstDim(1)}, args: vars(1, 1), wantErr: "at most 3"},
		{name: "more than 2^64 groups", grid: []driver.GwsDim{driver.ParamDim(0), driver.ParamDim(0), driver.ParamDim(1)}, args: vars(1<<32, 2), wantErr: "more than 2^64 groups"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &driver.Program{Params: twoVars, Grid: tc.grid}
			l, err := checkLaunch(p, nil, tc.args, tc.maxGrid)
			if tc.wantErr != "" {
				require.ErrorIs(t, err, driver.ErrInvalidArgument)
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, l.Grid)
			require.Equal(t, tc.wantEmpty, l.Empty)
			require.Len(t, l.Sizes, len(tc.args))
		})
	}
}
