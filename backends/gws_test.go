package backends

import (
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
	require.ErrorContains(t, err, `unknown name "n"`, "no lookup: names are unknown")
	g, err := ParseGws("$0 * 2", nil)
	require.NoError(t, err)
	require.Equal(t, "($0 * 2)", g.String())
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
