package ttruntime

// The one validator of protocol v2 requests in Go: the C++ server's rules
// (cpp/src/request.cpp for the shape of a request, cpp/src/validate.cpp for
// its meaning), in their order, with their codes, field paths and
// messages. The tt backend calls it before it sends a request (so that a
// bad program fails at Compile, not at a launch), and the bundle package
// reaches it through tt; ttruntime's conformance test runs one table of bad
// requests against it and the C++ server. Runs are checked by the runtime
// alone.
//
// The shape rules are those a typed request can still break (an unknown
// enum name, a missing required list, fields an arg entry's kind does not
// take, a noc on a compute kernel, …): they are bad_request. The meaning
// rules are invalid_argument (out_of_memory for an alloc past capacity).
// A Go zero value that is omitted on the wire is read as the runtime
// reads the missing field (a PageSize of 0 is 2048).

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/zyxtt/zyxtt/internal/core"
)

// ValidationError is a request the runtime would refuse, with the code and
// message it would answer: Message starts with the field path
// ("compile.kernels[1].runtime_args[0].cores[0]: …"). It unwraps to the
// sentinel of its code, as a RemoteError does.
type ValidationError struct {
	Code    string
	Message string
}

func (e *ValidationError) Error() string { return e.Code + ": " + e.Message }

// Unwrap maps the code to a sentinel.
func (e *ValidationError) Unwrap() error { return (&RemoteError{Code: e.Code}).Unwrap() }

// Path is the field path the message starts with.
func (e *ValidationError) Path() string {
	if i := strings.Index(e.Message, ": "); i >= 0 {
		return e.Message[:i]
	}
	return e.Message
}

// vfail is how the checks below stop: a panic with a *ValidationError that
// the exported functions recover, as the C++ checks throw.
func vfail(code, where, msg string) { panic(&ValidationError{Code: code, Message: where + ": " + msg}) }

func badReq(where, msg string)  { vfail(CodeBadRequest, where, msg) }
func invalid(where, msg string) { vfail(CodeInvalidArgument, where, msg) }

func catch(err *error) {
	if r := recover(); r != nil {
		ve, ok := r.(*ValidationError)
		if !ok {
			panic(r)
		}
		*err = ve
	}
}

func idx(base string, i int) string { return base + "[" + strconv.Itoa(i) + "]" }
func u(v uint64) string             { return strconv.FormatUint(v, 10) }
func coreStr(c CoreCoord) string    { return "(" + u(uint64(c[0])) + ", " + u(uint64(c[1])) + ")" }
func rangeStr(r CoreRange) string {
	return "[" + u(uint64(r[0])) + ", " + u(uint64(r[1])) + ", " + u(uint64(r[2])) + ", " + u(uint64(r[3])) + "]"
}

// IsCIdentifier reports whether s is a C identifier (define and named
// compile arg names).
func IsCIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alpha := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_'
		digit := c >= '0' && c <= '9'
		if !alpha && !(digit && i > 0) {
			return false
		}
	}
	return true
}

// ---- the shape (bad_request) ---------------------------------------------------

var (
	enumParamKinds   = []string{ParamGlobal, ParamGlobalMut, ParamVariable}
	enumProcessors   = []string{ProcRiscv0, ProcRiscv1, ProcCompute}
	enumFidelities   = []string{"LoFi", "HiFi2", "HiFi3", "HiFi4"}
	enumPlacements   = []string{PlacementDRAM, PlacementL1}
	enumLayouts      = []string{LayoutInterleaved, LayoutHeightSharded, LayoutWidthSharded, LayoutBlockSharded}
	enumOrientations = []string{OrientationRowMajor, OrientationColMajor}
	enumArgKinds     = []string{ArgConst, ArgParam, ArgBufferAddr, ArgBufferSize, ArgBufferPages, ArgPageSize,
		ArgBankID, ArgBankNocX, ArgBankNocY, ArgCoreNocX, ArgCoreNocY, ArgAccessor, ArgSemaphoreAddr}
	// Param element types: the names of backends.DType, in its order.
	enumDTypes = []string{"bf16", "f16", "f32", "f64", "f8e4m3", "f8e5m2", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool"}
	// Formats in the server's order.
	enumFormats = []string{"Float32", "Float16_b", "Float16", "Bfp8_b", "Bfp4_b", "Int32", "UInt32", "UInt16", "UInt8", "Int8"}
)

func checkEnum(v, where string, names []string) {
	if !slices.Contains(names, v) {
		badReq(where, "\""+v+"\" is not one of "+strings.Join(names, ", "))
	}
}

func needSet(s CoreRangeSet, where string) {
	if s == nil {
		badReq(where, "missing field")
	}
}

func decodeBase64(in, where string) []byte {
	pad := 0
	for len(in) > 0 && in[len(in)-1] == '=' && pad < 2 {
		in = in[:len(in)-1]
		pad++
	}
	if len(in)%4 == 1 || (pad != 0 && (len(in)+pad)%4 != 0) {
		badReq(where, "not valid base64 (its length is wrong)")
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	out := make([]byte, 0, len(in)/4*3+2)
	var acc uint32
	bits := 0
	for i := 0; i < len(in); i++ {
		v := strings.IndexByte(alphabet, in[i])
		if v < 0 {
			badReq(where, "not valid base64 (it holds a character outside the alphabet)")
		}
		acc = acc<<6 | uint32(v)
		bits += 6
		if bits >= 8 {
			bits -= 8
			out = append(out, byte(acc>>bits))
		}
	}
	return out
}

// sourceOf is the runtime's source_of: exactly one of source and
// source_b64, the latter valid base64.
func sourceOf(text *string, b64, where string) string {
	if (text == nil) == (b64 == "") {
		badReq(where+".source", "give exactly one of source and source_b64")
	}
	if text != nil {
		return *text
	}
	return string(decodeBase64(b64, where+".source_b64"))
}

// argFields are an entry's fields by name, in the order the runtime's
// object (a sorted map) lists them.
func checkArgShape(e ArgEntry, where string) {
	checkEnum(e.Kind, where+".kind", enumArgKinds)
	taken := []string{"kind"}
	need := func(name string, set bool) {
		taken = append(taken, name)
		if !set {
			badReq(where+"."+name, "missing field")
		}
	}
	switch e.Kind {
	case ArgConst:
		need("value", e.Value != nil)
	case ArgParam, ArgBufferAddr, ArgBufferSize, ArgBufferPages, ArgPageSize, ArgAccessor:
		need("param", e.Param != nil)
	case ArgBankID, ArgBankNocX, ArgBankNocY:
		need("param", e.Param != nil)
		need("page", e.Page != nil)
	case ArgCoreNocX, ArgCoreNocY:
		need("core", e.Core != nil)
	case ArgSemaphoreAddr:
		need("semaphore", e.Semaphore != nil)
	}
	present := []struct {
		name string
		set  bool
	}{{"core", e.Core != nil}, {"page", e.Page != nil}, {"param", e.Param != nil}, {"semaphore", e.Semaphore != nil}, {"value", e.Value != nil}}
	for _, f := range present {
		if f.set && !slices.Contains(taken, f.name) {
			badReq(where+"."+f.name, "unknown field (this object takes: "+strings.Join(taken, ", ")+")")
		}
	}
}

func checkArgsShape(args []ArgEntry, where string) {
	for i, e := range args {
		checkArgShape(e, idx(where, i))
	}
}

// checkSpecShape is the runtime's buffer_spec parse.
func checkSpecShape(s BufferSpec, where string) {
	if s.Placement != "" {
		checkEnum(s.Placement, where+".placement", enumPlacements)
	}
	if s.Layout != "" {
		checkEnum(s.Layout, where+".layout", enumLayouts)
	}
	interleaved := s.Layout == "" || s.Layout == LayoutInterleaved
	if interleaved {
		if s.Shard != nil {
			badReq(where+".shard", "an interleaved buffer takes no shard spec")
		}
		return
	}
	if s.Shard == nil {
		badReq(where+".shard", "missing field (a sharded layout needs a shard spec)")
	}
	needSet(s.Shard.Cores, where+".shard.cores")
	if s.Shard.Orientation != "" {
		checkEnum(s.Shard.Orientation, where+".shard.orientation", enumOrientations)
	}
}

func checkCompileShape(r *CompileRequest) {
	const w = "compile"
	for i, p := range r.Params {
		checkEnum(p.Kind, idx(w+".params", i)+".kind", enumParamKinds)
		checkEnum(p.DType, idx(w+".params", i)+".dtype", enumDTypes)
	}
	for i, b := range r.Buffers {
		checkSpecShape(b.BufferSpec, idx(w+".buffers", i))
	}
	for i, f := range r.IncludeFiles {
		sourceOf(f.Source, f.SourceB64, idx(w+".include_files", i))
	}
	if r.Kernels == nil {
		badReq(w+".kernels", "missing field")
	}
	for k := range r.Kernels {
		kd := &r.Kernels[k]
		kw := idx(w+".kernels", k)
		checkEnum(kd.Processor, kw+".processor", enumProcessors)
		dm := kd.Processor != ProcCompute
		if kd.NOC != nil && !dm {
			badReq(kw+".noc", "only data-movement kernels (riscv_0, riscv_1) take a NOC")
		}
		needSet(kd.Cores, kw+".cores")
		sourceOf(kd.Source, kd.SourceB64, kw)
		checkArgsShape(kd.CompileArgs, kw+".compile_args")
		for _, name := range slices.Sorted(maps.Keys(kd.NamedCompileArgs)) {
			checkArgShape(kd.NamedCompileArgs[name], kw+".named_compile_args."+name)
		}
		checkArgsShape(kd.CommonArgs, kw+".common_args")
		for j, ca := range kd.RuntimeArgs {
			rw := idx(kw+".runtime_args", j)
			needSet(ca.Cores, rw+".cores")
			checkArgsShape(ca.Args, rw+".args")
		}
		if kd.ComputeConfig != nil {
			if dm {
				badReq(kw+".compute_config", "only compute kernels take a compute_config")
			}
			if f := kd.ComputeConfig.MathFidelity; f != "" {
				checkEnum(f, kw+".compute_config.math_fidelity", enumFidelities)
			}
		}
	}
	for i, cb := range r.CBs {
		cw := idx(w+".cbs", i)
		needSet(cb.Cores, cw+".cores")
		if cb.Indices == nil {
			badReq(cw+".indices", "missing field")
		}
		for j, x := range cb.Indices {
			checkEnum(x.Format, idx(cw+".indices", j)+".format", enumFormats)
		}
	}
	for i, s := range r.Semaphores {
		needSet(s.Cores, idx(w+".semaphores", i)+".cores")
	}
}

// ---- the meaning (invalid_argument) --------------------------------------------

type vgrid struct {
	rows, cols uint32
	what       string
}

func (g vgrid) cell(c CoreCoord) int { return int(c[0])*int(g.cols) + int(c[1]) }
func (g vgrid) cells() int           { return int(g.rows) * int(g.cols) }

// setChecker applies the core range set rules C1-C4: not empty; each range
// ordered, inside the grid, overlapping no earlier range of its set.
type setChecker struct {
	g     vgrid
	stamp []uint64
	owner []int
	gen   uint64
}

func newSetChecker(g vgrid) *setChecker {
	return &setChecker{g: g, stamp: make([]uint64, g.cells()), owner: make([]int, g.cells())}
}

func (s *setChecker) check(set CoreRangeSet, where string) {
	if len(set) == 0 {
		invalid(where, "an empty core range set (give at least one range [r0, c0, r1, c1])")
	}
	s.gen++
	for i, r := range set {
		if r[0] > r[2] || r[1] > r[3] {
			invalid(idx(where, i), "core range "+rangeStr(r)+" is not ordered (r0 <= r1 and c0 <= c1)")
		}
		if r[2] >= s.g.rows || r[3] >= s.g.cols {
			invalid(idx(where, i), "core range "+rangeStr(r)+" is outside "+s.g.what+" of "+u(uint64(s.g.rows))+" x "+u(uint64(s.g.cols)))
		}
		for row := r[0]; row <= r[2]; row++ {
			for col := r[1]; col <= r[3]; col++ {
				c := s.g.cell(CoreCoord{row, col})
				if s.stamp[c] == s.gen {
					invalid(idx(where, i), "core "+coreStr(CoreCoord{row, col})+" is also in range ["+strconv.Itoa(s.owner[c])+
						"] of the same set (ranges of a set must not overlap)")
				}
				s.stamp[c] = s.gen
				s.owner[c] = i
			}
		}
	}
}

// forEachCore visits a checked set's cores: range by range, row-major.
func forEachCore(set CoreRangeSet, f func(CoreCoord)) {
	for _, r := range set {
		for row := r[0]; row <= r[2]; row++ {
			for col := r[1]; col <= r[3]; col++ {
				f(CoreCoord{row, col})
			}
		}
	}
}

func workerGrid(d *InitReply) vgrid { return vgrid{d.Grid.Rows, d.Grid.Cols, "the worker grid"} }

// normalSpec is the spec as the runtime reads it off the wire.
func normalSpec(s BufferSpec) BufferSpec {
	if s.PageSize == 0 {
		s.PageSize = DefaultPageSize
	}
	return s
}

// checkSpec is the spec rules S1-S5 shared by alloc and compile.buffers.
func checkSpec(s BufferSpec, d *InitReply, where string) {
	if s.PageSize > math.MaxUint32 {
		invalid(where+".page_size", u(s.PageSize)+" is past 32 bits")
	}
	if s.Shard == nil {
		return
	}
	sh := s.Shard
	sp := where + ".shard"
	g := workerGrid(d)
	if s.Placement != PlacementL1 {
		g = vgrid{1, d.DRAM.Banks, "the DRAM banks (a DRAM shard grid is [0, b] for bank b)"}
	}
	newSetChecker(g).check(sh.Cores, sp+".cores")
	if sh.Shape[0] == 0 || sh.Shape[1] == 0 {
		invalid(sp+".shape", "both dimensions must be > 0")
	}
	if sh.Tensor[0] == 0 || sh.Tensor[1] == 0 {
		invalid(sp+".tensor", "both dimensions must be > 0")
	}
	if s.Layout == LayoutHeightSharded && sh.Shape[1] != sh.Tensor[1] {
		invalid(sp+".shape", "a height-sharded shard spans the tensor's width: shape[1] must be tensor[1] ("+
			u(uint64(sh.Tensor[1]))+"), got "+u(uint64(sh.Shape[1])))
	}
	if s.Layout == LayoutWidthSharded && sh.Shape[0] != sh.Tensor[0] {
		invalid(sp+".shape", "a width-sharded shard spans the tensor's height: shape[0] must be tensor[0] ("+
			u(uint64(sh.Tensor[0]))+"), got "+u(uint64(sh.Shape[0])))
	}
	if shards := ShardCount(sh); shards > sh.Cores.Size() {
		invalid(sp+".cores", "the tensor makes "+u(shards)+" shards but the shard grid has "+u(sh.Cores.Size())+" cores")
	}
}

// ShardCount is the number of shards of a shard spec (0 for a zero shape).
func ShardCount(sh *ShardSpec) uint64 {
	if sh.Shape[0] == 0 || sh.Shape[1] == 0 {
		return 0
	}
	return (uint64(sh.Tensor[0]) + uint64(sh.Shape[0]) - 1) / uint64(sh.Shape[0]) *
		((uint64(sh.Tensor[1]) + uint64(sh.Shape[1]) - 1) / uint64(sh.Shape[1]))
}

// ShardCores are the cores that hold the shards, in shard order.
func ShardCores(sh *ShardSpec) []CoreCoord {
	cores := sh.Cores.Cores(sh.Orientation == OrientationColMajor)
	if n := ShardCount(sh); n < uint64(len(cores)) {
		cores = cores[:n]
	}
	return cores
}

// L1SharePerCore is the bytes one core holds of an L1 buffer of size bytes
// (what a CB config on it may use).
func L1SharePerCore(size uint64, spec BufferSpec, d *InitReply) uint64 {
	spec = normalSpec(spec)
	align := max(d.L1.Alignment, 1)
	page := (spec.PageSize + align - 1) / align * align
	if spec.Shard != nil {
		return uint64(spec.Shard.Shape[0]) * uint64(spec.Shard.Shape[1]) * page
	}
	banks := uint64(max(len(d.L1.BankCores), 1))
	pages := (size + spec.PageSize - 1) / spec.PageSize
	return (pages + banks - 1) / banks * page
}

// ProgramChecks is what ValidateCompile learns about a program: its
// params and the layout each buffer param is declared with.
type ProgramChecks struct {
	Params []ParamDesc
	Decls  []*BufferSpec // by param: the declared layout, or nil
}

type argList int

const (
	listCompile argList = iota
	listCommon
	listRuntime
)

func needsParam(kind string) bool {
	return kind != ArgConst && kind != ArgCoreNocX && kind != ArgCoreNocY && kind != ArgSemaphoreAddr
}

func checkArg(e ArgEntry, list argList, r *CompileRequest, d *InitReply, out *ProgramChecks, where string) {
	if needsParam(e.Kind) {
		p := *e.Param
		if int64(p) >= int64(len(r.Params)) {
			invalid(where+".param", "is "+u(uint64(p))+", but the program has "+strconv.Itoa(len(r.Params))+" params")
		}
		pd := r.Params[p]
		wantBuffer := e.Kind != ArgParam
		if pd.IsBuffer() != wantBuffer {
			need := "variable"
			if wantBuffer {
				need = "buffer (global or global_mut)"
			}
			invalid(where+".param", "names param "+u(uint64(p))+" ("+pd.Name+", "+pd.Kind+"), but kind "+e.Kind+" needs a "+need+" param")
		}
		if e.Kind == ArgParam && (pd.DType == "u64" || pd.DType == "i64" || pd.DType == "f64") {
			invalid(where+".param", "names param "+u(uint64(p))+" ("+pd.Name+", "+pd.DType+"): an arg word is 32 bits; pass a 32-bit variable")
		}
	}
	if e.Kind == ArgAccessor && list != listCompile {
		invalid(where+".kind", "accessor entries expand to compile-time words: they belong in compile_args or named_compile_args")
	}
	needsDecl := e.Kind == ArgAccessor || e.Kind == ArgBankID || e.Kind == ArgBankNocX || e.Kind == ArgBankNocY
	if needsDecl && out.Decls[*e.Param] == nil {
		invalid(where+".param", "kind "+e.Kind+" depends on the buffer's layout: declare param "+u(uint64(*e.Param))+
			" ("+r.Params[*e.Param].Name+") in compile.buffers")
	}
	if (e.Kind == ArgCoreNocX || e.Kind == ArgCoreNocY) && (e.Core[0] >= d.Grid.Rows || e.Core[1] >= d.Grid.Cols) {
		invalid(where+".core", "core "+coreStr(*e.Core)+" is outside the worker grid of "+u(uint64(d.Grid.Rows))+" x "+u(uint64(d.Grid.Cols)))
	}
	if e.Kind == ArgSemaphoreAddr && *e.Semaphore >= d.Semaphores {
		invalid(where+".semaphore", "is "+u(uint64(*e.Semaphore))+"; a core has "+u(uint64(d.Semaphores))+" semaphores")
	}
}

func checkArgs(args []ArgEntry, list argList, r *CompileRequest, d *InitReply, out *ProgramChecks, where string) {
	for i, e := range args {
		checkArg(e, list, r, d, out, idx(where, i))
	}
}

func tileOK(rows, cols uint32) bool {
	rowsOK := rows == 1 || rows == 2 || rows == 4 || rows == 8 || rows == 16 || rows == 32
	switch cols {
	case 32:
		return rowsOK
	case 16:
		return rows == 16 || rows == 32
	}
	return false
}

func checkIncludePath(path, where string) {
	switch {
	case path == "":
		invalid(where, "an include file needs a path")
	case strings.IndexByte(path, 0) >= 0:
		invalid(where, "the path holds a NUL byte")
	case len(path) > 1024:
		invalid(where, "the path is longer than 1024 bytes")
	case path[0] == '/':
		invalid(where, "\""+path+"\" is absolute; include paths are relative to the kernel directory")
	}
	for _, comp := range strings.Split(path, "/") {
		if comp == "" || comp == "." || comp == ".." {
			invalid(where, "\""+path+"\" has an empty, \".\" or \"..\" component; give a plain relative path")
		}
	}
}

func processorSlot(p string) int {
	switch p {
	case ProcRiscv1:
		return 1
	case ProcCompute:
		return 2
	}
	return 0
}

func checkProgram(r *CompileRequest, d *InitReply) *ProgramChecks {
	const w = "compile"
	out := &ProgramChecks{Params: slices.Clone(r.Params), Decls: make([]*BufferSpec, len(r.Params))}
	grid := workerGrid(d)
	sets := newSetChecker(grid)

	// V2: buffer declarations.
	for i, b := range r.Buffers {
		at := idx(w+".buffers", i)
		if int64(b.Param) >= int64(len(r.Params)) {
			invalid(at+".param", "is "+u(uint64(b.Param))+", but the program has "+strconv.Itoa(len(r.Params))+" params")
		}
		pd := r.Params[b.Param]
		if !pd.IsBuffer() {
			invalid(at+".param", "names param "+u(uint64(b.Param))+" ("+pd.Name+"), a variable; only buffer params have a layout")
		}
		if out.Decls[b.Param] != nil {
			invalid(at+".param", "param "+u(uint64(b.Param))+" ("+pd.Name+") is declared twice")
		}
		spec := normalSpec(b.BufferSpec)
		checkSpec(spec, d, at)
		out.Decls[b.Param] = &spec
	}

	// V3: include files.
	seen := map[string]bool{}
	for i, f := range r.IncludeFiles {
		at := idx(w+".include_files", i) + ".path"
		checkIncludePath(f.Path, at)
		if seen[f.Path] {
			invalid(at, "\""+f.Path+"\" is given twice")
		}
		seen[f.Path] = true
	}

	// V4-V5: kernels, one by one.
	if len(r.Kernels) == 0 || len(r.Kernels) > 64 {
		invalid(w+".kernels", "a program has 1 to 64 kernels, got "+strconv.Itoa(len(r.Kernels)))
	}
	inKernel := make([]int, grid.cells()) // kernel index + 1
	rtOwner := make([]int, grid.cells())  // runtime_args entry + 1
	rtStamp := make([]int, grid.cells())  // kernel index + 1
	for k := range r.Kernels {
		kd := &r.Kernels[k]
		kw := idx(w+".kernels", k)
		sets.check(kd.Cores, kw+".cores")
		if kd.Processor != ProcCompute && kd.NOC != nil && *kd.NOC > 1 {
			invalid(kw+".noc", "is "+u(uint64(*kd.NOC))+"; NOCs are 0 and 1")
		}
		for _, name := range slices.Sorted(maps.Keys(kd.Defines)) {
			if !IsCIdentifier(name) {
				invalid(kw+".defines."+name, "a define name must be a C identifier")
			}
			if strings.ContainsAny(kd.Defines[name], "\x00\n\r") {
				invalid(kw+".defines."+name, "a define value must not hold a NUL byte or a line break")
			}
		}
		checkArgs(kd.CompileArgs, listCompile, r, d, out, kw+".compile_args")
		for _, name := range slices.Sorted(maps.Keys(kd.NamedCompileArgs)) {
			nw := kw + ".named_compile_args." + name
			if !IsCIdentifier(name) {
				invalid(nw, "a named compile arg's name must be a C identifier")
			}
			checkArg(kd.NamedCompileArgs[name], listCompile, r, d, out, nw)
		}
		checkArgs(kd.CommonArgs, listCommon, r, d, out, kw+".common_args")
		forEachCore(kd.Cores, func(c CoreCoord) { inKernel[grid.cell(c)] = k + 1 })
		for j, ca := range kd.RuntimeArgs {
			rw := idx(kw+".runtime_args", j)
			sets.check(ca.Cores, rw+".cores")
			for ri, cr := range ca.Cores {
				for row := cr[0]; row <= cr[2]; row++ {
					for col := cr[1]; col <= cr[3]; col++ {
						cc := CoreCoord{row, col}
						c := grid.cell(cc)
						if inKernel[c] != k+1 {
							invalid(idx(rw+".cores", ri), "core "+coreStr(cc)+" is not one of the kernel's cores")
						}
						if rtStamp[c] == k+1 {
							invalid(idx(rw+".cores", ri), "core "+coreStr(cc)+" already has runtime args from runtime_args["+strconv.Itoa(rtOwner[c]-1)+"]")
						}
						rtStamp[c] = k + 1
						rtOwner[c] = j + 1
					}
				}
			}
			checkArgs(ca.Args, listRuntime, r, d, out, rw+".args")
		}
	}

	// V6: at most one kernel per processor on a core.
	procOwner := make([]int, grid.cells()*3) // kernel index + 1
	for k := range r.Kernels {
		kd := &r.Kernels[k]
		slot := processorSlot(kd.Processor)
		forEachCore(kd.Cores, func(c CoreCoord) {
			o := &procOwner[grid.cell(c)*3+slot]
			if *o != 0 {
				other := r.Kernels[*o-1].Name
				if other == "" {
					other = r.Kernels[*o-1].Processor
				}
				invalid(idx(w+".kernels", k)+".cores", "core "+coreStr(c)+" already runs kernels["+strconv.Itoa(*o-1)+"] ("+other+") on "+
					kd.Processor+"; a core runs at most one kernel per processor")
			}
			*o = k + 1
		})
	}

	// V7: circular buffers.
	cbOwner := make([]int, grid.cells()*32) // config index + 1
	l1Used := make([]uint64, grid.cells())
	align := max(d.L1.Alignment, 1)
	for i, cb := range r.CBs {
		cw := idx(w+".cbs", i)
		sets.check(cb.Cores, cw+".cores")
		if cb.TotalBytes == 0 {
			invalid(cw+".total_bytes", "must be > 0")
		}
		if len(cb.Indices) == 0 {
			invalid(cw+".indices", "a CB config needs at least one index")
		}
		var seenIdx uint32
		for j, x := range cb.Indices {
			xw := idx(cw+".indices", j)
			if x.Index > 31 {
				invalid(xw+".index", "is "+u(uint64(x.Index))+"; CB indices are 0-31")
			}
			if x.PageBytes == 0 {
				invalid(xw+".page_bytes", "must be > 0")
			}
			if cb.TotalBytes%x.PageBytes != 0 {
				invalid(xw+".page_bytes", u(uint64(x.PageBytes))+" does not divide total_bytes "+u(uint64(cb.TotalBytes)))
			}
			tr, tc := uint32(32), uint32(32)
			if x.Tile != nil {
				tr, tc = x.Tile[0], x.Tile[1]
			}
			if !tileOK(tr, tc) {
				invalid(xw+".tile", "["+u(uint64(tr))+", "+u(uint64(tc))+"] is not a tile shape (rows 1, 2, 4, 8, 16 or 32 with 32 cols; 16 or 32 rows with 16 cols)")
			}
			if seenIdx&(1<<x.Index) != 0 {
				invalid(xw+".index", "CB "+u(uint64(x.Index))+" is given twice in this config")
			}
			seenIdx |= 1 << x.Index
		}
		if cb.Buffer != nil {
			bp := *cb.Buffer
			bw := cw + ".buffer"
			if int64(bp) >= int64(len(r.Params)) {
				invalid(bw, "is "+u(uint64(bp))+", but the program has "+strconv.Itoa(len(r.Params))+" params")
			}
			pd := r.Params[bp]
			if !pd.IsBuffer() {
				invalid(bw, "names param "+u(uint64(bp))+" ("+pd.Name+"), a variable")
			}
			decl := out.Decls[bp]
			if decl == nil {
				invalid(bw, "a CB on a buffer depends on its layout: declare param "+u(uint64(bp))+" ("+pd.Name+") in compile.buffers")
			}
			if decl.Placement != PlacementL1 {
				invalid(bw, "param "+u(uint64(bp))+" ("+pd.Name+") is declared in DRAM; a CB sits on an l1 buffer")
			}
			if decl.Shard != nil {
				holds := make([]bool, grid.cells())
				for _, c := range ShardCores(decl.Shard) {
					holds[grid.cell(c)] = true
				}
				forEachCore(cb.Cores, func(c CoreCoord) {
					if !holds[grid.cell(c)] {
						invalid(bw, "core "+coreStr(c)+" of the CB holds no shard of param "+u(uint64(bp))+" ("+pd.Name+")")
					}
				})
			}
		}
		forEachCore(cb.Cores, func(c CoreCoord) {
			for _, x := range cb.Indices {
				o := &cbOwner[grid.cell(c)*32+int(x.Index)]
				if *o != 0 {
					invalid(cw+".indices", "CB "+u(uint64(x.Index))+" on core "+coreStr(c)+" is already configured by cbs["+strconv.Itoa(*o-1)+"]")
				}
				*o = i + 1
			}
			if cb.Buffer == nil {
				l1Used[grid.cell(c)] += (uint64(cb.TotalBytes) + align - 1) / align * align
			}
		})
	}

	// V8: the CBs that are not on a buffer fit the usable L1 of each core.
	if d.L1.Size > d.L1.UnreservedBase {
		have := d.L1.Size - d.L1.UnreservedBase
		for row := uint32(0); row < grid.rows; row++ {
			for col := uint32(0); col < grid.cols; col++ {
				if used := l1Used[grid.cell(CoreCoord{row, col})]; used > have {
					invalid(w+".cbs", "the CBs of core "+coreStr(CoreCoord{row, col})+" need "+u(used)+" bytes of L1; a core has "+u(have)+" above the reserved base")
				}
			}
		}
	}

	// V9: semaphores, with ids as tt-metal's CreateSemaphore assigns them.
	if d.Semaphores > 64 {
		vfail(CodeInternal, w, "the device reports more than 64 semaphores per core")
	}
	semUsed := make([]uint64, grid.cells())
	for i, s := range r.Semaphores {
		sw := idx(w+".semaphores", i)
		sets.check(s.Cores, sw+".cores")
		if s.ID >= d.Semaphores {
			invalid(sw+".id", "is "+u(uint64(s.ID))+"; a core has "+u(uint64(d.Semaphores))+" semaphores")
		}
		var taken uint64
		forEachCore(s.Cores, func(c CoreCoord) {
			if semUsed[grid.cell(c)]&(1<<s.ID) != 0 {
				invalid(sw+".id", "semaphore "+u(uint64(s.ID))+" is already used on core "+coreStr(c))
			}
			taken |= semUsed[grid.cell(c)]
		})
		expect := uint32(0)
		for expect < d.Semaphores && taken&(1<<expect) != 0 {
			expect++
		}
		if s.ID != expect {
			invalid(sw+".id", "is "+u(uint64(s.ID))+", but CreateSemaphore gives these cores id "+u(uint64(expect))+
				" (the smallest id free on all of them, in declaration order)")
		}
		forEachCore(s.Cores, func(c CoreCoord) { semUsed[grid.cell(c)] |= 1 << s.ID })
	}
	return out
}

// ValidateCompile checks a compile request as the runtime of device d
// will: its shape (bad_request), then its meaning (invalid_argument), each
// in the runtime's order. The error is a *ValidationError with the code and
// message the runtime would answer. The ProgramChecks are the program's
// params and buffer declarations as checked.
func ValidateCompile(r *CompileRequest, d *InitReply) (checks *ProgramChecks, err error) {
	defer catch(&err)
	if d.Grid.Rows == 0 || d.Grid.Cols == 0 || d.Grid.Rows > 64 || d.Grid.Cols > 64 {
		vfail(CodeInternal, "compile", fmt.Sprintf("the device reports a worker grid of %d x %d", d.Grid.Rows, d.Grid.Cols))
	}
	checkCompileShape(r)
	return checkProgram(r, d), nil
}

// ValidateAlloc checks an alloc request as the runtime of device d will:
// the spec's shape (bad_request), its meaning (invalid_argument) and the
// capacity of the device (out_of_memory: larger than DRAM, or more L1 per
// core than a core has).
func ValidateAlloc(r AllocRequest, d *InitReply) (err error) {
	defer catch(&err)
	const w = "alloc"
	checkSpecShape(r.BufferSpec, w)
	if r.Size == 0 {
		invalid(w+".size", "must be > 0")
	}
	spec := normalSpec(r.BufferSpec)
	checkSpec(spec, d, w)
	pages := r.Size/spec.PageSize + min(r.Size%spec.PageSize, 1)
	if pages > math.MaxUint32 {
		invalid(w+".size", u(pages)+" pages of "+u(spec.PageSize)+" bytes are past 32 bits")
	}
	if sh := spec.Shard; sh != nil {
		if tensor := uint64(sh.Tensor[0]) * uint64(sh.Tensor[1]); tensor < pages {
			invalid(w+".shard.tensor", "the tensor holds "+u(tensor)+" pages; the buffer has "+u(pages))
		}
	}
	if spec.Placement != PlacementL1 {
		if capacity := d.DRAM.Total(); d.DRAM.Banks != 0 && d.DRAM.BankSize != 0 {
			if capacity == 0 {
				capacity = math.MaxUint64
			}
			if r.Size > capacity {
				vfail(CodeOutOfMemory, w, "a buffer of "+u(r.Size)+" bytes is larger than the device DRAM ("+u(capacity)+" bytes)")
			}
		}
	} else if d.L1.Size > d.L1.UnreservedBase {
		have := d.L1.Size - d.L1.UnreservedBase
		if share := L1SharePerCore(r.Size, spec, d); share > have {
			vfail(CodeOutOfMemory, w, "the buffer needs "+u(share)+" bytes of L1 per core; a core has "+u(have)+" above the reserved base")
		}
	}
	return nil
}

// ValidationFailure wraps a ValidateCompile or ValidateAlloc error as the typed error of op (a *core.Error, backends.Error to users).
func ValidationFailure(op string, err error) error {
	return &core.Error{Backend: Backend, Op: op, Err: err}
}
