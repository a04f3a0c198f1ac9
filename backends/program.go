package backends

import (
	"fmt"
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

// Program is a compute program with one variant per backend. Params are in
// launch order; Grid is the number of work groups per axis (for Tenstorrent,
// the core grid [rows, cols]) as expressions over constants and Variable
// params.
type Program struct {
	Name   string
	Params []Param
	Grid   []GwsDim

	C      *SourceVariant // C source; see docs/programs.md for the convention
	CUDA   *SourceVariant // CUDA C, compiled with NVRTC
	OpenCL *SourceVariant // OpenCL C
	Vulkan *SPIRVVariant  // SPIR-V compute shader
	GEMM   *GEMMVariant   // a matrix multiply for CBLAS and cuBLAS
	TT     *TTVariant     // Tenstorrent reader, compute and writer kernels
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

// HasVariant reports whether p has a variant that the named backend runs.
func (p *Program) HasVariant(backend string) bool {
	switch backend {
	case "c":
		return p.C != nil
	case "cuda":
		return p.CUDA != nil || p.GEMM != nil
	case "opencl":
		return p.OpenCL != nil
	case "vulkan":
		return p.Vulkan != nil
	case "cblas":
		return p.GEMM != nil
	case "tt":
		return p.TT != nil
	case "dummy":
		return true
	}
	return false
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
	if len(p.Grid) > 3 {
		return fmt.Errorf("%w: grid has %d axes, at most 3", ErrInvalidArgument, len(p.Grid))
	}
	for i, g := range p.Grid {
		for _, ord := range g.Params() {
			if ord < 0 || ord >= len(p.Params) || p.Params[ord].Kind != Variable {
				return fmt.Errorf("%w: grid axis %d reads param %d, which is not a Variable", ErrInvalidArgument, i, ord)
			}
		}
	}
	if g := p.GEMM; g != nil {
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

// CheckArgs checks a launch's args against the program's params: the count,
// buffer or scalar per param, scalar dtypes, and that every buffer belongs to
// pool. It returns the buffer sizes by param ordinal (0 for scalars).
func CheckArgs(p *Program, pool Pool, args []LaunchArg) ([]int64, error) {
	if len(args) != len(p.Params) {
		return nil, fmt.Errorf("%w: %d args for %d params", ErrInvalidArgument, len(args), len(p.Params))
	}
	sizes := make([]int64, len(args))
	for i, a := range args {
		prm := p.Params[i]
		if prm.Kind == Variable {
			if !a.IsVar() {
				return nil, fmt.Errorf("%w: param %d (%s) is a variable, got a buffer", ErrInvalidArgument, i, prm.Name)
			}
			if a.Value.DType != prm.DType {
				return nil, fmt.Errorf("%w: param %d (%s) is %s, got %s", ErrInvalidArgument, i, prm.Name, prm.DType, a.Value.DType)
			}
			continue
		}
		if a.IsVar() {
			return nil, fmt.Errorf("%w: param %d (%s) is a buffer, got a variable", ErrInvalidArgument, i, prm.Name)
		}
		n, err := pool.Size(a.Buffer)
		if err != nil {
			return nil, fmt.Errorf("param %d (%s): %w", i, prm.Name, err)
		}
		sizes[i] = n
	}
	return sizes, nil
}
