package tt

import (
	"fmt"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// NumCBs is the number of hardware circular buffers per core.
const NumCBs = 32

// Formats are the circular-buffer data formats the runtime knows, with the
// dtype each one holds.
var Formats = map[string]backends.DType{
	"Float32":   backends.F32,
	"Float16_b": backends.BF16,
	"Float16":   backends.F16,
	"Int32":     backends.I32,
	"UInt32":    backends.U32,
	"UInt16":    backends.U16,
	"UInt8":     backends.U8,
}

func knownFormat(f string) bool {
	_, ok := Formats[f]
	return ok
}

var fidelities = map[string]bool{"LoFi": true, "HiFi2": true, "HiFi3": true, "HiFi4": true}

func invalid(format string, args ...any) error {
	return &backends.Error{Backend: ttruntime.Backend, Op: "compile", Err: fmt.Errorf("%w: %s", backends.ErrInvalidArgument, fmt.Sprintf(format, args...))}
}

// ValidateProgram checks a program's Tenstorrent variant against a chip
// before anything is sent to the runtime: at most 32 circular buffers with
// unique indices 0–31, known formats, an L1 budget the chip can hold,
// argument layouts that name params of the right kind, at most two grid
// axes, and constant grid axes that fit the chip.
func ValidateProgram(p *backends.Program, info ttruntime.InitReply) error {
	if p != nil && p.TT() == nil {
		return &backends.Error{Backend: ttruntime.Backend, Op: "compile", Err: fmt.Errorf("%w: program %q has no Tenstorrent variant", backends.ErrNoVariant, p.Name)}
	}
	if err := p.Validate(); err != nil {
		return &backends.Error{Backend: ttruntime.Backend, Op: "compile", Err: err}
	}
	v := p.TT()
	if len(p.Grid) > 2 {
		return invalid("program %q has a %d-axis grid; Tenstorrent grids have at most 2 axes (rows, cols)", p.Name, len(p.Grid))
	}
	for axis, g := range p.Grid {
		if len(g.Params()) > 0 {
			continue // checked at launch
		}
		n, err := g.Eval(nil)
		if err != nil {
			return invalid("grid axis %d: %v", axis, err)
		}
		if err := checkAxis(axis, n, info.Grid); err != nil {
			return err
		}
	}
	if len(v.CBs) > NumCBs {
		return invalid("%d circular buffers; a core has %d", len(v.CBs), NumCBs)
	}
	seen := map[uint8]bool{}
	var l1 uint64
	for _, cb := range v.CBs {
		switch {
		case cb.Index >= NumCBs:
			return invalid("circular buffer index %d is outside 0–%d", cb.Index, NumCBs-1)
		case seen[cb.Index]:
			return invalid("circular buffer index %d is configured twice", cb.Index)
		case !knownFormat(cb.Format):
			return invalid("circular buffer %d: unknown data format %q (want Float32, Float16_b, Float16, Int32, UInt32, UInt16 or UInt8)", cb.Index, cb.Format)
		case cb.PageBytes == 0 || cb.Pages == 0:
			return invalid("circular buffer %d: page_bytes and pages must be positive", cb.Index)
		}
		seen[cb.Index] = true
		// page_bytes and pages are 32-bit, so a term cannot wrap; the
		// sum is checked
		term := uint64(cb.PageBytes) * uint64(cb.Pages)
		if l1+term < l1 {
			return invalid("circular buffer sizes overflow")
		}
		l1 += term
	}
	if usable := info.L1.Usable(); l1 > usable {
		return invalid("circular buffers need %d bytes of L1 per core; %d are usable (L1 %d, reserved below %d)", l1, usable, info.L1.Size, info.L1.UnreservedBase)
	}
	if v.MathFidelity != "" && !fidelities[v.MathFidelity] {
		return invalid("math fidelity %q (want LoFi, HiFi2, HiFi3 or HiFi4)", v.MathFidelity)
	}
	for _, sec := range []struct {
		name string
		k    *backends.TTKernel
	}{{"reader", &v.Reader}, {"compute", &v.Compute}, {"writer", &v.Writer}} {
		for _, l := range []struct {
			name    string
			args    []backends.TTArg
			perCore bool
		}{{"compile_args", sec.k.CompileArgs, false}, {"runtime_args", sec.k.RuntimeArgs, true}, {"common_args", sec.k.CommonArgs, false}} {
			for i, a := range l.args {
				if err := checkArg(p, a, l.perCore); err != nil {
					return invalid("%s %s[%d]: %v", sec.name, l.name, i, err)
				}
			}
		}
	}
	return nil
}

// checkArg checks one layout entry. Core-specific entries belong in
// runtime args only: compile and common args are the same on every core.
func checkArg(p *backends.Program, a backends.TTArg, perCore bool) error {
	param := func(wantBuffer bool) error {
		if a.Param < 0 || a.Param >= len(p.Params) {
			return fmt.Errorf("%s names param %d; the program has %d", a.Kind, a.Param, len(p.Params))
		}
		prm := p.Params[a.Param]
		if wantBuffer && !prm.Kind.IsBuffer() {
			return fmt.Errorf("%s names param %d (%s), a %s, not a buffer", a.Kind, a.Param, prm.Name, prm.Kind)
		}
		if !wantBuffer {
			if prm.Kind != backends.Variable {
				return fmt.Errorf("%s names param %d (%s), a %s, not a variable", a.Kind, a.Param, prm.Name, prm.Kind)
			}
			if prm.DType.Size() > 4 {
				return fmt.Errorf("param %d (%s) is %s; layout words are 32 bits", a.Param, prm.Name, prm.DType)
			}
		}
		return nil
	}
	switch a.Kind {
	case backends.TTArgParam:
		return param(false)
	case backends.TTArgBufferAddr, backends.TTArgBufferSize, backends.TTArgPages, backends.TTArgPageSize, backends.TTArgAccessor:
		return param(true)
	case backends.TTArgCoreRow, backends.TTArgCoreCol, backends.TTArgCoreIndex:
		if !perCore {
			return fmt.Errorf("%s differs per core; it belongs in runtime_args", a.Kind)
		}
		return nil
	case backends.TTArgNumCores, backends.TTArgConst:
		return nil
	}
	return fmt.Errorf("unknown layout kind %q", a.Kind)
}

func checkAxis(axis int, n uint64, g ttruntime.Grid) error {
	limit := uint64(g.Rows)
	what := "rows"
	if axis == 1 {
		limit, what = uint64(g.Cols), "cols"
	}
	if n == 0 {
		return invalid("grid axis %d is 0; every axis needs at least one core", axis)
	}
	if n > limit {
		return invalid("grid axis %d is %d; the chip's worker grid has %d %s (%dx%d after harvesting)", axis, n, limit, what, g.Rows, g.Cols)
	}
	return nil
}

// LaunchGrid evaluates the program's grid from args: axis 0 is rows, axis
// 1 is cols, a missing axis is 1 (so a one-axis grid [n] is n rows of one
// core, and no grid is a single core). Zero, more than two axes, or more
// cores than the chip has per axis are errors.
func LaunchGrid(p *backends.Program, args []backends.LaunchArg, g ttruntime.Grid) ([2]uint32, error) {
	out := [2]uint32{1, 1}
	if len(p.Grid) > 2 {
		return out, invalid("program %q has a %d-axis grid; at most 2", p.Name, len(p.Grid))
	}
	dims, err := driver.EvalGrid(p, args)
	if err != nil {
		return out, &backends.Error{Backend: ttruntime.Backend, Op: "launch", Err: fmt.Errorf("%w: %w", backends.ErrInvalidArgument, err)}
	}
	for i, n := range dims {
		if err := checkAxis(i, n, g); err != nil {
			return out, err
		}
		out[i] = uint32(n)
	}
	return out, nil
}

// compileRequest renders the program for the runtime.
func compileRequest(p *backends.Program) ttruntime.CompileRequest {
	v := p.TT()
	req := ttruntime.CompileRequest{
		Name: p.Name,
		ComputeConfig: ttruntime.ComputeConfig{
			MathFidelity: v.MathFidelity, FP32DestAcc: v.FP32DestAcc, MathApproxMode: v.MathApproxMode,
		},
	}
	if req.ComputeConfig.MathFidelity == "" {
		req.ComputeConfig.MathFidelity = "HiFi4"
	}
	for _, prm := range p.Params {
		req.Params = append(req.Params, ttruntime.ParamDesc{Name: prm.Name, Kind: prm.Kind.String(), DType: prm.DType.String()})
	}
	for _, cb := range v.CBs {
		req.CBs = append(req.CBs, ttruntime.CBDesc{Index: cb.Index, Format: cb.Format, PageBytes: cb.PageBytes, Pages: cb.Pages})
	}
	section := func(k backends.TTKernel) ttruntime.Section {
		s := ttruntime.Section{
			Defines:     k.Defines,
			CompileArgs: layout(k.CompileArgs),
			RuntimeArgs: layout(k.RuntimeArgs),
			CommonArgs:  layout(k.CommonArgs),
		}
		s.SetSource(k.Source)
		return s
	}
	req.Reader, req.Compute, req.Writer = section(v.Reader), section(v.Compute), section(v.Writer)
	return req
}

func layout(args []backends.TTArg) []ttruntime.LayoutEntry {
	out := make([]ttruntime.LayoutEntry, 0, len(args))
	for _, a := range args {
		e := ttruntime.LayoutEntry{Kind: string(a.Kind)}
		switch a.Kind {
		case backends.TTArgConst:
			v := a.Value
			e.Value = &v
		case backends.TTArgCoreRow, backends.TTArgCoreCol, backends.TTArgCoreIndex, backends.TTArgNumCores:
		default:
			prm := a.Param
			e.Param = &prm
		}
		out = append(out, e)
	}
	return out
}
