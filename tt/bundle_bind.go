package tt

import (
	"fmt"
	"maps"
	"math"

	"github.com/zyxtt/zyxtt/backends/driver"
)

// BindBundle is the program at env's var values (driver.BundleVariant):
// every expression evaluated, the defaults a bundle may leave out filled in
// (a CB's page size and total, a buffer's page size, a shard in pages), and
// the launch grid. Whatever does not read the core becomes a constant; a
// per-core value is evaluated on every core it is for, so that a value
// that fails (or passes 32 bits) on some core is an error naming the field
// and the core. The program's rules (CB indices, overlapping cores,
// formats, …) are the runtime's to check when it compiles the program.
func (p *Program) BindBundle(env driver.BundleEnv) (any, []driver.GwsDim, error) {
	b := &binder{env: env, shapes: env.Shapes(), params: env.Params()}
	out, grid, err := b.program(p)
	if err != nil {
		return nil, nil, err
	}
	return out, grid, nil
}

type binder struct {
	env    driver.BundleEnv
	shapes [][]uint64
	params []driver.Param
}

// coreAt is a logical core [row, col].
type coreAt struct{ r, c uint64 }

func (c coreAt) String() string { return fmt.Sprintf("[%d, %d]", c.r, c.c) }

// dim binds an expression: every var becomes its value, and whatever does
// not read the core is folded to a constant.
func (b *binder) dim(d driver.GwsDim, field string) (driver.GwsDim, error) {
	var bindErr error
	out, err := d.Resolve(func(name string) (driver.GwsDim, bool) {
		v, ok := b.env.Var(name)
		if !ok {
			return driver.GwsDim{}, false
		}
		c, err := varValue(name, v)
		if err != nil && bindErr == nil {
			bindErr = err
		}
		return c, true
	})
	if err == nil {
		err = bindErr
	}
	if err != nil {
		return out, ferr(field, "%v", err)
	}
	if out.PerCore() {
		return out, nil
	}
	v, err := out.Eval(nil)
	if err != nil {
		return out, ferr(field, "%v", err)
	}
	return driver.ConstDim(v), nil
}

// varValue is an integer var's value as a constant expression.
func varValue(name string, c driver.Constant) (driver.GwsDim, error) {
	if c.DType.IsFloat() {
		return driver.GwsDim{}, fmt.Errorf("var %s is %s; Tenstorrent expressions need integers", name, c.DType)
	}
	n, err := c.Int()
	if err != nil {
		return driver.GwsDim{}, fmt.Errorf("var %s: %w", name, err)
	}
	if n < 0 {
		return driver.GwsDim{}, fmt.Errorf("var %s is negative (%d)", name, n)
	}
	return driver.ConstDim(uint64(n)), nil
}

// u64 binds an expression that reads no core.
func (b *binder) u64(d driver.GwsDim, field string) (uint64, error) {
	out, err := b.dim(d, field)
	if err != nil {
		return 0, err
	}
	v, ok := out.IsConst()
	if !ok {
		return 0, ferr(field, "the value reads the core it runs on")
	}
	return v, nil
}

// u32 binds an expression that reads no core and must fit 32 bits.
func (b *binder) u32(d driver.GwsDim, field string) (uint64, error) {
	v, err := b.u64(d, field)
	if err == nil && v > math.MaxUint32 {
		err = ferr(field, "value %d does not fit in 32 bits", v)
	}
	return v, err
}

// positive binds an optional expression that must be positive and fit 32
// bits; nil stays nil.
func (b *binder) positive(d *driver.GwsDim, field string) (*driver.GwsDim, error) {
	if d == nil {
		return nil, nil
	}
	v, err := b.u32(*d, field)
	if err != nil {
		return nil, err
	}
	if v == 0 {
		return nil, ferr(field, "must be positive")
	}
	return N(v), nil
}

func (b *binder) program(p *Program) (*Program, []driver.GwsDim, error) {
	for i, rq := range p.Require {
		v, err := b.u64(rq.Zero, fmt.Sprintf("require[%d]", i))
		if err == nil && v != 0 {
			err = ferr(fmt.Sprintf("require[%d]", i), "%s is %d, not 0", rq.Zero, v)
			if rq.Message != "" {
				err = ferr(fmt.Sprintf("require[%d]", i), "%s is %d, not 0: %s", rq.Zero, v, rq.Message)
			}
		}
		if err != nil {
			return nil, nil, err
		}
	}
	out := &Program{Includes: p.Includes}
	// Buffers first: CBs on a buffer take its shard size.
	for _, bd := range p.Buffers {
		nb, err := b.buffer(bd)
		if err != nil {
			return nil, nil, err
		}
		out.Buffers = append(out.Buffers, nb)
	}
	grid, variantGrid, err := b.launchGrid(p)
	if err != nil {
		return nil, nil, err
	}
	used, err := b.kernels(p, out, grid)
	if err != nil {
		return nil, nil, err
	}
	for i, c := range p.CBs {
		cb, keep, err := b.cb(c, fmt.Sprintf("cbs[%d]", i), grid, out)
		if err != nil {
			return nil, nil, err
		}
		if keep {
			out.CBs = append(out.CBs, cb)
		}
	}
	for i, s := range p.Semaphores {
		field := fmt.Sprintf("semaphores[%d]", i)
		ns := Semaphore{Name: s.Name}
		if ns.Cores, err = b.coreSet(s.Cores, field+".cores"); err != nil {
			return nil, nil, err
		}
		if ns.Cores != nil {
			if _, err := b.cores(ns.Cores, grid, field+".cores"); err != nil {
				return nil, nil, err
			}
		}
		if s.Initial != nil {
			v, err := b.u32(*s.Initial, field+".initial")
			if err != nil {
				return nil, nil, err
			}
			ns.Initial = N(v)
		}
		out.Semaphores = append(out.Semaphores, ns)
	}
	if variantGrid == nil && p.everyKernelPlaced() {
		// With every kernel on cores of its own and no grid, the launch
		// grid is the box around them.
		var rows, cols uint64
		for _, c := range used {
			rows, cols = max(rows, c.r+1), max(cols, c.c+1)
		}
		variantGrid = []driver.GwsDim{driver.ConstDim(rows), driver.ConstDim(cols)}
	}
	return out, variantGrid, nil
}

// everyKernelPlaced reports whether every kernel names its cores.
func (p *Program) everyKernelPlaced() bool {
	for _, k := range p.Kernels {
		if k.Cores == nil {
			return false
		}
	}
	return true
}

// launchGrid evaluates the program's grid (else the manifest's) as
// [rows, cols]: one axis is that many rows of one core. The variant's
// grid is the program's own, bound; nil when it has none.
func (b *binder) launchGrid(p *Program) ([2]uint64, []driver.GwsDim, error) {
	out := [2]uint64{1, 1}
	var variant []driver.GwsDim
	var vals []uint64
	switch {
	case p.Grid != nil:
		if len(p.Grid) > 2 {
			return out, nil, ferr("grid", "%d axes; a Tenstorrent grid is [rows, cols]", len(p.Grid))
		}
		for i, g := range p.Grid {
			v, err := b.u64(g, fmt.Sprintf("grid[%d]", i))
			if err != nil {
				return out, nil, err
			}
			vals = append(vals, v)
			variant = append(variant, driver.ConstDim(v))
		}
	case p.everyKernelPlaced():
		return out, nil, nil // the box around the kernels' cores
	default:
		g, err := b.env.Grid()
		if err != nil {
			return out, nil, err
		}
		if len(g) > 2 {
			return out, nil, fmt.Errorf("%w: manifest grid: %d axes; a Tenstorrent grid is [rows, cols]", driver.ErrInvalidArgument, len(g))
		}
		vals = g
	}
	for i, v := range vals {
		if v == 0 || v > maxGridAxis {
			return out, nil, ferr(fmt.Sprintf("grid[%d]", i), "%d cores along an axis (a Tenstorrent grid has 1 to %d)", v, maxGridAxis)
		}
		out[i] = v
	}
	return out, variant, nil
}

// kernels binds the kernels into out, leaving out a kernel whose core set
// is empty at these values (split work that divides evenly), and returns
// the cores any kernel runs on, in order.
func (b *binder) kernels(p *Program, out *Program, grid [2]uint64) ([]coreAt, error) {
	var used []coreAt
	usedSet := map[coreAt]bool{}
	for ki, k := range p.Kernels {
		field := fmt.Sprintf("kernels[%d]", ki)
		if p.shorthand {
			field = k.Name
		}
		nk := k
		nk.Defines = maps.Clone(k.Defines)
		var err error
		if nk.Cores, err = b.coreSet(k.Cores, field+".cores"); err != nil {
			return nil, err
		}
		cores, err := b.cores(nk.Cores, grid, field+".cores")
		if err != nil {
			return nil, err
		}
		if len(cores) == 0 {
			continue
		}
		for _, c := range cores {
			if !usedSet[c] {
				usedSet[c] = true
				used = append(used, c)
			}
		}
		for _, l := range []struct {
			name     string
			src, dst *[]Arg
		}{{"compile_args", &k.CompileArgs, &nk.CompileArgs},
			{"runtime_args", &k.RuntimeArgs, &nk.RuntimeArgs},
			{"common_args", &k.CommonArgs, &nk.CommonArgs}} {
			args := make([]Arg, len(*l.src))
			for i, a := range *l.src {
				if args[i], err = b.arg(a, fmt.Sprintf("%s.%s[%d]", field, l.name, i), cores); err != nil {
					return nil, err
				}
			}
			*l.dst = args
		}
		src := k.namedArgLists()
		for i, nl := range nk.namedArgLists() {
			*nl.list = nil
			for _, na := range *src[i].list {
				a, err := b.arg(na.Arg, field+"."+nl.field+"."+na.Name, cores)
				if err != nil {
					return nil, err
				}
				*nl.list = append(*nl.list, NamedArg{Name: na.Name, Arg: a})
			}
		}
		out.Kernels = append(out.Kernels, nk)
	}
	if len(out.Kernels) == 0 {
		return nil, ferr("kernels", "no kernel runs on any core at these var values")
	}
	return used, nil
}

// arg binds one arg and, when it reads the core, evaluates it on every core
// it is for.
func (b *binder) arg(a Arg, field string, cores []coreAt) (Arg, error) {
	out := a
	type part struct {
		src, dst *driver.GwsDim
		name     string
	}
	var parts []part
	switch a.Kind {
	case ArgConst:
		parts = []part{{&a.Value, &out.Value, ".value"}}
	case ArgBankID, ArgBankNocX, ArgBankNocY:
		parts = []part{{&a.Page, &out.Page, ".page"}}
	case ArgCoreNocX, ArgCoreNocY:
		parts = []part{{&a.Core.Row, &out.Core.Row, ".core[0]"}, {&a.Core.Col, &out.Core.Col, ".core[1]"}}
	}
	for _, pt := range parts {
		var err error
		if *pt.dst, err = b.dim(*pt.src, field+pt.name); err != nil {
			return out, err
		}
		d := *pt.dst
		check := func(v uint64, where string) error {
			if a.Kind == ArgConst && v > math.MaxUint32 {
				return ferr(field+pt.name, "%svalue %d does not fit in 32 bits", where, v)
			}
			return nil
		}
		if !d.PerCore() {
			if err := check(d.Value, ""); err != nil {
				return out, err
			}
			continue
		}
		for i, c := range cores {
			v, err := d.EvalCore(nil, driver.CoreEnv{Row: c.r, Col: c.c, Index: uint64(i), Count: uint64(len(cores))})
			if err != nil {
				return out, ferr(field+pt.name, "on core %s: %v", c, err)
			}
			if err := check(v, "on core "+c.String()+": "); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

func (b *binder) coreSet(s *CoreSet, field string) (*CoreSet, error) {
	if s == nil {
		return nil, nil
	}
	out := &CoreSet{}
	rng := func(r CoreRange, f string) (CoreRange, error) {
		var o CoreRange
		var err error
		for _, e := range []struct {
			src, dst *driver.GwsDim
			name     string
		}{{&r.Start.Row, &o.Start.Row, "[0]"}, {&r.Start.Col, &o.Start.Col, "[1]"}, {&r.End.Row, &o.End.Row, "[2]"}, {&r.End.Col, &o.End.Col, "[3]"}} {
			if *e.dst, err = b.dim(*e.src, f+e.name); err != nil {
				return o, err
			}
		}
		return o, nil
	}
	for i, r := range s.Ranges {
		f := field
		if len(s.Ranges) > 1 {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		o, err := rng(r, f)
		if err != nil {
			return nil, err
		}
		out.Ranges = append(out.Ranges, o)
	}
	if s.Slice != nil {
		of, err := rng(s.Slice.Of, field+".of")
		if err != nil {
			return nil, err
		}
		sl := &CoreSlice{Of: of, RowWise: s.Slice.RowWise}
		if sl.From, err = b.dim(s.Slice.From, field+".from"); err != nil {
			return nil, err
		}
		if sl.To, err = b.dim(s.Slice.To, field+".to"); err != nil {
			return nil, err
		}
		out.Slice = sl
	}
	return out, nil
}

// cores lists a bound core set's cores in order: each range row by row, a
// slice down the columns of its rectangle (or along the rows with
// row_wise). A nil set is the launch grid.
func (b *binder) cores(s *CoreSet, grid [2]uint64, field string) ([]coreAt, error) {
	if s == nil {
		var out []coreAt
		for r := range grid[0] {
			for c := range grid[1] {
				out = append(out, coreAt{r, c})
			}
		}
		return out, nil
	}
	rect := func(r CoreRange, f string) (r0, c0, r1, c1 uint64, err error) {
		r0, c0, r1, c1 = r.Start.Row.Value, r.Start.Col.Value, r.End.Row.Value, r.End.Col.Value
		switch {
		case r0 > r1 || c0 > c1:
			err = ferr(f, "range [%d, %d, %d, %d] runs backwards (want row0 <= row1 and col0 <= col1)", r0, c0, r1, c1)
		case r1-r0 >= maxSetCores || c1-c0 >= maxSetCores || (r1-r0+1)*(c1-c0+1) > maxSetCores:
			err = ferr(f, "range [%d, %d, %d, %d] has more than %d cores", r0, c0, r1, c1, maxSetCores)
		}
		return
	}
	var out []coreAt
	for i, r := range s.Ranges {
		f := field
		if len(s.Ranges) > 1 {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		r0, c0, r1, c1, err := rect(r, f)
		if err != nil {
			return nil, err
		}
		if len(out)+int((r1-r0+1)*(c1-c0+1)) > maxSetCores {
			return nil, ferr(field, "more than %d cores", maxSetCores)
		}
		for row := r0; row <= r1; row++ {
			for col := c0; col <= c1; col++ {
				out = append(out, coreAt{row, col})
			}
		}
	}
	if sl := s.Slice; sl != nil {
		r0, c0, r1, c1, err := rect(sl.Of, field+".of")
		if err != nil {
			return nil, err
		}
		rows, cols := r1-r0+1, c1-c0+1
		from, to := sl.From.Value, sl.To.Value
		if from > to || to > rows*cols {
			return nil, ferr(field, "cores %d to %d of a %d×%d rectangle (want from <= to <= %d)", from, to, rows, cols, rows*cols)
		}
		for k := from; k < to; k++ {
			c := coreAt{r0 + k%rows, c0 + k/rows}
			if sl.RowWise {
				c = coreAt{r0 + k/cols, c0 + k%cols}
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// cb binds one CB config; keep is false when its core set is empty at
// these values.
func (b *binder) cb(c CBConfig, field string, grid [2]uint64, out *Program) (CBConfig, bool, error) {
	nc := CBConfig{Buffer: c.Buffer}
	var err error
	if nc.Cores, err = b.coreSet(c.Cores, field+".cores"); err != nil {
		return nc, false, err
	}
	if nc.Cores != nil {
		cores, err := b.cores(nc.Cores, grid, field+".cores")
		if err != nil || len(cores) == 0 {
			return nc, false, err
		}
	}
	var pageBytes []uint64
	for j, idx := range c.Indices {
		f := field
		if len(c.Indices) > 1 {
			f = fmt.Sprintf("%s.indices[%d]", field, j)
		}
		ni := idx
		var pb uint64
		if idx.PageBytes != nil {
			if pb, err = b.u32(*idx.PageBytes, f+".page_bytes"); err != nil {
				return nc, false, err
			}
		} else {
			rows, cols := tileOf(idx)
			pb = tileBytes(idx.Format, uint64(rows), uint64(cols)) // the loader checked the format
		}
		if pb == 0 {
			return nc, false, ferr(f+".page_bytes", "must be positive")
		}
		ni.PageBytes = N(pb)
		pageBytes = append(pageBytes, pb)
		nc.Indices = append(nc.Indices, ni)
	}
	var total uint64
	switch {
	case c.TotalBytes != nil:
		if total, err = b.u32(*c.TotalBytes, field+".total_bytes"); err != nil {
			return nc, false, err
		}
	case c.Pages != nil:
		pages, err := b.u32(*c.Pages, field+".pages")
		if err != nil {
			return nc, false, err
		}
		for _, pb := range pageBytes[1:] {
			if pb != pageBytes[0] {
				return nc, false, ferr(field+".pages", "its indices have pages of %d and %d bytes: give total_bytes", pageBytes[0], pb)
			}
		}
		if total = pages * pageBytes[0]; pages != 0 && total/pages != pageBytes[0] || total > math.MaxUint32 {
			return nc, false, ferr(field+".pages", "%d pages of %d bytes do not fit in 32 bits", pages, pageBytes[0])
		}
	default: // on a sharded buffer: the shard
		d := out.decl(*c.Buffer)
		if d == nil || d.Shard == nil {
			return nc, false, ferr(field+".total_bytes", "missing (only a CB on a sharded buffer defaults to the shard's size)")
		}
		ps, _ := d.PageSize.IsConst()
		total = uint64(d.Shard.Shape[0]) * uint64(d.Shard.Shape[1]) * ps
		if total > math.MaxUint32 {
			return nc, false, ferr(field+".total_bytes", "the shard of %d bytes does not fit in 32 bits", total)
		}
	}
	if total == 0 {
		return nc, false, ferr(field+".total_bytes", "must be positive")
	}
	nc.TotalBytes = N(total)
	return nc, true, nil
}

// decl is the bound declaration of buffer param i, or nil.
func (p *Program) decl(i int) *Buffer {
	for k := range p.Buffers {
		if p.Buffers[k].Param == i {
			return &p.Buffers[k]
		}
	}
	return nil
}

// buffer binds a buffer declaration: page size, the tile matrix, and a
// shard spec in elements turned into pages.
func (b *binder) buffer(bd Buffer) (Buffer, error) {
	params := b.params
	if bd.Param < 0 || bd.Param >= len(params) || bd.Param >= len(b.shapes) {
		return bd, ferr("buffers", "param %d out of range", bd.Param)
	}
	prm := params[bd.Param]
	field := "buffers." + prm.Name
	out := bd
	if out.Placement == "" {
		out.Placement = "dram"
	}
	if out.Layout == "" {
		out.Layout = "interleaved"
	}
	shape := b.shapes[bd.Param]
	elem := uint64(prm.DType.Size())
	// The param as a matrix: its last dim is the columns, the rest rows.
	rows, cols := uint64(1), uint64(1)
	for i, s := range shape {
		if i == len(shape)-1 {
			cols = s
		} else {
			rows *= s
		}
	}
	var pageSize uint64
	if bd.PageSize != nil {
		var err error
		if pageSize, err = b.u32(*bd.PageSize, field+".page_size"); err != nil {
			return out, err
		}
		if pageSize == 0 {
			return out, ferr(field+".page_size", "must be positive")
		}
	}
	// The page as a block of elements: a tile, or a run of one row.
	var pr, pc uint64
	if bd.Tile {
		out.Rows, out.Cols = rows, cols
		if len(shape) >= 2 {
			out.Rows, out.Cols = shape[len(shape)-2], shape[len(shape)-1]
		}
		if out.Rows%32 != 0 || out.Cols%32 != 0 || out.Rows == 0 || out.Cols == 0 {
			return out, ferr(field+".layout", "param %s is %d×%d; tile layout needs rows and cols that are multiples of 32", prm.Name, out.Rows, out.Cols)
		}
		f := bd.Format
		if f == "" {
			f = dtypeFormat(prm.DType)
		}
		tile := tileBytes(f, 32, 32)
		if tile == 0 {
			return out, ferr(field+".layout", "param %s is %s; tile layout takes f32, bf16, f16 or 8-, 16- and 32-bit integers", prm.Name, prm.DType)
		}
		if pageSize == 0 {
			pageSize = tile
		} else if pageSize != tile {
			return out, ferr(field+".page_size", "%d; a page of a tile-layout buffer is one %s tile, %d bytes", pageSize, f, tile)
		}
		pr, pc = 32, 32
	}
	if bd.Shard == nil || bd.Shard.Elements == nil {
		if pageSize != 0 {
			out.PageSize = N(pageSize)
		}
		return out, nil
	}
	var shardEl [2]uint64
	for j := range 2 {
		v, err := b.u32(bd.Shard.Elements[j], fmt.Sprintf("%s.shard.shape[%d]", field, j))
		if err != nil {
			return out, err
		}
		if v == 0 {
			return out, ferr(fmt.Sprintf("%s.shard.shape[%d]", field, j), "must be positive")
		}
		shardEl[j] = v
	}
	if !bd.Tile {
		// Row-major pages are sticks of one row: the shard's width unless
		// page_size says otherwise.
		if pageSize == 0 {
			if pageSize = shardEl[1] * elem; pageSize > math.MaxUint32 {
				return out, ferr(field+".shard.shape[1]", "a shard row of %d bytes does not fit in 32 bits", pageSize)
			}
		}
		if pageSize%elem != 0 {
			return out, ferr(field+".page_size", "%d is not a whole number of %s elements", pageSize, prm.DType)
		}
		pr, pc = 1, pageSize/elem
	}
	out.PageSize = N(pageSize)
	sh, err := b.shard(out, field, prm, [2]uint64{rows, cols}, [2]uint64{pr, pc}, shardEl)
	out.Shard = sh
	return out, err
}

// shard turns a shard shape in elements into pages of pr×pc elements.
func (b *binder) shard(bd Buffer, field string, prm driver.Param, matrix, page, shardEl [2]uint64) (*Shard, error) {
	if matrix[0]%page[0] != 0 || matrix[1]%page[1] != 0 {
		return nil, ferr(field+".page_size", "param %s is %d×%d, which pages of %d×%d elements do not tile", prm.Name, matrix[0], matrix[1], page[0], page[1])
	}
	if shardEl[0]%page[0] != 0 || shardEl[1]%page[1] != 0 {
		return nil, ferr(field+".shard.shape", "%d×%d elements is not a whole number of %d×%d-element pages", shardEl[0], shardEl[1], page[0], page[1])
	}
	tensor := [2]uint64{matrix[0] / page[0], matrix[1] / page[1]}
	shard := [2]uint64{shardEl[0] / page[0], shardEl[1] / page[1]}
	// Any shard shape, as tt-metal's ShardSpecBuffer takes it, the last
	// shards partial. Width and block sharding cut the tensor of pages into
	// shard-shaped blocks; height sharding deals its pages out in row-major
	// order, shard rows of shard[1] pages at a time, so the shards are those
	// of the tensor seen as rows of shard[1] pages (the runtime's
	// page_order_view), which must divide its pages: else tt-metal's last
	// shard loses pages.
	grid := tensor
	if bd.Layout == "height_sharded" && shard[1] != tensor[1] {
		pages := tensor[0] * tensor[1]
		if pages%shard[1] != 0 {
			return nil, ferr(field+".shard.shape[1]", "a height-sharded buffer deals its %d pages out in shard rows of %d pages (%d elements), which do not divide them",
				pages, shard[1], shardEl[1])
		}
		grid = [2]uint64{pages / shard[1], shard[1]}
	}
	if tensor[0] > math.MaxUint32 || tensor[1] > math.MaxUint32 {
		return nil, ferr(field, "%d×%d pages do not fit in 32 bits", tensor[0], tensor[1])
	}
	cs, err := b.coreSet(&bd.Shard.Cores, field+".shard.cores")
	if err != nil {
		return nil, err
	}
	holders, err := b.cores(cs, [2]uint64{1, 1}, field+".shard.cores")
	if err != nil {
		return nil, err
	}
	nshards := ((grid[0] + shard[0] - 1) / shard[0]) * ((grid[1] + shard[1] - 1) / shard[1])
	if nshards > uint64(len(holders)) {
		return nil, ferr(field+".shard.cores", "%d shards of %d×%d elements but %d cores to hold them", nshards, shardEl[0], shardEl[1], len(holders))
	}
	orientation := bd.Shard.Orientation
	if orientation == "" {
		orientation = "row_major"
	}
	return &Shard{Cores: *cs, Shape: [2]uint32{uint32(shard[0]), uint32(shard[1])},
		Tensor: [2]uint32{uint32(tensor[0]), uint32(tensor[1])}, Orientation: orientation}, nil
}
