package driver

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Params of the grid tests: n, m and buf, at ordinals 0, 1 and 2.
var gwsNames = []string{"n", "m", "buf"}

func gwsLookup(name string) (int, bool) {
	for i, n := range gwsNames {
		if n == name {
			return i, true
		}
	}
	return 0, false
}

func gwsArgs(n, m uint64) []LaunchArg {
	return []LaunchArg{VarArg(UintConst(U64, n)), VarArg(UintConst(U32, m)), BufArg(7)}
}

func TestGwsEval(t *testing.T) {
	c, p := ConstDim, ParamDim
	bin := BinaryDim
	deep := c(1)
	for range 65 {
		deep = bin(GwsAdd, deep, c(1))
	}
	for _, tc := range []struct {
		name string
		g    GwsDim
		args []LaunchArg
		want uint64
		err  string
	}{
		{"const", c(42), nil, 42, ""},
		{"param", p(0), gwsArgs(9, 0), 9, ""},
		{"add", bin(GwsAdd, p(0), p(1)), gwsArgs(3, 4), 7, ""},
		{"add overflows", bin(GwsAdd, c(math.MaxUint64), c(1)), nil, 0, "overflows"},
		{"sub", bin(GwsSub, c(10), c(3)), nil, 7, ""},
		{"sub to zero", bin(GwsSub, c(3), c(3)), nil, 0, ""},
		{"sub negative", bin(GwsSub, c(3), c(4)), nil, 0, "is negative"},
		{"mul", bin(GwsMul, c(1<<32), c(1<<31)), nil, 1 << 63, ""},
		{"mul overflows", bin(GwsMul, c(1<<32), c(1<<32)), nil, 0, "overflows"},
		{"div rounds down", bin(GwsDiv, c(7), c(2)), nil, 3, ""},
		{"div by zero", bin(GwsDiv, c(7), p(1)), gwsArgs(0, 0), 0, "division by zero"},
		{"ceil_div", bin(GwsCeilDiv, p(0), c(256)), gwsArgs(1000, 0), 4, ""},
		{"ceil_div exact", bin(GwsCeilDiv, c(512), c(256)), nil, 2, ""},
		{"ceil_div by zero", bin(GwsCeilDiv, c(1), c(0)), nil, 0, "division by zero"},
		{"ceil_div of max", bin(GwsCeilDiv, c(math.MaxUint64), c(2)), nil, 1 << 63, ""},
		{"mod", bin(GwsMod, c(10), c(4)), nil, 2, ""},
		{"mod by zero", bin(GwsMod, c(10), c(0)), nil, 0, "division by zero"},
		{"min", bin(GwsMin, c(3), c(8)), nil, 3, ""},
		{"max", bin(GwsMax, c(3), c(8)), nil, 8, ""},
		{"param out of range", p(5), gwsArgs(1, 1), 0, "out of range"},
		{"negative ordinal", p(-1), gwsArgs(1, 1), 0, "out of range"},
		{"param is a buffer", p(2), gwsArgs(1, 1), 0, "not a variable"},
		{"float param", p(0), []LaunchArg{VarArg(FloatConst(F32, 2))}, 0, "not an integer"},
		{"negative param", p(0), []LaunchArg{VarArg(IntConst(I32, -2))}, 0, "negative"},
		{"u64 param past int64", p(0), []LaunchArg{VarArg(UintConst(U64, math.MaxUint64))}, 0, "overflows int64"},
		{"missing operand", GwsDim{Op: GwsAdd, X: &GwsDim{}}, nil, 0, "missing an operand"},
		{"unknown op", bin(GwsOp(99), c(1), c(1)), nil, 0, "unknown operation"},
		{"nested too deep", deep, nil, 0, "nested more than 64 deep"},
		{"error inside", bin(GwsAdd, c(1), bin(GwsDiv, c(1), c(0))), nil, 0, "division by zero"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.g.Eval(tc.args)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrGridExpr)
				require.ErrorContains(t, err, tc.err)
				require.Zero(t, v)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, v)
		})
	}
}

func TestGridParams(t *testing.T) {
	require.Equal(t, []int{0, 1}, BinaryDim(GwsAdd, ParamDim(0), ParamDim(1)).Params())
	require.Empty(t, ConstDim(3).Params())
}

func TestParseGws(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want uint64 // evaluated with n=1000, m=3
		err  string
	}{
		{"7", 7, ""},
		{"n", 1000, ""},
		{"$1", 3, ""},
		{"ceil_div(n, 256)", 4, ""},
		{"CEIL_DIV(n,256)", 4, ""},
		{"n / m", 333, ""},
		{"n % m", 1, ""},
		{"1 + 2 * 3", 7, ""},
		{"(1 + 2) * 3", 9, ""},
		{"10 - 2 - 3", 5, ""},
		{"min(n, m) + max(1, 2)", 5, ""},
		{"\tn\n", 1000, ""},
		{"", 0, "unexpected end"},
		{"1 +", 0, "unexpected end"},
		{"(1", 0, "expected )"},
		{"min(1)", 0, "needs two arguments"},
		{"min(1, 2", 0, "expected )"},
		{"min(1, 2, 3)", 0, "expected ) after min arguments"},
		{"split_units(1, 2)", 0, "split_units needs three arguments"},
		{"split_units(1, 2, 3, 4)", 0, "expected ) after split_units arguments"},
		{"k", 0, `unknown variable "k"`},
		{"$", 0, "bad param ordinal"},
		{"$99999999999", 0, "bad param ordinal"},
		{"99999999999999999999999", 0, "out of range"},
		{"1 2", 0, `unexpected "2"`},
		{"1 ^ 2", 0, `unexpected "^"`},
		{"ñ", 0, "unexpected"},
		{strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70), 0, "nested too deep"},
		{strings.Repeat("1+", 70) + "1", 0, "nested more than 64 deep"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			g, err := ParseGws(tc.expr, gwsLookup)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			v, err := g.Eval(gwsArgs(1000, 3))
			require.NoError(t, err)
			require.Equal(t, tc.want, v)

			back, err := ParseGws(g.Format(gwsNames), gwsLookup)
			require.NoError(t, err, "formatted: %s", g.Format(gwsNames))
			require.Equal(t, g, back)
		})
	}
	_, err := ParseGws("n", nil)
	require.ErrorContains(t, err, `unknown variable "n"`, "no lookup: names are unknown")
	g, err := ParseGws("$0 * 2", nil)
	require.NoError(t, err)
	require.Equal(t, "$0 * 2", g.String())
	require.Equal(t, "ceil_div(n, 4)", BinaryDim(GwsCeilDiv, ParamDim(0), ConstDim(4)).Format(gwsNames))
}

func TestGwsFormatDeepestAcceptedTreeParses(t *testing.T) {
	g := ConstDim(1)
	for range maxGwsDepth {
		g = BinaryDim(GwsMax, ConstDim(2), g)
	}
	v, err := g.Eval(nil)
	require.NoError(t, err)
	require.EqualValues(t, 2, v)
	back, err := ParseGws(g.String(), nil)
	require.NoError(t, err)
	require.True(t, reflect.DeepEqual(g, back))
}

func FuzzParseGws(f *testing.F) {
	for _, s := range []string{"1", "n", "$2", "ceil_div(n, 256)", "(n + m) * 3 - 1", "min(max(n, 1), m % 7)",
		"n / 0", "18446744073709551615 + 1", "((((", "$", "min(", strings.Repeat("1*", 80) + "1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		g, err := ParseGws(expr, gwsLookup)
		if err != nil {
			return
		}
		// Whatever parses evaluates without panicking, formats, and
		// parses back to the same tree.
		_, _ = g.Eval(gwsArgs(1000, 3))
		_, _ = g.Eval(nil)
		text := g.Format(gwsNames)
		back, err := ParseGws(text, gwsLookup)
		if err != nil {
			t.Fatalf("%q parsed, but its formatting %q does not: %v", expr, text, err)
		}
		if !reflect.DeepEqual(g, back) {
			t.Fatalf("%q: round trip through %q changed the tree", expr, text)
		}
	})
}

// The split_work terms agree with tt-metal's split_work_to_cores: 10 units
// over a 2×3 grid use 6 cores, the first 4 taking 2 units and the rest 1,
// counted down the columns (row_wise false) or along the rows (_rw).
func TestSplitWork(t *testing.T) {
	parse := func(s string) GwsDim {
		d, err := ParseGws(s, nil)
		require.NoError(t, err)
		return d
	}
	at := func(d GwsDim, row, col uint64) uint64 {
		v, err := d.EvalCore(nil, CoreEnv{Row: row, Col: col})
		require.NoError(t, err)
		return v
	}
	units, start := parse("split_units(10, 2, 3)"), parse("split_start(10, 2, 3)")
	// column-major order: (0,0) (1,0) (0,1) (1,1) (0,2) (1,2)
	order := [][2]uint64{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}}
	wantUnits := []uint64{2, 2, 2, 2, 1, 1}
	wantStart := []uint64{0, 2, 4, 6, 8, 9}
	for k, rc := range order {
		require.Equal(t, wantUnits[k], at(units, rc[0], rc[1]), "units of core %v", rc)
		require.Equal(t, wantStart[k], at(start, rc[0], rc[1]), "start of core %v", rc)
	}
	rw := parse("split_start_rw(10, 2, 3)")
	require.Equal(t, uint64(6), at(rw, 1, 0), "row-wise: (1,0) is the 4th core")
	require.Equal(t, uint64(1), at(parse("split_units_rw(10, 2, 3)"), 1, 2))
	cores, err := parse("split_cores(4, 8, 8)").Eval(nil)
	require.NoError(t, err)
	require.Equal(t, uint64(4), cores, "fewer units than cores use only as many cores")
	require.Zero(t, at(parse("split_units(4, 8, 8)"), 0, 1), "a core past the ones used gets nothing")
	g1, err := parse("split_group1(10, 2, 3)").Eval(nil)
	require.NoError(t, err)
	require.Equal(t, uint64(4), g1)
	g1, err = parse("split_group1(12, 2, 3)").Eval(nil)
	require.NoError(t, err)
	require.Equal(t, uint64(6), g1, "an even split is all one group")
	_, err = units.Eval(nil)
	require.ErrorIs(t, err, ErrGridExpr, "a per-core term needs a core")

	idx := parse("core_index * 4 + core_row")
	v, err := idx.EvalCore(nil, CoreEnv{Row: 3, Index: 2})
	require.NoError(t, err)
	require.Equal(t, uint64(11), v)
	require.True(t, idx.PerCore())
	require.False(t, parse("split_cores(4, 8, 8)").PerCore())
	require.Equal(t, "split_start(10, 2, 3)", start.Format(nil))
	d, err := ParseGws("core_row + 1", func(n string) (int, bool) { return 0, n == "core_row" })
	require.NoError(t, err)
	require.Equal(t, []int{0}, d.Params(), "a variable named like a core term shadows it")
}

// ParseExpr keeps names for Resolve; a name that resolves to nothing and is
// a core term becomes that term, so a variable shadows a core term.
func TestParseExprResolve(t *testing.T) {
	d, err := ParseExpr("ceil_div(n, 32) + core_row")
	require.NoError(t, err)
	require.Equal(t, []string{"n", "core_row"}, d.Names())
	_, err = d.Eval(nil)
	require.ErrorContains(t, err, `unknown name "n"`, "a name does not evaluate")

	r, err := d.Resolve(func(name string) (GwsDim, bool) {
		if name == "n" {
			return ConstDim(100), true
		}
		return GwsDim{}, false
	})
	require.NoError(t, err)
	require.True(t, r.PerCore(), "core_row became the core term")
	v, err := r.EvalCore(nil, CoreEnv{Row: 3})
	require.NoError(t, err)
	require.EqualValues(t, 7, v)

	shadow, err := d.Resolve(func(string) (GwsDim, bool) { return ConstDim(1), true })
	require.NoError(t, err)
	require.False(t, shadow.PerCore(), "a variable named core_row shadows the core term")

	_, err = d.Resolve(func(string) (GwsDim, bool) { return GwsDim{}, false })
	require.ErrorContains(t, err, `unknown variable "n"`)
}

func TestGwsDimJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		err  string
	}{
		{in: `42`, want: `42`},
		{in: `"ceil_div(n, 32)"`, want: `"ceil_div(n, 32)"`},
		{in: `"(n + 1)"`, want: `"n + 1"`},
		{in: `"(a - b) - (c - d)"`, want: `"a - b - (c - d)"`},
		{in: `-1`, err: "non-negative integer"},
		{in: `1.5`, err: "non-negative integer"},
		{in: `""`, err: "empty expression"},
		{in: `null`, err: "null"},
		{in: `"n +"`, err: "unexpected end"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			var d GwsDim
			err := json.Unmarshal([]byte(tc.in), &d)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			out, err := json.Marshal(d)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(out))
		})
	}
}
