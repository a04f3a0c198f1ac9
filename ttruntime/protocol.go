package ttruntime

import (
	"encoding/base64"
	"unicode/utf8"
)

// ProtocolVersion is the tt-runtime protocol version this driver speaks
// (docs/protocol.md).
const ProtocolVersion = 1

// MaxLineBytes is the longest protocol line either side accepts.
const MaxLineBytes = 64 << 20

// DefaultPageSize is the DRAM interleaving unit the driver asks for.
const DefaultPageSize = 2048

// The commands of protocol v1.
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

// L1 describes one core's local memory.
type L1 struct {
	Size           uint64 `json:"size"`
	UnreservedBase uint64 `json:"unreserved_base"`
}

// Usable is the L1 bytes kernels may give to circular buffers.
func (l L1) Usable() uint64 {
	if l.UnreservedBase >= l.Size {
		return 0
	}
	return l.Size - l.UnreservedBase
}

// InitReply is what the runtime says it is.
type InitReply struct {
	Protocol int    `json:"protocol"`
	Runtime  string `json:"runtime"`
	Version  string `json:"version"`
	Arch     string `json:"arch"`
	Board    string `json:"board"`
	Chip     int    `json:"chip"`
	Grid     Grid   `json:"grid"`
	DRAM     DRAM   `json:"dram"`
	L1       L1     `json:"l1"`
}

// SegmentRequest names a shm segment (map, unmap).
type SegmentRequest struct {
	Segment string `json:"segment"`
}

// AllocRequest asks for a device buffer.
type AllocRequest struct {
	Size     uint64 `json:"size"`
	PageSize uint64 `json:"page_size,omitempty"`
}

// AllocReply names the new buffer.
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

// ParamDesc is one program parameter as the runtime sees it.
type ParamDesc struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"` // global, global_mut, variable
	DType string `json:"dtype"`
}

// LayoutEntry is one kernel argument word (or, for accessor, several).
// Param is set for the param and buffer kinds, Value for const (always,
// even when 0: the runtime requires it).
type LayoutEntry struct {
	Kind  string  `json:"kind"`
	Param *int    `json:"param,omitempty"`
	Value *uint32 `json:"value,omitempty"`
}

// Section is one of the three kernels of a program.
type Section struct {
	Source      *string           `json:"source,omitempty"`
	SourceB64   string            `json:"source_b64,omitempty"`
	Defines     map[string]string `json:"defines,omitempty"`
	CompileArgs []LayoutEntry     `json:"compile_args"`
	RuntimeArgs []LayoutEntry     `json:"runtime_args"`
	CommonArgs  []LayoutEntry     `json:"common_args"`
}

// SetSource stores src as a JSON string when it is valid UTF-8 and as base64
// otherwise, so any byte survives the trip.
func (s *Section) SetSource(src string) {
	if utf8.ValidString(src) {
		s.Source, s.SourceB64 = &src, ""
		return
	}
	s.Source, s.SourceB64 = nil, base64.StdEncoding.EncodeToString([]byte(src))
}

// Text returns the section's source from whichever field carries it.
func (s *Section) Text() (string, error) {
	if s.SourceB64 != "" {
		b, err := base64.StdEncoding.DecodeString(s.SourceB64)
		return string(b), err
	}
	if s.Source != nil {
		return *s.Source, nil
	}
	return "", nil
}

// CBDesc configures one circular buffer.
type CBDesc struct {
	Index     uint8  `json:"index"`
	Format    string `json:"format"`
	PageBytes uint32 `json:"page_bytes"`
	Pages     uint32 `json:"pages"`
}

// ComputeConfig is the compute kernel's math configuration.
type ComputeConfig struct {
	MathFidelity   string `json:"math_fidelity"`
	FP32DestAcc    bool   `json:"fp32_dest_acc"`
	MathApproxMode bool   `json:"math_approx_mode"`
}

// CompileRequest registers and builds a three-section program.
type CompileRequest struct {
	Name          string        `json:"name"`
	Params        []ParamDesc   `json:"params"`
	Reader        Section       `json:"reader"`
	Compute       Section       `json:"compute"`
	Writer        Section       `json:"writer"`
	CBs           []CBDesc      `json:"cbs"`
	ComputeConfig ComputeConfig `json:"compute_config"`
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

// RunRequest runs a compiled program on the cores r < Grid[0], c < Grid[1].
type RunRequest struct {
	Program uint64    `json:"program"`
	Grid    [2]uint32 `json:"grid"`
	Args    []RunArg  `json:"args"`
	Timed   bool      `json:"timed,omitempty"`
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
