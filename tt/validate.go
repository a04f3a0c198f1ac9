package tt

import (
	"fmt"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// What the driver checks of a program is what it alone reads: the
// expressions it evaluates (which params they read, where the per-core terms
// may stand), the indices it follows (params, semaphores, buffer
// declarations), the core sets it expands, and the host layout it converts
// buffers through (tile layout, block floats). The program's rules (kernel
// and CB counts, processors, NOCs, CB indices and formats, overlapping
// cores, enums, the L1 budget) are the runtime's: it checks them when it
// compiles the program and answers with the field path.

// Formats are the circular-buffer data formats, with the dtype each one
// holds on the host (the block floats hold floats: bf16).
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

const formatList = "Float32, Float16_b, Float16, Bfp8_b, Bfp4_b, Int32, UInt32, UInt16, UInt8 or Int8"

// tileBytes is the size of one rows×cols tile of data format f: the
// elements, and for a block float its mantissas plus one shared exponent
// byte per 16 elements; 0 for a format it does not know.
func tileBytes(f string, rows, cols uint64) uint64 {
	n := rows * cols
	switch f {
	case "Bfp8_b":
		return n + n/16
	case "Bfp4_b":
		return n/2 + n/16
	}
	dt, ok := Formats[f]
	if !ok {
		return 0
	}
	return n * uint64(dt.Size())
}

// dtypeFormat is the tile data format of a dtype ("" when it has none).
func dtypeFormat(dt driver.DType) string {
	return map[driver.DType]string{
		driver.F32: "Float32", driver.BF16: "Float16_b", driver.F16: "Float16",
		driver.I32: "Int32", driver.U32: "UInt32", driver.U16: "UInt16", driver.I16: "UInt16",
		driver.U8: "UInt8", driver.I8: "Int8",
	}[dt]
}

func invalid(format string, args ...any) error {
	return &driver.Error{Backend: ttruntime.Backend, Op: "compile", Err: fmt.Errorf("%w: %s", driver.ErrInvalidArgument, fmt.Sprintf(format, args...))}
}

// checkProgram checks what the driver reads of a program's Tenstorrent
// variant (see above), and constant grid axes against the chip.
func checkProgram(p *driver.Program, info ttruntime.InitReply) error {
	v := ProgramOf(p)
	if v == nil {
		return &driver.Error{Backend: ttruntime.Backend, Op: "compile", Err: fmt.Errorf("%w: program %q has no Tenstorrent variant", driver.ErrNoVariant, p.Name)}
	}
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
	c := checker{p: p, v: v}
	for k := range v.Kernels {
		if err := c.kernel(k, &v.Kernels[k]); err != nil {
			return err
		}
	}
	for i, cb := range v.CBs {
		if err := c.coreSet(cb.Cores, fmt.Sprintf("circular buffer config %d cores", i)); err != nil {
			return err
		}
		if cb.Buffer != nil && !c.isBuffer(*cb.Buffer) {
			return invalid("circular buffer config %d sits on param %d, which is not a buffer param", i, *cb.Buffer)
		}
		for _, x := range cb.Indices {
			if x.PageBytes == nil && tileBytes(x.Format, 32, 32) == 0 {
				return invalid("circular buffer config %d: index %d of format %q has no page size (give PageBytes, or a format: %s)", i, x.Index, x.Format, formatList)
			}
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
	return nil
}

type checker struct {
	p *driver.Program
	v *Program
}

func (c *checker) isBuffer(param int) bool {
	return param >= 0 && param < len(c.p.Params) && c.p.Params[param].Kind.IsBuffer()
}

// dim checks that an expression reads only Variable params and, unless
// perCore, no per-core term.
func (c *checker) dim(d driver.GwsDim, perCore bool, what string) error {
	if names := d.Names(); len(names) > 0 {
		return invalid("%s names %q, which nothing binds (a bundle's expressions are bound with its vars)", what, names[0])
	}
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
	if err := c.coreSet(kd.Cores, what+" cores"); err != nil {
		return err
	}
	// A compute configuration travels with compute kernels only, and named
	// compile args as an object: what the request could not carry is an
	// error here rather than lost.
	if kd.Processor != Compute && (kd.MathFidelity != "" || kd.FP32DestAcc || kd.MathApproxMode || kd.Bfp8PackPrecise ||
		kd.DstFullSync || len(kd.UnpackToDestFP32) > 0) {
		return invalid("%s: the compute configuration (math fidelity, fp32 dest acc, approx mode, bfp8 pack precise, dst full sync, unpack to dest) is for compute kernels", what)
	}
	// The named args share args::, so a name is given once in all three
	// lists; whether it is a C identifier is the runtime's rule.
	named := map[string]bool{}
	for _, nl := range kd.namedArgLists() {
		for _, na := range *nl.list {
			if named[na.Name] {
				return invalid("%s: named arg %q (%s) is given twice", what, na.Name, nl.field)
			}
			named[na.Name] = true
		}
	}
	for _, l := range []struct {
		name    string
		args    []Arg
		perCore bool
	}{{"compile arg", kd.CompileArgs, false}, {"runtime arg", kd.RuntimeArgs, true}, {"common arg", kd.CommonArgs, false}} {
		for i, a := range l.args {
			if err := c.arg(a, l.perCore); err != nil {
				return invalid("%s %s %d: %v", what, l.name, i, err)
			}
		}
	}
	for _, nl := range kd.namedArgLists() {
		for _, na := range *nl.list {
			if err := c.arg(na.Arg, nl.perCore); err != nil {
				return invalid("%s %s %s: %v", what, nl.field, na.Name, err)
			}
		}
	}
	return nil
}

// arg checks what the driver resolves of one layout entry: its param or
// semaphore index, its expressions, and the per-core kinds, which only
// runtime args may hold (compile and common args are the same on every
// core). Whether a param is of the kind the entry needs is the runtime's
// rule.
func (c *checker) arg(a Arg, perCore bool) error {
	dim := func(d driver.GwsDim, name string) error {
		if err := c.dim(d, perCore, name); err != nil {
			return fmt.Errorf("%s %s: %w", a.Kind, name, err)
		}
		return nil
	}
	switch a.Kind {
	case ArgParam, ArgBufferAddr, ArgBufferSize, ArgPages, ArgPageSize, ArgAccessor:
		if a.Param < 0 || a.Param >= len(c.p.Params) {
			return fmt.Errorf("%s names param %d; the program has %d", a.Kind, a.Param, len(c.p.Params))
		}
	case ArgBankID, ArgBankNocX, ArgBankNocY:
		if !c.isBuffer(a.Param) {
			return fmt.Errorf("%s names param %d, which is not a buffer param", a.Kind, a.Param)
		}
		return dim(a.Page, "page")
	case ArgCoreNocX, ArgCoreNocY:
		if err := dim(a.Core.Row, "core row"); err != nil {
			return err
		}
		return dim(a.Core.Col, "core col")
	case ArgSemaphore, ArgSemaphoreAddr:
		if n := len(c.v.Semaphores); a.Semaphore < 0 || a.Semaphore >= n {
			return fmt.Errorf("semaphore %d; the program has %d", a.Semaphore, n)
		}
	case ArgCoreRow, ArgCoreCol, ArgCoreIndex, ArgNumCores:
		if !perCore {
			return fmt.Errorf("%s differs per core; it belongs in runtime args", a.Kind)
		}
	case ArgConst:
		return dim(a.Value, "value")
	}
	return nil
}

// buffer checks a declaration as the driver lays the param out on the
// host: a buffer param declared once, and a tile layout it can convert.
func (c *checker) buffer(i int, b *Buffer, declared map[int]bool) error {
	if !c.isBuffer(b.Param) {
		return invalid("buffer declaration %d names param %d, which is not a buffer param", i, b.Param)
	}
	prm := c.p.Params[b.Param]
	what := fmt.Sprintf("buffer declaration of param %d (%s)", b.Param, prm.Name)
	if declared[b.Param] {
		return invalid("%s: the param is declared twice", what)
	}
	declared[b.Param] = true
	if b.Shard != nil {
		if err := c.coreSet(&b.Shard.Cores, what+" shard grid"); err != nil {
			return err
		}
	}
	if b.Format != "" && !b.Tile {
		return invalid("%s: storage format %s needs the tile layout", what, b.Format)
	}
	if !b.Tile {
		return nil
	}
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
