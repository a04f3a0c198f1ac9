package backends

// TTVariant is a Tenstorrent program: three kernels per core (reader on
// RISCV_0, compute, writer on RISCV_1) joined by circular buffers. The
// program's Grid is the core grid [rows, cols]. docs/programs.md describes
// the argument layouts.
type TTVariant struct {
	Reader  TTKernel
	Compute TTKernel
	Writer  TTKernel
	CBs     []TTCircularBuffer
	// MathFidelity is LoFi, HiFi2, HiFi3 or HiFi4.
	MathFidelity   string
	FP32DestAcc    bool
	MathApproxMode bool
}

// TTKernel is one section's source and argument layouts.
type TTKernel struct {
	Source      string
	Defines     map[string]string
	CompileArgs []TTArg
	RuntimeArgs []TTArg
	CommonArgs  []TTArg
}

// TTCircularBuffer configures one circular buffer on every core.
type TTCircularBuffer struct {
	Index     uint8
	Format    string // Float32, Float16_b, Float16, Int32, UInt32, UInt16, UInt8
	PageBytes uint32
	Pages     uint32
}

// TTArgKind says where a kernel argument's value comes from.
type TTArgKind string

// The argument sources.
const (
	TTArgParam      TTArgKind = "param"       // the value of a Variable param
	TTArgBufferAddr TTArgKind = "buffer_addr" // the device address of a buffer param
	TTArgBufferSize TTArgKind = "buffer_size" // the byte size of a buffer param
	TTArgPages      TTArgKind = "buffer_pages"
	TTArgPageSize   TTArgKind = "page_size"
	TTArgAccessor   TTArgKind = "accessor"   // the tensor-accessor args of a buffer param
	TTArgCoreRow    TTArgKind = "core_row"   // this core's row
	TTArgCoreCol    TTArgKind = "core_col"   // this core's column
	TTArgCoreIndex  TTArgKind = "core_index" // row*cols+col over the launch grid
	TTArgNumCores   TTArgKind = "num_cores"  // cores in the launch grid
	TTArgConst      TTArgKind = "const"      // Value
)

// TTArg is one entry of an argument layout.
type TTArg struct {
	Kind  TTArgKind
	Param int
	Value uint32
}
