package tt

// A TTVariant becomes a runtime program (a protocol v2 compile request) for
// one launch: its core sets are evaluated on the launch grid and the
// values of the Variable params its expressions read, every argument is
// resolved per core to the protocol's entries (const for everything the
// driver can compute: core terms, split_work, semaphore ids and other
// cores' NOC coordinates; param, buffer, bank and accessor entries for the
// runtime), cores whose resolved runtime args are equal are sent as one
// core range set, and semaphores get their ids as tt-metal's
// CreateSemaphore gives them.

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// hostLayout is how a buffer's host data differs from its device bytes:
// tile layout (32x32 tiles of four 16x16 faces) of a Rows x Cols matrix
// (batched), stored as Format (a block-float format) or as the dtype
// itself.
type hostLayout struct {
	Tile       bool
	Rows, Cols uint64
	Format     string // "", "Bfp8_b" or "Bfp4_b"
	DType      driver.DType
}

func (h hostLayout) converts() bool { return h.Tile }

// paramDecl is the layout a program declares for a buffer param.
type paramDecl struct {
	spec     ttruntime.BufferSpec // normalized
	host     hostLayout
	explicit bool // a TTBuffer, not the default a layout-dependent arg needs
}

// runtimeProgram is one compiled form of an executable: the request it was
// built from, its id in the runtime, and what launches check.
type runtimeProgram struct {
	req   ttruntime.CompileRequest
	id    uint64
	decls []*paramDecl // by param
}

// coreList is a resolved core set: its cores in the kernel's order (the
// order of core_index) and the ranges sent for them. A slice may evaluate
// to no core (split_work_to_cores' second group when the work divides
// evenly): what sits on it is left out of the program.
type coreList struct {
	cores  []ttruntime.CoreCoord
	ranges ttruntime.CoreRangeSet
}

func progErr(format string, args ...any) error {
	return &driver.Error{Backend: ttruntime.Backend, Op: "compile", Err: fmt.Errorf("%w: %s", driver.ErrInvalidArgument, fmt.Sprintf(format, args...))}
}

// evalCoord evaluates a core coordinate expression (no per-core terms).
func evalDim(d driver.GwsDim, args []driver.LaunchArg, what string) (uint32, error) {
	v, err := d.Eval(args)
	if err != nil {
		return 0, progErr("%s: %v", what, err)
	}
	if v > math.MaxUint32 {
		return 0, progErr("%s is %d, past 32 bits", what, v)
	}
	return uint32(v), nil
}

// evalOpt evaluates an optional number of the program; nil is def.
func evalOpt(d *driver.GwsDim, def uint32, args []driver.LaunchArg, what string) (uint32, error) {
	if d == nil {
		return def, nil
	}
	return evalDim(*d, args, what)
}

// cbSizes evaluates a CB config's page sizes (one tile of the format where
// none is given) and its total (from its pages where it gives them).
func cbSizes(cb CBConfig, args []driver.LaunchArg, what string) (total uint32, pages []uint32, err error) {
	for _, x := range cb.Indices {
		tr, tc := tileOf(x)
		pb, err := evalOpt(x.PageBytes, uint32(tileBytes(x.Format, uint64(tr), uint64(tc))), args, fmt.Sprintf("%s index %d page bytes", what, x.Index))
		if err != nil {
			return 0, nil, err
		}
		pages = append(pages, pb)
	}
	switch {
	case cb.TotalBytes != nil:
		total, err = evalDim(*cb.TotalBytes, args, what+" total bytes")
	case cb.Pages != nil && len(pages) > 0:
		var n uint32
		if n, err = evalDim(*cb.Pages, args, what+" pages"); err == nil {
			t := uint64(n) * uint64(pages[0])
			if t > math.MaxUint32 {
				err = progErr("%s: %d pages of %d bytes are past 32 bits", what, n, pages[0])
			}
			total = uint32(t)
		}
	default:
		err = progErr("%s has no size (give TotalBytes or Pages)", what)
	}
	return total, pages, err
}

func (r *resolver) rect(cr CoreRange, what string) (ttruntime.CoreRange, error) {
	var out ttruntime.CoreRange
	for i, d := range []driver.GwsDim{cr.Start.Row, cr.Start.Col, cr.End.Row, cr.End.Col} {
		v, err := evalDim(d, r.args, fmt.Sprintf("%s %s", what, [...]string{"start row", "start col", "end row", "end col"}[i]))
		if err != nil {
			return out, err
		}
		out[i] = v
	}
	g := r.info.Grid
	switch {
	case out[0] > out[2] || out[1] > out[3]:
		return out, progErr("%s [%d, %d]..[%d, %d] is not ordered (start row ≤ end row, start col ≤ end col)", what, out[0], out[1], out[2], out[3])
	case out[2] >= g.Rows || out[3] >= g.Cols:
		return out, progErr("%s [%d, %d]..[%d, %d] is outside the chip's worker grid of %d x %d", what, out[0], out[1], out[2], out[3], g.Rows, g.Cols)
	}
	return out, nil
}

// coreSetOr evaluates a core set of a semaphore or circular buffer; nil is
// all, the cores of the program's kernels.
func (r *resolver) coreSetOr(s *CoreSet, all coreList, what string) (coreList, error) {
	if s == nil {
		return all, nil
	}
	return r.coreSet(s, what)
}

// coreSet evaluates a core set; nil is the launch grid.
func (r *resolver) coreSet(s *CoreSet, what string) (coreList, error) {
	if s == nil {
		rg := ttruntime.Rect(0, 0, r.grid[0]-1, r.grid[1]-1)
		return coreList{cores: ttruntime.CoreRangeSet{rg}.Cores(false), ranges: ttruntime.CoreRangeSet{rg}}, nil
	}
	var cl coreList
	seen := map[ttruntime.CoreCoord]bool{}
	add := func(c ttruntime.CoreCoord) error {
		if seen[c] {
			return progErr("%s: core (%d, %d) is in it twice", what, c[0], c[1])
		}
		seen[c] = true
		cl.cores = append(cl.cores, c)
		return nil
	}
	switch {
	case s.Slice != nil && len(s.Ranges) > 0:
		return cl, progErr("%s has both ranges and a slice; give one", what)
	case s.Slice != nil:
		of, err := r.rect(s.Slice.Of, what+" slice")
		if err != nil {
			return cl, err
		}
		from, err := evalDim(s.Slice.From, r.args, what+" slice from")
		if err != nil {
			return cl, err
		}
		to, err := evalDim(s.Slice.To, r.args, what+" slice to")
		if err != nil {
			return cl, err
		}
		rows, cols := of[2]-of[0]+1, of[3]-of[1]+1
		n := rows * cols
		if from > to || to > n {
			return cl, progErr("%s: slice [%d, %d) of a rectangle of %d cores", what, from, to, n)
		}
		for k := from; k < to; k++ {
			c := ttruntime.CoreCoord{of[0] + k%rows, of[1] + k/rows} // down the columns
			if s.Slice.RowWise {
				c = ttruntime.CoreCoord{of[0] + k/cols, of[1] + k%cols}
			}
			if err := add(c); err != nil {
				return cl, err
			}
		}
		cl.ranges = rectangles(cl.cores)
		return cl, nil
	case len(s.Ranges) == 0:
		return cl, progErr("%s is empty", what)
	default:
		for i, cr := range s.Ranges {
			rg, err := r.rect(cr, fmt.Sprintf("%s range %d", what, i))
			if err != nil {
				return cl, err
			}
			for _, c := range (ttruntime.CoreRangeSet{rg}).Cores(false) {
				if err := add(c); err != nil {
					return cl, err
				}
			}
			cl.ranges = append(cl.ranges, rg)
		}
	}
	if len(cl.cores) == 0 {
		return cl, progErr("%s is empty", what)
	}
	return cl, nil
}

// rectangles covers a set of cores with few rectangles: from each
// uncovered core in row-major order, as far right as the row allows, then
// as far down as every row of that span allows.
func rectangles(cores []ttruntime.CoreCoord) ttruntime.CoreRangeSet {
	in := make(map[ttruntime.CoreCoord]bool, len(cores))
	for _, c := range cores {
		in[c] = true
	}
	sorted := slices.Clone(cores)
	slices.SortFunc(sorted, func(a, b ttruntime.CoreCoord) int {
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		return int(a[1]) - int(b[1])
	})
	done := make(map[ttruntime.CoreCoord]bool, len(cores))
	var out ttruntime.CoreRangeSet
	free := func(c ttruntime.CoreCoord) bool { return in[c] && !done[c] }
	for _, c := range sorted {
		if done[c] {
			continue
		}
		r0, c0 := c[0], c[1]
		c1 := c0
		for free(ttruntime.CoreCoord{r0, c1 + 1}) {
			c1++
		}
		r1 := r0
	down:
		for {
			for col := c0; col <= c1; col++ {
				if !free(ttruntime.CoreCoord{r1 + 1, col}) {
					break down
				}
			}
			r1++
		}
		for row := r0; row <= r1; row++ {
			for col := c0; col <= c1; col++ {
				done[ttruntime.CoreCoord{row, col}] = true
			}
		}
		out = append(out, ttruntime.Rect(r0, c0, r1, c1))
	}
	return out
}

// noSemaphore marks a semaphore left out of a launch.
const noSemaphore = ^uint32(0)

type resolver struct {
	p    *driver.Program
	v    *Program
	args []driver.LaunchArg
	info *ttruntime.InitReply
	grid [2]uint32
	sems []uint32 // semaphore ids by declaration
	// params addressed through a layout-dependent arg, which need a
	// declaration
	needDecl map[int]bool
}

func (r *resolver) arg(a Arg, core *driver.CoreEnv, what string) (ttruntime.ArgEntry, error) {
	eval := func(d driver.GwsDim, name string) (uint32, error) {
		var v uint64
		var err error
		if core != nil {
			v, err = d.EvalCore(r.args, *core)
		} else {
			v, err = d.Eval(r.args)
		}
		if err != nil {
			return 0, progErr("%s %s: %v", what, name, err)
		}
		if v > math.MaxUint32 {
			return 0, progErr("%s %s is %d, past the 32-bit kernel argument", what, name, v)
		}
		return uint32(v), nil
	}
	p := uint32(a.Param)
	switch a.Kind {
	case ArgConst:
		v, err := eval(a.Value, "value")
		return ttruntime.ConstEntry(v), err
	case ArgCoreRow, ArgCoreCol, ArgCoreIndex, ArgNumCores:
		if core == nil {
			return ttruntime.ArgEntry{}, progErr("%s: %s differs per core; it belongs in runtime args", what, a.Kind)
		}
		v := map[ArgKind]uint64{ArgCoreRow: core.Row, ArgCoreCol: core.Col,
			ArgCoreIndex: core.Index, ArgNumCores: core.Count}[a.Kind]
		return ttruntime.ConstEntry(uint32(v)), nil
	case ArgParam, ArgBufferAddr, ArgBufferSize, ArgPages, ArgPageSize:
		return ttruntime.ParamEntry(string(a.Kind), p), nil
	case ArgAccessor:
		r.needDecl[a.Param] = true
		return ttruntime.ParamEntry(ttruntime.ArgAccessor, p), nil
	case ArgBankID, ArgBankNocX, ArgBankNocY:
		page, err := eval(a.Page, "page")
		r.needDecl[a.Param] = true
		return ttruntime.BankEntry(string(a.Kind), p, page), err
	case ArgCoreNocX, ArgCoreNocY:
		row, err := eval(a.Core.Row, "core row")
		if err != nil {
			return ttruntime.ArgEntry{}, err
		}
		col, err := eval(a.Core.Col, "core col")
		if err != nil {
			return ttruntime.ArgEntry{}, err
		}
		noc := r.info.NOC
		if int(row) >= len(noc.WorkerY) || int(col) >= len(noc.WorkerX) {
			return ttruntime.ArgEntry{}, progErr("%s: core (%d, %d) is outside the chip's worker grid of %d x %d", what, row, col, len(noc.WorkerY), len(noc.WorkerX))
		}
		if a.Kind == ArgCoreNocX {
			return ttruntime.ConstEntry(noc.WorkerX[col]), nil
		}
		return ttruntime.ConstEntry(noc.WorkerY[row]), nil
	case ArgSemaphore, ArgSemaphoreAddr:
		if a.Semaphore < 0 || a.Semaphore >= len(r.sems) {
			return ttruntime.ArgEntry{}, progErr("%s: semaphore %d; the program has %d", what, a.Semaphore, len(r.sems))
		}
		if r.sems[a.Semaphore] == noSemaphore {
			return ttruntime.ArgEntry{}, progErr("%s: semaphore %d is on no core in this launch (its slice is empty)", what, a.Semaphore)
		}
		if a.Kind == ArgSemaphoreAddr {
			return ttruntime.SemaphoreAddrEntry(r.sems[a.Semaphore]), nil
		}
		return ttruntime.ConstEntry(r.sems[a.Semaphore]), nil
	}
	return ttruntime.ArgEntry{}, progErr("%s: unknown arg kind %q", what, a.Kind)
}

func (r *resolver) argList(args []Arg, core *driver.CoreEnv, what string) ([]ttruntime.ArgEntry, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := make([]ttruntime.ArgEntry, len(args))
	for i, a := range args {
		e, err := r.arg(a, core, fmt.Sprintf("%s[%d]", what, i))
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// entryKey renders resolved entries so that equal lists have equal keys.
func entryKey(es []ttruntime.ArgEntry) string {
	var b []byte
	for _, e := range es {
		b = append(b, e.Kind...)
		for _, f := range []*uint32{e.Value, e.Param, e.Page} {
			if f == nil {
				b = append(b, '-')
			} else {
				b = binary.LittleEndian.AppendUint32(b, *f)
			}
		}
		if e.Core != nil {
			b = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(b, e.Core[0]), e.Core[1])
		}
		b = append(b, 0)
	}
	return string(b)
}

// union is the cores any kernel runs on, in row-major order.
func union(kernels []coreList) coreList {
	seen := map[ttruntime.CoreCoord]bool{}
	var cores []ttruntime.CoreCoord
	for _, k := range kernels {
		for _, c := range k.cores {
			if !seen[c] {
				seen[c] = true
				cores = append(cores, c)
			}
		}
	}
	rs := rectangles(cores)
	return coreList{cores: rs.Cores(false), ranges: rs}
}

// resolve builds the runtime program of a launch with args on grid.
func resolve(p *driver.Program, args []driver.LaunchArg, grid [2]uint32, info *ttruntime.InitReply) (*runtimeProgram, error) {
	v := ProgramOf(p)
	r := &resolver{p: p, v: v, args: args, info: info, grid: grid, needDecl: map[int]bool{}}
	rp := &runtimeProgram{decls: make([]*paramDecl, len(p.Params))}
	req := &rp.req
	req.Name = p.Name
	for _, prm := range p.Params {
		req.Params = append(req.Params, ttruntime.ParamDesc{Name: prm.Name, Kind: prm.Kind.String(), DType: prm.DType.String()})
	}
	kcores := make([]coreList, len(v.Kernels))
	for k := range v.Kernels {
		cl, err := r.coreSet(v.Kernels[k].Cores, fmt.Sprintf("kernel %d (%s) cores", k, kernelName(v.Kernels[k], k)))
		if err != nil {
			return nil, err
		}
		kcores[k] = cl
	}
	all := union(kcores)
	if len(all.cores) == 0 {
		return nil, progErr("program %q: no kernel has a core to run on", p.Name)
	}
	var err error
	if req.Semaphores, err = r.semaphores(all); err != nil {
		return nil, err
	}
	for k := range v.Kernels {
		if len(kcores[k].cores) == 0 {
			continue // on an empty slice: left out
		}
		out, err := r.kernel(k, kcores[k])
		if err != nil {
			return nil, err
		}
		req.Kernels = append(req.Kernels, out)
	}
	if req.CBs, err = r.cbs(all); err != nil {
		return nil, err
	}
	if err := r.buffers(rp); err != nil {
		return nil, err
	}
	for _, inc := range v.Includes {
		f := ttruntime.IncludeFile{Path: inc.Path}
		f.SetSource(inc.Source)
		req.IncludeFiles = append(req.IncludeFiles, f)
	}
	if req.Kernels == nil {
		req.Kernels = []ttruntime.Kernel{}
	}
	return rp, nil
}

// semaphores gives the program's semaphores ids as CreateSemaphore does:
// the smallest id free on every core of the set, in declaration order. A
// semaphore on an empty slice is left out.
func (r *resolver) semaphores(all coreList) ([]ttruntime.Semaphore, error) {
	var out []ttruntime.Semaphore
	used := map[ttruntime.CoreCoord]uint64{}
	limit := r.info.Semaphores
	for i, s := range r.v.Semaphores {
		cl, err := r.coreSetOr(s.Cores, all, fmt.Sprintf("semaphore %d cores", i))
		if err != nil {
			return nil, err
		}
		if len(cl.cores) == 0 {
			r.sems = append(r.sems, noSemaphore)
			continue
		}
		var taken uint64
		for _, c := range cl.cores {
			taken |= used[c]
		}
		id := uint32(0)
		for id < min(limit, 64) && taken&(1<<id) != 0 {
			id++
		}
		if id >= limit || id >= 64 {
			return nil, progErr("semaphore %d: no semaphore id is free on all of its cores (a core has %d)", i, limit)
		}
		for _, c := range cl.cores {
			used[c] |= 1 << id
		}
		r.sems = append(r.sems, id)
		initial, err := evalOpt(s.Initial, 0, r.args, fmt.Sprintf("semaphore %d initial value", i))
		if err != nil {
			return nil, err
		}
		out = append(out, ttruntime.Semaphore{Cores: cl.ranges, ID: id, Initial: initial, Name: s.Name})
	}
	return out, nil
}

// kernel resolves kernel k on its cores: its config and its compile,
// common, named and runtime args.
func (r *resolver) kernel(k int, cores coreList) (ttruntime.Kernel, error) {
	kd := &r.v.Kernels[k]
	name := kernelName(*kd, k)
	what := fmt.Sprintf("kernel %d (%s)", k, name)
	out := ttruntime.Kernel{Name: name, Processor: string(kd.Processor), Cores: cores.ranges, Defines: kd.Defines,
		Path: kd.Path, DFBs: kd.DFBs, SemaphoreBindings: kd.SemaphoreBindings, Tensors: kd.Tensors, Metal2: kd.Metal2,
		NamedRuntimeArgs: argNames(kd.NamedRuntimeArgs), NamedCommonArgs: argNames(kd.NamedCommonArgs)}
	out.SetSource(kd.Source)
	if kd.NOC != nil {
		n := uint32(*kd.NOC)
		out.NOC = &n
	}
	if kd.Processor == Compute {
		f := kd.MathFidelity
		if f == "" {
			f = "HiFi4"
		}
		out.ComputeConfig = &ttruntime.ComputeConfig{MathFidelity: f, FP32DestAcc: kd.FP32DestAcc, MathApproxMode: kd.MathApproxMode,
			Bfp8PackPrecise: kd.Bfp8PackPrecise, DstFullSync: kd.DstFullSync, UnpackToDestFP32: kd.UnpackToDestFP32}
	}
	var err error
	if out.CompileArgs, err = r.argList(kd.CompileArgs, nil, what+" compile arg"); err != nil {
		return out, err
	}
	if out.CommonArgs, err = r.argList(withNamed(kd.NamedCommonArgs, kd.CommonArgs), nil, what+" common arg"); err != nil {
		return out, err
	}
	for _, na := range kd.NamedCompileArgs {
		e, err := r.arg(na.Arg, nil, what+" named compile arg "+na.Name)
		if err != nil {
			return out, err
		}
		if out.NamedCompileArgs == nil {
			out.NamedCompileArgs = map[string]ttruntime.ArgEntry{}
		}
		out.NamedCompileArgs[na.Name] = e
	}
	out.RuntimeArgs, err = r.runtimeArgs(kd, cores.cores, what)
	return out, err
}

// argNames are the names of named args, in order (nil for none).
func argNames(named []NamedArg) []string {
	var out []string
	for _, na := range named {
		out = append(out, na.Name)
	}
	return out
}

// withNamed is a list of args as the runtime takes it: the named args'
// values first, then the rest.
func withNamed(named []NamedArg, rest []Arg) []Arg {
	if len(named) == 0 {
		return rest
	}
	out := make([]Arg, 0, len(named)+len(rest))
	for _, na := range named {
		out = append(out, na.Arg)
	}
	return append(out, rest...)
}

// runtimeArgs resolves a kernel's runtime args (its named ones first) on
// each of its cores; cores with equal resolved args share one entry.
func (r *resolver) runtimeArgs(kd *Kernel, cores []ttruntime.CoreCoord, what string) ([]ttruntime.CoreArgs, error) {
	list := withNamed(kd.NamedRuntimeArgs, kd.RuntimeArgs)
	if len(list) == 0 {
		return nil, nil
	}
	type group struct {
		args  []ttruntime.ArgEntry
		cores []ttruntime.CoreCoord
	}
	var groups []*group
	byKey := map[string]*group{}
	for i, c := range cores {
		env := &driver.CoreEnv{Row: uint64(c[0]), Col: uint64(c[1]), Index: uint64(i), Count: uint64(len(cores))}
		es, err := r.argList(list, env, fmt.Sprintf("%s runtime arg (core %d, %d)", what, c[0], c[1]))
		if err != nil {
			return nil, err
		}
		key := entryKey(es)
		g := byKey[key]
		if g == nil {
			g = &group{args: es}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.cores = append(g.cores, c)
	}
	out := make([]ttruntime.CoreArgs, 0, len(groups))
	for _, g := range groups {
		out = append(out, ttruntime.CoreArgs{Cores: rectangles(g.cores), Args: g.args})
	}
	return out, nil
}

// cbs resolves the circular-buffer configs; a config on an empty slice is
// left out. A config on a buffer param needs that param's declaration.
func (r *resolver) cbs(all coreList) ([]ttruntime.CBConfig, error) {
	var out []ttruntime.CBConfig
	for i, cb := range r.v.CBs {
		cl, err := r.coreSetOr(cb.Cores, all, fmt.Sprintf("circular buffer config %d cores", i))
		if err != nil {
			return nil, err
		}
		if len(cl.cores) == 0 {
			continue
		}
		total, pageBytes, err := cbSizes(cb, r.args, fmt.Sprintf("circular buffer config %d", i))
		if err != nil {
			return nil, err
		}
		cfg := ttruntime.CBConfig{Cores: cl.ranges, TotalBytes: total}
		for j, x := range cb.Indices {
			ix := ttruntime.CBIndex{Index: uint32(x.Index), Name: x.Name, Format: x.Format, PageBytes: pageBytes[j]}
			if tr, tc := tileOf(x); tr != 32 || tc != 32 {
				ix.Tile = &[2]uint32{tr, tc}
			}
			cfg.Indices = append(cfg.Indices, ix)
		}
		if cb.Buffer != nil {
			b := uint32(*cb.Buffer)
			cfg.Buffer = &b
			r.needDecl[*cb.Buffer] = true
		}
		out = append(out, cfg)
	}
	return out, nil
}

// buffers evaluates the buffer declarations, and declares with the plain
// layout the params that need a declaration and have none.
func (r *resolver) buffers(rp *runtimeProgram) error {
	req := &rp.req
	for _, b := range r.v.Buffers {
		d, err := declOf(r.p, b, r.args)
		if err != nil {
			return err
		}
		rp.decls[b.Param] = d
		req.Buffers = append(req.Buffers, ttruntime.BufferDecl{Param: uint32(b.Param), BufferSpec: d.spec})
	}
	var implicit []int
	for prm := range r.needDecl {
		if prm >= 0 && prm < len(rp.decls) && rp.decls[prm] == nil {
			implicit = append(implicit, prm)
		}
	}
	sort.Ints(implicit)
	for _, prm := range implicit {
		d := defaultDecl(r.p.Params[prm].DType)
		rp.decls[prm] = d
		req.Buffers = append(req.Buffers, ttruntime.BufferDecl{Param: uint32(prm), BufferSpec: d.spec})
	}
	return nil
}

func sortedCores[V any](m map[ttruntime.CoreCoord]V) []ttruntime.CoreCoord {
	out := make([]ttruntime.CoreCoord, 0, len(m))
	for c := range m {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b ttruntime.CoreCoord) int {
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		return int(a[1]) - int(b[1])
	})
	return out
}

func kernelName(k Kernel, i int) string {
	if k.Name != "" {
		return k.Name
	}
	if k.Processor != "" {
		return string(k.Processor)
	}
	return "kernel" + strconv.Itoa(i)
}

func tileOf(x CBIndex) (uint32, uint32) {
	tr, tc := x.TileRows, x.TileCols
	if tr == 0 {
		tr = 32
	}
	if tc == 0 {
		tc = 32
	}
	return tr, tc
}

// defaultDecl is the layout of a buffer param without a declaration.
func defaultDecl(dt driver.DType) *paramDecl {
	return &paramDecl{spec: ttruntime.BufferSpec{PageSize: DefaultPageSize}.Normal(), host: hostLayout{DType: dt}}
}

// tileBytes is the device size of one 32x32 tile of a buffer's elements.
func (h hostLayout) tileBytes() uint64 {
	if n, ok := ttruntime.FormatTileBytes[h.Format]; ok && h.Format != "" {
		return uint64(n)
	}
	return TileLen * uint64(h.DType.Size())
}

// declOf evaluates a TTBuffer declaration (its shard cores may read
// Variable params; AllocParam evaluates it with no args).
func declOf(p *driver.Program, b Buffer, args []driver.LaunchArg) (*paramDecl, error) {
	if b.Param < 0 || b.Param >= len(p.Params) {
		return nil, progErr("buffer declaration of param %d; the program has %d params", b.Param, len(p.Params))
	}
	prm := p.Params[b.Param]
	d := &paramDecl{explicit: true, host: hostLayout{Tile: b.Tile, Rows: b.Rows, Cols: b.Cols, Format: b.Format, DType: prm.DType}}
	def := uint64(DefaultPageSize)
	if b.Tile {
		def = d.host.tileBytes()
	}
	p32, err := evalOpt(b.PageSize, uint32(min(def, math.MaxUint32)), args, fmt.Sprintf("param %d (%s) page size", b.Param, prm.Name))
	if err != nil {
		return nil, err
	}
	page := uint64(p32)
	d.spec = ttruntime.BufferSpec{PageSize: page, Placement: b.Placement, Layout: b.Layout}
	if b.Shard != nil {
		// The shard grid is in the chip's terms: worker cores for L1,
		// [0, bank] for DRAM; the runtime checks it.
		var sh ttruntime.ShardSpec
		if b.Shard.Cores.Slice != nil {
			return nil, progErr("param %d (%s): a shard grid is given as ranges, not a slice", b.Param, prm.Name)
		}
		for i, cr := range b.Shard.Cores.Ranges {
			var rg ttruntime.CoreRange
			for j, dim := range []driver.GwsDim{cr.Start.Row, cr.Start.Col, cr.End.Row, cr.End.Col} {
				v, err := evalDim(dim, args, fmt.Sprintf("param %d (%s) shard grid range %d", b.Param, prm.Name, i))
				if err != nil {
					return nil, err
				}
				rg[j] = v
			}
			sh.Cores = append(sh.Cores, rg)
		}
		if sh.Cores == nil {
			sh.Cores = ttruntime.CoreRangeSet{}
		}
		sh.Shape, sh.Tensor, sh.Orientation = b.Shard.Shape, b.Shard.Tensor, b.Shard.Orientation
		d.spec.Shard = &sh
	}
	d.spec = d.spec.Normal()
	return d, nil
}

// matches reports whether a pool buffer's layout is the declared one.
func (d *paramDecl) matches(spec ttruntime.BufferSpec, host hostLayout) bool {
	if !d.spec.Equal(spec) || d.host.Tile != host.Tile {
		return false
	}
	return !d.host.Tile || d.host.Rows == host.Rows && d.host.Cols == host.Cols && d.host.Format == host.Format
}

func (d *paramDecl) describe() string {
	s := d.spec
	out := fmt.Sprintf("%s %s, %d-byte pages", s.Placement, s.Layout, s.PageSize)
	if s.Shard != nil {
		out += fmt.Sprintf(", shards %v of %v on %v (%s)", s.Shard.Shape, s.Shard.Tensor, s.Shard.Cores, s.Shard.Orientation)
	}
	if d.host.Tile {
		f := d.host.Format
		if f == "" {
			f = d.host.DType.String()
		}
		out += fmt.Sprintf(", %dx%d in %s tiles", d.host.Rows, d.host.Cols, f)
	}
	return out
}

// cacheKey identifies a runtime program: the launch grid and the values of
// the Variable params the variant's expressions read.
func cacheKey(grid [2]uint32, vars []int, args []driver.LaunchArg) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%dx%d", grid[0], grid[1])
	for _, i := range vars {
		if i >= 0 && i < len(args) {
			fmt.Fprintf(&b, ";%d=%d", i, args[i].Value.Bits)
		}
	}
	return b.String()
}

// exprVars lists the params every expression of the program reads: the
// grid, core sets, arg values, pages and cores, and shard grids.
func exprVars(p *driver.Program) []int {
	seen := map[int]bool{}
	dim := func(d driver.GwsDim) {
		for _, i := range d.Params() {
			seen[i] = true
		}
	}
	rng := func(r CoreRange) {
		for _, d := range []driver.GwsDim{r.Start.Row, r.Start.Col, r.End.Row, r.End.Col} {
			dim(d)
		}
	}
	set := func(s *CoreSet) {
		if s == nil {
			return
		}
		for _, r := range s.Ranges {
			rng(r)
		}
		if s.Slice != nil {
			rng(s.Slice.Of)
			dim(s.Slice.From)
			dim(s.Slice.To)
		}
	}
	args := func(as []Arg) {
		for _, a := range as {
			dim(a.Value)
			dim(a.Page)
			dim(a.Core.Row)
			dim(a.Core.Col)
		}
	}
	for _, g := range p.Grid {
		dim(g)
	}
	v := ProgramOf(p)
	for _, k := range v.Kernels {
		set(k.Cores)
		args(k.CompileArgs)
		args(k.RuntimeArgs)
		args(k.CommonArgs)
		for _, nl := range k.namedArgLists() {
			for _, na := range *nl.list {
				args([]Arg{na.Arg})
			}
		}
	}
	for _, cb := range v.CBs {
		set(cb.Cores)
	}
	for _, s := range v.Semaphores {
		set(s.Cores)
	}
	for _, b := range v.Buffers {
		if b.Shard != nil {
			set(&b.Shard.Cores)
		}
	}
	out := make([]int, 0, len(seen))
	for i := range seen {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}
