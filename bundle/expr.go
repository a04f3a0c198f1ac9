package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// exprSrc is an expression as written in a bundle file: a JSON string or a
// JSON number.
type exprSrc string

func (e *exprSrc) UnmarshalJSON(b []byte) error {
	s, err := stringOr(b, func(lit string) (string, error) {
		if len(lit) == 0 || (lit[0] != '-' && (lit[0] < '0' || lit[0] > '9')) {
			return "", fmt.Errorf("want an expression (string or number), got %s", lit)
		}
		return lit, nil
	})
	if err == nil {
		*e = exprSrc(s)
	}
	return err
}

// stringOr reads a JSON value that is a string, whose text it returns, or a
// bare literal (white space trimmed), which literal checks and turns into
// the text.
func stringOr(b []byte, literal func(lit string) (string, error)) (string, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	return literal(string(b))
}

// ref names a param by name (a JSON string) or ordinal (a JSON integer).
type ref string

func (r *ref) UnmarshalJSON(b []byte) error {
	s, err := stringOr(b, func(lit string) (string, error) {
		if _, err := strconv.ParseUint(lit, 10, 31); err != nil {
			return "", fmt.Errorf("want a param name or ordinal, got %s", lit)
		}
		return "$" + lit, nil
	})
	if err == nil {
		*r = ref(s)
	}
	return err
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseExpr reads an expression whose names are var names, resolved to var
// ordinals.
func (b *Bundle) parseExpr(src exprSrc) (backends.GwsDim, error) {
	s := strings.TrimSpace(string(src))
	if s == "" {
		return backends.GwsDim{}, errors.New("empty expression")
	}
	if strings.Contains(s, "$") {
		return backends.GwsDim{}, fmt.Errorf("expression %q: use var names, not $N", s)
	}
	return backends.ParseGws(s, b.VarIndex)
}

func (b *Bundle) parseExprs(srcs []exprSrc, file, field string) ([]backends.GwsDim, error) {
	out := make([]backends.GwsDim, len(srcs))
	for i, s := range srcs {
		d, err := b.parseExpr(s)
		if err != nil {
			return nil, &FieldError{file, fmt.Sprintf("%s[%d]", field, i), err}
		}
		out[i] = d
	}
	return out, nil
}

// Values are the current values of a bundle's vars, by var ordinal.
type Values []backends.Constant

// Defaults returns every var's default.
func (b *Bundle) Defaults() Values {
	out := make(Values, len(b.Vars))
	for i, v := range b.Vars {
		out[i] = v.Default
	}
	return out
}

// VarValues returns the defaults with the given overrides (var name → value text)
// applied. An unknown name or a value that does not parse as the var's
// dtype is an error.
func (b *Bundle) VarValues(set map[string]string) (Values, error) {
	vals := b.Defaults()
	for name, text := range set {
		i, ok := b.VarIndex(name)
		if !ok {
			names := make([]string, len(b.Vars))
			for j, v := range b.Vars {
				names[j] = v.Name
			}
			return nil, fmt.Errorf("%w: bundle %s has no var %q (vars: %s)", backends.ErrInvalidArgument, b.Name, name, strings.Join(names, ", "))
		}
		c, err := ParseConstant(b.Vars[i].DType, text)
		if err != nil {
			return nil, fmt.Errorf("%w: var %s: %v", backends.ErrInvalidArgument, name, err)
		}
		vals[i] = c
	}
	return vals, nil
}

// evalHost evaluates an expression over var ordinals with the var values.
func evalHost(d backends.GwsDim, vals Values) (uint64, error) {
	args := make([]backends.LaunchArg, len(vals))
	for i, v := range vals {
		args[i] = backends.VarArg(v)
	}
	return d.Eval(args)
}

// bindDevice turns an expression over var ordinals into one over param
// ordinals: a var that is a Variable param stays a reference to it, any
// other var becomes its current value.
func (b *Bundle) bindDevice(d backends.GwsDim, vals Values) (backends.GwsDim, error) {
	return mapLeaves(d, func(d backends.GwsDim) (backends.GwsDim, error) {
		switch d.Op {
		case driver.GwsConst:
			return d, nil
		case driver.GwsParam:
			v, err := b.intVar(d.Param, "grid and size expressions")
			if err != nil {
				return d, err
			}
			if v.Param >= 0 {
				return backends.ParamDim(v.Param), nil
			}
			return varConst(v, vals[d.Param])
		}
		return d, errors.New("operation without operands")
	})
}

// mapLeaves rebuilds the expression d with leaf's result in place of
// every term that has no operands (a constant, a param, a core term);
// the operands of every other term are mapped in turn, to 64 levels.
func mapLeaves(d backends.GwsDim, leaf func(backends.GwsDim) (backends.GwsDim, error)) (backends.GwsDim, error) {
	var walk func(d backends.GwsDim, depth int) (backends.GwsDim, error)
	walk = func(d backends.GwsDim, depth int) (backends.GwsDim, error) {
		if depth > 64 {
			return d, errors.New("expression nested too deep")
		}
		if d.X == nil && d.Y == nil && d.Z == nil {
			return leaf(d)
		}
		out := backends.GwsDim{Op: d.Op}
		for _, c := range []struct {
			src *backends.GwsDim
			dst **backends.GwsDim
		}{{d.X, &out.X}, {d.Y, &out.Y}, {d.Z, &out.Z}} {
			if c.src == nil {
				continue
			}
			x, err := walk(*c.src, depth+1)
			if err != nil {
				return d, err
			}
			*c.dst = &x
		}
		return out, nil
	}
	return walk(d, 0)
}

// intVar is the var of ordinal p when it may stand in an integer
// expression; what names such expressions in the error for a float var.
func (b *Bundle) intVar(p int, what string) (Var, error) {
	if p < 0 || p >= len(b.Vars) {
		return Var{}, fmt.Errorf("var ordinal %d out of range", p)
	}
	v := b.Vars[p]
	if v.DType.IsFloat() {
		return v, fmt.Errorf("var %s is %s; %s need integers", v.Name, v.DType, what)
	}
	return v, nil
}

// varConst is the integer var v's value c as a constant expression.
func varConst(v Var, c backends.Constant) (backends.GwsDim, error) {
	n, err := c.Int()
	if err != nil {
		return backends.GwsDim{}, fmt.Errorf("var %s: %w", v.Name, err)
	}
	if n < 0 {
		return backends.GwsDim{}, fmt.Errorf("var %s is negative (%d)", v.Name, n)
	}
	return backends.ConstDim(uint64(n)), nil
}

// ParseConstant reads a scalar of dtype d from text: an integer for the
// integer types (decimal, or 0x hex), a float for the float types, true,
// false, 0 or 1 for bool.
func ParseConstant(d backends.DType, text string) (backends.Constant, error) {
	text = strings.TrimSpace(text)
	switch d {
	case backends.F32, backends.F64, backends.F16, backends.BF16, backends.F8E4M3, backends.F8E5M2:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return backends.Constant{}, fmt.Errorf("%q is not a %s", text, d)
		}
		// A finite number the dtype cannot hold would silently become ±Inf
		// (or saturate); infinities and NaN must be asked for by name.
		if limit := maxFinite[d]; err != nil || (!math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > limit) {
			return backends.Constant{}, fmt.Errorf("%s is out of range for %s (largest finite value %g)", text, d, limit)
		}
		return backends.FloatConst(d, f), nil
	case backends.Bool:
		switch text {
		case "true", "1":
			return backends.UintConst(d, 1), nil
		case "false", "0":
			return backends.UintConst(d, 0), nil
		}
		return backends.Constant{}, fmt.Errorf("%q is not a bool (true, false, 1, 0)", text)
	case backends.I8, backends.I16, backends.I32, backends.I64:
		v, err := strconv.ParseInt(text, 0, d.Size()*8)
		if err != nil {
			return backends.Constant{}, fmt.Errorf("%q is not a %s", text, d)
		}
		return backends.IntConst(d, v), nil
	case backends.U8, backends.U16, backends.U32, backends.U64:
		v, err := strconv.ParseUint(text, 0, d.Size()*8)
		if err != nil {
			return backends.Constant{}, fmt.Errorf("%q is not a %s", text, d)
		}
		return backends.UintConst(d, v), nil
	}
	return backends.Constant{}, fmt.Errorf("dtype %s has no scalar values", d)
}

// maxFinite is the largest finite value of each float dtype (with the
// rounding margin of half an ulp it still rounds down to).
var maxFinite = map[backends.DType]float64{
	backends.F64:    math.MaxFloat64,
	backends.F32:    math.MaxFloat32,
	backends.F16:    65504,
	backends.BF16:   3.3895313892515355e38,
	backends.F8E4M3: 448,
	backends.F8E5M2: 57344,
}

// fitU32 checks that v fits a 32-bit kernel argument.
func fitU32(v uint64) (uint32, error) {
	if v > math.MaxUint32 {
		return 0, fmt.Errorf("value %d does not fit in 32 bits", v)
	}
	return uint32(v), nil
}
