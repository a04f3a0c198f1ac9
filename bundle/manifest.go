package bundle

import (
	"errors"
	"fmt"
	"sort"

	json "github.com/goccy/go-json"

	"github.com/zyxtt/zyxtt/backends"
)

type rawManifest struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Vars        []rawVar          `json:"vars"`
	Params      []rawParam        `json:"params"`
	Grid        []exprSrc         `json:"grid"`
	Inputs      map[string]string `json:"inputs"`
	Outputs     []string          `json:"outputs"`
	Reference   *rawReference     `json:"reference"`
}

type rawVar struct {
	Name    string      `json:"name"`
	DType   string      `json:"dtype"`
	Default json.Number `json:"default"`
}

type rawParam struct {
	Name  string    `json:"name"`
	Kind  string    `json:"kind"`
	DType string    `json:"dtype"`
	Shape []exprSrc `json:"shape"`
}

type rawReference struct {
	Op     string   `json:"op"`
	Args   []string `json:"args"`
	Out    string   `json:"out"`
	M      exprSrc  `json:"m"`
	N      exprSrc  `json:"n"`
	K      exprSrc  `json:"k"`
	Batch  exprSrc  `json:"batch"`
	TransA bool     `json:"trans_a"`
	TransB bool     `json:"trans_b"`
	Atol   *float64 `json:"atol"`
	Rtol   *float64 `json:"rtol"`
	PCC    *float64 `json:"pcc"`
	Path   string   `json:"path"`
}

// checkName checks the name of the var or param (kind) at field: an
// identifier, not defined before (dup).
func checkName(file, field, kind, name string, dup bool) error {
	if !identRE.MatchString(name) {
		return &FieldError{file, field + ".name", fmt.Errorf("%q is not an identifier", name)}
	}
	if dup {
		return &FieldError{file, field + ".name", fmt.Errorf("%s %q defined twice", kind, name)}
	}
	return nil
}

// ParseManifest decodes and checks a manifest. file names it in errors.
// The bundle it returns has no variants and no directory; Load adds them.
func ParseManifest(data []byte, file string) (*Bundle, error) {
	var m rawManifest
	if err := decodeStrict(data, file, &m); err != nil {
		return nil, err
	}
	if m.Name == "" {
		return nil, &FieldError{file, "name", errors.New("missing")}
	}
	b := &Bundle{Name: m.Name, Description: m.Description, Inputs: map[int]string{}}
	mp := manifestParser{b: b, file: file}
	noOutputs := m.Outputs != nil && len(m.Outputs) == 0
	steps := []func() error{
		func() error { return mp.vars(m.Vars) },
		func() error {
			if len(m.Params) == 0 && !noOutputs {
				return mp.errf("params", "missing (a program needs at least one param; one that only prints says \"outputs\": [])")
			}
			return mp.params(m.Params)
		},
		func() error { return mp.grid(m.Grid) },
		func() error { return mp.inputs(m.Inputs) },
		func() error { return mp.outputs(m.Outputs, noOutputs) },
		func() error { return mp.reference(m.Reference, noOutputs) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// manifestParser fills a Bundle from a manifest's sections in order; its
// errors name the file and the field.
type manifestParser struct {
	b    *Bundle
	file string
}

func (mp manifestParser) errf(field string, format string, args ...any) error {
	return &FieldError{mp.file, field, fmt.Errorf(format, args...)}
}

func (mp manifestParser) vars(vars []rawVar) error {
	b := mp.b
	for i, rv := range vars {
		field := fmt.Sprintf("vars[%d]", i)
		_, dup := b.VarIndex(rv.Name)
		if err := checkName(mp.file, field, "var", rv.Name, dup); err != nil {
			return err
		}
		if rv.DType == "" {
			return mp.errf(field+".dtype", "missing")
		}
		dt, err := backends.ParseDType(rv.DType)
		if err != nil {
			return mp.errf(field+".dtype", "%v", err)
		}
		if rv.Default == "" {
			return mp.errf(field+".default", "missing")
		}
		c, err := ParseConstant(dt, rv.Default.String())
		if err != nil {
			return mp.errf(field+".default", "%v", err)
		}
		b.Vars = append(b.Vars, Var{Name: rv.Name, DType: dt, Default: c, Param: -1})
	}
	return nil
}

func (mp manifestParser) params(params []rawParam) error {
	for i, rp := range params {
		field := fmt.Sprintf("params[%d]", i)
		_, dup := mp.b.ParamIndex(rp.Name)
		if err := checkName(mp.file, field, "param", rp.Name, dup); err != nil {
			return err
		}
		p, err := mp.param(i, rp, field)
		if err != nil {
			return err
		}
		mp.b.Params = append(mp.b.Params, p)
	}
	return nil
}

// param is params[i]: a Variable param takes the dtype of its var, a
// buffer param has a dtype and a shape.
func (mp manifestParser) param(i int, rp rawParam, field string) (Param, error) {
	b := mp.b
	var kind backends.ParamKind
	if rp.Kind == "" {
		return Param{}, mp.errf(field+".kind", "missing (global, global_mut or variable)")
	}
	if err := kind.UnmarshalText([]byte(rp.Kind)); err != nil {
		return Param{}, mp.errf(field+".kind", "%v", err)
	}
	p := Param{Param: backends.Param{Name: rp.Name, Kind: kind}}
	if rp.DType != "" {
		dt, err := backends.ParseDType(rp.DType)
		if err != nil {
			return Param{}, mp.errf(field+".dtype", "%v", err)
		}
		p.DType = dt
	}
	if kind == backends.Variable {
		vi, ok := b.VarIndex(rp.Name)
		if !ok {
			return Param{}, mp.errf(field+".name", "variable param %q has no var of the same name", rp.Name)
		}
		if rp.DType == "" {
			p.DType = b.Vars[vi].DType
		} else if p.DType != b.Vars[vi].DType {
			return Param{}, mp.errf(field+".dtype", "%s, but var %s is %s", p.DType, rp.Name, b.Vars[vi].DType)
		}
		if rp.Shape != nil {
			return Param{}, mp.errf(field+".shape", "a variable param has no shape")
		}
		b.Vars[vi].Param = i
		return p, nil
	}
	if rp.DType == "" {
		return Param{}, mp.errf(field+".dtype", "missing")
	}
	if rp.Shape == nil {
		return Param{}, mp.errf(field+".shape", "missing (a buffer param needs a shape; [] is one element)")
	}
	shape, err := b.parseExprs(rp.Shape, mp.file, field+".shape")
	if err != nil {
		return Param{}, err
	}
	p.Shape = shape
	for _, s := range rp.Shape {
		p.ShapeSrc = append(p.ShapeSrc, string(s))
	}
	return p, nil
}

func (mp manifestParser) grid(axes []exprSrc) error {
	if len(axes) > 3 {
		return mp.errf("grid", "%d axes, at most 3", len(axes))
	}
	grid, err := mp.b.parseExprs(axes, mp.file, "grid")
	if err != nil {
		return err
	}
	mp.b.grid = grid
	return nil
}

func (mp manifestParser) inputs(inputs map[string]string) error {
	b := mp.b
	names := make([]string, 0, len(inputs))
	for name := range inputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		i, ok := b.ParamIndex(name)
		if !ok || !b.Params[i].Kind.IsBuffer() {
			return mp.errf("inputs."+name, "no buffer param named %q", name)
		}
		spec := inputs[name]
		if _, err := ParseGen(spec); err != nil && !isFileSpec(spec) {
			return mp.errf("inputs."+name, "%v", err)
		}
		b.Inputs[i] = spec
	}
	return nil
}

// outputs are the named global_mut params; without the field, every
// global_mut param.
func (mp manifestParser) outputs(outputs []string, noOutputs bool) error {
	b := mp.b
	if outputs == nil {
		for i, p := range b.Params {
			if p.Kind == backends.GlobalMut {
				b.Outputs = append(b.Outputs, i)
			}
		}
	}
	for j, name := range outputs {
		i, ok := b.ParamIndex(name)
		if !ok || b.Params[i].Kind != backends.GlobalMut {
			return mp.errf(fmt.Sprintf("outputs[%d]", j), "no global_mut param named %q", name)
		}
		b.Outputs = append(b.Outputs, i)
	}
	if len(b.Outputs) == 0 && !noOutputs {
		return mp.errf("outputs", "the program has no outputs (no global_mut param; one that only prints says \"outputs\": [])")
	}
	return nil
}

func (mp manifestParser) reference(raw *rawReference, noOutputs bool) error {
	if raw == nil {
		return nil
	}
	if noOutputs {
		return mp.errf("reference", "a program without outputs has nothing to compare")
	}
	ref, err := mp.b.parseReference(raw)
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.File = mp.file
			return fe
		}
		return mp.errf("reference", "%v", err)
	}
	mp.b.Ref = ref
	return nil
}

// Shapes evaluates every buffer param's shape (nil for Variable params).
func (b *Bundle) Shapes(vals Values) ([][]uint64, error) {
	out := make([][]uint64, len(b.Params))
	for i, p := range b.Params {
		if !p.Kind.IsBuffer() {
			continue
		}
		shape := make([]uint64, len(p.Shape))
		elems := uint64(1)
		for j, d := range p.Shape {
			v, err := evalHost(d, vals)
			if err != nil {
				return nil, fmt.Errorf("param %s: shape[%d] %s: %w", p.Name, j, p.ShapeSrc[j], err)
			}
			shape[j] = v
			if v != 0 && elems > (1<<62)/v {
				return nil, fmt.Errorf("%w: param %s: shape %v overflows", backends.ErrInvalidArgument, p.Name, p.ShapeSrc)
			}
			elems *= v
		}
		// Compare by division: elems·size itself can pass 2⁶⁴ and wrap.
		if elems > (1<<62)/uint64(max(p.DType.Size(), 1)) {
			return nil, fmt.Errorf("%w: param %s: shape %v is too large", backends.ErrInvalidArgument, p.Name, p.ShapeSrc)
		}
		out[i] = shape
	}
	return out, nil
}

// Elems is the number of elements of a shape.
func Elems(shape []uint64) int64 {
	n := int64(1)
	for _, s := range shape {
		n *= int64(s)
	}
	return n
}
