package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

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
	ferr := func(field string, format string, args ...any) error {
		return &FieldError{file, field, fmt.Errorf(format, args...)}
	}
	if m.Name == "" {
		return nil, ferr("name", "missing")
	}
	b := &Bundle{Name: m.Name, Description: m.Description, Inputs: map[int]string{}}
	for i, rv := range m.Vars {
		field := fmt.Sprintf("vars[%d]", i)
		_, dup := b.VarIndex(rv.Name)
		if err := checkName(file, field, "var", rv.Name, dup); err != nil {
			return nil, err
		}
		if rv.DType == "" {
			return nil, ferr(field+".dtype", "missing")
		}
		dt, err := backends.ParseDType(rv.DType)
		if err != nil {
			return nil, ferr(field+".dtype", "%v", err)
		}
		if rv.Default == "" {
			return nil, ferr(field+".default", "missing")
		}
		c, err := ParseConstant(dt, rv.Default.String())
		if err != nil {
			return nil, ferr(field+".default", "%v", err)
		}
		b.Vars = append(b.Vars, Var{Name: rv.Name, DType: dt, Default: c, Param: -1})
	}
	noOutputs := m.Outputs != nil && len(m.Outputs) == 0
	if len(m.Params) == 0 && !noOutputs {
		return nil, ferr("params", "missing (a program needs at least one param; one that only prints says \"outputs\": [])")
	}
	for i, rp := range m.Params {
		field := fmt.Sprintf("params[%d]", i)
		_, dup := b.ParamIndex(rp.Name)
		if err := checkName(file, field, "param", rp.Name, dup); err != nil {
			return nil, err
		}
		var kind backends.ParamKind
		if rp.Kind == "" {
			return nil, ferr(field+".kind", "missing (global, global_mut or variable)")
		}
		if err := kind.UnmarshalText([]byte(rp.Kind)); err != nil {
			return nil, ferr(field+".kind", "%v", err)
		}
		p := Param{Param: backends.Param{Name: rp.Name, Kind: kind}}
		if rp.DType != "" {
			dt, err := backends.ParseDType(rp.DType)
			if err != nil {
				return nil, ferr(field+".dtype", "%v", err)
			}
			p.DType = dt
		}
		if kind == backends.Variable {
			vi, ok := b.VarIndex(rp.Name)
			if !ok {
				return nil, ferr(field+".name", "variable param %q has no var of the same name", rp.Name)
			}
			if rp.DType == "" {
				p.DType = b.Vars[vi].DType
			} else if p.DType != b.Vars[vi].DType {
				return nil, ferr(field+".dtype", "%s, but var %s is %s", p.DType, rp.Name, b.Vars[vi].DType)
			}
			if rp.Shape != nil {
				return nil, ferr(field+".shape", "a variable param has no shape")
			}
			b.Vars[vi].Param = i
		} else {
			if rp.DType == "" {
				return nil, ferr(field+".dtype", "missing")
			}
			if rp.Shape == nil {
				return nil, ferr(field+".shape", "missing (a buffer param needs a shape; [] is one element)")
			}
			shape, err := b.parseExprs(rp.Shape, file, field+".shape")
			if err != nil {
				return nil, err
			}
			p.Shape = shape
			for _, s := range rp.Shape {
				p.ShapeSrc = append(p.ShapeSrc, string(s))
			}
		}
		b.Params = append(b.Params, p)
	}
	if len(m.Grid) > 3 {
		return nil, ferr("grid", "%d axes, at most 3", len(m.Grid))
	}
	grid, err := b.parseExprs(m.Grid, file, "grid")
	if err != nil {
		return nil, err
	}
	b.grid = grid

	names := make([]string, 0, len(m.Inputs))
	for name := range m.Inputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		i, ok := b.ParamIndex(name)
		if !ok || !b.Params[i].Kind.IsBuffer() {
			return nil, ferr("inputs."+name, "no buffer param named %q", name)
		}
		spec := m.Inputs[name]
		if _, err := ParseGen(spec); err != nil && !isFileSpec(spec) {
			return nil, ferr("inputs."+name, "%v", err)
		}
		b.Inputs[i] = spec
	}
	if m.Outputs == nil {
		for i, p := range b.Params {
			if p.Kind == backends.GlobalMut {
				b.Outputs = append(b.Outputs, i)
			}
		}
	}
	for j, name := range m.Outputs {
		i, ok := b.ParamIndex(name)
		if !ok || b.Params[i].Kind != backends.GlobalMut {
			return nil, ferr(fmt.Sprintf("outputs[%d]", j), "no global_mut param named %q", name)
		}
		b.Outputs = append(b.Outputs, i)
	}
	if len(b.Outputs) == 0 && !noOutputs {
		return nil, ferr("outputs", "the program has no outputs (no global_mut param; one that only prints says \"outputs\": [])")
	}
	if noOutputs && m.Reference != nil {
		return nil, ferr("reference", "a program without outputs has nothing to compare")
	}
	if m.Reference != nil {
		ref, err := b.parseReference(m.Reference)
		if err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				fe.File = file
				return nil, fe
			}
			return nil, ferr("reference", "%v", err)
		}
		b.Ref = ref
	}
	return b, nil
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
