package bundle

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/kernels"
)

// rawLaunch is how a source or SPIR-V variant's kernel is launched: its
// entry point, work-group size and grid.
type rawLaunch struct {
	Entry string    `json:"entry"`
	Local []uint32  `json:"local"`
	Grid  []exprSrc `json:"grid"`
}

type rawSource struct {
	Source  string   `json:"source"`
	Options []string `json:"options"`
	rawLaunch
}

type rawSPIRV struct {
	SPIRV string `json:"spirv"`
	GLSL  string `json:"glsl"`
	rawLaunch
}

type rawGEMM struct {
	DType   string    `json:"dtype"`
	Compute string    `json:"compute"`
	TransA  bool      `json:"trans_a"`
	TransB  bool      `json:"trans_b"`
	M       exprSrc   `json:"m"`
	N       exprSrc   `json:"n"`
	K       exprSrc   `json:"k"`
	Batch   *exprSrc  `json:"batch"`
	LdA     *exprSrc  `json:"lda"`
	LdB     *exprSrc  `json:"ldb"`
	LdC     *exprSrc  `json:"ldc"`
	StrideA *exprSrc  `json:"stride_a"`
	StrideB *exprSrc  `json:"stride_b"`
	StrideC *exprSrc  `json:"stride_c"`
	Alpha   *float64  `json:"alpha"`
	Beta    *float64  `json:"beta"`
	A       ref       `json:"a"`
	B       ref       `json:"b"`
	C       ref       `json:"c"`
	Grid    []exprSrc `json:"grid"`
}

// gemmSpec is a GEMM variant with its sizes still over var ordinals.
type gemmSpec struct {
	v    backends.GEMMVariant
	dims map[string]*backends.GwsDim // m, n, k, batch, lda, … over vars
}

// variantDecoders parse a variant file by the Go type of its format's code,
// so the bundle format never names a backend: every format whose code is
// source text shares one decoder, and so on.
var variantDecoders = map[reflect.Type]func(b *Bundle, v *variant, file string, data []byte, h *variantHelpers) error{
	reflect.TypeFor[*backends.SourceVariant](): decodeAs((*Bundle).decodeSource),
	reflect.TypeFor[*backends.SPIRVVariant]():  decodeAs((*Bundle).decodeSPIRV),
	reflect.TypeFor[*backends.GEMMVariant]():   decodeAs((*Bundle).decodeGEMM),
}

// decodeAs is the decoder of variant files of raw type R: it decodes the
// file strictly and hands the value to parse.
func decodeAs[R any](parse func(b *Bundle, v *variant, file string, r *R, h *variantHelpers) error) func(b *Bundle, v *variant, file string, data []byte, h *variantHelpers) error {
	return func(b *Bundle, v *variant, file string, data []byte, h *variantHelpers) error {
		var r R
		if err := decodeStrict(data, file, &r); err != nil {
			return err
		}
		return parse(b, v, file, &r, h)
	}
}

// variantHelpers are what every decoder shares: errors naming the file and
// field, reading a source file of the bundle, local sizes and the grid.
type variantHelpers struct {
	ferr       func(field, format string, args ...any) error
	readSource func(field, rel string) ([]byte, error)
	local      func(l []uint32) ([3]uint32, error)
	grid       func(g []exprSrc) error
}

// libraryName is the kernel library path that rel names with the zyx:
// prefix: ok is whether rel has the prefix, err whether the path after it
// is one this format may name. The library keeps each format's files below
// a directory of the format's name, so a variant of one format cannot take
// another's: a Tenstorrent kernel named from c.json is an error here, not a
// compile error later.
func libraryName(rel string, format backends.Format) (name string, ok bool, err error) {
	name, ok = strings.CutPrefix(rel, kernels.Prefix)
	if !ok {
		return "", false, nil
	}
	if first, _, _ := strings.Cut(name, "/"); first != string(format) {
		return "", true, fmt.Errorf("%q: a %s variant names library files below %s%s/ (a file of the bundle with this name is ./%s)",
			rel, format, kernels.Prefix, format, rel)
	}
	return name, true, nil
}

func (b *Bundle) parseVariant(fi backends.FormatInfo, file string, data []byte) (*variant, error) {
	v := &variant{file: file, format: fi.Name}
	if own := ownVariant(fi); own != nil {
		if err := own.LoadBundle(&bundleSource{b: b, file: file, format: fi.Name}, data); err != nil {
			return nil, fileError(file, err)
		}
		v.own = own
		return v, nil
	}
	ferr := func(field, format string, args ...any) error {
		return &FieldError{file, field, fmt.Errorf(format, args...)}
	}
	readSource := func(field, rel string) ([]byte, error) {
		if rel == "" {
			return nil, ferr(field, "missing")
		}
		if name, ok, err := libraryName(rel, fi.Name); ok {
			if err != nil {
				return nil, ferr(field, "%v", err)
			}
			data, err := kernels.Read(name)
			if err != nil {
				return nil, ferr(field, "%v", err)
			}
			return data, nil
		}
		p, err := inBundle(b.Dir, rel)
		if err != nil {
			return nil, ferr(field, "%v", err)
		}
		data, err := readLimited(p)
		if err != nil {
			return nil, ferr(field, "%v", err)
		}
		return data, nil
	}
	local := func(l []uint32) ([3]uint32, error) {
		var out [3]uint32
		if len(l) > 3 {
			return out, ferr("local", "%d axes, at most 3", len(l))
		}
		copy(out[:], l)
		return out, nil
	}
	grid := func(g []exprSrc) error {
		if g == nil {
			return nil
		}
		if len(g) > 3 {
			return ferr("grid", "%d axes, at most 3", len(g))
		}
		d, err := b.parseExprs(g, file, "grid")
		if err != nil {
			return err
		}
		if d == nil {
			d = []backends.GwsDim{}
		}
		v.grid = d
		return nil
	}
	dec, ok := variantDecoders[fi.Code]
	if !ok {
		return nil, fmt.Errorf("%w: %s: format %s has code of type %s, which bundles cannot describe", ErrBundle, file, fi.Name, fi.Code)
	}
	if err := dec(b, v, file, data, &variantHelpers{ferr: ferr, readSource: readSource, local: local, grid: grid}); err != nil {
		return nil, err
	}
	return v, nil
}

func (b *Bundle) decodeSource(v *variant, file string, r *rawSource, h *variantHelpers) error {
	src, err := h.readSource("source", r.Source)
	if err != nil {
		return err
	}
	if r.Entry == "" {
		return h.ferr("entry", "missing (the kernel function's name)")
	}
	l, err := h.local(r.Local)
	if err != nil {
		return err
	}
	v.source = &backends.SourceVariant{Source: string(src), Entry: r.Entry, Options: r.Options, Local: l}
	return h.grid(r.Grid)
}

func (b *Bundle) decodeSPIRV(v *variant, file string, r *rawSPIRV, h *variantHelpers) error {
	code, err := h.readSource("spirv", r.SPIRV)
	if err != nil {
		return err
	}
	if len(code) < 20 || len(code)%4 != 0 || binary.LittleEndian.Uint32(code) != 0x07230203 {
		return h.ferr("spirv", "%s is not a SPIR-V module (bad magic or size)", r.SPIRV)
	}
	if r.GLSL != "" {
		if _, err := h.readSource("glsl", r.GLSL); err != nil {
			return err
		}
	}
	entry := r.Entry
	if entry == "" {
		entry = "main"
	}
	l, err := h.local(r.Local)
	if err != nil {
		return err
	}
	v.spirv = &backends.SPIRVVariant{Code: code, Entry: entry, Local: l}
	return h.grid(r.Grid)
}

func (b *Bundle) decodeGEMM(v *variant, file string, r *rawGEMM, h *variantHelpers) error {
	g, err := b.parseGEMM(r, file)
	if err != nil {
		return err
	}
	v.gemm = g
	return h.grid(r.Grid)
}

// resolveRef finds the param a ref names.
func (b *Bundle) resolveRef(r ref) (int, error) {
	s := string(r)
	if s == "" {
		return -1, errors.New("missing")
	}
	if n, ok := strings.CutPrefix(s, "$"); ok {
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= len(b.Params) {
			return -1, fmt.Errorf("param ordinal %s out of range (%d params)", n, len(b.Params))
		}
		return i, nil
	}
	i, ok := b.ParamIndex(s)
	if !ok {
		return -1, fmt.Errorf("no param named %q", s)
	}
	return i, nil
}

func (b *Bundle) parseGEMM(r *rawGEMM, file string) (*gemmSpec, error) {
	ferr := func(field, format string, args ...any) error {
		return &FieldError{file, field, fmt.Errorf(format, args...)}
	}
	g := &gemmSpec{dims: map[string]*backends.GwsDim{}}
	if r.DType == "" {
		return nil, ferr("dtype", "missing")
	}
	dt, err := backends.ParseDType(r.DType)
	if err != nil {
		return nil, ferr("dtype", "%v", err)
	}
	switch dt {
	case backends.F32, backends.F64, backends.F16, backends.BF16:
	default:
		return nil, ferr("dtype", "%s: GEMM takes f32, f64, f16 or bf16", dt)
	}
	if r.Compute != "" && r.Compute != "tf32" {
		return nil, ferr("compute", "%q: want \"\" or \"tf32\"", r.Compute)
	}
	g.v = backends.GEMMVariant{DType: dt, Compute: r.Compute, TransA: r.TransA, TransB: r.TransB, Alpha: 1}
	if r.Alpha != nil {
		g.v.Alpha = *r.Alpha
	}
	if r.Beta != nil {
		g.v.Beta = *r.Beta
	}
	for _, f := range []struct {
		name string
		src  *exprSrc
		need bool
	}{{"m", &r.M, true}, {"n", &r.N, true}, {"k", &r.K, true}, {"batch", r.Batch, false},
		{"lda", r.LdA, false}, {"ldb", r.LdB, false}, {"ldc", r.LdC, false},
		{"stride_a", r.StrideA, false}, {"stride_b", r.StrideB, false}, {"stride_c", r.StrideC, false}} {
		if f.src == nil || *f.src == "" {
			if f.need {
				return nil, ferr(f.name, "missing")
			}
			continue
		}
		d, err := b.parseExpr(*f.src)
		if err != nil {
			return nil, ferr(f.name, "%v", err)
		}
		g.dims[f.name] = &d
	}
	for _, f := range []struct {
		name string
		r    ref
		dst  *int
	}{{"a", r.A, &g.v.A}, {"b", r.B, &g.v.B}, {"c", r.C, &g.v.C}} {
		i, err := b.resolveRef(f.r)
		if err != nil {
			return nil, ferr(f.name, "%v", err)
		}
		p := b.Params[i]
		if !p.Kind.IsBuffer() {
			return nil, ferr(f.name, "param %s is not a buffer", p.Name)
		}
		if p.DType != dt {
			return nil, ferr(f.name, "param %s is %s, the GEMM is %s", p.Name, p.DType, dt)
		}
		if f.name == "c" && p.Kind != backends.GlobalMut {
			return nil, ferr("c", "param %s must be global_mut", p.Name)
		}
		*f.dst = i
	}
	return g, nil
}

// Formats lists the formats the bundle has a variant for, in the order of
// backends.Formats.
func (b *Bundle) Formats() []backends.Format {
	var out []backends.Format
	for _, fi := range backends.Formats() {
		if b.variants[fi.Name] != nil {
			out = append(out, fi.Name)
		}
	}
	return out
}

// Program builds the backends.Program with the var values: every variant,
// each with the grid of its variant file (nil: the manifest's), so one
// Program serves every backend.
func (b *Bundle) Program(vals Values) (*backends.Program, error) {
	p, _, err := b.program(vals, false)
	return p, err
}

// VariantError is a variant that could not be built at some var values (a
// Tenstorrent program whose sizes its kernels do not allow, say).
type VariantError struct {
	Format backends.Format
	Err    error
}

func (e *VariantError) Error() string { return fmt.Sprintf("%s variant: %v", e.Format, e.Err) }
func (e *VariantError) Unwrap() error { return e.Err }

// PartialProgram is Program for a run: a variant that cannot be built at
// vals is left out and returned with its error, so that the other backends
// still run; it fails only when no variant can be built.
func (b *Bundle) PartialProgram(vals Values) (*backends.Program, []*VariantError, error) {
	return b.program(vals, true)
}

func (b *Bundle) program(vals Values, partial bool) (*backends.Program, []*VariantError, error) {
	var dropped []*VariantError
	p, err := b.buildProgram(vals, func(f backends.Format, err error) error {
		if !partial {
			return err
		}
		dropped = append(dropped, &VariantError{f, err})
		return nil
	})
	if err != nil {
		return nil, dropped, err
	}
	if len(p.Variants) == 0 && len(dropped) > 0 {
		errs := make([]error, len(dropped))
		for i, d := range dropped {
			errs[i] = d.Err
		}
		return nil, dropped, errors.Join(errs...)
	}
	return p, dropped, nil
}

// buildProgram builds the program; a variant's binding error goes to
// variantErr, which returns it (fail) or nil (leave the variant out).
func (b *Bundle) buildProgram(vals Values, variantErr func(backends.Format, error) error) (*backends.Program, error) {
	if len(vals) != len(b.Vars) {
		return nil, fmt.Errorf("%w: %d var values for %d vars", backends.ErrInvalidArgument, len(vals), len(b.Vars))
	}
	p := &backends.Program{Name: b.Name}
	for _, prm := range b.Params {
		p.Params = append(p.Params, prm.Param)
	}
	bindGrid := func(grid []backends.GwsDim, file string) ([]backends.GwsDim, error) {
		if grid == nil {
			return nil, nil
		}
		out := []backends.GwsDim{}
		for i, g := range grid {
			d, err := b.bindDevice(g, vals)
			if err != nil {
				return nil, &FieldError{b.path(file), fmt.Sprintf("grid[%d]", i), err}
			}
			out = append(out, d)
		}
		return out, nil
	}
	var err error
	if p.Grid, err = bindGrid(b.grid, ManifestFile); err != nil {
		return nil, err
	}
	if p.Grid == nil {
		p.Grid = []backends.GwsDim{}
	}
	for _, f := range b.Formats() {
		v := b.variants[f]
		pv := backends.Variant{Format: f}
		if pv.Grid, err = bindGrid(v.grid, v.file); err != nil {
			return nil, err
		}
		switch {
		case v.source != nil:
			s := *v.source
			s.Options = append([]string(nil), s.Options...)
			pv.Code = &s
		case v.spirv != nil:
			s := *v.spirv
			pv.Code = &s
		case v.gemm != nil:
			g, err := b.bindGEMM(v.gemm, vals)
			if err != nil {
				if err := variantErr(f, &FieldError{v.file, "", err}); err != nil {
					return nil, err
				}
				continue
			}
			pv.Code = g
		case v.own != nil:
			code, grid, err := b.bindOwn(v, vals)
			if err != nil {
				if err := variantErr(f, err); err != nil {
					return nil, err
				}
				continue
			}
			if pv.Grid == nil && grid != nil {
				pv.Grid = grid
			}
			pv.Code = code
		}
		p.Variants = append(p.Variants, pv)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", b.Name, err)
	}
	return p, nil
}

// bindOwn binds a variant of a format that reads its own file.
func (b *Bundle) bindOwn(v *variant, vals Values) (any, []backends.GwsDim, error) {
	shapes, err := b.Shapes(vals)
	if err != nil {
		return nil, nil, err
	}
	code, grid, err := v.own.BindBundle(&bundleEnv{b: b, vals: vals, shapes: shapes})
	if err != nil {
		return nil, nil, fileError(v.file, err)
	}
	return code, grid, nil
}

func (b *Bundle) path(file string) string {
	if file == ManifestFile && b.Dir != "" {
		return b.Dir + "/" + ManifestFile
	}
	return file
}

func (b *Bundle) bindGEMM(g *gemmSpec, vals Values) (*backends.GEMMVariant, error) {
	out := g.v
	for name, d := range g.dims {
		bd, err := b.bindDevice(*d, vals)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		switch name {
		case "m":
			out.M = bd
		case "n":
			out.N = bd
		case "k":
			out.K = bd
		default:
			if f := gemmOptional(&out, name); f != nil {
				*f = &bd
			}
		}
	}
	return &out, nil
}

// gemmOptional is the optional dimension of v that name ("batch", "lda",
// …) sets, or nil for any other name.
func gemmOptional(v *backends.GEMMVariant, name string) **backends.GwsDim {
	return map[string]**backends.GwsDim{
		"batch": &v.Batch, "lda": &v.LdA, "ldb": &v.LdB, "ldc": &v.LdC,
		"stride_a": &v.StrideA, "stride_b": &v.StrideB, "stride_c": &v.StrideC,
	}[name]
}
