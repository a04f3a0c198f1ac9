package tt

import (
	"reflect"

	"github.com/zyxtt/zyxtt/backends/driver"
)

// Program is a Tenstorrent program as a tt-metal host builds it: kernels
// on sets of cores, circular buffers and semaphores on sets of cores, and
// the layout of the buffers the kernels address. docs/programs.md describes
// each piece; OneGroup builds the reader/compute/writer form on every core
// of the launch grid.
//
// It is the one representation of the program from a bundle's tt.json to
// the runtime's compile request. Its numbers are expressions
// (driver.GwsDim): a program loaded from a bundle (LoadBundle) holds them
// over the bundle's vars, and binding it (BindBundle) only evaluates them;
// what a launch sends is made from the bound program and the launch's args.
type Program struct {
	Kernels    []Kernel
	CBs        []CBConfig
	Semaphores []Semaphore
	// Buffers declares the layout of buffer params: placement (DRAM or
	// L1), interleaving or sharding, page size, tile layout and storage
	// format. A buffer param with no declaration is a DRAM buffer,
	// interleaved in DefaultPageSize pages.
	Buffers []Buffer
	// Includes are files the kernels include by a relative path
	// (#include "common.h").
	Includes []Include
	// Grid is the launch grid [rows, cols] the program gives itself (a
	// bundle's tt.json grid); nil means the variant's or the manifest's.
	// Binding turns it into the variant's grid.
	Grid []driver.GwsDim
	// Require are conditions on a bundle's vars the kernels rely on:
	// binding refuses the program when one is not met.
	Require []Require

	// shorthand: loaded from tt.json's reader/compute/writer form, whose
	// fields binding names by section ("reader.runtime_args[0]").
	shorthand bool
}

// Require is a condition: Zero must evaluate to 0, else the program is
// refused with Message.
type Require struct {
	Zero    driver.GwsDim
	Message string
}

// N is the constant expression v, for the optional numbers of a program
// (page and buffer sizes, a semaphore's initial value).
func N(v uint64) *driver.GwsDim {
	d := driver.ConstDim(v)
	return &d
}

// VariantFormat is the format of Tenstorrent variants: its code is a
// *Program, and bundles keep it in tt.json (docs/programs.md).
const VariantFormat driver.Format = "tt"

func init() { driver.RegisterFormat(VariantFormat, "tt.json", reflect.TypeFor[*Program]()) }

// ProgramOf is p's Tenstorrent variant code, or nil when it has none.
func ProgramOf(p *driver.Program) *Program {
	if v := p.Variant(VariantFormat); v != nil {
		c, _ := v.Code.(*Program)
		return c
	}
	return nil
}

// DefaultPageSize is the page size of a buffer param without a
// declaration: 2 KiB, one bf16 tile.
const DefaultPageSize = 2048

// Processor is the RISC-V processor (or group) a kernel runs on.
type Processor string

// The processors of a Tensix core.
const (
	Riscv0  Processor = "riscv_0" // data movement, NOC 0 by default (tt-metal's BRISC, the reader)
	Riscv1  Processor = "riscv_1" // data movement, NOC 1 by default (NCRISC, the writer)
	Compute Processor = "compute" // the three TRISCs: unpack, math, pack
)

// Kernel is one kernel: its source, where it runs, and its arguments.
type Kernel struct {
	// Name identifies the kernel in messages ("reader", "sender").
	Name      string
	Processor Processor
	// NOC is the NOC a data-movement kernel uses; nil means the
	// processor's default.
	NOC *int
	// Cores are the cores it runs on; nil means every core of the launch
	// grid (Program.Grid or the variant's grid).
	Cores  *CoreSet
	Source string
	// Path is where the kernel file lives in the program's include tree
	// (an Include's Path), "" when it is not in it. The kernel is compiled
	// there, so its relative includes resolve from its own directory, as
	// in tt-metal's build; "" compiles it at the tree's root.
	Path    string
	Defines map[string]string
	// CompileArgs are the positional compile-time args
	// (get_compile_time_arg_val), NamedCompileArgs the named ones
	// (get_named_compile_time_arg_val).
	CompileArgs      []Arg
	NamedCompileArgs []NamedArg
	// RuntimeArgs are evaluated for every core the kernel runs on: their
	// values may use the per-core terms (core_row, core_index, split_start
	// …). CommonArgs are the same for every core.
	RuntimeArgs []Arg
	CommonArgs  []Arg
	// The compute configuration (compute kernels only): MathFidelity is
	// LoFi, HiFi2, HiFi3 or HiFi4 ("" means HiFi4). Bfp8PackPrecise is
	// tt-metal's bfp8_pack_precise: block-float outputs are packed from the
	// DST format rather than through a 6-bit-mantissa intermediate.
	// DstFullSync is tt-metal's dst_full_sync_en: math may use all of DST
	// (16 16-bit or 8 32-bit tiles) instead of half. UnpackToDestFP32 lists
	// the CBs that tt-metal's unpack_to_dest_mode marks UnpackToDestFp32:
	// their Float32 tiles reach a 32-bit DST whole, not through the source
	// registers' TF32.
	MathFidelity     string
	FP32DestAcc      bool
	MathApproxMode   bool
	Bfp8PackPrecise  bool
	DstFullSync      bool
	UnpackToDestFP32 []uint32
	// The Metal 2.0 names (docs/programs.md "Metal 2.0 bindings"): the
	// kernel is built with generated bindings, as a Metal 2.0 host builds
	// it. NamedRuntimeArgs come before RuntimeArgs on every core
	// (get_arg(args::name); RuntimeArgs are then get_vararg(i)), and
	// NamedCommonArgs before CommonArgs (get_common_vararg(i)); together
	// with NamedCompileArgs they are the kernel's args:: names. DFBs binds
	// accessor names (dfb::name) to CBIndex names, SemaphoreBindings
	// (sem::name) to Semaphore names, Tensors (ta::name, a tensor accessor)
	// to buffer param names. Metal2 builds the kernel with the bindings even
	// when it sets none of these.
	NamedRuntimeArgs  []NamedArg
	NamedCommonArgs   []NamedArg
	DFBs              map[string]string
	SemaphoreBindings map[string]string
	Tensors           map[string]string
	Metal2            bool
}

// namedArgLists are k's named arg lists with their tt.json field names and
// whether their values may read the core.
func (k *Kernel) namedArgLists() []namedArgList {
	return []namedArgList{{"named_compile_args", &k.NamedCompileArgs, false},
		{"named_runtime_args", &k.NamedRuntimeArgs, true},
		{"named_common_args", &k.NamedCommonArgs, false}}
}

type namedArgList struct {
	field   string
	list    *[]NamedArg
	perCore bool
}

// NamedArg is one named arg.
type NamedArg struct {
	Name string
	Arg  Arg
}

// CoreSet is a set of logical cores: rectangles, or a run of the cores of
// one rectangle in order (the two core groups of split_work_to_cores).
type CoreSet struct {
	Ranges []CoreRange
	Slice  *CoreSlice
}

// CoreRange is the inclusive rectangle of logical cores from Start to End.
type CoreRange struct {
	Start, End Coord
}

// Coord is a logical core [row, col]; each is an expression over
// Variable params (and the per-core terms, in a core argument).
type Coord struct {
	Row, Col driver.GwsDim
}

// CoreSlice is the cores From ≤ k < To of rectangle Of, counted down the
// columns (split_work_to_cores' default) or, with RowWise, along the rows.
// A slice may be empty (From == To: split_work_to_cores' second group when
// the work divides evenly); a kernel, CB config or semaphore on an empty
// slice is left out of that launch.
type CoreSlice struct {
	Of       CoreRange
	From, To driver.GwsDim
	RowWise  bool
}

// CoreAt is the one-core range at [row, col].
func CoreAt(row, col uint64) CoreRange {
	c := Coord{Row: driver.ConstDim(row), Col: driver.ConstDim(col)}
	return CoreRange{Start: c, End: c}
}

// Rect is the range of rows r0..r1 and columns c0..c1, inclusive.
func Rect(r0, c0, r1, c1 uint64) CoreRange {
	return CoreRange{
		Start: Coord{Row: driver.ConstDim(r0), Col: driver.ConstDim(c0)},
		End:   Coord{Row: driver.ConstDim(r1), Col: driver.ConstDim(c1)},
	}
}

// CBConfig is one circular-buffer allocation of TotalBytes in the L1 of
// every core of Cores, shared by its indices (tt-metal's
// CircularBufferConfig): each index holds TotalBytes / PageBytes pages.
type CBConfig struct {
	// Cores are the cores it is made on; nil means every core any kernel
	// runs on.
	Cores *CoreSet
	// TotalBytes is the allocation's size, or Pages its size in pages of
	// its indices' one page size (binding sets TotalBytes). A CB on a
	// sharded buffer with neither takes the shard's size.
	TotalBytes, Pages *driver.GwsDim
	Indices           []CBIndex
	// Buffer, when set, is the param ordinal of an L1 buffer the CB sits
	// on (tt-metal's globally allocated address).
	Buffer *int
}

// CBIndex is one index of a circular-buffer allocation.
type CBIndex struct {
	Index int // 0–31 (the runtime checks)
	// Format is Float32, Float16_b, Float16, Bfp8_b, Bfp4_b, Int32,
	// UInt32, UInt16, UInt8 or Int8.
	Format string
	// PageBytes is its page size; nil means one tile of Format (binding
	// sets it).
	PageBytes *driver.GwsDim
	// TileRows and TileCols are the tile shape of its pages; zero means
	// 32×32 (tiny tiles have 1, 2, 4, 8 or 16 rows).
	TileRows, TileCols uint32
	// Name is the dataflow buffer's name, which kernels' DFBs bind
	// (optional).
	Name string
}

// CB is the common one-index circular buffer of pages pages.
func CB(index int, format string, pageBytes, pages uint64) CBConfig {
	return CBConfig{TotalBytes: N(pageBytes * pages), Indices: []CBIndex{{Index: index, Format: format, PageBytes: N(pageBytes)}}}
}

// Semaphore is one semaphore on every core of Cores (nil: every core any
// kernel runs on), holding Initial at the start of every run. Its id, as
// tt-metal's CreateSemaphore returns it, is the smallest id free on every
// one of its cores, in declaration order; a ArgSemaphore arg gives it to
// a kernel.
type Semaphore struct {
	// Name is what a bundle's args and kernels' SemaphoreBindings call it
	// (optional).
	Name    string
	Cores   *CoreSet
	Initial *driver.GwsDim // nil: 0
}

// Buffer declares the layout of buffer param Param.
type Buffer struct {
	Param int
	// Placement is "dram" (the default) or "l1".
	Placement string
	// Layout is "interleaved" (the default), "height_sharded",
	// "width_sharded" or "block_sharded".
	Layout string
	// PageSize is the page in bytes: any size (4-byte pages, row-major
	// sticks, the whole buffer as one page). Nil means DefaultPageSize,
	// one tile of Format with Tile, or a shard row for a row-major sharded
	// buffer from a bundle (binding sets it).
	PageSize *driver.GwsDim
	// Shard is the shard spec of a sharded layout, nil otherwise.
	Shard *Shard
	// Tile lays the data out in 32×32 tiles of four 16×16 faces, as
	// tt-metal's tilize does: the driver tilizes on upload and untilizes
	// on download, so host data (and .npy files, and references) stay
	// row-major. Rows and Cols are the matrix the buffer holds (the last
	// two dims of the param's shape; earlier dims are batches).
	Tile       bool
	Rows, Cols uint64
	// Format is how the device stores the elements when it differs from
	// the param's dtype: Bfp8_b or Bfp4_b (block floats, with Tile) for an
	// f32 or bf16 param; the driver converts on upload and download.
	Format string
}

// Shard is a shard spec in pages: the buffer is a Tensor[0]×Tensor[1]
// grid of pages cut into Shape[0]×Shape[1] shards, shard k on the k-th core
// of Cores in row-major or column-major ("row_major", "col_major") order.
// A bundle gives the shard's shape in elements (Elements), which binding
// turns into Shape and Tensor in pages.
type Shard struct {
	Cores       CoreSet
	Shape       [2]uint32
	Tensor      [2]uint32
	Elements    *[2]driver.GwsDim
	Orientation string
}

// Include is a file kernels may include: Path is relative (no "..").
type Include struct {
	Path   string
	Source string
}

// OneGroup is the reader/compute/writer form: a reader on RISCV_0, the
// compute kernel and a writer on RISCV_1 on every core of the launch grid,
// joined by the circular buffers cbs.
func OneGroup(reader, compute, writer Kernel, cbs ...CBConfig) *Program {
	reader.Processor, compute.Processor, writer.Processor = Riscv0, Compute, Riscv1
	for _, k := range []*Kernel{&reader, &compute, &writer} {
		k.Cores = nil
	}
	if reader.Name == "" {
		reader.Name = "reader"
	}
	if compute.Name == "" {
		compute.Name = "compute"
	}
	if writer.Name == "" {
		writer.Name = "writer"
	}
	return &Program{Kernels: []Kernel{reader, compute, writer}, CBs: cbs}
}

// ArgKind says where a kernel argument's value comes from.
type ArgKind string

// The argument sources.
const (
	ArgParam      ArgKind = "param"        // the value of a Variable param
	ArgBufferAddr ArgKind = "buffer_addr"  // the device address of a buffer param
	ArgBufferSize ArgKind = "buffer_size"  // its byte size on the device
	ArgPages      ArgKind = "buffer_pages" // its page count
	ArgPageSize   ArgKind = "page_size"    // its page size
	ArgAccessor   ArgKind = "accessor"     // the tensor-accessor args of its declared layout (compile args)
	ArgBankID     ArgKind = "bank_id"      // the bank that holds page Page of a buffer param
	ArgBankNocX   ArgKind = "bank_noc_x"   // that bank's NOC x
	ArgBankNocY   ArgKind = "bank_noc_y"   // that bank's NOC y
	ArgCoreNocX   ArgKind = "core_noc_x"   // the NOC x of logical core Core (worker_core_from_logical_core; the driver looks it up in the chip's NOC tables)
	ArgCoreNocY   ArgKind = "core_noc_y"   // the NOC y of logical core Core
	ArgSemaphore  ArgKind = "semaphore"    // the id of semaphore Semaphore (an index into Program.Semaphores)
	ArgConst      ArgKind = "const"        // Value, an expression (per-core terms allowed in runtime args)
	ArgCoreRow    ArgKind = "core_row"     // this core's row (shorthand for const core_row)
	ArgCoreCol    ArgKind = "core_col"     // this core's column
	ArgCoreIndex  ArgKind = "core_index"   // this core's index among the kernel's cores
	ArgNumCores   ArgKind = "num_cores"    // the number of cores the kernel runs on
)

// ArgSemaphoreAddr is the L1 address of semaphore Semaphore on the core,
// as tt-metal's older CreateSemaphore returned it to hosts that pass it to
// kernels as an arg (emulator only: the metal layer refuses it). In
// runtime and common args it is the core's own pointer, which a kernel may
// dereference; in compile args the L1 offset, which the semaphore calls
// accept.
const ArgSemaphoreAddr ArgKind = "semaphore_addr"

// Arg is one entry of an argument layout.
type Arg struct {
	Kind ArgKind
	// Param is the param ordinal of the param and buffer kinds.
	Param int
	// Value is a const entry's value: an expression over Variable params
	// and, in runtime args, the per-core terms. It must fit 32 bits.
	Value driver.GwsDim
	// Page is the page of a bank kind (zero: page 0).
	Page driver.GwsDim
	// Core is the logical core of a core_noc kind.
	Core Coord
	// Semaphore is the index of a semaphore or semaphore_addr kind's
	// semaphore.
	Semaphore int
}

// Const is a const arg of value v.
func Const(v uint64) Arg { return Arg{Kind: ArgConst, Value: driver.ConstDim(v)} }
