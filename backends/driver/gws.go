package driver

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
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

	// The per-core terms of Tenstorrent arguments (TTArg values, core
	// range bounds): they evaluate only with a core (EvalCore).
	GwsCoreRow   // the core's logical row
	GwsCoreCol   // the core's logical column
	GwsCoreIndex // the core's index among its kernel's cores, in their order
	GwsNumCores  // how many cores the kernel runs on

	// tt-metal's split_work_to_cores over a rows×cols grid from core
	// (0, 0): X units of work over min(X, rows·cols) cores, the first X %
	// cores taking one more unit. Cores count down the columns (row_wise
	// false, tt-metal's default), or along the rows for the _rw forms.
	GwsSplitUnits   // split_units(units, rows, cols): this core's units (0 past the cores used)
	GwsSplitStart   // split_start(units, rows, cols): the units of the cores before it
	GwsSplitUnitsRW // split_units_rw(units, rows, cols)
	GwsSplitStartRW // split_start_rw(units, rows, cols)
	GwsSplitCores   // split_cores(units, rows, cols): how many cores get work
	GwsSplitGroup1  // split_group1(units, rows, cols): how many of them take the larger share

	// GwsName is a name not resolved yet (ParseExpr, a bundle file's
	// expression over its vars): Resolve replaces it. It does not evaluate.
	GwsName
)

var gwsFuncs = map[string]GwsOp{"ceil_div": GwsCeilDiv, "min": GwsMin, "max": GwsMax}

// gwsFuncs3 are the three-argument functions.
var gwsFuncs3 = map[string]GwsOp{
	"split_units": GwsSplitUnits, "split_start": GwsSplitStart,
	"split_units_rw": GwsSplitUnitsRW, "split_start_rw": GwsSplitStartRW,
	"split_cores": GwsSplitCores, "split_group1": GwsSplitGroup1,
}

// gwsCoreTerms are the per-core names.
var gwsCoreTerms = map[string]GwsOp{
	"core_row": GwsCoreRow, "core_col": GwsCoreCol, "core_index": GwsCoreIndex, "num_cores": GwsNumCores,
}

// CoreEnv is the core a per-core expression is evaluated for: its logical
// coordinates, and its index among its kernel's cores and their count.
type CoreEnv struct {
	Row, Col     uint64
	Index, Count uint64
}

// ErrGridExpr marks a grid expression that cannot be evaluated: division by
// zero, overflow, a negative result, or a param that is not a Variable.
var ErrGridExpr = errors.New("grid expression")

// GwsDim is one axis of a program's grid: an integer expression over
// constants and Variable params. Evaluation is checked: it never panics and
// never wraps around.
type GwsDim struct {
	Op      GwsOp
	Value   uint64
	Param   int
	Name    string // GwsName's name
	X, Y, Z *GwsDim
}

// NameDim is the name n, not resolved yet.
func NameDim(n string) GwsDim { return GwsDim{Op: GwsName, Name: n} }

// ConstDim is a constant grid extent.
func ConstDim(v uint64) GwsDim { return GwsDim{Op: GwsConst, Value: v} }

// ParamDim is the value of the Variable param at ordinal i.
func ParamDim(i int) GwsDim { return GwsDim{Op: GwsParam, Param: i} }

// BinaryDim combines two expressions.
func BinaryDim(op GwsOp, x, y GwsDim) GwsDim { return GwsDim{Op: op, X: &x, Y: &y} }

// CoreDim is a per-core term (GwsCoreRow, GwsCoreCol, GwsCoreIndex,
// GwsNumCores).
func CoreDim(op GwsOp) GwsDim { return GwsDim{Op: op} }

// SplitDim is one of the split_work terms over units, rows and cols.
func SplitDim(op GwsOp, units, rows, cols GwsDim) GwsDim {
	return GwsDim{Op: op, X: &units, Y: &rows, Z: &cols}
}

// Eval computes the extent, reading Variable params from args. A per-core
// term is an error here (it needs EvalCore).
func (g GwsDim) Eval(args []LaunchArg) (uint64, error) {
	return g.eval(args, nil, 0)
}

// EvalCore computes the value for one core.
func (g GwsDim) EvalCore(args []LaunchArg, core CoreEnv) (uint64, error) {
	return g.eval(args, &core, 0)
}

// PerCore reports whether the expression reads the core it is evaluated
// for.
func (g GwsDim) PerCore() bool {
	if g.Op >= GwsCoreRow && g.Op <= GwsNumCores || g.Op == GwsSplitUnits || g.Op == GwsSplitStart ||
		g.Op == GwsSplitUnitsRW || g.Op == GwsSplitStartRW {
		return true
	}
	for _, c := range []*GwsDim{g.X, g.Y, g.Z} {
		if c != nil && c.PerCore() {
			return true
		}
	}
	return false
}

// maxGwsDepth bounds how deeply a grid expression may nest. ParseGws
// rejects deeper trees, so everything it accepts also evaluates and formats.
const maxGwsDepth = 64

func (g GwsDim) eval(args []LaunchArg, core *CoreEnv, depth int) (uint64, error) {
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
	case GwsCoreRow, GwsCoreCol, GwsCoreIndex, GwsNumCores:
		if core == nil {
			return 0, fmt.Errorf("%w: %s is a per-core term, not defined here", ErrGridExpr, coreTermName(g.Op))
		}
		return map[GwsOp]uint64{GwsCoreRow: core.Row, GwsCoreCol: core.Col, GwsCoreIndex: core.Index, GwsNumCores: core.Count}[g.Op], nil
	case GwsName:
		return 0, fmt.Errorf("%w: unknown name %q", ErrGridExpr, g.Name)
	}
	if g.X == nil || g.Y == nil {
		return 0, fmt.Errorf("%w: operation %d is missing an operand", ErrGridExpr, g.Op)
	}
	x, err := g.X.eval(args, core, depth+1)
	if err != nil {
		return 0, err
	}
	y, err := g.Y.eval(args, core, depth+1)
	if err != nil {
		return 0, err
	}
	if g.Op >= GwsSplitUnits && g.Op <= GwsSplitGroup1 {
		if g.Z == nil {
			return 0, fmt.Errorf("%w: operation %d is missing an operand", ErrGridExpr, g.Op)
		}
		z, err := g.Z.eval(args, core, depth+1)
		if err != nil {
			return 0, err
		}
		return evalSplit(g.Op, x, y, z, core)
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

func coreTermName(op GwsOp) string {
	for n, o := range gwsCoreTerms {
		if o == op {
			return n
		}
	}
	return "a core term"
}

// evalSplit is split_work_to_cores for one core: units over a rows×cols
// grid.
func evalSplit(op GwsOp, units, rows, cols uint64, core *CoreEnv) (uint64, error) {
	hi, grid := bits.Mul64(rows, cols)
	if hi != 0 || grid == 0 {
		return 0, fmt.Errorf("%w: split over a %d×%d grid", ErrGridExpr, rows, cols)
	}
	used := min(units, grid)
	if op == GwsSplitCores {
		return used, nil
	}
	if used == 0 {
		return 0, nil
	}
	per, rem := units/used, units%used
	group1 := used
	if rem != 0 {
		group1 = rem
	}
	if op == GwsSplitGroup1 {
		return group1, nil
	}
	if core == nil {
		return 0, fmt.Errorf("%w: split_units and split_start are per-core terms, not defined here", ErrGridExpr)
	}
	if core.Row >= rows || core.Col >= cols {
		return 0, nil // outside the split grid: no work
	}
	k := core.Col*rows + core.Row // down the columns (row_wise false)
	if op == GwsSplitUnitsRW || op == GwsSplitStartRW {
		k = core.Row*cols + core.Col
	}
	if k >= used {
		return 0, nil
	}
	big := per
	if rem != 0 {
		big = per + 1
	}
	if op == GwsSplitUnits || op == GwsSplitUnitsRW {
		if k < group1 {
			return big, nil
		}
		return per, nil
	}
	if k < group1 {
		return k * big, nil
	}
	return group1*big + (k-group1)*per, nil
}

// Params lists the param ordinals the expression reads.
func (g GwsDim) Params() []int {
	return collect(&g, func(d *GwsDim) (int, bool) { return d.Param, d.Op == GwsParam })
}

// collect lists what pick gives for the nodes of g where it reports ok,
// depth first, each node before X, X before Y before Z.
func collect[T any](g *GwsDim, pick func(d *GwsDim) (T, bool)) []T {
	var out []T
	var walk func(d *GwsDim)
	walk = func(d *GwsDim) {
		if d == nil {
			return
		}
		if v, ok := pick(d); ok {
			out = append(out, v)
		}
		walk(d.X)
		walk(d.Y)
		walk(d.Z)
	}
	walk(g)
	return out
}

// Format writes the expression with param names from names ($N where a name
// is missing), with the parentheses its operators' precedence needs.
// ParseGws reads it back.
func (g GwsDim) Format(names []string) string { return g.format(names, 0) }

// format writes g where an operator binds at least as tightly as prec
// (1: + and -, 2: * / %) needs no parentheses.
func (g GwsDim) format(names []string, prec int) string {
	switch g.Op {
	case GwsConst:
		return strconv.FormatUint(g.Value, 10)
	case GwsParam:
		if g.Param >= 0 && g.Param < len(names) && names[g.Param] != "" {
			return names[g.Param]
		}
		return "$" + strconv.Itoa(g.Param)
	case GwsCoreRow, GwsCoreCol, GwsCoreIndex, GwsNumCores:
		return coreTermName(g.Op)
	case GwsName:
		return g.Name
	}
	if g.X == nil || g.Y == nil {
		return "?"
	}
	if g.Z != nil {
		for name, op := range gwsFuncs3 {
			if op == g.Op {
				return name + "(" + g.X.format(names, 0) + ", " + g.Y.format(names, 0) + ", " + g.Z.format(names, 0) + ")"
			}
		}
	}
	for name, op := range gwsFuncs {
		if op == g.Op {
			return name + "(" + g.X.format(names, 0) + ", " + g.Y.format(names, 0) + ")"
		}
	}
	sym := map[GwsOp]string{GwsAdd: "+", GwsSub: "-", GwsMul: "*", GwsDiv: "/", GwsMod: "%"}[g.Op]
	p := 1
	if g.Op == GwsMul || g.Op == GwsDiv || g.Op == GwsMod {
		p = 2
	}
	out := g.X.format(names, p) + " " + sym + " " + g.Y.format(names, p+1)
	if p < prec {
		return "(" + out + ")"
	}
	return out
}

func (g GwsDim) String() string { return g.Format(nil) }

// ParseGws reads a grid expression: unsigned integers, param names (resolved
// through lookup to an ordinal), $N for param ordinal N, + - * / %,
// parentheses, ceil_div(a, b), min(a, b), max(a, b), and for Tenstorrent
// per-core values the core terms core_row, core_col, core_index, num_cores
// and the split_work functions split_units, split_start, split_units_rw,
// split_start_rw, split_cores and split_group1 (units, rows, cols). A
// variable named like a core term shadows it.
func ParseGws(expr string, lookup func(name string) (int, bool)) (GwsDim, error) {
	d, err := ParseExpr(expr)
	if err != nil {
		return d, err
	}
	d, err = d.Resolve(func(name string) (GwsDim, bool) {
		if lookup == nil {
			return GwsDim{}, false
		}
		i, ok := lookup(name)
		return ParamDim(i), ok
	})
	if err != nil {
		return GwsDim{}, fmt.Errorf("grid expression %q: %w", expr, err)
	}
	return d, nil
}

// ParseExpr reads an expression as ParseGws does, keeping every name it
// does not know as a function as a name (GwsName), for Resolve to bind: a
// name that resolves to nothing and is a core term is that core term.
func ParseExpr(expr string) (GwsDim, error) {
	p := &gwsParser{src: expr}
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
	if d == nil || d.X == nil && d.Y == nil && d.Z == nil {
		return false
	}
	if limit == 0 {
		return true
	}
	return deeperThan(d.X, limit-1) || deeperThan(d.Y, limit-1) || deeperThan(d.Z, limit-1)
}

// Grid expressions are ASCII: byte-wise classification of UTF-8 would split
// multi-byte characters into pieces.
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

type gwsParser struct {
	src   string
	pos   int
	tok   string
	depth int
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

// The infix operators by precedence level, lowest first.
var (
	gwsSumOps     = map[string]GwsOp{"+": GwsAdd, "-": GwsSub}
	gwsProductOps = map[string]GwsOp{"*": GwsMul, "/": GwsDiv, "%": GwsMod}
)

func (p *gwsParser) sum() (GwsDim, error)     { return p.infix(gwsSumOps, p.product) }
func (p *gwsParser) product() (GwsDim, error) { return p.infix(gwsProductOps, p.atom) }

// infix parses operand (op operand)* for the operators of one precedence
// level, left-associative: the shape of both levels.
func (p *gwsParser) infix(ops map[string]GwsOp, operand func() (GwsDim, error)) (GwsDim, error) {
	x, err := operand()
	if err != nil {
		return x, err
	}
	for {
		op, ok := ops[p.tok]
		if !ok {
			return x, nil
		}
		p.next()
		y, err := operand()
		if err != nil {
			return y, err
		}
		x = BinaryDim(op, x, y)
	}
}

// callArgs parses the n arguments of a call of name, whose "(" is the
// current token, through the closing ")".
func (p *gwsParser) callArgs(name string, n int) ([]GwsDim, error) {
	args := make([]GwsDim, n)
	for i := range args {
		p.next()
		a, err := p.sum()
		if err != nil {
			return nil, err
		}
		args[i] = a
		if i == n-1 && p.tok != ")" {
			return nil, fmt.Errorf("expected ) after %s arguments", name)
		}
		if i < n-1 && p.tok != "," {
			return nil, fmt.Errorf("%s needs %s arguments", name, [...]string{2: "two", 3: "three"}[n])
		}
	}
	p.next()
	return args, nil
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
		if op, ok := gwsFuncs3[strings.ToLower(tok)]; ok && p.tok == "(" {
			args, err := p.callArgs(tok, 3)
			if err != nil {
				return GwsDim{}, err
			}
			return SplitDim(op, args[0], args[1], args[2]), nil
		}
		if op, ok := gwsFuncs[strings.ToLower(tok)]; ok && p.tok == "(" {
			args, err := p.callArgs(tok, 2)
			if err != nil {
				return GwsDim{}, err
			}
			return BinaryDim(op, args[0], args[1]), nil
		}
		return NameDim(tok), nil
	}
	return GwsDim{}, fmt.Errorf("unexpected %q at %d", tok, p.pos)
}

// Resolve replaces every name (GwsName) with what lookup gives for it; a
// name lookup does not know that is a core term (core_row, core_col,
// core_index, num_cores) becomes that term, so a variable of a core term's
// name shadows it. Any other unknown name is an error naming it.
func (g GwsDim) Resolve(lookup func(name string) (GwsDim, bool)) (GwsDim, error) {
	if g.Op == GwsName {
		if d, ok := lookup(g.Name); ok {
			return d, nil
		}
		if op, ok := gwsCoreTerms[strings.ToLower(g.Name)]; ok {
			return CoreDim(op), nil
		}
		return g, fmt.Errorf("unknown variable %q", g.Name)
	}
	out := g
	for _, c := range []**GwsDim{&out.X, &out.Y, &out.Z} {
		if *c == nil {
			continue
		}
		r, err := (*c).Resolve(lookup)
		if err != nil {
			return g, err
		}
		*c = &r
	}
	return out, nil
}

// Names lists the unresolved names the expression holds, in order.
func (g GwsDim) Names() []string {
	return collect(&g, func(d *GwsDim) (string, bool) { return d.Name, d.Op == GwsName })
}

// IsConst reports whether the expression is a constant, and its value.
func (g GwsDim) IsConst() (uint64, bool) { return g.Value, g.Op == GwsConst }

// MarshalJSON writes a constant as a JSON number and any other expression
// as a string UnmarshalJSON reads back.
func (g GwsDim) MarshalJSON() ([]byte, error) {
	if g.Op == GwsConst {
		return strconv.AppendUint(nil, g.Value, 10), nil
	}
	return []byte(strconv.Quote(g.Format(nil))), nil
}

// UnmarshalJSON reads a non-negative integer, or a string expression
// (ParseExpr: its names stay unresolved for Resolve).
func (g *GwsDim) UnmarshalJSON(b []byte) error {
	t := strings.TrimSpace(string(b))
	if t == "" || t == "null" {
		return errors.New("want a number or an expression, got null")
	}
	if t[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if strings.TrimSpace(s) == "" {
			return errors.New("empty expression")
		}
		d, err := ParseExpr(s)
		if err != nil {
			return err
		}
		*g = d
		return nil
	}
	v, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		return fmt.Errorf("want a non-negative integer or an expression, got %s", t)
	}
	*g = ConstDim(v)
	return nil
}
