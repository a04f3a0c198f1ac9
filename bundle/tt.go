package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/zyxtt/zyxtt/tt"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/kernels"
)

// tt.json, the Tenstorrent variant (docs/programs.md): a list of kernels on
// sets of cores, circular buffers and semaphores on sets of cores, the
// layout of the buffers the kernels address, and include files; or the
// reader/compute/writer shorthand for one group of cores.

type rawTT struct {
	Grid          []exprSrc            `json:"grid"`
	Kernels       []rawTTKernel        `json:"kernels"`
	Reader        *rawKernel           `json:"reader"`
	Compute       *rawKernel           `json:"compute"`
	Writer        *rawKernel           `json:"writer"`
	CBs           []rawCB              `json:"cbs"`
	Semaphores    []rawSemaphore       `json:"semaphores"`
	Buffers       map[string]rawBuffer `json:"buffers"`
	Includes      json.RawMessage      `json:"includes"`
	ComputeConfig *rawComputeConfig    `json:"compute_config"`
	Require       []rawRequire         `json:"require"`
}

// rawRequire is a condition on the vars the kernels rely on: zero must
// evaluate to 0 (e.g. "m % 256"), else the program is refused with message.
type rawRequire struct {
	Zero    exprSrc `json:"zero"`
	Message string  `json:"message"`
}

// rawKernel is a kernel's source and arguments: a section of the shorthand
// (reader, compute, writer), and a kernels entry with where it runs.
type rawKernel struct {
	Source           string                     `json:"source"`
	Defines          map[string]string          `json:"defines"`
	CompileArgs      []json.RawMessage          `json:"compile_args"`
	NamedCompileArgs map[string]json.RawMessage `json:"named_compile_args"`
	RuntimeArgs      []json.RawMessage          `json:"runtime_args"`
	CommonArgs       []json.RawMessage          `json:"common_args"`
}

// rawTTKernel is one entry of kernels.
type rawTTKernel struct {
	Name      string          `json:"name"`
	Processor string          `json:"processor"`
	NOC       *int            `json:"noc"`
	Cores     json.RawMessage `json:"cores"`
	rawKernel
	ComputeConfig *rawComputeConfig `json:"compute_config"`
}

// rawArg is an argument entry: an object, or a bare number or string for
// a const.
type rawArg struct {
	Name      string    `json:"name"` // a label for people
	Kind      string    `json:"kind"`
	Param     *ref      `json:"param"`
	Value     *exprSrc  `json:"value"`
	Page      *exprSrc  `json:"page"`
	Core      []exprSrc `json:"core"`
	Semaphore *ref      `json:"semaphore"`
}

type rawCB struct {
	Cores      json.RawMessage `json:"cores"`
	TotalBytes *exprSrc        `json:"total_bytes"`
	Pages      *exprSrc        `json:"pages"`
	Indices    []rawCBIndex    `json:"indices"`
	Buffer     *ref            `json:"buffer"`
	// The one-index form.
	rawCBIndex
}

type rawCBIndex struct {
	Index     *int     `json:"index"`
	Format    string   `json:"format"`
	PageBytes *exprSrc `json:"page_bytes"`
	Tile      []uint32 `json:"tile"`
}

type rawSemaphore struct {
	Name    string          `json:"name"`
	Cores   json.RawMessage `json:"cores"`
	Initial *exprSrc        `json:"initial"`
}

type rawBuffer struct {
	Placement    string    `json:"placement"`
	MemoryLayout string    `json:"memory_layout"`
	Layout       string    `json:"layout"`
	PageSize     *exprSrc  `json:"page_size"`
	Shard        *rawShard `json:"shard"`
	Format       string    `json:"format"`
}

type rawShard struct {
	Cores       json.RawMessage `json:"cores"`
	Shape       []exprSrc       `json:"shape"`
	Orientation string          `json:"orientation"`
}

type rawSlice struct {
	Of      []exprSrc `json:"of"`
	From    *exprSrc  `json:"from"`
	To      *exprSrc  `json:"to"`
	RowWise bool      `json:"row_wise"`
}

type rawComputeConfig struct {
	MathFidelity   string `json:"math_fidelity"`
	FP32DestAcc    bool   `json:"fp32_dest_acc"`
	MathApproxMode bool   `json:"math_approx_mode"`
}

// ttSpec is a parsed tt.json with every expression still over var
// ordinals; bindTT turns it into a tt.Program for var values.
type ttSpec struct {
	file     string
	kernels  []ttKernelSpec
	cbs      []ttCBSpec
	sems     []ttSemSpec
	bufs     []ttBufSpec
	includes []tt.Include
	require  []ttRequire
	// allCores: every kernel names its cores, so the launch grid is the
	// box around them when tt.json gives none.
	allCores bool
}

type ttRequire struct {
	zero    backends.GwsDim
	src     exprSrc
	message string
}

type ttKernelSpec struct {
	field string // "kernels[1]", or "reader" in the shorthand
	k     tt.Kernel
}

type ttCBSpec struct {
	field        string
	cores        *tt.CoreSet
	total, pages *backends.GwsDim
	indices      []ttCBIndexSpec
	buffer       *int
}

type ttCBIndexSpec struct {
	index     uint8
	format    string
	pageBytes *backends.GwsDim // nil: one tile of the format
	tile      [2]uint32
}

type ttSemSpec struct {
	name    string
	cores   *tt.CoreSet
	initial backends.GwsDim
}

type ttBufSpec struct {
	field                string // "buffers.x"
	param                int
	placement, memLayout string
	tile                 bool
	pageSize             *backends.GwsDim
	shard                *ttShardSpec
	format               string
}

type ttShardSpec struct {
	cores       tt.CoreSet
	shape       [2]backends.GwsDim // elements
	orientation string
}

// ttFormats are the circular-buffer data formats, with their element size
// in bytes (0 for the block floats).
var ttFormats = map[string]uint32{
	"Float32": 4, "Float16_b": 2, "Float16": 2, "Bfp8_b": 0, "Bfp4_b": 0,
	"Int32": 4, "UInt32": 4, "UInt16": 2, "UInt8": 1, "Int8": 1,
}

const ttFormatList = "Float32, Float16_b, Float16, Bfp8_b, Bfp4_b, Int32, UInt32, UInt16, UInt8 or Int8"

var ttFidelities = map[string]bool{"LoFi": true, "HiFi2": true, "HiFi3": true, "HiFi4": true}

// ttTileBytes is the size of one rows×cols tile of format f: the elements,
// and for a block float its mantissas plus one shared exponent byte per 16
// elements.
func ttTileBytes(f string, rows, cols uint32) uint32 {
	n := rows * cols
	switch f {
	case "Bfp8_b":
		return n + n/16
	case "Bfp4_b":
		return n/2 + n/16
	}
	return n * ttFormats[f]
}

// maxTTIncludes bounds the include files of one program.
const maxTTIncludes = 256

// maxTTCores bounds the cores one core set may name, and maxTTAxis the
// launch grid's axes: a chip has at most a few hundred worker cores, and
// the bounds keep a hostile range from costing time and memory without end.
const (
	maxTTCores = 4096
	maxTTAxis  = 64
)

// decodeSub decodes one JSON value strictly (unknown fields are errors),
// naming field paths below prefix.
func decodeSub(data []byte, file, prefix string, v any) error {
	if err := decodeStrict(data, file, v); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return &FieldError{file, joinField(prefix, fe.Field), fe.Err}
		}
		return &FieldError{file, prefix, err}
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

// ttParser parses one tt.json.
type ttParser struct {
	b          *Bundle
	file       string
	readSource func(field, rel string) ([]byte, error)
	t          *ttSpec
	// libraryKernel is the field of the first kernel whose source is in
	// the kernel library ("" if none): the program then gets the library's
	// include directory (parseIncludes).
	libraryKernel string
}

func (p *ttParser) ferr(field, format string, args ...any) error {
	return &FieldError{p.file, field, fmt.Errorf(format, args...)}
}

// expr parses an expression over vars. perCore allows the core terms
// (core_row, split_units …), which only runtime args may read.
func (p *ttParser) expr(src exprSrc, field string, perCore bool) (backends.GwsDim, error) {
	d, err := p.b.parseExpr(src)
	if err != nil {
		return d, p.ferr(field, "%v", err)
	}
	if !perCore && d.PerCore() {
		return d, p.ferr(field, "%s reads the core it runs on (core_row, core_col, core_index, num_cores, split_units, split_start); only runtime args may", src)
	}
	return d, nil
}

func (b *Bundle) parseTT(r *rawTT, file string, readSource func(field, rel string) ([]byte, error)) (*ttSpec, error) {
	p := &ttParser{b: b, file: file, readSource: readSource, t: &ttSpec{file: file}}
	if err := p.parse(r); err != nil {
		return nil, err
	}
	return p.t, nil
}

func (p *ttParser) parse(r *rawTT) error {
	// Args name semaphores, so the semaphores come first.
	if len(r.Semaphores) > 0 {
		seen := map[string]int{}
		for i, rs := range r.Semaphores {
			field := fmt.Sprintf("semaphores[%d]", i)
			s := ttSemSpec{name: rs.Name}
			if rs.Name != "" {
				if !identRE.MatchString(rs.Name) {
					return p.ferr(field+".name", "%q is not an identifier", rs.Name)
				}
				if j, dup := seen[rs.Name]; dup {
					return p.ferr(field+".name", "%q is also the name of semaphores[%d]", rs.Name, j)
				}
				seen[rs.Name] = i
			}
			cores, err := p.coreSet(rs.Cores, field+".cores")
			if err != nil {
				return err
			}
			s.cores = cores
			s.initial = backends.ConstDim(0)
			if rs.Initial != nil {
				if s.initial, err = p.expr(*rs.Initial, field+".initial", false); err != nil {
					return err
				}
			}
			p.t.sems = append(p.t.sems, s)
		}
	}
	short := r.Reader != nil || r.Compute != nil || r.Writer != nil
	switch {
	case short && r.Kernels != nil:
		return p.ferr("kernels", "give either kernels or the reader/compute/writer shorthand, not both")
	case short:
		if err := p.parseShorthand(r); err != nil {
			return err
		}
	case r.Kernels != nil:
		if r.ComputeConfig != nil {
			return p.ferr("compute_config", "with kernels, each compute kernel has its own compute_config")
		}
		if len(r.Kernels) == 0 || len(r.Kernels) > 64 {
			return p.ferr("kernels", "%d kernels; a program has 1 to 64", len(r.Kernels))
		}
		p.t.allCores = true
		names := map[string]int{}
		for i := range r.Kernels {
			field := fmt.Sprintf("kernels[%d]", i)
			k, err := p.parseKernel(&r.Kernels[i], field)
			if err != nil {
				return err
			}
			if j, dup := names[k.Name]; dup {
				return p.ferr(field+".name", "%q is also the name of kernels[%d]", k.Name, j)
			}
			names[k.Name] = i
			if k.Cores == nil {
				p.t.allCores = false
			}
			p.t.kernels = append(p.t.kernels, ttKernelSpec{field, k})
		}
	default:
		return p.ferr("kernels", "missing (a Tenstorrent program has kernels, or reader, compute and writer)")
	}
	for i, rq := range r.Require {
		field := fmt.Sprintf("require[%d]", i)
		if rq.Zero == "" {
			return p.ferr(field+".zero", "missing (an expression that must be 0, e.g. \"m %% 32\")")
		}
		d, err := p.expr(rq.Zero, field+".zero", false)
		if err != nil {
			return err
		}
		p.t.require = append(p.t.require, ttRequire{d, rq.Zero, rq.Message})
	}
	if err := p.parseBuffers(r.Buffers); err != nil {
		return err
	}
	if err := p.parseCBs(r.CBs, short); err != nil {
		return err
	}
	return p.parseIncludes(r.Includes)
}

func (p *ttParser) parseShorthand(r *rawTT) error {
	for _, s := range []struct {
		name string
		raw  *rawKernel
		proc tt.Processor
	}{{"reader", r.Reader, tt.Riscv0}, {"compute", r.Compute, tt.Compute}, {"writer", r.Writer, tt.Riscv1}} {
		if s.raw == nil {
			return p.ferr(s.name, "missing (the shorthand has reader, compute and writer; or give kernels)")
		}
		rk := &rawTTKernel{Name: s.name, Processor: string(s.proc), rawKernel: *s.raw}
		if s.proc == tt.Compute {
			rk.ComputeConfig = r.ComputeConfig
		}
		k, err := p.parseKernel(rk, s.name)
		if err != nil {
			return err
		}
		p.t.kernels = append(p.t.kernels, ttKernelSpec{s.name, k})
	}
	return nil
}

func (p *ttParser) parseKernel(rk *rawTTKernel, field string) (tt.Kernel, error) {
	k := tt.Kernel{Name: rk.Name, Processor: tt.Processor(rk.Processor)}
	switch k.Processor {
	case tt.Riscv0, tt.Riscv1, tt.Compute:
	case "":
		return k, p.ferr(field+".processor", "missing (riscv_0, riscv_1 or compute)")
	default:
		return k, p.ferr(field+".processor", "%q: want riscv_0, riscv_1 or compute", rk.Processor)
	}
	src, err := p.readSource(field+".source", rk.Source)
	if err != nil {
		return k, err
	}
	k.Source = string(src)
	if strings.HasPrefix(rk.Source, kernels.Prefix) && p.libraryKernel == "" {
		p.libraryKernel = field + ".source"
	}
	if k.Name == "" {
		k.Name = strings.TrimSuffix(path.Base(filepath.ToSlash(rk.Source)), path.Ext(rk.Source))
	}
	if rk.NOC != nil {
		if k.Processor == tt.Compute {
			return k, p.ferr(field+".noc", "a compute kernel has no NOC")
		}
		if *rk.NOC != 0 && *rk.NOC != 1 {
			return k, p.ferr(field+".noc", "%d: want 0 or 1", *rk.NOC)
		}
		n := *rk.NOC
		k.NOC = &n
	}
	for name := range rk.Defines {
		if name == "" || strings.ContainsAny(name, " \t\n\r\x00=") {
			return k, p.ferr(field+".defines", "%q is not a macro name", name)
		}
	}
	k.Defines = maps.Clone(rk.Defines)
	if k.Cores, err = p.coreSet(rk.Cores, field+".cores"); err != nil {
		return k, err
	}
	lists := []struct {
		name    string
		raw     []json.RawMessage
		dst     *[]tt.Arg
		perCore bool
	}{{"compile_args", rk.CompileArgs, &k.CompileArgs, false},
		{"runtime_args", rk.RuntimeArgs, &k.RuntimeArgs, true},
		{"common_args", rk.CommonArgs, &k.CommonArgs, false}}
	for _, l := range lists {
		*l.dst = make([]tt.Arg, len(l.raw))
		for i, ra := range l.raw {
			f := fmt.Sprintf("%s.%s[%d]", field, l.name, i)
			if err := p.parseArg(&(*l.dst)[i], ra, f, l.name == "compile_args", l.perCore); err != nil {
				return k, err
			}
		}
	}
	names := slices.Sorted(maps.Keys(rk.NamedCompileArgs))
	for _, name := range names {
		f := field + ".named_compile_args." + name
		if !identRE.MatchString(name) {
			return k, p.ferr(f, "%q is not a C identifier", name)
		}
		var a tt.Arg
		if err := p.parseArg(&a, rk.NamedCompileArgs[name], f, true, false); err != nil {
			return k, err
		}
		k.NamedCompileArgs = append(k.NamedCompileArgs, tt.NamedArg{Name: name, Arg: a})
	}
	if cc := rk.ComputeConfig; cc != nil {
		if k.Processor != tt.Compute {
			return k, p.ferr(field+".compute_config", "only compute kernels have a compute_config")
		}
		if cc.MathFidelity != "" && !ttFidelities[cc.MathFidelity] {
			return k, p.ferr(field+".compute_config.math_fidelity", "%q: want LoFi, HiFi2, HiFi3 or HiFi4", cc.MathFidelity)
		}
		k.MathFidelity, k.FP32DestAcc, k.MathApproxMode = cc.MathFidelity, cc.FP32DestAcc, cc.MathApproxMode
	}
	if k.Processor == tt.Compute && k.MathFidelity == "" {
		k.MathFidelity = "HiFi4"
	}
	return k, nil
}

func (p *ttParser) parseArg(dst *tt.Arg, raw json.RawMessage, field string, compile, perCore bool) error {
	var ra rawArg
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] != '{' {
		var e exprSrc
		if err := e.UnmarshalJSON(t); err != nil {
			return p.ferr(field, "want an arg object, a number or an expression, got %s", t)
		}
		ra = rawArg{Kind: string(tt.ArgConst), Value: &e}
	} else if err := decodeSub(raw, p.file, field, &ra); err != nil {
		return err
	}
	if ra.Kind == "" && ra.Value != nil {
		ra.Kind = string(tt.ArgConst) // {"name": "start_id", "value": "…"}
	}
	kind := tt.ArgKind(ra.Kind)
	*dst = tt.Arg{Kind: kind}
	unused := func(names ...string) error {
		for _, n := range names {
			set := map[string]bool{"param": ra.Param != nil, "value": ra.Value != nil, "page": ra.Page != nil,
				"core": ra.Core != nil, "semaphore": ra.Semaphore != nil}[n]
			if set {
				return p.ferr(field+"."+n, "kind %s takes no %s", kind, n)
			}
		}
		return nil
	}
	param := func(wantBuffer bool) error {
		if ra.Param == nil {
			return p.ferr(field+".param", "missing (kind %s reads a param)", kind)
		}
		i, err := p.b.resolveRef(*ra.Param)
		if err != nil {
			return p.ferr(field+".param", "%v", err)
		}
		prm := p.b.Params[i]
		if wantBuffer && !prm.Kind.IsBuffer() {
			return p.ferr(field+".param", "param %s is a variable; kind %s needs a buffer", prm.Name, kind)
		}
		if !wantBuffer && prm.Kind.IsBuffer() {
			return p.ferr(field+".param", "param %s is a buffer; kind %s needs a variable", prm.Name, kind)
		}
		dst.Param = i
		return nil
	}
	var err error
	switch kind {
	case tt.ArgParam:
		if err := param(false); err != nil {
			return err
		}
		return unused("value", "page", "core", "semaphore")
	case tt.ArgBufferAddr, tt.ArgBufferSize, tt.ArgPages, tt.ArgPageSize, tt.ArgAccessor:
		if kind == tt.ArgAccessor && !compile {
			return p.ferr(field+".kind", "accessor args are compile-time args (compile_args or named_compile_args)")
		}
		if err := param(true); err != nil {
			return err
		}
		return unused("value", "page", "core", "semaphore")
	case tt.ArgBankID, tt.ArgBankNocX, tt.ArgBankNocY:
		if err := param(true); err != nil {
			return err
		}
		dst.Page = backends.ConstDim(0)
		if ra.Page != nil {
			if dst.Page, err = p.expr(*ra.Page, field+".page", perCore); err != nil {
				return err
			}
		}
		return unused("value", "core", "semaphore")
	case tt.ArgCoreNocX, tt.ArgCoreNocY:
		if len(ra.Core) != 2 {
			return p.ferr(field+".core", "want [row, col], got %d values", len(ra.Core))
		}
		if dst.Core.Row, err = p.expr(ra.Core[0], field+".core[0]", perCore); err != nil {
			return err
		}
		if dst.Core.Col, err = p.expr(ra.Core[1], field+".core[1]", perCore); err != nil {
			return err
		}
		return unused("param", "value", "page", "semaphore")
	case tt.ArgSemaphore, tt.ArgSemaphoreAddr:
		if ra.Semaphore == nil {
			return p.ferr(field+".semaphore", "missing (a semaphore's name or index)")
		}
		if dst.Semaphore, err = p.semaphore(*ra.Semaphore); err != nil {
			return p.ferr(field+".semaphore", "%v", err)
		}
		return unused("param", "value", "page", "core")
	case tt.ArgConst:
		if ra.Value == nil {
			return p.ferr(field+".value", "missing (kind const needs a value)")
		}
		if dst.Value, err = p.expr(*ra.Value, field+".value", perCore); err != nil {
			return err
		}
		return unused("param", "page", "core", "semaphore")
	case tt.ArgCoreRow, tt.ArgCoreCol, tt.ArgCoreIndex, tt.ArgNumCores:
		if !perCore {
			return p.ferr(field+".kind", "%s differs from core to core; only runtime args may use it", kind)
		}
		return unused("param", "value", "page", "core", "semaphore")
	case "":
		return p.ferr(field+".kind", "missing")
	}
	return p.ferr(field+".kind", "unknown kind %q", ra.Kind)
}

// semaphore resolves a semaphore arg: a name of semaphores, or an index.
func (p *ttParser) semaphore(r ref) (int, error) {
	s := string(r)
	if n, ok := strings.CutPrefix(s, "$"); ok {
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= len(p.t.sems) {
			return 0, fmt.Errorf("semaphore index %s out of range (%d semaphores)", n, len(p.t.sems))
		}
		return i, nil
	}
	for i, sem := range p.t.sems {
		if sem.name == s {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no semaphore named %q", s)
}

// coreSet parses a core set: null (every core of the launch grid), one
// range [r0, c0, r1, c1] or core [r, c], a list of them, or a slice
// {"of": range, "from": k0, "to": k1, "row_wise": bool}. Bounds are
// expressions over vars.
func (p *ttParser) coreSet(raw json.RawMessage, field string) (*tt.CoreSet, error) {
	if isNull(raw) {
		return nil, nil
	}
	t := bytes.TrimSpace(raw)
	if t[0] == '{' {
		var rs rawSlice
		if err := decodeSub(t, p.file, field, &rs); err != nil {
			return nil, err
		}
		of, err := p.coreRange(rs.Of, field+".of")
		if err != nil {
			return nil, err
		}
		sl := &tt.CoreSlice{Of: of, RowWise: rs.RowWise}
		for _, e := range []struct {
			name string
			src  *exprSrc
			dst  *backends.GwsDim
		}{{"from", rs.From, &sl.From}, {"to", rs.To, &sl.To}} {
			if e.src == nil {
				return nil, p.ferr(field+"."+e.name, "missing")
			}
			if *e.dst, err = p.expr(*e.src, field+"."+e.name, false); err != nil {
				return nil, err
			}
		}
		return &tt.CoreSet{Slice: sl}, nil
	}
	var list []json.RawMessage
	if err := decodeSub(t, p.file, field, &list); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, p.ferr(field, "no cores (leave it out for every core of the launch grid)")
	}
	flat := true
	for _, e := range list {
		if b := bytes.TrimSpace(e); len(b) > 0 && b[0] == '[' {
			flat = false
		}
	}
	if flat {
		cr, err := p.rawCoreRange(t, field)
		if err != nil {
			return nil, err
		}
		return &tt.CoreSet{Ranges: []tt.CoreRange{cr}}, nil
	}
	set := &tt.CoreSet{}
	for i, e := range list {
		cr, err := p.rawCoreRange(e, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		set.Ranges = append(set.Ranges, cr)
	}
	return set, nil
}

// rawCoreRange decodes and reads a coreRange.
func (p *ttParser) rawCoreRange(raw json.RawMessage, field string) (tt.CoreRange, error) {
	var r []exprSrc
	if err := decodeSub(raw, p.file, field, &r); err != nil {
		return tt.CoreRange{}, err
	}
	return p.coreRange(r, field)
}

// coreRange is [r0, c0, r1, c1] (inclusive) or the one core [r, c].
func (p *ttParser) coreRange(r []exprSrc, field string) (tt.CoreRange, error) {
	var out tt.CoreRange
	if len(r) != 2 && len(r) != 4 {
		return out, p.ferr(field, "want a core [row, col] or a range [row0, col0, row1, col1], got %d values", len(r))
	}
	d := make([]backends.GwsDim, len(r))
	for i, s := range r {
		var err error
		if d[i], err = p.expr(s, fmt.Sprintf("%s[%d]", field, i), false); err != nil {
			return out, err
		}
	}
	if len(d) == 2 {
		d = append(d, d[0], d[1])
	}
	out.Start = tt.Coord{Row: d[0], Col: d[1]}
	out.End = tt.Coord{Row: d[2], Col: d[3]}
	return out, nil
}

var ttMemLayouts = map[string]bool{"interleaved": true, "height_sharded": true, "width_sharded": true, "block_sharded": true}

func (p *ttParser) parseBuffers(raw map[string]rawBuffer) error {
	names := slices.Sorted(maps.Keys(raw))
	for _, name := range names {
		rb := raw[name]
		field := "buffers." + name
		i, ok := p.b.ParamIndex(name)
		if !ok || !p.b.Params[i].Kind.IsBuffer() {
			return p.ferr(field, "no buffer param named %q (%s)", name, p.b.BufferNames())
		}
		prm := p.b.Params[i]
		s := ttBufSpec{field: field, param: i, placement: rb.Placement, memLayout: rb.MemoryLayout, format: rb.Format}
		if s.placement == "" {
			s.placement = "dram"
		}
		if s.placement != "dram" && s.placement != "l1" {
			return p.ferr(field+".placement", "%q: want dram or l1", rb.Placement)
		}
		if s.memLayout == "" {
			s.memLayout = "interleaved"
		}
		if !ttMemLayouts[s.memLayout] {
			return p.ferr(field+".memory_layout", "%q: want interleaved, height_sharded, width_sharded or block_sharded", rb.MemoryLayout)
		}
		switch rb.Layout {
		case "", "row_major":
		case "tile":
			s.tile = true
			if ttDTypeFormat(prm.DType) == "" {
				return p.ferr(field+".layout", "param %s is %s; tile layout takes f32, bf16, f16 or 8-, 16- and 32-bit integers", name, prm.DType)
			}
		default:
			return p.ferr(field+".layout", "%q: want row_major or tile", rb.Layout)
		}
		switch rb.Format {
		case "":
		case "Bfp8_b", "Bfp4_b":
			if !s.tile {
				return p.ferr(field+".format", "%s is a block-float tile format: it needs layout tile", rb.Format)
			}
			if prm.DType != backends.F32 && prm.DType != backends.BF16 {
				return p.ferr(field+".format", "param %s is %s; %s stores f32 or bf16 data", name, prm.DType, rb.Format)
			}
		default:
			return p.ferr(field+".format", "%q: want Bfp8_b or Bfp4_b (the storage format, when it differs from the param's dtype)", rb.Format)
		}
		if rb.PageSize != nil {
			d, err := p.expr(*rb.PageSize, field+".page_size", false)
			if err != nil {
				return err
			}
			s.pageSize = &d
		}
		sharded := s.memLayout != "interleaved"
		switch {
		case sharded && rb.Shard == nil:
			return p.ferr(field+".shard", "missing (memory_layout %s needs a shard spec)", s.memLayout)
		case !sharded && rb.Shard != nil:
			return p.ferr(field+".shard", "an interleaved buffer has no shard spec (set memory_layout)")
		case sharded:
			sh := &ttShardSpec{orientation: rb.Shard.Orientation}
			if sh.orientation == "" {
				sh.orientation = "row_major"
			}
			if sh.orientation != "row_major" && sh.orientation != "col_major" {
				return p.ferr(field+".shard.orientation", "%q: want row_major or col_major", rb.Shard.Orientation)
			}
			cores, err := p.coreSet(rb.Shard.Cores, field+".shard.cores")
			if err != nil {
				return err
			}
			if cores == nil {
				return p.ferr(field+".shard.cores", "missing (the cores that hold the shards)")
			}
			sh.cores = *cores
			if len(rb.Shard.Shape) != 2 {
				return p.ferr(field+".shard.shape", "want [rows, cols] in elements, got %d values", len(rb.Shard.Shape))
			}
			for j := range 2 {
				if sh.shape[j], err = p.expr(rb.Shard.Shape[j], fmt.Sprintf("%s.shard.shape[%d]", field, j), false); err != nil {
					return err
				}
			}
			s.shard = sh
		}
		p.t.bufs = append(p.t.bufs, s)
	}
	sort.Slice(p.t.bufs, func(a, b int) bool { return p.t.bufs[a].param < p.t.bufs[b].param })
	return nil
}

// ttDTypeFormat is the tile data format of a dtype ("" when it has none).
func ttDTypeFormat(dt backends.DType) string {
	return map[backends.DType]string{
		backends.F32: "Float32", backends.BF16: "Float16_b", backends.F16: "Float16",
		backends.I32: "Int32", backends.U32: "UInt32", backends.U16: "UInt16", backends.I16: "UInt16",
		backends.U8: "UInt8", backends.I8: "Int8",
	}[dt]
}

func (p *ttParser) parseCBs(raw []rawCB, short bool) error {
	for i, rc := range raw {
		field := fmt.Sprintf("cbs[%d]", i)
		c := ttCBSpec{field: field}
		var err error
		if c.cores, err = p.coreSet(rc.Cores, field+".cores"); err != nil {
			return err
		}
		one := rc.Index != nil || rc.Format != "" || rc.PageBytes != nil || rc.Tile != nil
		switch {
		case one && rc.Indices != nil:
			return p.ferr(field+".indices", "give either indices or one index (index, format, page_bytes), not both")
		case one:
			idx, err := p.cbIndex(rc.rawCBIndex, field)
			if err != nil {
				return err
			}
			c.indices = []ttCBIndexSpec{idx}
		case len(rc.Indices) == 0:
			return p.ferr(field+".indices", "missing (each CB config holds one or more indices)")
		default:
			for j, ri := range rc.Indices {
				idx, err := p.cbIndex(ri, fmt.Sprintf("%s.indices[%d]", field, j))
				if err != nil {
					return err
				}
				for _, o := range c.indices {
					if o.index == idx.index {
						return p.ferr(fmt.Sprintf("%s.indices[%d].index", field, j), "%d used twice in one config", idx.index)
					}
				}
				c.indices = append(c.indices, idx)
			}
		}
		if rc.TotalBytes != nil && rc.Pages != nil {
			return p.ferr(field+".total_bytes", "give total_bytes or pages, not both")
		}
		if rc.TotalBytes != nil {
			d, err := p.expr(*rc.TotalBytes, field+".total_bytes", false)
			if err != nil {
				return err
			}
			c.total = &d
		}
		if rc.Pages != nil {
			d, err := p.expr(*rc.Pages, field+".pages", false)
			if err != nil {
				return err
			}
			c.pages = &d
		}
		if rc.Buffer != nil {
			j, err := p.b.resolveRef(*rc.Buffer)
			if err != nil {
				return p.ferr(field+".buffer", "%v", err)
			}
			var decl *ttBufSpec
			for k := range p.t.bufs {
				if p.t.bufs[k].param == j {
					decl = &p.t.bufs[k]
				}
			}
			if decl == nil || decl.placement != "l1" {
				return p.ferr(field+".buffer", "param %s is not declared an L1 buffer (buffers.%s.placement: l1)", p.b.Params[j].Name, p.b.Params[j].Name)
			}
			if c.total == nil && c.pages == nil && decl.shard == nil {
				return p.ferr(field+".total_bytes", "missing (only a CB on a sharded buffer defaults to the shard's size)")
			}
			c.buffer = &j
		} else if c.total == nil && c.pages == nil {
			return p.ferr(field+".pages", "missing (give pages or total_bytes)")
		}
		p.t.cbs = append(p.t.cbs, c)
	}
	return nil
}

func (p *ttParser) cbIndex(ri rawCBIndex, field string) (ttCBIndexSpec, error) {
	var out ttCBIndexSpec
	if ri.Index == nil {
		return out, p.ferr(field+".index", "missing")
	}
	if *ri.Index < 0 || *ri.Index > 31 {
		return out, p.ferr(field+".index", "%d out of range 0-31", *ri.Index)
	}
	out.index = uint8(*ri.Index)
	if _, ok := ttFormats[ri.Format]; !ok {
		return out, p.ferr(field+".format", "%q: want %s", ri.Format, ttFormatList)
	}
	out.format = ri.Format
	out.tile = [2]uint32{32, 32}
	if ri.Tile != nil {
		if len(ri.Tile) != 2 {
			return out, p.ferr(field+".tile", "want [rows, cols]")
		}
		if !slices.Contains([]uint32{1, 2, 4, 8, 16, 32}, ri.Tile[0]) || (ri.Tile[1] != 16 && ri.Tile[1] != 32) {
			return out, p.ferr(field+".tile", "%v: tiles have 1, 2, 4, 8, 16 or 32 rows and 16 or 32 columns", ri.Tile)
		}
		out.tile = [2]uint32{ri.Tile[0], ri.Tile[1]}
	}
	if ri.PageBytes != nil {
		d, err := p.expr(*ri.PageBytes, field+".page_bytes", false)
		if err != nil {
			return out, err
		}
		out.pageBytes = &d
	}
	return out, nil
}

// LibraryIncludes are the kernel library's headers (kernels.IncludeDir) as
// a program's include files, each under its path inside that directory:
// what the loader gives a tt variant with a kernel from the library. A Go
// program that builds such a variant itself adds them to its Includes.
func LibraryIncludes() ([]tt.Include, error) {
	files, err := kernels.Files(kernels.IncludeDir)
	if err != nil {
		return nil, err
	}
	out := make([]tt.Include, len(files))
	for i, f := range files {
		out[i] = tt.Include{Path: f.Path, Source: string(f.Data)}
	}
	return out, nil
}

// parseIncludes reads the include files: a directory of the bundle (every
// file below it, named by its path inside the directory) or a list of
// directories and files (a file named by its base name); and, when a kernel
// is from the kernel library, the library's include directory.
func (p *ttParser) parseIncludes(raw json.RawMessage) error {
	var list []string
	t := bytes.TrimSpace(raw)
	switch {
	case isNull(raw):
	case t[0] == '"':
		var s string
		if err := decodeSub(t, p.file, "includes", &s); err != nil {
			return err
		}
		list = []string{s}
	default:
		if err := decodeSub(t, p.file, "includes", &list); err != nil {
			return err
		}
	}
	seen := map[string]string{}
	// add takes one include file: data, as read from full, when the caller
	// has it already (a library file), else read from the bundle file full.
	add := func(field, name, full string, data []byte) error {
		if prev, dup := seen[name]; dup {
			return p.ferr(field, "two include files named %s (%s and %s)", name, prev, full)
		}
		if len(seen) >= maxTTIncludes {
			return p.ferr(field, "more than %d include files", maxTTIncludes)
		}
		if data == nil {
			var err error
			if data, err = readLimited(full); err != nil {
				return p.ferr(field, "%v", err)
			}
		}
		if bytes.IndexByte(data, 0) >= 0 {
			return p.ferr(field, "%s holds a NUL byte; include files are text", full)
		}
		seen[name] = full
		p.t.includes = append(p.t.includes, tt.Include{Path: name, Source: string(data)})
		return nil
	}
	// addLibrary takes the library files that the library path name holds.
	// With implied (the library's own headers for a library kernel), a file
	// the includes named already is no second file of its name.
	addLibrary := func(field, name string, implied bool) error {
		files, err := kernels.Files(name)
		if err != nil {
			return p.ferr(field, "%v", err)
		}
		for _, f := range files {
			if implied && seen[f.Path] == kernels.Prefix+f.Name {
				continue
			}
			if err := add(field, f.Path, kernels.Prefix+f.Name, f.Data); err != nil {
				return err
			}
		}
		return nil
	}
	for i, rel := range list {
		field := "includes"
		if t[0] == '[' {
			field = fmt.Sprintf("includes[%d]", i)
		}
		if name, ok, err := libraryName(rel, tt.VariantFormat); ok {
			if err != nil {
				return p.ferr(field, "%v", err)
			}
			if err := addLibrary(field, name, false); err != nil {
				return err
			}
			continue
		}
		full, err := inBundle(p.b.Dir, rel)
		if err != nil {
			return p.ferr(field, "%v", err)
		}
		st, err := os.Stat(full)
		if err != nil {
			return p.ferr(field, "%v", err)
		}
		if !st.IsDir() {
			if err := add(field, path.Base(filepath.ToSlash(rel)), full, nil); err != nil {
				return err
			}
			continue
		}
		var walk func(dir, prefix string, depth int) error
		walk = func(dir, prefix string, depth int) error {
			if depth > 16 {
				return p.ferr(field, "%s: directories nested more than 16 deep", dir)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				return p.ferr(field, "%v", err)
			}
			for _, e := range entries {
				name := e.Name()
				if strings.HasPrefix(name, ".") {
					continue
				}
				sub, err := inBundle(p.b.Dir, filepath.Join(rel, prefix, name))
				if err != nil {
					return p.ferr(field, "%v", err)
				}
				st, err := os.Stat(sub)
				if err != nil {
					return p.ferr(field, "%v", err)
				}
				if st.IsDir() {
					if err := walk(sub, path.Join(prefix, name), depth+1); err != nil {
						return err
					}
					continue
				}
				if err := add(field, path.Join(prefix, name), sub, nil); err != nil {
					return err
				}
			}
			return nil
		}
		if err := walk(full, "", 0); err != nil {
			return err
		}
	}
	// A library kernel includes the library's headers, whatever the
	// bundle's includes name.
	if p.libraryKernel != "" {
		if err := addLibrary(p.libraryKernel, kernels.IncludeDir, true); err != nil {
			return err
		}
	}
	sort.Slice(p.t.includes, func(a, b int) bool { return p.t.includes[a].Path < p.t.includes[b].Path })
	return nil
}

// bindCore binds an expression over var ordinals for a Tenstorrent
// variant: every var becomes its value (host binding, as for every
// Tenstorrent constant), and whatever does not read the core is folded to a
// constant, so only the core terms are left for the driver.
func (b *Bundle) bindCore(d backends.GwsDim, vals Values) (backends.GwsDim, error) {
	out, err := mapLeaves(d, func(d backends.GwsDim) (backends.GwsDim, error) {
		if d.Op != driver.GwsParam {
			return d, nil // a constant or a core term
		}
		v, err := b.intVar(d.Param, "Tenstorrent expressions")
		if err != nil {
			return d, err
		}
		return varConst(v, vals[d.Param])
	})
	if err != nil {
		return out, err
	}
	if out.PerCore() {
		return out, nil
	}
	v, err := out.Eval(nil)
	if err != nil {
		return out, err
	}
	return backends.ConstDim(v), nil
}

// ttCore is a logical core [row, col].
type ttCore struct{ r, c uint64 }

func (c ttCore) String() string { return fmt.Sprintf("[%d, %d]", c.r, c.c) }

// ttBinder binds one ttSpec to var values.
type ttBinder struct {
	b      *Bundle
	t      *ttSpec
	vals   Values
	shapes [][]uint64
}

func (x *ttBinder) ferr(field string, err error) error {
	return &FieldError{x.t.file, field, err}
}

func (x *ttBinder) dim(d backends.GwsDim, field string) (backends.GwsDim, error) {
	out, err := x.b.bindCore(d, x.vals)
	if err != nil {
		return out, x.ferr(field, err)
	}
	return out, nil
}

// u32 binds an expression that reads no core and must fit 32 bits.
func (x *ttBinder) u32(d backends.GwsDim, field string) (uint32, error) {
	out, err := x.dim(d, field)
	if err != nil {
		return 0, err
	}
	if out.Op != driver.GwsConst {
		return 0, x.ferr(field, errors.New("the value reads the core it runs on"))
	}
	v, err := fitU32(out.Value)
	if err != nil {
		return 0, x.ferr(field, err)
	}
	return v, nil
}

func (x *ttBinder) coreSet(s *tt.CoreSet, field string) (*tt.CoreSet, error) {
	if s == nil {
		return nil, nil
	}
	out := &tt.CoreSet{}
	rng := func(r tt.CoreRange, f string) (tt.CoreRange, error) {
		var o tt.CoreRange
		var err error
		for _, e := range []struct {
			src, dst *backends.GwsDim
			name     string
		}{{&r.Start.Row, &o.Start.Row, "[0]"}, {&r.Start.Col, &o.Start.Col, "[1]"}, {&r.End.Row, &o.End.Row, "[2]"}, {&r.End.Col, &o.End.Col, "[3]"}} {
			if *e.dst, err = x.dim(*e.src, f+e.name); err != nil {
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
		sl := &tt.CoreSlice{Of: of, RowWise: s.Slice.RowWise}
		if sl.From, err = x.dim(s.Slice.From, field+".from"); err != nil {
			return nil, err
		}
		if sl.To, err = x.dim(s.Slice.To, field+".to"); err != nil {
			return nil, err
		}
		out.Slice = sl
	}
	return out, nil
}

// cores lists a bound core set's cores in order: each range row by row, a
// slice down the columns of its rectangle (or along the rows with
// row_wise). A nil set is the launch grid.
func (x *ttBinder) cores(s *tt.CoreSet, grid [2]uint64, field string) ([]ttCore, error) {
	rect := func(r tt.CoreRange, f string) (r0, c0, r1, c1 uint64, err error) {
		r0, c0, r1, c1 = r.Start.Row.Value, r.Start.Col.Value, r.End.Row.Value, r.End.Col.Value
		switch {
		case r0 > r1 || c0 > c1:
			err = x.ferr(f, fmt.Errorf("range [%d, %d, %d, %d] runs backwards (want row0 <= row1 and col0 <= col1)", r0, c0, r1, c1))
		case r1-r0 >= maxTTCores || c1-c0 >= maxTTCores || (r1-r0+1)*(c1-c0+1) > maxTTCores:
			err = x.ferr(f, fmt.Errorf("range [%d, %d, %d, %d] has more than %d cores", r0, c0, r1, c1, maxTTCores))
		}
		return
	}
	if s == nil {
		var out []ttCore
		for r := range grid[0] {
			for c := range grid[1] {
				out = append(out, ttCore{r, c})
			}
		}
		return out, nil
	}
	var out []ttCore
	seen := map[ttCore]bool{}
	for i, r := range s.Ranges {
		f := field
		if len(s.Ranges) > 1 {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		r0, c0, r1, c1, err := rect(r, f)
		if err != nil {
			return nil, err
		}
		if len(out)+int((r1-r0+1)*(c1-c0+1)) > maxTTCores {
			return nil, x.ferr(field, fmt.Errorf("more than %d cores", maxTTCores))
		}
		for row := r0; row <= r1; row++ {
			for col := c0; col <= c1; col++ {
				c := ttCore{row, col}
				if seen[c] {
					return nil, x.ferr(f, fmt.Errorf("core %s is in two ranges of the set", c))
				}
				seen[c] = true
				out = append(out, c)
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
			return nil, x.ferr(field, fmt.Errorf("cores %d to %d of a %d×%d rectangle (want from <= to <= %d)", from, to, rows, cols, rows*cols))
		}
		for k := from; k < to; k++ {
			c := ttCore{r0 + k%rows, c0 + k/rows}
			if sl.RowWise {
				c = ttCore{r0 + k/cols, c0 + k%cols}
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// launchGrid evaluates the variant's grid (else the manifest's) on the host
// as [rows, cols]: one axis is that many rows of one core.
func (x *ttBinder) launchGrid(grid []backends.GwsDim, file string) ([2]uint64, error) {
	out := [2]uint64{1, 1}
	if len(grid) > 2 {
		return out, &FieldError{file, "grid", fmt.Errorf("%d axes; a Tenstorrent grid is [rows, cols]", len(grid))}
	}
	for i, g := range grid {
		v, err := evalHost(g, x.vals)
		if err != nil {
			return out, &FieldError{file, fmt.Sprintf("grid[%d]", i), err}
		}
		if v == 0 || v > maxTTAxis {
			return out, &FieldError{file, fmt.Sprintf("grid[%d]", i), fmt.Errorf("%d cores along an axis (a Tenstorrent grid has 1 to %d)", v, maxTTAxis)}
		}
		out[i] = v
	}
	return out, nil
}

func (b *Bundle) bindTT(t *ttSpec, grid []backends.GwsDim, vals Values) (*tt.Program, []backends.GwsDim, error) {
	shapes, err := b.Shapes(vals)
	if err != nil {
		return nil, nil, err
	}
	x := &ttBinder{b: b, t: t, vals: vals, shapes: shapes}
	for i, rq := range t.require {
		v, err := evalHost(rq.zero, vals)
		if err == nil && v != 0 {
			err = fmt.Errorf("%s is %d, not 0", rq.src, v)
			if rq.message != "" {
				err = fmt.Errorf("%w: %s", err, rq.message)
			}
		}
		if err != nil {
			return nil, nil, x.ferr(fmt.Sprintf("require[%d]", i), err)
		}
	}
	gridFile := t.file
	if grid == nil {
		grid, gridFile = b.grid, b.path(ManifestFile)
	}
	out := &tt.Program{Includes: slices.Clone(t.includes)}

	// Buffers first: CBs on a buffer take its shard size.
	decl := map[int]*tt.Buffer{}
	for _, bs := range t.bufs {
		tb, err := x.buffer(bs)
		if err != nil {
			return nil, nil, err
		}
		out.Buffers = append(out.Buffers, tb)
	}
	for i := range out.Buffers {
		decl[out.Buffers[i].Param] = &out.Buffers[i]
	}

	// Kernels, with the cores each runs on.
	var lgrid [2]uint64
	if !t.allCores {
		if lgrid, err = x.launchGrid(grid, gridFile); err != nil {
			return nil, nil, err
		}
	}
	type placed struct {
		field string
		name  string
	}
	onCore := map[ttCore]map[tt.Processor]placed{}
	var used []ttCore
	usedSet := map[ttCore]bool{}
	for _, ks := range t.kernels {
		k := ks.k
		k.Defines = maps.Clone(ks.k.Defines)
		if k.Cores, err = x.coreSet(ks.k.Cores, ks.field+".cores"); err != nil {
			return nil, nil, err
		}
		cores, err := x.cores(k.Cores, lgrid, ks.field+".cores")
		if err != nil {
			return nil, nil, err
		}
		if len(cores) == 0 {
			continue // an empty core group (split work that divides evenly)
		}
		for _, c := range cores {
			m := onCore[c]
			if m == nil {
				m = map[tt.Processor]placed{}
				onCore[c] = m
			}
			if o, dup := m[k.Processor]; dup {
				return nil, nil, x.ferr(ks.field+".cores", fmt.Errorf("core %s already runs %s (%s) on %s; a core runs one kernel per processor", c, o.name, o.field, k.Processor))
			}
			m[k.Processor] = placed{ks.field, k.Name}
			if !usedSet[c] {
				usedSet[c] = true
				used = append(used, c)
			}
		}
		lists := []struct {
			name     string
			src, dst *[]tt.Arg
		}{{"compile_args", &ks.k.CompileArgs, &k.CompileArgs},
			{"runtime_args", &ks.k.RuntimeArgs, &k.RuntimeArgs},
			{"common_args", &ks.k.CommonArgs, &k.CommonArgs}}
		for _, l := range lists {
			args := make([]tt.Arg, len(*l.src))
			for i, a := range *l.src {
				f := fmt.Sprintf("%s.%s[%d]", ks.field, l.name, i)
				if args[i], err = x.arg(a, f, cores); err != nil {
					return nil, nil, err
				}
			}
			*l.dst = args
		}
		k.NamedCompileArgs = nil
		for _, na := range ks.k.NamedCompileArgs {
			a, err := x.arg(na.Arg, ks.field+".named_compile_args."+na.Name, cores)
			if err != nil {
				return nil, nil, err
			}
			k.NamedCompileArgs = append(k.NamedCompileArgs, tt.NamedArg{Name: na.Name, Arg: a})
		}
		out.Kernels = append(out.Kernels, k)
	}
	if len(out.Kernels) == 0 {
		return nil, nil, x.ferr("kernels", errors.New("no kernel runs on any core at these var values"))
	}

	// Circular buffers.
	cbOn := map[ttCore]map[uint8]string{}
	for _, cs := range t.cbs {
		cb, cores, err := x.cb(cs, lgrid, used, decl)
		if err != nil {
			return nil, nil, err
		}
		if len(cores) == 0 {
			continue
		}
		for _, c := range cores {
			m := cbOn[c]
			if m == nil {
				m = map[uint8]string{}
				cbOn[c] = m
			}
			for _, idx := range cb.Indices {
				if o, dup := m[idx.Index]; dup {
					return nil, nil, x.ferr(cs.field, fmt.Errorf("CB index %d is configured twice on core %s (also by %s)", idx.Index, c, o))
				}
				m[idx.Index] = cs.field
			}
		}
		out.CBs = append(out.CBs, cb)
	}

	// Semaphores.
	for i, ss := range t.sems {
		field := fmt.Sprintf("semaphores[%d]", i)
		s := tt.Semaphore{}
		if s.Cores, err = x.coreSet(ss.cores, field+".cores"); err != nil {
			return nil, nil, err
		}
		if s.Cores != nil {
			if _, err := x.cores(s.Cores, lgrid, field+".cores"); err != nil {
				return nil, nil, err
			}
		}
		if s.Initial, err = x.u32(ss.initial, field+".initial"); err != nil {
			return nil, nil, err
		}
		out.Semaphores = append(out.Semaphores, s)
	}

	// With every kernel on cores of its own and no grid in tt.json, the
	// launch grid is the box around them.
	var box []backends.GwsDim
	if t.allCores {
		var rows, cols uint64
		for _, c := range used {
			rows, cols = max(rows, c.r+1), max(cols, c.c+1)
		}
		box = []backends.GwsDim{backends.ConstDim(rows), backends.ConstDim(cols)}
	}
	return out, box, nil
}

// arg binds one arg and, when it reads the core, evaluates it on every
// core it is for, so that a value that fails (or passes 32 bits) on some
// core is an error naming the field and the core.
func (x *ttBinder) arg(a tt.Arg, field string, cores []ttCore) (tt.Arg, error) {
	out := a
	var err error
	type part struct {
		src, dst *backends.GwsDim
		name     string
	}
	var parts []part
	switch a.Kind {
	case tt.ArgConst:
		parts = []part{{&a.Value, &out.Value, ".value"}}
	case tt.ArgBankID, tt.ArgBankNocX, tt.ArgBankNocY:
		parts = []part{{&a.Page, &out.Page, ".page"}}
	case tt.ArgCoreNocX, tt.ArgCoreNocY:
		parts = []part{{&a.Core.Row, &out.Core.Row, ".core[0]"}, {&a.Core.Col, &out.Core.Col, ".core[1]"}}
	}
	for _, pt := range parts {
		if *pt.dst, err = x.dim(*pt.src, field+pt.name); err != nil {
			return out, err
		}
		d := *pt.dst
		check := func(v uint64, where string) error {
			if a.Kind == tt.ArgConst && v > math.MaxUint32 {
				return x.ferr(field+pt.name, fmt.Errorf("%svalue %d does not fit in 32 bits", where, v))
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
				return out, x.ferr(field+pt.name, fmt.Errorf("on core %s: %w", c, err))
			}
			if err := check(v, "on core "+c.String()+": "); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// cb binds one CB config and lists its cores (nil cores: every core a
// kernel runs on).
func (x *ttBinder) cb(cs ttCBSpec, grid [2]uint64, used []ttCore, decl map[int]*tt.Buffer) (tt.CBConfig, []ttCore, error) {
	var cb tt.CBConfig
	var err error
	if cb.Cores, err = x.coreSet(cs.cores, cs.field+".cores"); err != nil {
		return cb, nil, err
	}
	cores := used
	if cb.Cores != nil {
		if cores, err = x.cores(cb.Cores, grid, cs.field+".cores"); err != nil {
			return cb, nil, err
		}
	}
	field := cs.field
	for j, is := range cs.indices {
		f := cs.field
		if len(cs.indices) > 1 {
			f = fmt.Sprintf("%s.indices[%d]", cs.field, j)
		}
		idx := tt.CBIndex{Index: is.index, Format: is.format}
		if is.tile != [2]uint32{32, 32} {
			idx.TileRows, idx.TileCols = is.tile[0], is.tile[1]
		}
		if is.pageBytes != nil {
			if idx.PageBytes, err = x.u32(*is.pageBytes, f+".page_bytes"); err != nil {
				return cb, nil, err
			}
		} else {
			idx.PageBytes = ttTileBytes(is.format, is.tile[0], is.tile[1])
		}
		if idx.PageBytes == 0 {
			return cb, nil, x.ferr(f+".page_bytes", errors.New("must be positive"))
		}
		cb.Indices = append(cb.Indices, idx)
	}
	switch {
	case cs.total != nil:
		if cb.TotalBytes, err = x.u32(*cs.total, field+".total_bytes"); err != nil {
			return cb, nil, err
		}
	case cs.pages != nil:
		pages, err := x.u32(*cs.pages, field+".pages")
		if err != nil {
			return cb, nil, err
		}
		pb := cb.Indices[0].PageBytes
		for _, idx := range cb.Indices[1:] {
			if idx.PageBytes != pb {
				return cb, nil, x.ferr(field+".pages", fmt.Errorf("its indices have pages of %d and %d bytes: give total_bytes", pb, idx.PageBytes))
			}
		}
		t := uint64(pages) * uint64(pb)
		if t > math.MaxUint32 {
			return cb, nil, x.ferr(field+".pages", fmt.Errorf("%d pages of %d bytes do not fit in 32 bits", pages, pb))
		}
		cb.TotalBytes = uint32(t)
	default: // on a sharded buffer: the shard
		d := decl[*cs.buffer]
		t := uint64(d.Shard.Shape[0]) * uint64(d.Shard.Shape[1]) * uint64(d.PageSize)
		if t > math.MaxUint32 {
			return cb, nil, x.ferr(field+".total_bytes", fmt.Errorf("the shard of %d bytes does not fit in 32 bits", t))
		}
		cb.TotalBytes = uint32(t)
	}
	if cb.TotalBytes == 0 {
		return cb, nil, x.ferr(field+".total_bytes", errors.New("must be positive"))
	}
	for j, idx := range cb.Indices {
		if cb.TotalBytes%idx.PageBytes != 0 {
			f := field
			if len(cb.Indices) > 1 {
				f = fmt.Sprintf("%s.indices[%d]", field, j)
			}
			return cb, nil, x.ferr(f+".page_bytes", fmt.Errorf("%d does not divide total_bytes %d", idx.PageBytes, cb.TotalBytes))
		}
	}
	if cs.buffer != nil {
		bi := *cs.buffer
		cb.Buffer = &bi
	}
	return cb, cores, nil
}

// buffer binds a buffer declaration: page size, the tile matrix, and a
// shard spec in elements turned into pages.
func (x *ttBinder) buffer(bs ttBufSpec) (tt.Buffer, error) {
	prm := x.b.Params[bs.param]
	shape := x.shapes[bs.param]
	out := tt.Buffer{Param: bs.param, Placement: bs.placement, Layout: bs.memLayout, Tile: bs.tile, Format: bs.format}
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
	var err error
	if bs.pageSize != nil {
		if out.PageSize, err = x.u32(*bs.pageSize, bs.field+".page_size"); err != nil {
			return out, err
		}
		if out.PageSize == 0 {
			return out, x.ferr(bs.field+".page_size", errors.New("must be positive"))
		}
	}
	// The page as a block of elements: a tile, or a run of one row.
	var pr, pc uint64
	if bs.tile {
		out.Rows, out.Cols = rows, cols
		if len(shape) >= 2 {
			out.Rows, out.Cols = shape[len(shape)-2], shape[len(shape)-1]
		}
		if out.Rows%32 != 0 || out.Cols%32 != 0 || out.Rows == 0 || out.Cols == 0 {
			return out, x.ferr(bs.field+".layout", fmt.Errorf("param %s is %d×%d; tile layout needs rows and cols that are multiples of 32", prm.Name, out.Rows, out.Cols))
		}
		f := bs.format
		if f == "" {
			f = ttDTypeFormat(prm.DType)
		}
		tile := ttTileBytes(f, 32, 32)
		if out.PageSize == 0 {
			out.PageSize = tile
		} else if out.PageSize != tile {
			return out, x.ferr(bs.field+".page_size", fmt.Errorf("%d; a page of a tile-layout buffer is one %s tile, %d bytes", out.PageSize, f, tile))
		}
		pr, pc = 32, 32
	}
	if bs.shard == nil {
		return out, nil
	}
	sh := bs.shard
	var shardEl [2]uint64
	for j := range 2 {
		v, err := x.u32(sh.shape[j], fmt.Sprintf("%s.shard.shape[%d]", bs.field, j))
		if err != nil {
			return out, err
		}
		if v == 0 {
			return out, x.ferr(fmt.Sprintf("%s.shard.shape[%d]", bs.field, j), errors.New("must be positive"))
		}
		shardEl[j] = uint64(v)
	}
	if !bs.tile {
		// Row-major pages are sticks of one row: the shard's width unless
		// page_size says otherwise.
		if out.PageSize == 0 {
			w := shardEl[1] * elem
			if w > math.MaxUint32 {
				return out, x.ferr(bs.field+".shard.shape[1]", fmt.Errorf("a shard row of %d bytes does not fit in 32 bits", w))
			}
			out.PageSize = uint32(w)
		}
		if uint64(out.PageSize)%elem != 0 {
			return out, x.ferr(bs.field+".page_size", fmt.Errorf("%d is not a whole number of %s elements", out.PageSize, prm.DType))
		}
		pr, pc = 1, uint64(out.PageSize)/elem
	}
	if rows%pr != 0 || cols%pc != 0 {
		return out, x.ferr(bs.field+".page_size", fmt.Errorf("param %s is %d×%d, which pages of %d×%d elements do not tile", prm.Name, rows, cols, pr, pc))
	}
	if shardEl[0]%pr != 0 || shardEl[1]%pc != 0 {
		return out, x.ferr(bs.field+".shard.shape", fmt.Errorf("%d×%d elements is not a whole number of %d×%d-element pages", shardEl[0], shardEl[1], pr, pc))
	}
	tensor := [2]uint64{rows / pr, cols / pc}
	shard := [2]uint64{shardEl[0] / pr, shardEl[1] / pc}
	switch bs.memLayout {
	case "height_sharded":
		if shard[1] != tensor[1] {
			return out, x.ferr(bs.field+".shard.shape[1]", fmt.Errorf("a height-sharded shard is as wide as the tensor: %d elements, not %d", cols, shardEl[1]))
		}
	case "width_sharded":
		if shard[0] != tensor[0] {
			return out, x.ferr(bs.field+".shard.shape[0]", fmt.Errorf("a width-sharded shard is as tall as the tensor: %d rows, not %d", rows, shardEl[0]))
		}
	}
	if tensor[0] > math.MaxUint32 || tensor[1] > math.MaxUint32 {
		return out, x.ferr(bs.field, fmt.Errorf("%d×%d pages do not fit in 32 bits", tensor[0], tensor[1]))
	}
	cs, err := x.coreSet(&sh.cores, bs.field+".shard.cores")
	if err != nil {
		return out, err
	}
	holders, err := x.cores(cs, [2]uint64{1, 1}, bs.field+".shard.cores")
	if err != nil {
		return out, err
	}
	nshards := ((tensor[0] + shard[0] - 1) / shard[0]) * ((tensor[1] + shard[1] - 1) / shard[1])
	if nshards > uint64(len(holders)) {
		return out, x.ferr(bs.field+".shard.cores", fmt.Errorf("%d shards of %d×%d elements but %d cores to hold them", nshards, shardEl[0], shardEl[1], len(holders)))
	}
	out.Shard = &tt.Shard{Cores: *cs, Shape: [2]uint32{uint32(shard[0]), uint32(shard[1])},
		Tensor: [2]uint32{uint32(tensor[0]), uint32(tensor[1])}, Orientation: sh.orientation}
	return out, nil
}
