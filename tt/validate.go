package tt

import (
	"fmt"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// NumCBs is the number of hardware circular buffers per core.
const NumCBs = 32

// Formats are the circular-buffer data formats the runtime knows, with the
// dtype each one holds (the block floats hold floats: bf16 on the host).
var Formats = map[string]driver.DType{
	"Float32":   driver.F32,
	"Float16_b": driver.BF16,
	"Float16":   driver.F16,
	"Bfp8_b":    driver.BF16,
	"Bfp4_b":    driver.BF16,
	"Int32":     driver.I32,
	"UInt32":    driver.U32,
	"UInt16":    driver.U16,
	"UInt8":     driver.U8,
	"Int8":      driver.I8,
}

func knownFormat(f string) bool {
	_, ok := Formats[f]
	return ok
}

var fidelities = map[string]bool{"LoFi": true, "HiFi2": true, "HiFi3": true, "HiFi4": true}

func invalid(format string, args ...any) error {
	return &driver.Error{Backend: ttruntime.Backend, Op: "compile", Err: fmt.Errorf("%w: %s", driver.ErrInvalidArgument, fmt.Sprintf(format, args...))}
}

// ValidateProgram checks a program's Tenstorrent variant against a chip
// before anything is sent to the runtime: at most two grid axes and
// constant ones that fit the chip; 1 to 64 kernels on known processors
// with a NOC only on data movement and a compute configuration only on
// compute; argument layouts that name params of the right kind, per-core
// terms only in runtime args, accessors only in compile args, named
// compile args with unique C identifiers; circular-buffer configs with
// indices 0–31, known formats (including Bfp8_b, Bfp4_b and Int8), page
// sizes dividing the allocation, tile shapes tt-metal has, and L1 buffers
// under CBs that sit on them; semaphores, buffer declarations (placement,
// layout and shard spec, tile layout and storage format) and include
// paths. What depends on the launch (core sets, the L1 budget per core,
// semaphore ids) is checked when the runtime program is made, and every
// request passes ttruntime.ValidateCompile, the runtime's own rules,
// before it is sent.
func ValidateProgram(p *driver.Program, info ttruntime.InitReply) error {
	if p != nil && ProgramOf(p) == nil {
		return &driver.Error{Backend: ttruntime.Backend, Op: "compile", Err: fmt.Errorf("%w: program %q has no Tenstorrent variant", driver.ErrNoVariant, p.Name)}
	}
	if err := p.Validate(); err != nil {
		return &driver.Error{Backend: ttruntime.Backend, Op: "compile", Err: err}
	}
	v := ProgramOf(p)
	if len(p.Grid) > 2 {
		return invalid("program %q has a %d-axis grid; Tenstorrent grids have at most 2 axes (rows, cols)", p.Name, len(p.Grid))
	}
	for axis, g := range p.Grid {
		if len(g.Params()) > 0 {
			continue // checked at launch
		}
		if g.PerCore() {
			return invalid("grid axis %d uses a per-core term", axis)
		}
		n, err := g.Eval(nil)
		if err != nil {
			return invalid("grid axis %d: %v", axis, err)
		}
		if err := checkAxis(axis, n, info.Grid); err != nil {
			return err
		}
	}
	c := checker{p: p}
	if len(v.Kernels) == 0 || len(v.Kernels) > 64 {
		return invalid("program %q has %d kernels; a program has 1 to 64", p.Name, len(v.Kernels))
	}
	for k := range v.Kernels {
		if err := c.kernel(k, &v.Kernels[k]); err != nil {
			return err
		}
	}
	for i := range v.CBs {
		if err := c.cb(i, &v.CBs[i]); err != nil {
			return err
		}
	}
	for i, s := range v.Semaphores {
		if err := c.coreSet(s.Cores, fmt.Sprintf("semaphore %d cores", i)); err != nil {
			return err
		}
	}
	declared := map[int]bool{}
	for i := range v.Buffers {
		if err := c.buffer(i, &v.Buffers[i], declared); err != nil {
			return err
		}
	}
	for i, cb := range v.CBs {
		if cb.Buffer == nil {
			continue
		}
		b := c.decl(*cb.Buffer)
		if b == nil || b.Placement != ttruntime.PlacementL1 {
			return invalid("circular buffer config %d sits on param %d (%s), which is not declared an l1 buffer (give it a TTBuffer with Placement l1)", i, *cb.Buffer, p.Params[*cb.Buffer].Name)
		}
	}
	seen := map[string]bool{}
	for i, inc := range v.Includes {
		if seen[inc.Path] {
			return invalid("include %d: %q is given twice", i, inc.Path)
		}
		seen[inc.Path] = true
	}
	return nil
}

type checker struct{ p *driver.Program }

func (c *checker) decl(param int) *Buffer {
	v := ProgramOf(c.p)
	for i := range v.Buffers {
		if v.Buffers[i].Param == param {
			return &v.Buffers[i]
		}
	}
	return nil
}

// dims checks that an expression reads only Variable params and, unless
// perCore, no per-core term.
func (c *checker) dim(d driver.GwsDim, perCore bool, what string) error {
	for _, ord := range d.Params() {
		if ord < 0 || ord >= len(c.p.Params) || c.p.Params[ord].Kind != driver.Variable {
			return invalid("%s reads param %d, which is not a Variable", what, ord)
		}
	}
	if !perCore && d.PerCore() {
		return invalid("%s uses a per-core term (core_row, split_start, …); those belong in runtime args", what)
	}
	return nil
}

func (c *checker) rng(r CoreRange, what string) error {
	for _, d := range []driver.GwsDim{r.Start.Row, r.Start.Col, r.End.Row, r.End.Col} {
		if err := c.dim(d, false, what); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) coreSet(s *CoreSet, what string) error {
	if s == nil {
		return nil
	}
	switch {
	case s.Slice != nil && len(s.Ranges) > 0:
		return invalid("%s has both ranges and a slice; give one", what)
	case s.Slice == nil && len(s.Ranges) == 0:
		return invalid("%s is empty (nil means every core of the launch grid)", what)
	case s.Slice != nil:
		if err := c.rng(s.Slice.Of, what); err != nil {
			return err
		}
		if err := c.dim(s.Slice.From, false, what); err != nil {
			return err
		}
		return c.dim(s.Slice.To, false, what)
	}
	for _, r := range s.Ranges {
		if err := c.rng(r, what); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) kernel(k int, kd *Kernel) error {
	what := fmt.Sprintf("kernel %d (%s)", k, kernelName(*kd, k))
	dm := kd.Processor == Riscv0 || kd.Processor == Riscv1
	switch {
	case !dm && kd.Processor != Compute:
		return invalid("%s: processor %q (want riscv_0, riscv_1 or compute)", what, kd.Processor)
	case kd.NOC != nil && !dm:
		return invalid("%s: a compute kernel takes no NOC", what)
	case kd.NOC != nil && (*kd.NOC < 0 || *kd.NOC > 1):
		return invalid("%s: NOC %d (NOCs are 0 and 1)", what, *kd.NOC)
	case dm && (kd.MathFidelity != "" || kd.FP32DestAcc || kd.MathApproxMode):
		return invalid("%s: the compute configuration (math fidelity, fp32 dest acc, approx mode) is for compute kernels", what)
	case kd.MathFidelity != "" && !fidelities[kd.MathFidelity]:
		return invalid("%s: math fidelity %q (want LoFi, HiFi2, HiFi3 or HiFi4)", what, kd.MathFidelity)
	}
	if err := c.coreSet(kd.Cores, what+" cores"); err != nil {
		return err
	}
	for name := range kd.Defines {
		if !ttruntime.IsCIdentifier(name) {
			return invalid("%s: define %q is not a C identifier", what, name)
		}
	}
	for _, l := range []struct {
		name    string
		args    []Arg
		list    argPlace
		perCore bool
	}{{"compile arg", kd.CompileArgs, inCompile, false}, {"runtime arg", kd.RuntimeArgs, inRuntime, true}, {"common arg", kd.CommonArgs, inCommon, false}} {
		for i, a := range l.args {
			if err := c.arg(a, l.list); err != nil {
				return invalid("%s %s %d: %v", what, l.name, i, err)
			}
		}
	}
	names := map[string]bool{}
	for _, na := range kd.NamedCompileArgs {
		switch {
		case !ttruntime.IsCIdentifier(na.Name):
			return invalid("%s: named compile arg %q is not a C identifier", what, na.Name)
		case names[na.Name]:
			return invalid("%s: named compile arg %q is given twice", what, na.Name)
		}
		names[na.Name] = true
		if err := c.arg(na.Arg, inCompile); err != nil {
			return invalid("%s named compile arg %s: %v", what, na.Name, err)
		}
	}
	return nil
}

type argPlace int

const (
	inCompile argPlace = iota
	inRuntime
	inCommon
)

// arg checks one layout entry. Core-specific entries belong in runtime
// args only: compile and common args are the same on every core.
func (c *checker) arg(a Arg, place argPlace) error {
	p := c.p
	param := func(wantBuffer bool) error {
		if a.Param < 0 || a.Param >= len(p.Params) {
			return fmt.Errorf("%s names param %d; the program has %d", a.Kind, a.Param, len(p.Params))
		}
		prm := p.Params[a.Param]
		if wantBuffer && !prm.Kind.IsBuffer() {
			return fmt.Errorf("%s names param %d (%s), a %s, not a buffer", a.Kind, a.Param, prm.Name, prm.Kind)
		}
		if !wantBuffer {
			if prm.Kind != driver.Variable {
				return fmt.Errorf("%s names param %d (%s), a %s, not a variable", a.Kind, a.Param, prm.Name, prm.Kind)
			}
			if prm.DType.Size() > 4 {
				return fmt.Errorf("param %d (%s) is %s; layout words are 32 bits", a.Param, prm.Name, prm.DType)
			}
		}
		return nil
	}
	dim := func(d driver.GwsDim, name string) error {
		if err := c.dim(d, place == inRuntime, name); err != nil {
			return fmt.Errorf("%s %s: %w", a.Kind, name, err)
		}
		return nil
	}
	switch a.Kind {
	case ArgParam:
		return param(false)
	case ArgBufferAddr, ArgBufferSize, ArgPages, ArgPageSize:
		return param(true)
	case ArgAccessor:
		if place != inCompile {
			return fmt.Errorf("accessor entries are compile-time words: they belong in compile args")
		}
		return param(true)
	case ArgBankID, ArgBankNocX, ArgBankNocY:
		if err := param(true); err != nil {
			return err
		}
		return dim(a.Page, "page")
	case ArgCoreNocX, ArgCoreNocY:
		if err := dim(a.Core.Row, "core row"); err != nil {
			return err
		}
		return dim(a.Core.Col, "core col")
	case ArgSemaphore, ArgSemaphoreAddr:
		if n := len(ProgramOf(p).Semaphores); a.Semaphore < 0 || a.Semaphore >= n {
			return fmt.Errorf("semaphore %d; the program has %d", a.Semaphore, n)
		}
		return nil
	case ArgCoreRow, ArgCoreCol, ArgCoreIndex, ArgNumCores:
		if place != inRuntime {
			return fmt.Errorf("%s differs per core; it belongs in runtime args", a.Kind)
		}
		return nil
	case ArgConst:
		return dim(a.Value, "value")
	}
	return fmt.Errorf("unknown layout kind %q", a.Kind)
}

func (c *checker) cb(i int, cb *CBConfig) error {
	what := fmt.Sprintf("circular buffer config %d", i)
	if err := c.coreSet(cb.Cores, what+" cores"); err != nil {
		return err
	}
	switch {
	case cb.TotalBytes == 0:
		return invalid("%s: total bytes must be positive", what)
	case len(cb.Indices) == 0:
		return invalid("%s has no index", what)
	}
	seen := map[uint8]bool{}
	for _, x := range cb.Indices {
		tr, tc := tileOf(x)
		switch {
		case x.Index >= NumCBs:
			return invalid("%s: circular buffer index %d is outside 0–%d", what, x.Index, NumCBs-1)
		case seen[x.Index]:
			return invalid("%s: circular buffer index %d is configured twice", what, x.Index)
		case !knownFormat(x.Format):
			return invalid("%s: circular buffer %d: unknown data format %q (want Float32, Float16_b, Float16, Bfp8_b, Bfp4_b, Int32, UInt32, UInt16, UInt8 or Int8)", what, x.Index, x.Format)
		case x.PageBytes == 0:
			return invalid("%s: circular buffer %d: page bytes must be positive", what, x.Index)
		case cb.TotalBytes%x.PageBytes != 0:
			return invalid("%s: circular buffer %d: page bytes %d do not divide the %d bytes of the allocation", what, x.Index, x.PageBytes, cb.TotalBytes)
		case !tileShapeOK(tr, tc):
			return invalid("%s: circular buffer %d: a %dx%d tile is not one tt-metal has (1, 2, 4, 8, 16 or 32 rows of 32; 16 or 32 rows of 16)", what, x.Index, tr, tc)
		}
		seen[x.Index] = true
	}
	if cb.Buffer != nil {
		b := *cb.Buffer
		if b < 0 || b >= len(c.p.Params) || !c.p.Params[b].Kind.IsBuffer() {
			return invalid("%s sits on param %d, which is not a buffer param", what, b)
		}
	}
	return nil
}

func tileShapeOK(rows, cols uint32) bool {
	switch cols {
	case 32:
		return rows == 1 || rows == 2 || rows == 4 || rows == 8 || rows == 16 || rows == 32
	case 16:
		return rows == 16 || rows == 32
	}
	return false
}

func (c *checker) buffer(i int, b *Buffer, declared map[int]bool) error {
	p := c.p
	if b.Param < 0 || b.Param >= len(p.Params) || !p.Params[b.Param].Kind.IsBuffer() {
		return invalid("buffer declaration %d names param %d, which is not a buffer param", i, b.Param)
	}
	prm := p.Params[b.Param]
	what := fmt.Sprintf("buffer declaration of param %d (%s)", b.Param, prm.Name)
	if declared[b.Param] {
		return invalid("%s: the param is declared twice", what)
	}
	declared[b.Param] = true
	sharded := b.Layout == ttruntime.LayoutHeightSharded || b.Layout == ttruntime.LayoutWidthSharded || b.Layout == ttruntime.LayoutBlockSharded
	switch {
	case b.Placement != "" && b.Placement != ttruntime.PlacementDRAM && b.Placement != ttruntime.PlacementL1:
		return invalid("%s: placement %q (want dram or l1)", what, b.Placement)
	case !sharded && b.Layout != "" && b.Layout != ttruntime.LayoutInterleaved:
		return invalid("%s: layout %q (want interleaved, height_sharded, width_sharded or block_sharded)", what, b.Layout)
	case sharded && b.Shard == nil:
		return invalid("%s: a %s layout needs a shard spec", what, b.Layout)
	case !sharded && b.Shard != nil:
		return invalid("%s: an interleaved layout takes no shard spec", what)
	}
	if b.Shard != nil {
		if o := b.Shard.Orientation; o != "" && o != ttruntime.OrientationRowMajor && o != ttruntime.OrientationColMajor {
			return invalid("%s: shard orientation %q (want row_major or col_major)", what, o)
		}
		if err := c.coreSet(&b.Shard.Cores, what+" shard grid"); err != nil {
			return err
		}
	}
	if b.Format != "" && !b.Tile {
		return invalid("%s: storage format %s needs the tile layout", what, b.Format)
	}
	if b.Tile {
		switch {
		case b.Rows == 0 || b.Cols == 0 || b.Rows%TileDim != 0 || b.Cols%TileDim != 0:
			return invalid("%s: a tile layout needs rows and cols that are positive multiples of %d (pad the matrix), got %dx%d", what, TileDim, b.Rows, b.Cols)
		case b.Rows > 1<<31 || b.Cols > 1<<31:
			return invalid("%s: a %dx%d matrix is too large", what, b.Rows, b.Cols)
		}
		switch b.Format {
		case "":
			if s := prm.DType.Size(); s != 1 && s != 2 && s != 4 {
				return invalid("%s: %s elements cannot be tiled (1, 2 or 4-byte elements)", what, prm.DType)
			}
		case "Bfp8_b", "Bfp4_b":
			if prm.DType != driver.F32 && prm.DType != driver.BF16 {
				return invalid("%s: %s storage holds f32 or bf16 params, not %s", what, b.Format, prm.DType)
			}
		default:
			return invalid("%s: storage format %q (want Bfp8_b or Bfp4_b, or none for the dtype itself)", what, b.Format)
		}
	}
	return nil
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

// launchGrid is LaunchGrid of a checked launch, whose grid package backends
// evaluated.
func launchGrid(p *driver.Program, l *driver.Launch, g ttruntime.Grid) ([2]uint32, error) {
	out := [2]uint32{1, 1}
	if len(p.Grid) > 2 {
		return out, invalid("program %q has a %d-axis grid; at most 2", p.Name, len(p.Grid))
	}
	for i := range p.Grid {
		if err := checkAxis(i, l.Grid[i], g); err != nil {
			return out, err
		}
		out[i] = uint32(l.Grid[i])
	}
	return out, nil
}

// LaunchGrid evaluates the program's grid from args: axis 0 is rows, axis
// 1 is cols, a missing axis is 1 (so a one-axis grid [n] is n rows of one
// core, and no grid is a single core). Zero, more than two axes, or more
// cores than the chip has per axis are errors. Kernels, CB configs and
// semaphores without cores of their own run on this grid.
func LaunchGrid(p *driver.Program, args []driver.LaunchArg, g ttruntime.Grid) ([2]uint32, error) {
	out := [2]uint32{1, 1}
	if len(p.Grid) > 2 {
		return out, invalid("program %q has a %d-axis grid; at most 2", p.Name, len(p.Grid))
	}
	for i, axis := range p.Grid {
		n, err := axis.Eval(args)
		if err != nil {
			return out, &driver.Error{Backend: ttruntime.Backend, Op: "launch", Err: fmt.Errorf("%w: grid axis %d: %w", driver.ErrInvalidArgument, i, err)}
		}
		if err := checkAxis(i, n, g); err != nil {
			return out, err
		}
		out[i] = uint32(n)
	}
	return out, nil
}
