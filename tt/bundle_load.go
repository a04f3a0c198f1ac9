package tt

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/strictjson"
	"github.com/zyxtt/zyxtt/kernels"
)

// A bundle's tt.json (docs/programs.md) decodes straight into a Program
// (LoadBundle): a list of kernels on sets of cores, circular buffers and
// semaphores on sets of cores, the layout of the buffers the kernels
// address, and include files; or the reader/compute/writer shorthand for one
// group of cores. Its numbers stay expressions over the bundle's vars until
// BindBundle evaluates them.

// The JSON forms tt.json writes that a Program's fields do not mirror one
// to one: arguments as bare numbers, core sets in four forms, buffers keyed
// by param name, the one-index CB and the shorthand.
type (
	ttFile struct {
		Grid          []driver.GwsDim      `json:"grid"`
		Kernels       []ttFileKernel       `json:"kernels"`
		Reader        *ttFileSection       `json:"reader"`
		Compute       *ttFileSection       `json:"compute"`
		Writer        *ttFileSection       `json:"writer"`
		CBs           []ttFileCB           `json:"cbs"`
		Semaphores    []ttFileSemaphore    `json:"semaphores"`
		Buffers       map[string]ttFileBuf `json:"buffers"`
		Includes      json.RawMessage      `json:"includes"`
		ComputeConfig *ttFileCompute       `json:"compute_config"`
		Require       []ttFileRequire      `json:"require"`
	}
	ttFileRequire struct {
		Zero    *driver.GwsDim `json:"zero"`
		Message string         `json:"message"`
	}
	// ttFileSection is a kernel's source and args: a section of the
	// shorthand, and the body of a kernels entry.
	ttFileSection struct {
		Source           string                     `json:"source"`
		Defines          map[string]string          `json:"defines"`
		CompileArgs      []json.RawMessage          `json:"compile_args"`
		NamedCompileArgs map[string]json.RawMessage `json:"named_compile_args"`
		RuntimeArgs      []json.RawMessage          `json:"runtime_args"`
		CommonArgs       []json.RawMessage          `json:"common_args"`
		NamedRuntimeArgs map[string]json.RawMessage `json:"named_runtime_args"`
		NamedCommonArgs  map[string]json.RawMessage `json:"named_common_args"`
		DFBs             map[string]string          `json:"dfbs"`
		SemBindings      map[string]string          `json:"semaphore_bindings"`
		Tensors          map[string]string          `json:"tensors"`
		Metal2           bool                       `json:"metal2"`
	}
	ttFileKernel struct {
		Name      string          `json:"name"`
		Processor string          `json:"processor"`
		NOC       *int            `json:"noc"`
		Cores     json.RawMessage `json:"cores"`
		ttFileSection
		ComputeConfig *ttFileCompute `json:"compute_config"`
	}
	ttFileArg struct {
		Name      string          `json:"name"` // a label for people
		Kind      string          `json:"kind"`
		Param     *ref            `json:"param"`
		Value     *driver.GwsDim  `json:"value"`
		Page      *driver.GwsDim  `json:"page"`
		Core      []driver.GwsDim `json:"core"`
		Semaphore *ref            `json:"semaphore"`
	}
	ttFileCB struct {
		Cores      json.RawMessage `json:"cores"`
		TotalBytes *driver.GwsDim  `json:"total_bytes"`
		Pages      *driver.GwsDim  `json:"pages"`
		Indices    []ttFileCBIndex `json:"indices"`
		Buffer     *ref            `json:"buffer"`
		ttFileCBIndex
	}
	ttFileCBIndex struct {
		Index     *int           `json:"index"`
		Format    string         `json:"format"`
		PageBytes *driver.GwsDim `json:"page_bytes"`
		Tile      []uint32       `json:"tile"`
		Name      string         `json:"name"`
	}
	ttFileSemaphore struct {
		Name    string          `json:"name"`
		Cores   json.RawMessage `json:"cores"`
		Initial *driver.GwsDim  `json:"initial"`
	}
	ttFileBuf struct {
		Placement    string         `json:"placement"`
		MemoryLayout string         `json:"memory_layout"`
		Layout       string         `json:"layout"`
		PageSize     *driver.GwsDim `json:"page_size"`
		Shard        *ttFileShard   `json:"shard"`
		Format       string         `json:"format"`
	}
	ttFileShard struct {
		Cores       json.RawMessage `json:"cores"`
		Shape       []driver.GwsDim `json:"shape"`
		Orientation string          `json:"orientation"`
	}
	ttFileSlice struct {
		Of      []driver.GwsDim `json:"of"`
		From    *driver.GwsDim  `json:"from"`
		To      *driver.GwsDim  `json:"to"`
		RowWise bool            `json:"row_wise"`
	}
	ttFileCompute struct {
		MathFidelity     string   `json:"math_fidelity"`
		FP32DestAcc      bool     `json:"fp32_dest_acc"`
		MathApproxMode   bool     `json:"math_approx_mode"`
		Bfp8PackPrecise  bool     `json:"bfp8_pack_precise"`
		DstFullSync      bool     `json:"dst_full_sync"`
		UnpackToDestFP32 []uint32 `json:"unpack_to_dest_fp32"`
	}
)

// ref names a param or a semaphore by name (a JSON string) or ordinal (a
// JSON integer, kept as "$N").
type ref string

func (r *ref) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*r = ref(s)
		return nil
	}
	if _, err := strconv.ParseUint(string(b), 10, 31); err != nil {
		return fmt.Errorf("want a name or an ordinal, got %s", b)
	}
	*r = ref("$" + string(b))
	return nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Bounds that keep a hostile file from costing time and memory without
// end: the include files of one program, the cores one core set may name,
// and the launch grid's axes (a chip has at most a few hundred worker
// cores).
const (
	maxIncludes = 256
	maxSetCores = 4096
	maxGridAxis = 64
)

// loader decodes one tt.json into a Program.
type loader struct {
	src driver.BundleSource
	p   *Program
	// libraryKernel is the field of the first kernel whose source is in
	// the kernel library ("" if none): the program then gets the library's
	// include directory.
	libraryKernel string
	// kernelFrom is, per kernel of p, the file its source was read from
	// ("" for a library kernel): a kernel that is also a file of the
	// include tree is compiled at its path there (Kernel.Path).
	kernelFrom []string
}

func ferr(field, format string, args ...any) error {
	return &driver.FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// decodeSub decodes one JSON value strictly, naming field paths below
// prefix.
func decodeSub(data []byte, prefix string, v any) error {
	if err := strictjson.Decode(data, v); err != nil {
		var fe *strictjson.Error
		if errors.As(err, &fe) {
			return &driver.FieldError{Field: joinField(prefix, fe.Field), Err: fe.Err}
		}
		return &driver.FieldError{Field: prefix, Err: err}
	}
	return nil
}

func joinField(prefix, field string) string {
	switch {
	case field == "":
		return prefix
	case prefix == "":
		return field
	case strings.HasPrefix(field, "["):
		return prefix + field
	}
	return prefix + "." + field
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// LoadBundle decodes a bundle's tt.json into p (driver.BundleVariant).
func (p *Program) LoadBundle(src driver.BundleSource, data []byte) error {
	var f ttFile
	if err := decodeSub(data, "", &f); err != nil {
		return err
	}
	*p = Program{}
	l := &loader{src: src, p: p}
	if err := l.load(&f); err != nil {
		return err
	}
	p.shorthand = f.Reader != nil
	return nil
}

// expr checks an expression of the file: its names are the bundle's vars
// (or, where perCore allows, the per-core terms), and it names no param
// ordinal ($N).
func (l *loader) expr(d driver.GwsDim, field string, perCore bool) (driver.GwsDim, error) {
	if len(d.Params()) > 0 {
		return d, ferr(field, "%s: use var names, not $N", d)
	}
	out, err := d.Resolve(func(name string) (driver.GwsDim, bool) {
		if _, ok := l.src.VarIndex(name); ok {
			return driver.NameDim(name), true // bound with its value
		}
		return driver.GwsDim{}, false
	})
	if err != nil {
		return d, ferr(field, "%v", err)
	}
	if !perCore && out.PerCore() {
		return d, ferr(field, "%s reads the core it runs on (core_row, core_col, core_index, num_cores, split_units, split_start); only runtime args may", d)
	}
	return out, nil
}

func (l *loader) optExpr(d *driver.GwsDim, field string) (*driver.GwsDim, error) {
	if d == nil {
		return nil, nil
	}
	out, err := l.expr(*d, field, false)
	return &out, err
}

func (l *loader) load(f *ttFile) error {
	for i, g := range f.Grid {
		d, err := l.expr(g, fmt.Sprintf("grid[%d]", i), false)
		if err != nil {
			return err
		}
		l.p.Grid = append(l.p.Grid, d)
	}
	// Args name semaphores, so the semaphores come first.
	if err := l.semaphores(f.Semaphores); err != nil {
		return err
	}
	if err := l.kernels(f); err != nil {
		return err
	}
	for i, rq := range f.Require {
		field := fmt.Sprintf("require[%d]", i)
		if rq.Zero == nil {
			return ferr(field+".zero", "missing (an expression that must be 0, e.g. \"m %% 32\")")
		}
		d, err := l.expr(*rq.Zero, field+".zero", false)
		if err != nil {
			return err
		}
		l.p.Require = append(l.p.Require, Require{Zero: d, Message: rq.Message})
	}
	if err := l.buffers(f.Buffers); err != nil {
		return err
	}
	if err := l.cbs(f.CBs); err != nil {
		return err
	}
	return l.includes(f.Includes)
}

func (l *loader) semaphores(raw []ttFileSemaphore) error {
	seen := map[string]int{}
	for i, rs := range raw {
		field := fmt.Sprintf("semaphores[%d]", i)
		s := Semaphore{Name: rs.Name}
		if rs.Name != "" {
			if !identRE.MatchString(rs.Name) {
				return ferr(field+".name", "%q is not an identifier", rs.Name)
			}
			if j, dup := seen[rs.Name]; dup {
				return ferr(field+".name", "%q is also the name of semaphores[%d]", rs.Name, j)
			}
			seen[rs.Name] = i
		}
		var err error
		if s.Cores, err = l.coreSet(rs.Cores, field+".cores"); err != nil {
			return err
		}
		if s.Initial, err = l.optExpr(rs.Initial, field+".initial"); err != nil {
			return err
		}
		l.p.Semaphores = append(l.p.Semaphores, s)
	}
	return nil
}

func (l *loader) kernels(f *ttFile) error {
	short := f.Reader != nil || f.Compute != nil || f.Writer != nil
	switch {
	case short && f.Kernels != nil:
		return ferr("kernels", "give either kernels or the reader/compute/writer shorthand, not both")
	case short:
		return l.shorthand(f)
	case f.Kernels == nil:
		return ferr("kernels", "missing (a Tenstorrent program has kernels, or reader, compute and writer)")
	case f.ComputeConfig != nil:
		return ferr("compute_config", "with kernels, each compute kernel has its own compute_config")
	}
	names := map[string]int{}
	for i := range f.Kernels {
		field := fmt.Sprintf("kernels[%d]", i)
		k, err := l.kernel(&f.Kernels[i], field)
		if err != nil {
			return err
		}
		if j, dup := names[k.Name]; dup {
			return ferr(field+".name", "%q is also the name of kernels[%d]", k.Name, j)
		}
		names[k.Name] = i
		l.p.Kernels = append(l.p.Kernels, k)
	}
	return nil
}

func (l *loader) shorthand(f *ttFile) error {
	for _, s := range []struct {
		name string
		raw  *ttFileSection
		proc Processor
	}{{"reader", f.Reader, Riscv0}, {"compute", f.Compute, Compute}, {"writer", f.Writer, Riscv1}} {
		if s.raw == nil {
			return ferr(s.name, "missing (the shorthand has reader, compute and writer; or give kernels)")
		}
		rk := &ttFileKernel{Name: s.name, Processor: string(s.proc), ttFileSection: *s.raw}
		if s.proc == Compute {
			rk.ComputeConfig = f.ComputeConfig
		}
		k, err := l.kernel(rk, s.name)
		if err != nil {
			return err
		}
		l.p.Kernels = append(l.p.Kernels, k)
	}
	return nil
}

func (l *loader) kernel(rk *ttFileKernel, field string) (Kernel, error) {
	k := Kernel{Name: rk.Name, Processor: Processor(rk.Processor), NOC: rk.NOC, Defines: maps.Clone(rk.Defines)}
	src, err := l.src.ReadFile(field+".source", rk.Source)
	if err != nil {
		return k, err
	}
	k.Source = string(src)
	from := ""
	if strings.HasPrefix(rk.Source, kernels.Prefix) {
		if l.libraryKernel == "" {
			l.libraryKernel = field + ".source"
		}
	} else if files, err := l.src.Files(field+".source", rk.Source); err == nil && len(files) == 1 {
		from = files[0].From
	}
	l.kernelFrom = append(l.kernelFrom, from)
	if k.Name == "" {
		base := path.Base(strings.ReplaceAll(rk.Source, "\\", "/"))
		k.Name = strings.TrimSuffix(base, path.Ext(base))
	}
	if k.Cores, err = l.coreSet(rk.Cores, field+".cores"); err != nil {
		return k, err
	}
	lists := []struct {
		name    string
		raw     []json.RawMessage
		dst     *[]Arg
		perCore bool
	}{{"compile_args", rk.CompileArgs, &k.CompileArgs, false},
		{"runtime_args", rk.RuntimeArgs, &k.RuntimeArgs, true},
		{"common_args", rk.CommonArgs, &k.CommonArgs, false}}
	for _, li := range lists {
		*li.dst = make([]Arg, len(li.raw))
		for i, ra := range li.raw {
			if (*li.dst)[i], err = l.arg(ra, fmt.Sprintf("%s.%s[%d]", field, li.name, i), li.perCore); err != nil {
				return k, err
			}
		}
	}
	raw := map[string]map[string]json.RawMessage{"named_compile_args": rk.NamedCompileArgs,
		"named_runtime_args": rk.NamedRuntimeArgs, "named_common_args": rk.NamedCommonArgs}
	for _, nl := range k.namedArgLists() {
		// In name order: a JSON object has no other that every reader keeps.
		for _, name := range slices.Sorted(maps.Keys(raw[nl.field])) {
			a, err := l.arg(raw[nl.field][name], field+"."+nl.field+"."+name, nl.perCore)
			if err != nil {
				return k, err
			}
			*nl.list = append(*nl.list, NamedArg{Name: name, Arg: a})
		}
	}
	k.DFBs, k.SemaphoreBindings, k.Tensors, k.Metal2 = rk.DFBs, rk.SemBindings, rk.Tensors, rk.Metal2
	if cc := rk.ComputeConfig; cc != nil {
		if k.Processor != Compute {
			return k, ferr(field+".compute_config", "only compute kernels have a compute_config")
		}
		k.MathFidelity, k.FP32DestAcc, k.MathApproxMode = cc.MathFidelity, cc.FP32DestAcc, cc.MathApproxMode
		k.Bfp8PackPrecise, k.DstFullSync, k.UnpackToDestFP32 = cc.Bfp8PackPrecise, cc.DstFullSync, cc.UnpackToDestFP32
	}
	if k.Processor == Compute && k.MathFidelity == "" {
		k.MathFidelity = "HiFi4"
	}
	return k, nil
}

// arg decodes an argument entry: an object, or a bare number or string for
// a const. It reads what the entry's kind needs and refuses what it does
// not take; what a kind allows where (an accessor in compile args, a param
// of the right kind) is the runtime's to check.
func (l *loader) arg(raw json.RawMessage, field string, perCore bool) (Arg, error) {
	var ra ttFileArg
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] != '{' {
		var v driver.GwsDim
		if err := json.Unmarshal(t, &v); err != nil {
			return Arg{}, ferr(field, "want an arg object, a number or an expression, got %s", t)
		}
		ra = ttFileArg{Kind: string(ArgConst), Value: &v}
	} else if err := decodeSub(raw, field, &ra); err != nil {
		return Arg{}, err
	}
	if ra.Kind == "" && ra.Value != nil {
		ra.Kind = string(ArgConst) // {"name": "start_id", "value": "…"}
	}
	a := Arg{Kind: ArgKind(ra.Kind)}
	takes := map[ArgKind][]string{
		ArgParam: {"param"}, ArgBufferAddr: {"param"}, ArgBufferSize: {"param"}, ArgPages: {"param"},
		ArgPageSize: {"param"}, ArgAccessor: {"param"}, ArgBankID: {"param", "page"}, ArgBankNocX: {"param", "page"},
		ArgBankNocY: {"param", "page"}, ArgCoreNocX: {"core"}, ArgCoreNocY: {"core"}, ArgSemaphore: {"semaphore"},
		ArgSemaphoreAddr: {"semaphore"}, ArgConst: {"value"}, ArgCoreRow: nil, ArgCoreCol: nil, ArgCoreIndex: nil, ArgNumCores: nil,
	}
	want, known := takes[a.Kind]
	switch {
	case ra.Kind == "":
		return a, ferr(field+".kind", "missing")
	case !known:
		return a, ferr(field+".kind", "unknown kind %q", ra.Kind)
	}
	set := map[string]bool{"param": ra.Param != nil, "value": ra.Value != nil, "page": ra.Page != nil,
		"core": ra.Core != nil, "semaphore": ra.Semaphore != nil}
	for _, n := range []string{"param", "value", "page", "core", "semaphore"} {
		if set[n] && !slices.Contains(want, n) {
			return a, ferr(field+"."+n, "kind %s takes no %s", a.Kind, n)
		}
	}
	var err error
	switch {
	case slices.Contains(want, "param"):
		if ra.Param == nil {
			return a, ferr(field+".param", "missing (kind %s reads a param)", a.Kind)
		}
		if a.Param, err = l.param(*ra.Param); err != nil {
			return a, ferr(field+".param", "%v", err)
		}
		if slices.Contains(want, "page") && ra.Page != nil {
			if a.Page, err = l.expr(*ra.Page, field+".page", perCore); err != nil {
				return a, err
			}
		}
	case slices.Contains(want, "core"):
		if len(ra.Core) != 2 {
			return a, ferr(field+".core", "want [row, col], got %d values", len(ra.Core))
		}
		for i, dst := range []*driver.GwsDim{&a.Core.Row, &a.Core.Col} {
			if *dst, err = l.expr(ra.Core[i], fmt.Sprintf("%s.core[%d]", field, i), perCore); err != nil {
				return a, err
			}
		}
	case slices.Contains(want, "semaphore"):
		if ra.Semaphore == nil {
			return a, ferr(field+".semaphore", "missing (a semaphore's name or index)")
		}
		if a.Semaphore, err = l.semaphore(*ra.Semaphore); err != nil {
			return a, ferr(field+".semaphore", "%v", err)
		}
	case slices.Contains(want, "value"):
		if ra.Value == nil {
			return a, ferr(field+".value", "missing (kind const needs a value)")
		}
		if a.Value, err = l.expr(*ra.Value, field+".value", perCore); err != nil {
			return a, err
		}
	}
	return a, nil
}

// param resolves a param reference: a name, or an ordinal ("$N").
func (l *loader) param(r ref) (int, error) {
	params := l.src.Params()
	s := string(r)
	if n, ok := strings.CutPrefix(s, "$"); ok {
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= len(params) {
			return -1, fmt.Errorf("param ordinal %s out of range (%d params)", n, len(params))
		}
		return i, nil
	}
	if i, ok := l.src.ParamIndex(s); ok {
		return i, nil
	}
	return -1, fmt.Errorf("no param named %q", s)
}

// semaphore resolves a semaphore reference: a name of semaphores, or an
// index.
func (l *loader) semaphore(r ref) (int, error) {
	s := string(r)
	if n, ok := strings.CutPrefix(s, "$"); ok {
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= len(l.p.Semaphores) {
			return 0, fmt.Errorf("semaphore index %s out of range (%d semaphores)", n, len(l.p.Semaphores))
		}
		return i, nil
	}
	for i, sem := range l.p.Semaphores {
		if sem.Name == s {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no semaphore named %q", s)
}

// coreSet decodes a core set: null (every core of the launch grid), one
// range [r0, c0, r1, c1] or core [r, c], a list of them, or a slice
// {"of": range, "from": k0, "to": k1, "row_wise": bool}.
func (l *loader) coreSet(raw json.RawMessage, field string) (*CoreSet, error) {
	if isNull(raw) {
		return nil, nil
	}
	t := bytes.TrimSpace(raw)
	if t[0] == '{' {
		var rs ttFileSlice
		if err := decodeSub(t, field, &rs); err != nil {
			return nil, err
		}
		of, err := l.coreRange(rs.Of, field+".of")
		if err != nil {
			return nil, err
		}
		sl := &CoreSlice{Of: of, RowWise: rs.RowWise}
		for _, e := range []struct {
			name string
			src  *driver.GwsDim
			dst  *driver.GwsDim
		}{{"from", rs.From, &sl.From}, {"to", rs.To, &sl.To}} {
			if e.src == nil {
				return nil, ferr(field+"."+e.name, "missing")
			}
			if *e.dst, err = l.expr(*e.src, field+"."+e.name, false); err != nil {
				return nil, err
			}
		}
		return &CoreSet{Slice: sl}, nil
	}
	var list []json.RawMessage
	if err := decodeSub(t, field, &list); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, ferr(field, "no cores (leave it out for every core of the launch grid)")
	}
	flat := true
	for _, e := range list {
		if b := bytes.TrimSpace(e); len(b) > 0 && b[0] == '[' {
			flat = false
		}
	}
	if flat {
		cr, err := l.rawCoreRange(t, field)
		if err != nil {
			return nil, err
		}
		return &CoreSet{Ranges: []CoreRange{cr}}, nil
	}
	set := &CoreSet{}
	for i, e := range list {
		cr, err := l.rawCoreRange(e, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		set.Ranges = append(set.Ranges, cr)
	}
	return set, nil
}

func (l *loader) rawCoreRange(raw json.RawMessage, field string) (CoreRange, error) {
	var r []driver.GwsDim
	if err := decodeSub(raw, field, &r); err != nil {
		return CoreRange{}, err
	}
	return l.coreRange(r, field)
}

// coreRange is [r0, c0, r1, c1] (inclusive) or the one core [r, c].
func (l *loader) coreRange(r []driver.GwsDim, field string) (CoreRange, error) {
	var out CoreRange
	if len(r) != 2 && len(r) != 4 {
		return out, ferr(field, "want a core [row, col] or a range [row0, col0, row1, col1], got %d values", len(r))
	}
	d := make([]driver.GwsDim, len(r))
	for i, s := range r {
		var err error
		if d[i], err = l.expr(s, fmt.Sprintf("%s[%d]", field, i), false); err != nil {
			return out, err
		}
	}
	if len(d) == 2 {
		d = append(d, d[0], d[1])
	}
	return CoreRange{Start: Coord{Row: d[0], Col: d[1]}, End: Coord{Row: d[2], Col: d[3]}}, nil
}

func (l *loader) buffers(raw map[string]ttFileBuf) error {
	params := l.src.Params()
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		rb := raw[name]
		field := "buffers." + name
		i, ok := l.src.ParamIndex(name)
		if !ok || !params[i].Kind.IsBuffer() {
			return ferr(field, "no buffer param named %q (%s)", name, bufferNames(params))
		}
		b := Buffer{Param: i, Placement: rb.Placement, Layout: rb.MemoryLayout, Format: rb.Format}
		switch rb.Layout {
		case "", "row_major":
		case "tile":
			b.Tile = true
		default:
			return ferr(field+".layout", "%q: want row_major or tile", rb.Layout)
		}
		var err error
		if b.PageSize, err = l.optExpr(rb.PageSize, field+".page_size"); err != nil {
			return err
		}
		if sh := rb.Shard; sh != nil {
			b.Shard = &Shard{Orientation: sh.Orientation}
			cores, err := l.coreSet(sh.Cores, field+".shard.cores")
			if err != nil {
				return err
			}
			if cores == nil {
				return ferr(field+".shard.cores", "missing (the cores that hold the shards)")
			}
			b.Shard.Cores = *cores
			if len(sh.Shape) != 2 {
				return ferr(field+".shard.shape", "want [rows, cols] in elements, got %d values", len(sh.Shape))
			}
			var el [2]driver.GwsDim
			for j := range 2 {
				if el[j], err = l.expr(sh.Shape[j], fmt.Sprintf("%s.shard.shape[%d]", field, j), false); err != nil {
					return err
				}
			}
			b.Shard.Elements = &el
		}
		l.p.Buffers = append(l.p.Buffers, b)
	}
	sort.Slice(l.p.Buffers, func(a, b int) bool { return l.p.Buffers[a].Param < l.p.Buffers[b].Param })
	return nil
}

// bufferNames lists the buffer params, for an error naming a wrong one.
func bufferNames(params []driver.Param) string {
	var names []string
	for _, p := range params {
		if p.Kind.IsBuffer() {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return "the program has no buffer params"
	}
	return "buffer params: " + strings.Join(names, ", ")
}

func (l *loader) cbs(raw []ttFileCB) error {
	for i, rc := range raw {
		field := fmt.Sprintf("cbs[%d]", i)
		var c CBConfig
		var err error
		if c.Cores, err = l.coreSet(rc.Cores, field+".cores"); err != nil {
			return err
		}
		one := rc.Index != nil || rc.Format != "" || rc.PageBytes != nil || rc.Tile != nil || rc.Name != ""
		switch {
		case one && rc.Indices != nil:
			return ferr(field+".indices", "give either indices or one index (index, format, page_bytes), not both")
		case one:
			idx, err := l.cbIndex(rc.ttFileCBIndex, field)
			if err != nil {
				return err
			}
			c.Indices = []CBIndex{idx}
		case len(rc.Indices) == 0:
			return ferr(field+".indices", "missing (each CB config holds one or more indices)")
		}
		for j, ri := range rc.Indices {
			idx, err := l.cbIndex(ri, fmt.Sprintf("%s.indices[%d]", field, j))
			if err != nil {
				return err
			}
			c.Indices = append(c.Indices, idx)
		}
		if rc.TotalBytes != nil && rc.Pages != nil {
			return ferr(field+".total_bytes", "give total_bytes or pages, not both")
		}
		if c.TotalBytes, err = l.optExpr(rc.TotalBytes, field+".total_bytes"); err != nil {
			return err
		}
		if c.Pages, err = l.optExpr(rc.Pages, field+".pages"); err != nil {
			return err
		}
		if rc.Buffer != nil {
			j, err := l.param(*rc.Buffer)
			if err != nil {
				return ferr(field+".buffer", "%v", err)
			}
			c.Buffer = &j
		} else if c.TotalBytes == nil && c.Pages == nil {
			return ferr(field+".pages", "missing (give pages or total_bytes)")
		}
		l.p.CBs = append(l.p.CBs, c)
	}
	return nil
}

func (l *loader) cbIndex(ri ttFileCBIndex, field string) (CBIndex, error) {
	var out CBIndex
	if ri.Index == nil {
		return out, ferr(field+".index", "missing")
	}
	out.Index, out.Format, out.Name = *ri.Index, ri.Format, ri.Name
	if ri.Tile != nil {
		if len(ri.Tile) != 2 {
			return out, ferr(field+".tile", "want [rows, cols]")
		}
		if ri.Tile != nil && (ri.Tile[0] != 32 || ri.Tile[1] != 32) {
			out.TileRows, out.TileCols = ri.Tile[0], ri.Tile[1]
		}
	}
	if ri.PageBytes == nil {
		// The page is one tile of the format: the format must be one the
		// driver knows the tile size of.
		if tileBytes(ri.Format, 32, 32) == 0 {
			return out, ferr(field+".format", "%q: want %s (or give page_bytes)", ri.Format, formatList)
		}
		return out, nil
	}
	var err error
	out.PageBytes, err = l.optExpr(ri.PageBytes, field+".page_bytes")
	return out, err
}

// includes reads the include files: a directory of the bundle (every file
// below it, named by its path inside the directory) or a list of
// directories and files (a file named by its base name); and, when a kernel
// is from the kernel library, the library's include directory.
func (l *loader) includes(raw json.RawMessage) error {
	var list []string
	t := bytes.TrimSpace(raw)
	switch {
	case isNull(raw):
	case t[0] == '"':
		var s string
		if err := decodeSub(t, "includes", &s); err != nil {
			return err
		}
		list = []string{s}
	default:
		if err := decodeSub(t, "includes", &list); err != nil {
			return err
		}
	}
	seen := map[string]string{}
	nameOf := map[string]string{} // include file name by the file it was read from
	add := func(field string, files []driver.BundleFile, implied bool) error {
		for _, f := range files {
			if prev, dup := seen[f.Name]; dup {
				if implied && prev == f.From {
					continue // the library's own header, named already
				}
				return ferr(field, "two include files named %s (%s and %s)", f.Name, prev, f.From)
			}
			if len(seen) >= maxIncludes {
				return ferr(field, "more than %d include files", maxIncludes)
			}
			if bytes.IndexByte(f.Data, 0) >= 0 {
				return ferr(field, "%s holds a NUL byte; include files are text", f.From)
			}
			seen[f.Name] = f.From
			nameOf[f.From] = f.Name
			l.p.Includes = append(l.p.Includes, Include{Path: f.Name, Source: string(f.Data)})
		}
		return nil
	}
	for i, rel := range list {
		field := "includes"
		if t[0] == '[' {
			field = fmt.Sprintf("includes[%d]", i)
		}
		files, err := l.src.Files(field, rel)
		if err != nil {
			return err
		}
		if err := add(field, files, false); err != nil {
			return err
		}
	}
	// A library kernel includes the library's headers, whatever the
	// bundle's includes name.
	if l.libraryKernel != "" {
		files, err := l.src.Files(l.libraryKernel, kernels.Prefix+kernels.IncludeDir)
		if err != nil {
			return err
		}
		if err := add(l.libraryKernel, files, true); err != nil {
			return err
		}
	}
	sort.Slice(l.p.Includes, func(a, b int) bool { return l.p.Includes[a].Path < l.p.Includes[b].Path })
	// A kernel inside an include directory is built where it lives there,
	// as tt-metal builds a ttnn kernel inside its source tree: its
	// relative includes ("../common/x.hpp") resolve from its directory.
	for i := range l.p.Kernels {
		if i < len(l.kernelFrom) && l.kernelFrom[i] != "" {
			l.p.Kernels[i].Path = nameOf[l.kernelFrom[i]]
		}
	}
	return nil
}

// LibraryIncludes are the kernel library's headers (kernels.IncludeDir) as
// a program's include files, each under its path inside that directory:
// what the loader gives a tt variant with a kernel from the library. A Go
// program that builds such a variant itself adds them to its Includes.
func LibraryIncludes() ([]Include, error) {
	files, err := kernels.Files(kernels.IncludeDir)
	if err != nil {
		return nil, err
	}
	out := make([]Include, len(files))
	for i, f := range files {
		out[i] = Include{Path: f.Path, Source: string(f.Data)}
	}
	return out, nil
}
