package driver

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/zyxtt/zyxtt/internal/registry"
)

// ParamKind says how a program uses a parameter.
type ParamKind uint8

// The parameter kinds.
const (
	Global    ParamKind = iota // a buffer the program reads
	GlobalMut                  // a buffer the program writes (and may read)
	Variable                   // a scalar passed by value
)

func (k ParamKind) String() string {
	switch k {
	case Global:
		return "global"
	case GlobalMut:
		return "global_mut"
	case Variable:
		return "variable"
	}
	return fmt.Sprintf("param_kind(%d)", uint8(k))
}

// MarshalText writes the kind's name.
func (k ParamKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name.
func (k *ParamKind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "global", "in", "input":
		*k = Global
	case "global_mut", "out", "output", "inout":
		*k = GlobalMut
	case "variable", "var", "scalar":
		*k = Variable
	default:
		return fmt.Errorf("unknown param kind %q (want global, global_mut or variable)", b)
	}
	return nil
}

// IsBuffer reports whether the param is a buffer.
func (k ParamKind) IsBuffer() bool { return k == Global || k == GlobalMut }

// Param is one program parameter.
type Param struct {
	Name  string
	Kind  ParamKind
	DType DType
}

// Program is a compute program with variants in several formats, so that
// one Program serves every backend: a device compiles the first variant in
// a format it accepts (DeviceInfo.Formats, in its order of preference).
// Params are in launch order; Grid is the number of work groups per axis
// (for Tenstorrent, the core grid [rows, cols]) as expressions over constants
// and Variable params; a variant may carry a grid of its own.
type Program struct {
	Name     string
	Params   []Param
	Grid     []GwsDim
	Variants []Variant
}

// Format names the form a variant's code is written in. A driver says which
// formats its devices prepare (DeviceInfo.Formats); nothing else keeps a
// table of which backend runs what.
type Format string

// The built-in formats and the Go type of their code.
const (
	FormatC      Format = "c"      // *SourceVariant: C11 (backends/c)
	FormatCUDA   Format = "cuda"   // *SourceVariant: CUDA C, compiled with NVRTC
	FormatOpenCL Format = "opencl" // *SourceVariant: OpenCL C
	FormatSPIRV  Format = "spirv"  // *SPIRVVariant: a SPIR-V compute shader
	FormatGEMM   Format = "gemm"   // *GEMMVariant: a matrix multiply (CBLAS, cuBLAS)
)

func init() {
	for _, f := range []struct {
		name   Format
		file   string
		code   reflect.Type
		noGrid bool
	}{
		{FormatC, "c.json", reflect.TypeFor[*SourceVariant](), false},
		{FormatCUDA, "cuda.json", reflect.TypeFor[*SourceVariant](), false},
		{FormatOpenCL, "opencl.json", reflect.TypeFor[*SourceVariant](), false},
		{FormatSPIRV, "vulkan.json", reflect.TypeFor[*SPIRVVariant](), false},
		{FormatGEMM, "gemm.json", reflect.TypeFor[*GEMMVariant](), true},
	} {
		registry.RegisterFormat(registry.Format{Name: string(f.name), File: f.file, Code: f.code, NoGrid: f.noGrid})
	}
}

// FormatInfo describes a registered format: the file a program bundle keeps
// it in (docs/programs.md) and the Go type of its code.
type FormatInfo struct {
	Name Format
	File string
	Code reflect.Type
	// NoGrid: the format's code runs whole, not over a grid of work groups
	// (gemm); a launch of it evaluates no grid.
	NoGrid bool
}

// Formats lists every registered format: the built-in ones, then those
// drivers registered (backends/driver.RegisterFormat).
func Formats() []FormatInfo {
	var out []FormatInfo
	for _, f := range registry.Formats() {
		out = append(out, FormatInfo{Name: Format(f.Name), File: f.File, Code: f.Code, NoGrid: f.NoGrid})
	}
	return out
}

// LookupFormat is the registered format named f.
func LookupFormat(f Format) (FormatInfo, bool) {
	for _, fi := range Formats() {
		if fi.Name == f {
			return fi, true
		}
	}
	return FormatInfo{}, false
}

// Variant is one form of a program: its format, the code in that format (of
// the format's code type: *SourceVariant, *SPIRVVariant, *GEMMVariant,
// or a driver's own), and optionally a grid that replaces Program.Grid for this
// variant (GPU block counts and Tenstorrent core grids differ).
type Variant struct {
	Format Format
	Grid   []GwsDim
	Code   any
}

// ParseGrid parses a grid expression per axis (ParseGws: numbers, the
// program's param names, + - * / %, ceil_div, min, max), e.g.
// ParseGrid("ceil_div(n, 256)"). Set the params first.
func (p *Program) ParseGrid(axes ...string) ([]GwsDim, error) {
	lookup := func(name string) (int, bool) {
		for i, prm := range p.Params {
			if prm.Name == name {
				return i, true
			}
		}
		return 0, false
	}
	out := make([]GwsDim, len(axes))
	for i, a := range axes {
		d, err := ParseGws(a, lookup)
		if err != nil {
			return nil, fmt.Errorf("%w: grid axis %d %q: %w", ErrInvalidArgument, i, a, err)
		}
		out[i] = d
	}
	return out, nil
}

// Variant is the program's first variant in the first of formats that it
// has, or nil.
func (p *Program) Variant(formats ...Format) *Variant {
	for _, f := range formats {
		for i := range p.Variants {
			if p.Variants[i].Format == f {
				return &p.Variants[i]
			}
		}
	}
	return nil
}

// SetVariant puts v into the program, replacing the variant of its format.
func (p *Program) SetVariant(v Variant) {
	for i := range p.Variants {
		if p.Variants[i].Format == v.Format {
			p.Variants[i] = v
			return
		}
	}
	p.Variants = append(p.Variants, v)
}

// RemoveVariant drops the program's variant in format f, if it has one.
func (p *Program) RemoveVariant(f Format) {
	p.Variants = slices.DeleteFunc(p.Variants, func(v Variant) bool { return v.Format == f })
}

// Accepts reports whether p has a variant in one of the formats.
func (p *Program) Accepts(formats []Format) bool { return p.Variant(formats...) != nil }

// WithVariant is the program as a device compiles variant v: a copy whose
// Grid is v's own grid where v has one.
func (p *Program) WithVariant(v *Variant) *Program {
	q := *p
	if v != nil && v.Grid != nil {
		q.Grid = v.Grid
	}
	return &q
}

// Source is the code of the first variant in format f when it is source
// code, else nil.
func (p *Program) Source(f Format) *SourceVariant { return variantCode[SourceVariant](p, f) }

// SPIRV is the program's SPIR-V variant code, or nil.
func (p *Program) SPIRV() *SPIRVVariant { return variantCode[SPIRVVariant](p, FormatSPIRV) }

// GEMM is the program's GEMM variant code, or nil.
func (p *Program) GEMM() *GEMMVariant { return variantCode[GEMMVariant](p, FormatGEMM) }

// variantCode is the code of p's variant in format f when it is a *T, else
// nil: the one lookup behind the typed accessors above.
func variantCode[T any](p *Program, f Format) *T {
	if v := p.Variant(f); v != nil {
		c, _ := v.Code.(*T)
		return c
	}
	return nil
}

// SourceVariant is a program in a source language that the backend builds.
type SourceVariant struct {
	Source string
	// Entry is the kernel function's name.
	Entry string
	// Options are extra compiler options.
	Options []string
	// Local is the work-group size per axis (GPU backends); zeros mean 1.
	Local [3]uint32
}

// SPIRVVariant is a compiled SPIR-V compute shader. Buffers bind to set 0 at
// bindings in param order (buffers only); variables arrive as push
// constants in param order, each at its natural alignment.
type SPIRVVariant struct {
	Code  []byte
	Entry string
	Local [3]uint32
}

// GEMMVariant describes C = Alpha·op(A)·op(B) + Beta·C, batched, on row-major
// matrices. A, B and C are param ordinals of buffer params. Nil leading
// dimensions and strides mean tightly packed.
type GEMMVariant struct {
	DType DType // F32, F64, BF16, F16
	// Compute selects the math mode where the library has several: "" for
	// the dtype's own, "tf32" for TF32 tensor-core math on f32 data.
	Compute        string
	TransA, TransB bool
	M, N, K        GwsDim
	Batch          *GwsDim
	LdA, LdB, LdC  *GwsDim
	StrideA        *GwsDim
	StrideB        *GwsDim
	StrideC        *GwsDim
	Alpha, Beta    float64
	A, B, C        int
}

// Validate checks what every backend relies on: named, typed params, grid
// expressions that only read Variable params, and variant param references
// in range.
func (p *Program) Validate() error {
	if p == nil {
		return fmt.Errorf("%w: nil program", ErrInvalidArgument)
	}
	seen := map[string]bool{}
	for i, prm := range p.Params {
		if prm.Kind > Variable {
			return fmt.Errorf("%w: param %d (%s): bad kind %d", ErrInvalidArgument, i, prm.Name, prm.Kind)
		}
		if !prm.DType.Valid() {
			return fmt.Errorf("%w: param %d (%s): bad dtype", ErrInvalidArgument, i, prm.Name)
		}
		if prm.Name != "" {
			if seen[prm.Name] {
				return fmt.Errorf("%w: param name %q used twice", ErrInvalidArgument, prm.Name)
			}
			seen[prm.Name] = true
		}
	}
	if err := p.checkGrid("grid", p.Grid); err != nil {
		return err
	}
	formats := map[Format]bool{}
	for i, v := range p.Variants {
		fi, ok := LookupFormat(v.Format)
		if !ok {
			return fmt.Errorf("%w: variant %d: unknown format %q", ErrInvalidArgument, i, v.Format)
		}
		if formats[v.Format] {
			return fmt.Errorf("%w: two variants of format %s", ErrInvalidArgument, v.Format)
		}
		formats[v.Format] = true
		if v.Code == nil || reflect.TypeOf(v.Code) != fi.Code || reflect.ValueOf(v.Code).IsNil() {
			return fmt.Errorf("%w: variant %s: code is %T, want %s", ErrInvalidArgument, v.Format, v.Code, fi.Code)
		}
		if err := p.checkGrid("variant "+string(v.Format)+" grid", v.Grid); err != nil {
			return err
		}
	}
	if g := p.GEMM(); g != nil {
		for _, ord := range []int{g.A, g.B, g.C} {
			if ord < 0 || ord >= len(p.Params) || !p.Params[ord].Kind.IsBuffer() {
				return fmt.Errorf("%w: gemm operand param %d is not a buffer param", ErrInvalidArgument, ord)
			}
		}
		if p.Params[g.C].Kind != GlobalMut {
			return fmt.Errorf("%w: gemm output param %d must be global_mut", ErrInvalidArgument, g.C)
		}
	}
	return nil
}

func (p *Program) checkGrid(what string, grid []GwsDim) error {
	if len(grid) > 3 {
		return fmt.Errorf("%w: %s has %d axes, at most 3", ErrInvalidArgument, what, len(grid))
	}
	for i, g := range grid {
		for _, ord := range g.Params() {
			if ord < 0 || ord >= len(p.Params) || p.Params[ord].Kind != Variable {
				return fmt.Errorf("%w: %s axis %d reads param %d, which is not a Variable", ErrInvalidArgument, what, i, ord)
			}
		}
	}
	return nil
}
