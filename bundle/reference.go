package bundle

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/zyxtt/zyxtt/backends"
)

// Reference is a bundle's float64 host reference.
type Reference struct {
	Op             string // add, sub, mul, div, max, min, unary:F, matmul, identity
	Args           []int  // param ordinals of the operands
	Out            int    // param ordinal of the result
	M, N, K, Batch *backends.GwsDim
	TransA, TransB bool
	Atol, Rtol     *float64
	// PCC, when set, accepts float outputs by their Pearson correlation
	// with the expected values (at least *PCC), as tt-metal's tests do.
	PCC *float64
	// Path is the file of expected values of op file (.npy or .bin of the
	// output's dtype and shape), resolved against the bundle by Load.
	Path string

	argDTypes []backends.DType // the operands' dtypes
	outDType  backends.DType
}

var binaryOps = map[string]func(a, b float64) float64{
	"add": func(a, b float64) float64 { return a + b },
	"sub": func(a, b float64) float64 { return a - b },
	"mul": func(a, b float64) float64 { return a * b },
	"div": func(a, b float64) float64 { return a / b },
	"max": math.Max,
	"min": math.Min,
}

var unaryOps = map[string]func(float64) float64{
	"exp":     math.Exp,
	"log":     math.Log,
	"sqrt":    math.Sqrt,
	"neg":     func(x float64) float64 { return -x },
	"abs":     math.Abs,
	"relu":    func(x float64) float64 { return math.Max(x, 0) },
	"sigmoid": func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	"tanh":    math.Tanh,
	"sin":     math.Sin,
	"cos":     math.Cos,
	"recip":   func(x float64) float64 { return 1 / x },
	"square":  func(x float64) float64 { return x * x },
	"gelu": func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	},
	"softplus": func(x float64) float64 { return math.Log1p(math.Exp(x)) },
}

func (b *Bundle) parseReference(r *rawReference) (*Reference, error) {
	ferr := func(field, format string, args ...any) error {
		return &FieldError{Field: "reference" + field, Err: fmt.Errorf(format, args...)}
	}
	ref := &Reference{Op: r.Op, TransA: r.TransA, TransB: r.TransB, Atol: r.Atol, Rtol: r.Rtol, PCC: r.PCC}
	want := 0
	switch {
	case r.Op == "":
		return nil, ferr(".op", "missing")
	case binaryOps[r.Op] != nil, r.Op == "matmul":
		want = 2
	case r.Op == "identity":
		want = 1
	case r.Op == "file":
		if r.Path == "" {
			return nil, ferr(".path", "missing (op file reads the expected output from a .npy or .bin file)")
		}
		if !isFileSpec(r.Path) {
			return nil, ferr(".path", "%q: want a .npy or .bin file", r.Path)
		}
		ref.Path = r.Path
	case strings.HasPrefix(r.Op, "unary:"):
		if unaryOps[strings.TrimPrefix(r.Op, "unary:")] == nil {
			return nil, ferr(".op", "unknown unary function %q", strings.TrimPrefix(r.Op, "unary:"))
		}
		want = 1
	default:
		return nil, ferr(".op", "unknown op %q (add, sub, mul, div, max, min, unary:F, matmul, identity, file)", r.Op)
	}
	if len(r.Args) != want {
		return nil, ferr(".args", "op %s takes %d args, got %d", r.Op, want, len(r.Args))
	}
	if r.Path != "" && r.Op != "file" {
		return nil, ferr(".path", "only op file reads a file")
	}
	for i, name := range r.Args {
		j, ok := b.ParamIndex(name)
		if !ok || !b.Params[j].Kind.IsBuffer() {
			return nil, ferr(fmt.Sprintf(".args[%d]", i), "no buffer param named %q", name)
		}
		ref.Args = append(ref.Args, j)
		ref.argDTypes = append(ref.argDTypes, b.Params[j].DType)
	}
	j, ok := b.ParamIndex(r.Out)
	if !ok || b.Params[j].Kind != backends.GlobalMut {
		return nil, ferr(".out", "no global_mut param named %q", r.Out)
	}
	ref.Out = j
	ref.outDType = b.Params[j].DType
	if r.PCC != nil && (math.IsNaN(*r.PCC) || *r.PCC <= 0 || *r.PCC > 1) {
		return nil, ferr(".pcc", "%g: want a correlation above 0 and at most 1 (tt-metal's tests use 0.97 to 0.9999)", *r.PCC)
	}
	for _, f := range []struct {
		name string
		src  exprSrc
		dst  **backends.GwsDim
	}{{"m", r.M, &ref.M}, {"n", r.N, &ref.N}, {"k", r.K, &ref.K}, {"batch", r.Batch, &ref.Batch}} {
		if f.src == "" {
			if r.Op == "matmul" && f.name != "batch" {
				return nil, ferr("."+f.name, "missing (matmul needs m, n and k)")
			}
			continue
		}
		if r.Op != "matmul" {
			return nil, ferr("."+f.name, "only matmul takes sizes")
		}
		d, err := b.parseExpr(f.src)
		if err != nil {
			return nil, ferr("."+f.name, "%v", err)
		}
		*f.dst = &d
	}
	for _, t := range []struct {
		field string
		v     *float64
	}{{".atol", r.Atol}, {".rtol", r.Rtol}} {
		if t.v != nil && (*t.v < 0 || math.IsNaN(*t.v)) {
			return nil, ferr(t.field, "tolerances must be >= 0")
		}
	}
	return ref, nil
}

// Compute evaluates the reference: inputs are the operand params' data by
// ordinal (decoded to float64); it returns the expected output.
func (r *Reference) Compute(vals Values, inputs map[int][]float64) ([]float64, error) {
	args := make([][]float64, len(r.Args))
	for i, a := range r.Args {
		d, ok := inputs[a]
		if !ok {
			return nil, fmt.Errorf("%w: reference operand %d has no data", backends.ErrInvalidArgument, a)
		}
		args[i] = d
	}
	if f := binaryOps[r.Op]; f != nil {
		if len(args[0]) != len(args[1]) {
			return nil, fmt.Errorf("%w: %s operands have %d and %d elements", backends.ErrInvalidArgument, r.Op, len(args[0]), len(args[1]))
		}
		out := make([]float64, len(args[0]))
		for i := range out {
			out[i] = f(args[0][i], args[1][i])
		}
		return out, nil
	}
	if r.Op == "identity" {
		return append([]float64(nil), args[0]...), nil
	}
	if r.Op == "file" {
		return nil, fmt.Errorf("%w: a file reference is read by the run's verification, not computed", backends.ErrInvalidArgument)
	}
	if f := unaryOps[strings.TrimPrefix(r.Op, "unary:")]; f != nil {
		out := make([]float64, len(args[0]))
		for i, x := range args[0] {
			out[i] = f(x)
		}
		return out, nil
	}
	if r.Op != "matmul" {
		return nil, fmt.Errorf("%w: unknown reference op %q", backends.ErrInvalidArgument, r.Op)
	}
	dims, err := r.matmulDims(vals)
	if err != nil {
		return nil, err
	}
	return batchedMatmul(r, args[0], args[1], dims)
}

// batchedMatmul is the reference's matmul of a and b at dims (m, n, k,
// batch): batch row-major m×n products, a read as k×m under TransA and b as
// n×k under TransB. Integer sums wrap (two's complement).
func batchedMatmul[E float64 | int64](r *Reference, a, bm []E, dims [4]int) ([]E, error) {
	m, n, k, batch := dims[0], dims[1], dims[2], dims[3]
	sz, err := matmulSizes(m, n, k, batch)
	if err != nil {
		return nil, err
	}
	if uint64(len(a)) < sz.a || uint64(len(bm)) < sz.b {
		return nil, fmt.Errorf("%w: matmul operands (%d and %d elements) too small for %d×%d×%d ×%d", backends.ErrInvalidArgument, len(a), len(bm), m, n, k, batch)
	}
	out := make([]E, sz.c)
	for bt := range batch {
		ao, bo, co := bt*m*k, bt*k*n, bt*m*n
		for i := range m {
			for j := range n {
				var s E
				for l := range k {
					x := a[ao+i*k+l]
					if r.TransA {
						x = a[ao+l*m+i]
					}
					y := bm[bo+l*n+j]
					if r.TransB {
						y = bm[bo+j*k+l]
					}
					s += x * y
				}
				out[co+i*n+j] = s
			}
		}
	}
	return out, nil
}

// matmulDims are a matmul reference's m, n, k and batch (1 when not given)
// at the var values, each at most 2³¹.
func (r *Reference) matmulDims(vals Values) ([4]int, error) {
	var dims [4]int
	for i, e := range []*backends.GwsDim{r.M, r.N, r.K, r.Batch} {
		v := uint64(0)
		if i == 3 {
			v = 1 // batch
		}
		if e != nil {
			var err error
			if v, err = evalHost(*e, vals); err != nil {
				return dims, err
			}
		}
		if v > 1<<31 {
			return dims, fmt.Errorf("%w: matmul size %d too large", backends.ErrInvalidArgument, v)
		}
		dims[i] = int(v)
	}
	return dims, nil
}

// invalidArg is err marked as backends.ErrInvalidArgument unless it is one
// already.
func invalidArg(err error) error {
	if errors.Is(err, backends.ErrInvalidArgument) {
		return err
	}
	return fmt.Errorf("%w: %w", backends.ErrInvalidArgument, err)
}

// matmulElems are the element counts of a batched matmul's operands and
// result.
type matmulElems struct{ a, b, c uint64 }

// maxRefElems bounds a reference's result: the host computes it in float64
// (8 bytes an element), so 2^31 elements is 16 GiB.
const maxRefElems = 1 << 31

// matmulSizes computes batch·m·k, batch·k·n and batch·m·n without
// overflowing, refusing a result past maxRefElems.
func matmulSizes(m, n, k, batch int) (matmulElems, error) {
	mul := func(xs ...int) (uint64, bool) {
		p := uint64(1)
		for _, x := range xs {
			hi, lo := bits.Mul64(p, uint64(x))
			if hi != 0 {
				return 0, false
			}
			p = lo
		}
		return p, true
	}
	var e matmulElems
	var ok1, ok2, ok3 bool
	e.a, ok1 = mul(batch, m, k)
	e.b, ok2 = mul(batch, k, n)
	e.c, ok3 = mul(batch, m, n)
	if !ok1 || !ok2 || !ok3 || e.c > maxRefElems {
		return e, fmt.Errorf("%w: matmul %d×%d×%d ×%d is too large for the host reference", backends.ErrInvalidArgument, m, n, k, batch)
	}
	return e, nil
}

// Check checks the reference against the buffers it reads and writes at the
// var values: elementwise operands have the output's element count, and a
// matmul's operands hold batch·m·k and batch·k·n elements and its output
// exactly batch·m·n. Load and Prepare run it, so a reference that cannot be
// computed is an error before anything runs.
func (r *Reference) Check(b *Bundle, vals Values, shapes [][]uint64) error {
	if r == nil {
		return nil
	}
	elems := func(i int) uint64 { return uint64(Elems(shapes[i])) }
	out := elems(r.Out)
	ferr := func(format string, args ...any) error {
		return &FieldError{File: b.path(ManifestFile), Field: "reference", Err: fmt.Errorf("%w: "+format, append([]any{backends.ErrInvalidArgument}, args...)...)}
	}
	if r.Op != "matmul" {
		for _, a := range r.Args {
			if elems(a) != out {
				return ferr("%s: operand %s has %d elements and the output %s %d", r.Op, b.Params[a].Name, elems(a), b.Params[r.Out].Name, out)
			}
		}
		return nil
	}
	dims, err := r.matmulDims(vals)
	if err != nil {
		return &FieldError{File: b.path(ManifestFile), Field: "reference", Err: invalidArg(err)}
	}
	sz, err := matmulSizes(dims[0], dims[1], dims[2], dims[3])
	if err != nil {
		return ferr("%v", err)
	}
	a, bb := r.Args[0], r.Args[1]
	switch {
	case elems(a) < sz.a:
		return ferr("matmul operand %s has %d elements, fewer than batch·m·k = %d", b.Params[a].Name, elems(a), sz.a)
	case elems(bb) < sz.b:
		return ferr("matmul operand %s has %d elements, fewer than batch·k·n = %d", b.Params[bb].Name, elems(bb), sz.b)
	case out != sz.c:
		return ferr("matmul output %s has %d elements, not batch·m·n = %d", b.Params[r.Out].Name, out, sz.c)
	}
	return nil
}

// Tolerance is the allowed error: |got-want| <= Atol + Rtol·|want|.
type Tolerance struct{ Atol, Rtol float64 }

// DefaultTolerance is the per-dtype tolerance of docs/programs.md.
func DefaultTolerance(dt backends.DType) Tolerance {
	switch dt {
	case backends.F64:
		return Tolerance{1e-12, 1e-12}
	case backends.F32:
		return Tolerance{1e-5, 1e-5}
	case backends.F16:
		return Tolerance{1e-2, 1e-2}
	case backends.BF16:
		return Tolerance{1e-2, 2e-2}
	case backends.F8E4M3, backends.F8E5M2:
		return Tolerance{1e-1, 1e-1}
	}
	return Tolerance{}
}

// Tolerance is the reference's tolerance for dtype dt, scaled for matmul's
// accumulation by sqrt(k) and overridden by atol/rtol in the manifest.
func (r *Reference) Tolerance(dt backends.DType, vals Values) Tolerance {
	t := DefaultTolerance(dt)
	if r == nil {
		return t
	}
	if r.Op == "identity" && len(r.argDTypes) == 1 && r.argDTypes[0] == dt {
		// A copy in the same dtype is exact.
		t = Tolerance{}
	}
	if r.Op == "matmul" && r.K != nil && dt.IsFloat() {
		if k, err := evalHost(*r.K, vals); err == nil && k > 1 {
			s := math.Sqrt(float64(k))
			t.Atol *= s
			t.Rtol *= s
		}
	}
	if r.Atol != nil {
		t.Atol = *r.Atol
	}
	if r.Rtol != nil {
		t.Rtol = *r.Rtol
	}
	return t
}

// Comparison is the result of checking outputs against expected values.
type Comparison struct {
	MaxAbs, MaxRel float64
	// Worst is the index of the element furthest outside the tolerance (or
	// of the largest absolute error when all are inside).
	Worst      int
	Mismatches int64
	Elems      int
	Tol        Tolerance
}

// OK reports whether every element was within tolerance.
func (c Comparison) OK() bool { return c.Mismatches == 0 }

// Compare checks got against want element by element. A non-finite
// expected value matches only the same non-finite value (NaN with NaN, +Inf
// with +Inf, -Inf with -Inf), whatever the tolerance; a non-finite result
// where a finite one is expected is a mismatch.
func Compare(got, want []float64, tol Tolerance) (Comparison, error) {
	c := Comparison{Tol: tol, Elems: len(got)}
	if len(got) != len(want) {
		return c, fmt.Errorf("%w: %d elements against %d expected", backends.ErrInvalidArgument, len(got), len(want))
	}
	worstExcess := math.Inf(-1)
	for i := range got {
		g, w := got[i], want[i]
		if math.IsNaN(w) || math.IsInf(w, 0) {
			if (math.IsNaN(g) && math.IsNaN(w)) || g == w {
				continue
			}
			// No tolerance reaches a non-finite value: a mismatch by an
			// infinite margin (NaN would never count as one).
			c.Mismatches++
			c.MaxAbs, c.MaxRel = math.Inf(1), math.Inf(1)
			if worstExcess < math.Inf(1) {
				worstExcess, c.Worst = math.Inf(1), i
			}
			continue
		}
		abs := math.Abs(g - w)
		if math.IsNaN(abs) {
			abs = math.Inf(1)
		}
		rel := abs / math.Max(math.Abs(w), math.SmallestNonzeroFloat64)
		if abs == 0 {
			rel = 0
		}
		c.MaxAbs = math.Max(c.MaxAbs, abs)
		c.MaxRel = math.Max(c.MaxRel, rel)
		excess := abs - (tol.Atol + tol.Rtol*math.Abs(w))
		if excess > 0 {
			c.Mismatches++
		}
		if excess > worstExcess {
			worstExcess, c.Worst = excess, i
		}
	}
	return c, nil
}

// PCCResult is an output's Pearson correlation with its expected values.
type PCCResult struct {
	// PCC is the correlation over the elements where the expected value is
	// finite (1 when got equals want there).
	PCC float64
	// NonFinite counts the elements that break the non-finite rule: an
	// expected NaN or ±Inf not matched by the same value, or a non-finite
	// result where a finite one is expected.
	NonFinite int64
}

// PCC is the Pearson correlation coefficient of got and want, as
// tt-metal's tests accept outputs (comp_pcc). Expected non-finite values
// must be matched exactly and are left out of the correlation; a
// non-finite result where a finite value is expected counts in NonFinite.
// When either side has no variance the correlation is undefined: it is 1
// if every pair is within tol, else 0.
func PCC(got, want []float64, tol Tolerance) (PCCResult, error) {
	var res PCCResult
	if len(got) != len(want) {
		return res, fmt.Errorf("%w: %d elements against %d expected", backends.ErrInvalidArgument, len(got), len(want))
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	var n int
	var sg, sw float64
	equal := true
	for i := range got {
		g, w := got[i], want[i]
		if !finite(w) {
			if !(math.IsNaN(g) && math.IsNaN(w)) && g != w {
				res.NonFinite++
			}
			continue
		}
		if !finite(g) {
			res.NonFinite++
			continue
		}
		if g != w {
			equal = false
		}
		n++
		sg += g
		sw += w
	}
	if n == 0 || equal {
		res.PCC = 1
		return res, nil
	}
	mg, mw := sg/float64(n), sw/float64(n)
	var cov, vg, vw float64
	for i := range got {
		g, w := got[i], want[i]
		if !finite(w) || !finite(g) {
			continue
		}
		dg, dw := g-mg, w-mw
		cov += dg * dw
		vg += dg * dg
		vw += dw * dw
	}
	if vg == 0 || vw == 0 {
		res.PCC = 1
		for i := range got {
			g, w := got[i], want[i]
			if finite(w) && finite(g) && math.Abs(g-w) > tol.Atol+tol.Rtol*math.Abs(w) {
				res.PCC = 0
				break
			}
		}
		return res, nil
	}
	res.PCC = cov / math.Sqrt(vg*vw)
	if res.PCC > 1 { // rounding
		res.PCC = 1
	}
	return res, nil
}
