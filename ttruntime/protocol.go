package ttruntime

// The typed requests and replies of protocol v2 (docs/protocol.md). Field
// names and shapes are the C++ server's (cpp/src/request.cpp): every field
// the server requires is always sent, optional ones are omitted when they
// hold their default, and nothing the server does not know is ever sent
// (an unknown field is bad_request there).

import (
	"encoding/base64"
	"unicode/utf8"
)

// ProtocolVersion is the tt-runtime protocol version this driver speaks
// (docs/protocol.md).
const ProtocolVersion = 2

// MaxLineBytes is the longest protocol line either side accepts.
const MaxLineBytes = 64 << 20

// A request's `after` names at most MaxAfter earlier requests, each at
// most AfterWindow ids before its own (docs/protocol.md, "Pipelining and
// order").
const (
	MaxAfter    = 64
	AfterWindow = 1024
)

// DefaultPageSize is the page size of a buffer whose spec names none: the
// DRAM interleaving unit of a plain alloc.
const DefaultPageSize = 2048

// The commands of protocol v2.
const (
	CmdInit    = "init"
	CmdPing    = "ping"
	CmdMap     = "map"
	CmdUnmap   = "unmap"
	CmdAlloc   = "alloc"
	CmdFree    = "free"
	CmdWrite   = "write"
	CmdRead    = "read"
	CmdCompile = "compile"
	CmdRun     = "run"
	CmdRelease = "release"
	CmdExit    = "exit"
)

// InitRequest is the handshake.
type InitRequest struct {
	Protocol int    `json:"protocol"`
	Layer    string `json:"layer"`
	Chip     int    `json:"chip"`
	Board    string `json:"board,omitempty"`
	CacheDir string `json:"cache_dir,omitempty"`
	// DPrint asks the runtime to print kernel DPRINT output on its stderr,
	// one line each, starting "dprint: " (the client forwards those lines
	// to Config.KernelOutput).
	DPrint bool `json:"dprint,omitempty"`
}

// Grid is the harvest-aware worker grid a runtime reports.
type Grid struct {
	Rows          uint32   `json:"rows"`
	Cols          uint32   `json:"cols"`
	HarvestedRows []uint32 `json:"harvested_rows,omitempty"`
	HarvestedCols []uint32 `json:"harvested_cols,omitempty"`
	HarvestMask   uint64   `json:"harvest_mask"`
}

// DRAM describes the chip's device memory.
type DRAM struct {
	Banks     uint32 `json:"banks"`
	BankSize  uint64 `json:"bank_size"`
	Alignment uint64 `json:"alignment"`
}

// Total is banks × bank size, or 0 when that overflows.
func (d DRAM) Total() uint64 {
	t := uint64(d.Banks) * d.BankSize
	if d.Banks != 0 && t/uint64(d.Banks) != d.BankSize {
		return 0
	}
	return t
}

// L1 describes one core's local memory and the L1 banks of L1-interleaved
// buffers.
type L1 struct {
	Size           uint64 `json:"size"`
	UnreservedBase uint64 `json:"unreserved_base"`
	// Alignment is the L1 allocation alignment (16 on Wormhole and
	// Blackhole).
	Alignment uint64 `json:"alignment"`
	// Banks is the number of L1 banks (one per worker core); BankCores
	// holds the [row, col] of the worker core of each bank.
	Banks     uint32      `json:"banks"`
	BankCores []CoreCoord `json:"bank_cores"`
}

// Usable is the L1 bytes kernels may give to circular buffers.
func (l L1) Usable() uint64 {
	if l.UnreservedBase >= l.Size {
		return 0
	}
	return l.Size - l.UnreservedBase
}

// NOC holds the coordinate tables a host needs to put NOC coordinates into
// kernel args (tt-metal's worker_core_from_logical_core and the DRAM
// banks' nodes).
type NOC struct {
	WorkerX   []uint32    `json:"worker_x"`   // by logical column
	WorkerY   []uint32    `json:"worker_y"`   // by logical row
	DRAMBanks [][2]uint32 `json:"dram_banks"` // [x, y] by DRAM bank
}

// InitReply is what the runtime says it is.
type InitReply struct {
	Protocol   int    `json:"protocol"`
	Runtime    string `json:"runtime"`
	Version    string `json:"version"`
	Arch       string `json:"arch"`
	Board      string `json:"board"`
	Chip       int    `json:"chip"`
	Grid       Grid   `json:"grid"`
	DRAM       DRAM   `json:"dram"`
	L1         L1     `json:"l1"`
	NOC        NOC    `json:"noc"`
	Semaphores uint32 `json:"semaphores"`
}

// CoreCoord is a logical worker core [row, col].
type CoreCoord [2]uint32

// CoreRange is the inclusive rectangle [r0, c0, r1, c1] of logical cores.
type CoreRange [4]uint32

// Rect is the range of rows r0..r1 and columns c0..c1.
func Rect(r0, c0, r1, c1 uint32) CoreRange { return CoreRange{r0, c0, r1, c1} }

// CoreRangeSet is a list of core ranges that must not overlap. A nil set
// is sent as null, which the runtime reads as a missing field.
type CoreRangeSet []CoreRange

// Cores lists the set's cores range by range, row-major within a range,
// or column-major with colMajor.
func (s CoreRangeSet) Cores(colMajor bool) []CoreCoord {
	var out []CoreCoord
	for _, r := range s {
		if r[0] > r[2] || r[1] > r[3] {
			continue
		}
		if colMajor {
			for c := r[1]; ; c++ {
				for w := r[0]; ; w++ {
					out = append(out, CoreCoord{w, c})
					if w == r[2] {
						break
					}
				}
				if c == r[3] {
					break
				}
			}
			continue
		}
		for w := r[0]; ; w++ {
			for c := r[1]; ; c++ {
				out = append(out, CoreCoord{w, c})
				if c == r[3] {
					break
				}
			}
			if w == r[2] {
				break
			}
		}
	}
	return out
}

// Size is the number of cores in the set (ranges counted as given).
func (s CoreRangeSet) Size() uint64 {
	var n uint64
	for _, r := range s {
		if r[0] <= r[2] && r[1] <= r[3] {
			n += uint64(r[2]-r[0]+1) * uint64(r[3]-r[1]+1)
		}
	}
	return n
}

// Contains reports whether core c is in the set.
func (s CoreRangeSet) Contains(c CoreCoord) bool {
	for _, r := range s {
		if c[0] >= r[0] && c[0] <= r[2] && c[1] >= r[1] && c[1] <= r[3] {
			return true
		}
	}
	return false
}

// Placements, layouts and orientations of buffer specs.
const (
	PlacementDRAM = "dram"
	PlacementL1   = "l1"

	LayoutInterleaved   = "interleaved"
	LayoutHeightSharded = "height_sharded"
	LayoutWidthSharded  = "width_sharded"
	LayoutBlockSharded  = "block_sharded"

	OrientationRowMajor = "row_major"
	OrientationColMajor = "col_major"
)

// ShardSpec is a shard spec in pages: the buffer is a Tensor[0]×Tensor[1]
// grid of pages cut into Shape[0]×Shape[1] shards, shard k held by the k-th
// core of Cores (row-major or column-major within each range). For a DRAM
// buffer the cores are [0, bank].
type ShardSpec struct {
	Cores       CoreRangeSet `json:"cores"`
	Shape       [2]uint32    `json:"shape"`
	Tensor      [2]uint32    `json:"tensor"`
	Orientation string       `json:"orientation,omitempty"` // "" is row_major
}

// BufferSpec is how a buffer is laid out: its placement, layout and page
// size. Empty fields are the defaults (dram, interleaved, 2048-byte pages).
type BufferSpec struct {
	PageSize  uint64     `json:"page_size,omitempty"`
	Placement string     `json:"placement,omitempty"`
	Layout    string     `json:"layout,omitempty"`
	Shard     *ShardSpec `json:"shard,omitempty"`
}

// Normal is the spec with its defaults filled in, so that two specs the
// runtime takes for the same compare equal.
func (s BufferSpec) Normal() BufferSpec {
	if s.PageSize == 0 {
		s.PageSize = DefaultPageSize
	}
	if s.Placement == "" {
		s.Placement = PlacementDRAM
	}
	if s.Layout == "" {
		s.Layout = LayoutInterleaved
	}
	if s.Shard != nil {
		sh := *s.Shard
		if sh.Orientation == "" {
			sh.Orientation = OrientationRowMajor
		}
		sh.Cores = append(CoreRangeSet(nil), sh.Cores...)
		s.Shard = &sh
	}
	return s
}

// Equal reports whether two specs describe the same layout, as the runtime
// compares a run's buffer with its declaration.
func (s BufferSpec) Equal(o BufferSpec) bool {
	a, b := s.Normal(), o.Normal()
	if a.PageSize != b.PageSize || a.Placement != b.Placement || a.Layout != b.Layout || (a.Shard == nil) != (b.Shard == nil) {
		return false
	}
	if a.Shard == nil {
		return true
	}
	x, y := a.Shard, b.Shard
	if x.Shape != y.Shape || x.Tensor != y.Tensor || x.Orientation != y.Orientation || len(x.Cores) != len(y.Cores) {
		return false
	}
	for i := range x.Cores {
		if x.Cores[i] != y.Cores[i] {
			return false
		}
	}
	return true
}

// SegmentRequest names a shm segment (map, unmap).
type SegmentRequest struct {
	Segment string `json:"segment"`
}

// AllocRequest asks for a device buffer of Size bytes laid out as the
// spec says (a plain one: DRAM, interleaved in 2 KiB pages).
type AllocRequest struct {
	Size uint64 `json:"size"`
	BufferSpec
}

// AllocReply names the new buffer. Address is the DRAM address, or the L1
// address of an L1 buffer (the same on every core that holds part of it).
type AllocReply struct {
	Buffer  uint64 `json:"buffer"`
	Address uint64 `json:"address"`
}

// BufferRequest names a buffer (free).
type BufferRequest struct {
	Buffer uint64 `json:"buffer"`
}

// TransferRequest moves bytes between a shm segment and a device buffer
// (write: segment to buffer; read: buffer to segment).
type TransferRequest struct {
	Buffer        uint64 `json:"buffer"`
	Offset        uint64 `json:"offset"`
	Segment       string `json:"segment"`
	SegmentOffset uint64 `json:"segment_offset"`
	Length        uint64 `json:"length"`
}

// Param kinds.
const (
	ParamGlobal    = "global"
	ParamGlobalMut = "global_mut"
	ParamVariable  = "variable"
)

// ParamDesc is one program parameter as the runtime sees it.
type ParamDesc struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"` // global, global_mut, variable
	DType string `json:"dtype"`
}

// IsBuffer reports whether the param is a buffer param.
func (p ParamDesc) IsBuffer() bool { return p.Kind != ParamVariable }

// Arg entry kinds: what the runtime resolves (const is the driver's).
const (
	ArgConst       = "const"
	ArgParam       = "param"
	ArgBufferAddr  = "buffer_addr"
	ArgBufferSize  = "buffer_size"
	ArgBufferPages = "buffer_pages"
	ArgPageSize    = "page_size"
	ArgBankID      = "bank_id"
	ArgBankNocX    = "bank_noc_x"
	ArgBankNocY    = "bank_noc_y"
	ArgCoreNocX    = "core_noc_x"
	ArgCoreNocY    = "core_noc_y"
	ArgAccessor    = "accessor"
	// ArgSemaphoreAddr is the L1 address of semaphore id Semaphore on the
	// core (the emulator's: the metal layer answers unsupported).
	ArgSemaphoreAddr = "semaphore_addr"
)

// ArgEntry is one kernel argument word (accessor: several). Exactly the
// fields its kind takes are set: Value for const; Param for param and the
// buffer kinds; Param and Page for the bank kinds; Core for core_noc_*;
// Semaphore for semaphore_addr.
type ArgEntry struct {
	Kind      string     `json:"kind"`
	Value     *uint32    `json:"value,omitempty"`
	Param     *uint32    `json:"param,omitempty"`
	Page      *uint32    `json:"page,omitempty"`
	Core      *CoreCoord `json:"core,omitempty"`
	Semaphore *uint32    `json:"semaphore,omitempty"`
}

// ConstEntry is a const entry of value v.
func ConstEntry(v uint32) ArgEntry { return ArgEntry{Kind: ArgConst, Value: &v} }

// ParamEntry is an entry of kind (param, buffer_addr, buffer_size,
// buffer_pages, page_size, accessor) for param ordinal p.
func ParamEntry(kind string, p uint32) ArgEntry { return ArgEntry{Kind: kind, Param: &p} }

// BankEntry is a bank_id, bank_noc_x or bank_noc_y entry for page page of
// buffer param p.
func BankEntry(kind string, p, page uint32) ArgEntry {
	return ArgEntry{Kind: kind, Param: &p, Page: &page}
}

// CoreNocEntry is a core_noc_x or core_noc_y entry for logical core c.
func CoreNocEntry(kind string, c CoreCoord) ArgEntry { return ArgEntry{Kind: kind, Core: &c} }

// SemaphoreAddrEntry is a semaphore_addr entry for semaphore id.
func SemaphoreAddrEntry(id uint32) ArgEntry { return ArgEntry{Kind: ArgSemaphoreAddr, Semaphore: &id} }

// Processors.
const (
	ProcRiscv0  = "riscv_0"
	ProcRiscv1  = "riscv_1"
	ProcCompute = "compute"
)

// ComputeConfig is a compute kernel's math configuration; an empty
// MathFidelity is HiFi4.
type ComputeConfig struct {
	MathFidelity   string `json:"math_fidelity,omitempty"`
	FP32DestAcc    bool   `json:"fp32_dest_acc,omitempty"`
	MathApproxMode bool   `json:"math_approx_mode,omitempty"`
}

// CoreArgs are the runtime args of the cores of Cores.
type CoreArgs struct {
	Cores CoreRangeSet `json:"cores"`
	Args  []ArgEntry   `json:"args"`
}

// Kernel is one kernel of a program on a core range set.
type Kernel struct {
	Name      string `json:"name,omitempty"`
	Processor string `json:"processor"`
	// NOC is the NOC of a data-movement kernel; nil is the processor's
	// default (riscv_0: 0, riscv_1: 1). Compute kernels take none.
	NOC       *uint32           `json:"noc,omitempty"`
	Cores     CoreRangeSet      `json:"cores"`
	Source    *string           `json:"source,omitempty"`
	SourceB64 string            `json:"source_b64,omitempty"`
	Defines   map[string]string `json:"defines,omitempty"`
	// CompileArgs are positional; NamedCompileArgs are read with
	// get_named_compile_time_arg_val (names are C identifiers).
	CompileArgs      []ArgEntry          `json:"compile_args,omitempty"`
	NamedCompileArgs map[string]ArgEntry `json:"named_compile_args,omitempty"`
	CommonArgs       []ArgEntry          `json:"common_args,omitempty"`
	RuntimeArgs      []CoreArgs          `json:"runtime_args,omitempty"`
	// ComputeConfig is for compute kernels only.
	ComputeConfig *ComputeConfig `json:"compute_config,omitempty"`
}

// SetSource stores src as a JSON string when it is valid UTF-8 and as base64
// otherwise, so any byte survives the trip.
func (k *Kernel) SetSource(src string) { k.Source, k.SourceB64 = encodeSource(src) }

// Text returns the kernel's source from whichever field carries it.
func (k *Kernel) Text() (string, error) { return decodeSource(k.Source, k.SourceB64) }

// IncludeFile is a file kernels may include by its relative path.
type IncludeFile struct {
	Path      string  `json:"path"`
	Source    *string `json:"source,omitempty"`
	SourceB64 string  `json:"source_b64,omitempty"`
}

// SetSource stores the file's text (base64 when it is not UTF-8).
func (f *IncludeFile) SetSource(src string) { f.Source, f.SourceB64 = encodeSource(src) }

func encodeSource(src string) (*string, string) {
	if utf8.ValidString(src) {
		return &src, ""
	}
	return nil, base64.StdEncoding.EncodeToString([]byte(src))
}

func decodeSource(s *string, b64 string) (string, error) {
	if b64 != "" {
		b, err := base64.StdEncoding.DecodeString(b64)
		return string(b), err
	}
	if s != nil {
		return *s, nil
	}
	return "", nil
}

// Data formats of circular-buffer indices, with the bytes of a 32×32 tile.
var FormatTileBytes = map[string]uint32{
	"Float32":   4096,
	"Float16_b": 2048,
	"Float16":   2048,
	"Bfp8_b":    1088,
	"Bfp4_b":    576,
	"Int32":     4096,
	"UInt32":    4096,
	"UInt16":    2048,
	"UInt8":     1024,
	"Int8":      1024,
}

// CBIndex is one index of a circular-buffer config; Tile nil is 32×32.
type CBIndex struct {
	Index     uint32     `json:"index"`
	Format    string     `json:"format"`
	PageBytes uint32     `json:"page_bytes"`
	Tile      *[2]uint32 `json:"tile,omitempty"`
}

// CBConfig is one circular-buffer allocation of TotalBytes on every core of
// Cores, shared by its indices; Buffer places it on an L1 buffer param.
type CBConfig struct {
	Cores      CoreRangeSet `json:"cores"`
	TotalBytes uint32       `json:"total_bytes"`
	Indices    []CBIndex    `json:"indices"`
	Buffer     *uint32      `json:"buffer,omitempty"`
}

// Semaphore is semaphore ID on every core of Cores, Initial at the start of
// every run.
type Semaphore struct {
	Cores   CoreRangeSet `json:"cores"`
	ID      uint32       `json:"id"`
	Initial uint32       `json:"initial,omitempty"`
}

// BufferDecl declares the layout a program was built for, for buffer param
// Param.
type BufferDecl struct {
	Param uint32 `json:"param"`
	BufferSpec
}

// CompileRequest registers and builds a program: kernels on core range
// sets, their circular buffers and semaphores, and the layouts of the
// buffers they address. Kernels must be non-nil (nil is sent as null, a
// missing field).
type CompileRequest struct {
	Name         string        `json:"name"`
	Params       []ParamDesc   `json:"params"`
	Buffers      []BufferDecl  `json:"buffers,omitempty"`
	IncludeFiles []IncludeFile `json:"include_files,omitempty"`
	Kernels      []Kernel      `json:"kernels"`
	CBs          []CBConfig    `json:"cbs,omitempty"`
	Semaphores   []Semaphore   `json:"semaphores,omitempty"`
}

// ProgramReply names a compiled program.
type ProgramReply struct {
	Program uint64 `json:"program"`
}

// ProgramRequest names a program (release).
type ProgramRequest struct {
	Program uint64 `json:"program"`
}

// RunArg is one run argument: a buffer id for a buffer param, or a
// variable's little-endian bits.
type RunArg struct {
	Buffer *uint64 `json:"buffer,omitempty"`
	Value  *uint64 `json:"value,omitempty"`
}

// BufferArg is a buffer run argument.
func BufferArg(id uint64) RunArg { return RunArg{Buffer: &id} }

// ValueArg is a variable run argument.
func ValueArg(bits uint64) RunArg { return RunArg{Value: &bits} }

// RunRequest runs a compiled program: every kernel on its cores.
type RunRequest struct {
	Program uint64   `json:"program"`
	Args    []RunArg `json:"args"`
	Timed   bool     `json:"timed,omitempty"`
}

// RunReply carries the device-side run time when the run was timed.
type RunReply struct {
	ElapsedNS uint64 `json:"elapsed_ns"`
}

// ErrorBody is the error object of a failed reply.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ReplyHeader is the part of every reply the driver reads first.
type ReplyHeader struct {
	ID    uint64     `json:"id"`
	OK    *bool      `json:"ok"`
	Error *ErrorBody `json:"error"`
}
