package backends

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// GwsOp is the operation at one node of a grid expression.
type GwsOp uint8

// The grid expression operations.
const (
	GwsConst   GwsOp = iota // Value
	GwsParam                // args[Param], a Variable
	GwsAdd                  // X + Y
	GwsSub                  // X - Y, an error below zero
	GwsMul                  // X * Y
	GwsDiv                  // X / Y, rounding down
	GwsCeilDiv              // ceil(X / Y)
	GwsMod                  // X % Y
	GwsMin                  // min(X, Y)
	GwsMax                  // max(X, Y)
)

var gwsFuncs = map[string]GwsOp{"ceil_div": GwsCeilDiv, "min": GwsMin, "max": GwsMax}

// ErrGridExpr marks a grid expression that cannot be evaluated: division by
// zero, overflow, a negative result, or a param that is not a Variable.
var ErrGridExpr = errors.New("grid expression")

// GwsDim is one axis of a program's grid: an integer expression over
// constants and Variable params. Evaluation is checked: it never panics and
// never wraps around.
type GwsDim struct {
	Op    GwsOp
	Value uint64
	Param int
	X, Y  *GwsDim
}

// ConstDim is a constant grid extent.
func ConstDim(v uint64) GwsDim { return GwsDim{Op: GwsConst, Value: v} }

// ParamDim is the value of the Variable param at ordinal i.
func ParamDim(i int) GwsDim { return GwsDim{Op: GwsParam, Param: i} }

// BinaryDim combines two expressions.
func BinaryDim(op GwsOp, x, y GwsDim) GwsDim { return GwsDim{Op: op, X: &x, Y: &y} }

// Eval computes the extent, reading Variable params from args.
func (g GwsDim) Eval(args []LaunchArg) (uint64, error) {
	return g.eval(args, 0)
}

// maxGwsDepth bounds how deeply a grid expression may nest. ParseGws
// rejects deeper trees, so everything it accepts also evaluates and formats.
const maxGwsDepth = 64

func (g GwsDim) eval(args []LaunchArg, depth int) (uint64, error) {
	if depth > maxGwsDepth {
		return 0, fmt.Errorf("%w: nested more than %d deep", ErrGridExpr, maxGwsDepth)
	}
	switch g.Op {
	case GwsConst:
		return g.Value, nil
	case GwsParam:
		if g.Param < 0 || g.Param >= len(args) {
			return 0, fmt.Errorf("%w: param %d out of range (%d args)", ErrGridExpr, g.Param, len(args))
		}
		a := args[g.Param]
		if !a.IsVar() {
			return 0, fmt.Errorf("%w: param %d is a buffer, not a variable", ErrGridExpr, g.Param)
		}
		v, err := a.Value.Int()
		if err != nil {
			return 0, fmt.Errorf("%w: param %d: %v", ErrGridExpr, g.Param, err)
		}
		if v < 0 {
			return 0, fmt.Errorf("%w: param %d is negative (%d)", ErrGridExpr, g.Param, v)
		}
		return uint64(v), nil
	}
	if g.X == nil || g.Y == nil {
		return 0, fmt.Errorf("%w: operation %d is missing an operand", ErrGridExpr, g.Op)
	}
	x, err := g.X.eval(args, depth+1)
	if err != nil {
		return 0, err
	}
	y, err := g.Y.eval(args, depth+1)
	if err != nil {
		return 0, err
	}
	switch g.Op {
	case GwsAdd:
		s, c := bits.Add64(x, y, 0)
		if c != 0 {
			return 0, fmt.Errorf("%w: %d + %d overflows", ErrGridExpr, x, y)
		}
		return s, nil
	case GwsSub:
		if y > x {
			return 0, fmt.Errorf("%w: %d - %d is negative", ErrGridExpr, x, y)
		}
		return x - y, nil
	case GwsMul:
		hi, lo := bits.Mul64(x, y)
		if hi != 0 {
			return 0, fmt.Errorf("%w: %d * %d overflows", ErrGridExpr, x, y)
		}
		return lo, nil
	case GwsDiv, GwsCeilDiv, GwsMod:
		if y == 0 {
			return 0, fmt.Errorf("%w: division by zero", ErrGridExpr)
		}
		switch g.Op {
		case GwsDiv:
			return x / y, nil
		case GwsMod:
			return x % y, nil
		}
		q := x / y
		if x%y != 0 {
			q++
		}
		return q, nil
	case GwsMin:
		return min(x, y), nil
	case GwsMax:
		return max(x, y), nil
	}
	return 0, fmt.Errorf("%w: unknown operation %d", ErrGridExpr, g.Op)
}

// Params lists the param ordinals the expression reads.
func (g GwsDim) Params() []int {
	var out []int
	var walk func(d *GwsDim)
	walk = func(d *GwsDim) {
		if d == nil {
			return
		}
		if d.Op == GwsParam {
			out = append(out, d.Param)
		}
		walk(d.X)
		walk(d.Y)
	}
	walk(&g)
	return out
}

// Format writes the expression with param names from names ($N where a name
// is missing). ParseGws reads it back.
func (g GwsDim) Format(names []string) string {
	switch g.Op {
	case GwsConst:
		return strconv.FormatUint(g.Value, 10)
	case GwsParam:
		if g.Param >= 0 && g.Param < len(names) && names[g.Param] != "" {
			return names[g.Param]
		}
		return "$" + strconv.Itoa(g.Param)
	}
	if g.X == nil || g.Y == nil {
		return "?"
	}
	x, y := g.X.Format(names), g.Y.Format(names)
	for name, op := range gwsFuncs {
		if op == g.Op {
			return name + "(" + x + ", " + y + ")"
		}
	}
	sym := map[GwsOp]string{GwsAdd: "+", GwsSub: "-", GwsMul: "*", GwsDiv: "/", GwsMod: "%"}[g.Op]
	return "(" + x + " " + sym + " " + y + ")"
}

func (g GwsDim) String() string { return g.Format(nil) }

// ParseGws reads a grid expression: unsigned integers, param names (resolved
// through lookup to an ordinal), $N for param ordinal N, + - * / %,
// parentheses, and ceil_div(a, b), min(a, b), max(a, b).
func ParseGws(expr string, lookup func(name string) (int, bool)) (GwsDim, error) {
	p := &gwsParser{src: expr, lookup: lookup}
	p.next()
	d, err := p.sum()
	if err != nil {
		return GwsDim{}, fmt.Errorf("grid expression %q: %w", expr, err)
	}
	if p.tok != "" {
		return GwsDim{}, fmt.Errorf("grid expression %q: unexpected %q at %d", expr, p.tok, p.pos)
	}
	if deeperThan(&d, maxGwsDepth) {
		// A long chain such as 1+1+…+1 nests one level per operator.
		return GwsDim{}, fmt.Errorf("grid expression %q: nested more than %d deep", expr, maxGwsDepth)
	}
	return d, nil
}

// deeperThan reports whether the tree below d has more than limit levels of
// operators. It stops descending at the limit, so it is cheap on long chains.
func deeperThan(d *GwsDim, limit int) bool {
	if d == nil || d.X == nil && d.Y == nil {
		return false
	}
	if limit == 0 {
		return true
	}
	return deeperThan(d.X, limit-1) || deeperThan(d.Y, limit-1)
}

// Grid expressions are ASCII: byte-wise classification of UTF-8 would split
// multi-byte characters into pieces.
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

type gwsParser struct {
	src    string
	pos    int
	tok    string
	depth  int
	lookup func(string) (int, bool)
}

func (p *gwsParser) next() {
	for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
		p.pos++
	}
	if p.pos >= len(p.src) {
		p.tok = ""
		return
	}
	start := p.pos
	c := p.src[p.pos]
	switch {
	case isDigit(c):
		for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.pos++
		}
	case c == '_' || c == '$' || isLetter(c):
		p.pos++
		for p.pos < len(p.src) && (p.src[p.pos] == '_' || isLetter(p.src[p.pos]) || isDigit(p.src[p.pos])) {
			p.pos++
		}
	default:
		p.pos++
	}
	p.tok = p.src[start:p.pos]
}

func (p *gwsParser) sum() (GwsDim, error) {
	x, err := p.product()
	if err != nil {
		return x, err
	}
	for p.tok == "+" || p.tok == "-" {
		op := map[string]GwsOp{"+": GwsAdd, "-": GwsSub}[p.tok]
		p.next()
		y, err := p.product()
		if err != nil {
			return y, err
		}
		x = BinaryDim(op, x, y)
	}
	return x, nil
}

func (p *gwsParser) product() (GwsDim, error) {
	x, err := p.atom()
	if err != nil {
		return x, err
	}
	for p.tok == "*" || p.tok == "/" || p.tok == "%" {
		op := map[string]GwsOp{"*": GwsMul, "/": GwsDiv, "%": GwsMod}[p.tok]
		p.next()
		y, err := p.atom()
		if err != nil {
			return y, err
		}
		x = BinaryDim(op, x, y)
	}
	return x, nil
}

func (p *gwsParser) atom() (GwsDim, error) {
	p.depth++
	defer func() { p.depth-- }()
	// A tree of depth maxGwsDepth formats with one more level of
	// parentheses, which must still parse.
	if p.depth > maxGwsDepth+1 {
		return GwsDim{}, errors.New("nested too deep")
	}
	tok := p.tok
	switch {
	case tok == "":
		return GwsDim{}, errors.New("unexpected end")
	case tok == "(":
		p.next()
		d, err := p.sum()
		if err != nil {
			return d, err
		}
		if p.tok != ")" {
			return d, fmt.Errorf("expected ) at %d", p.pos)
		}
		p.next()
		return d, nil
	case isDigit(tok[0]):
		v, err := strconv.ParseUint(tok, 10, 64)
		if err != nil {
			return GwsDim{}, fmt.Errorf("number %s: %w", tok, err)
		}
		p.next()
		return ConstDim(v), nil
	case tok[0] == '$':
		n, err := strconv.Atoi(tok[1:])
		if err != nil || n < 0 || n > math.MaxInt32 {
			return GwsDim{}, fmt.Errorf("bad param ordinal %s", tok)
		}
		p.next()
		return ParamDim(n), nil
	case tok[0] == '_' || isLetter(tok[0]):
		p.next()
		if op, ok := gwsFuncs[strings.ToLower(tok)]; ok && p.tok == "(" {
			p.next()
			x, err := p.sum()
			if err != nil {
				return x, err
			}
			if p.tok != "," {
				return x, fmt.Errorf("%s needs two arguments", tok)
			}
			p.next()
			y, err := p.sum()
			if err != nil {
				return y, err
			}
			if p.tok != ")" {
				return y, fmt.Errorf("expected ) after %s arguments", tok)
			}
			p.next()
			return BinaryDim(op, x, y), nil
		}
		if p.lookup == nil {
			return GwsDim{}, fmt.Errorf("unknown name %q", tok)
		}
		i, ok := p.lookup(tok)
		if !ok {
			return GwsDim{}, fmt.Errorf("unknown variable %q", tok)
		}
		return ParamDim(i), nil
	}
	return GwsDim{}, fmt.Errorf("unexpected %q at %d", tok, p.pos)
}
