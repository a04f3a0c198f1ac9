package driver

// MMADims is one matrix-multiply-accumulate shape a device runs natively
// (tensor cores, Tensix matmul): M×N×K with input and accumulator types.
type MMADims struct {
	M, N, K int
	In, Acc DType
}

// DeviceKind says what sort of processor a device is.
type DeviceKind string

// The device kinds.
const (
	KindCPU         DeviceKind = "cpu"
	KindGPU         DeviceKind = "gpu"
	KindAccelerator DeviceKind = "accelerator"
	KindOther       DeviceKind = "other"
)

// DeviceInfo is what a device tells the runtime about itself, for device
// selection and for code generators that tune to the hardware.
type DeviceInfo struct {
	// Name is the hardware's own name ("NVIDIA H200", "Wormhole n300 chip 1").
	Name string `json:"name"`
	// Kind is cpu, gpu or accelerator; a CPU implementation of a GPU API
	// (PoCL, lavapipe) reports cpu.
	Kind DeviceKind `json:"kind"`
	// Compute is the device's peak compute in FLOP/s, used to rank devices
	// of one class when nothing has been measured.
	Compute uint64 `json:"compute"`
	// ComputeEstimated says Compute is a class estimate, not a figure
	// derived from the device's own clocks, units and vector widths.
	ComputeEstimated bool `json:"compute_estimated,omitempty"`
	// SoftwareImpl marks a CPU implementation of an API made for other
	// processors (PoCL's CPU device, Mesa's llvmpipe/lavapipe): selection
	// never ranks it above the native CPU backends on the same CPU.
	SoftwareImpl bool `json:"software_impl,omitempty"`
	// MaxGlobalWorkDims is the largest grid per axis. On Tenstorrent it is
	// [rows, cols] of the harvest-aware worker grid.
	MaxGlobalWorkDims []uint64 `json:"max_global_work_dims"`
	// MaxLocalThreads is the most threads in one work group.
	MaxLocalThreads uint32 `json:"max_local_threads"`
	// MaxLocalWorkDims is the largest work group per axis.
	MaxLocalWorkDims []uint32 `json:"max_local_work_dims"`
	// PreferredVectorSize is the preferred vector width in bytes.
	PreferredVectorSize uint8 `json:"preferred_vector_size"`
	// LocalMemSize is local (shared, L1) memory per work group in bytes.
	LocalMemSize uint64 `json:"local_mem_size"`
	// MaxRegisterBytes is private memory per thread in bytes.
	MaxRegisterBytes uint64 `json:"max_register_bytes"`
	// TensorCores says whether the device has matrix units.
	TensorCores bool `json:"tensor_cores"`
	// WarpSize is the SIMD group width (32 on NVIDIA, 1 on a CPU).
	WarpSize uint16 `json:"warp_size"`
	// ComputeCapability is [major, minor] on NVIDIA devices, else [0, 0].
	ComputeCapability [2]int32 `json:"compute_capability"`
	// DTypeCaps is the per-dtype operation mask, indexed by DType.
	DTypeCaps [NumDTypes]DTypeCapability `json:"dtype_caps"`
	// HasNativeExp2 says whether exp2 is one instruction.
	HasNativeExp2 bool `json:"has_native_exp2"`
	// SupportedVecLens lists the vector lengths loads, stores and math take.
	SupportedVecLens []uint8 `json:"supported_vec_lens"`
	// Emulated marks a device that a host program emulates (the Tensix
	// emulator). Auto selection never prefers it over real hardware.
	Emulated bool `json:"emulated,omitempty"`
	// Tile is the native tile shape [rows, cols] of a tile-based device.
	Tile [2]uint64 `json:"tile"`
	// TileSizes lists the supported tile shapes; empty means no tiles.
	TileSizes [][2]uint64 `json:"tile_sizes"`
	// MMALayouts lists the native matrix-multiply shapes.
	MMALayouts []MMADims `json:"mma_layouts"`
	// NumCircularBuffers is the number of hardware circular buffers per
	// core (32 on Tensix); zero elsewhere.
	NumCircularBuffers uint32 `json:"num_circular_buffers"`
	// HasOpenMP says whether the C backend's compiler supports OpenMP.
	HasOpenMP bool `json:"has_openmp"`
	// Cores is the number of processing cores (CPU cores, SMs, compute
	// units, Tensix cores) where known.
	Cores int `json:"cores,omitempty"`
	// Memory is the device memory in bytes where known.
	Memory uint64 `json:"memory,omitempty"`
	// Formats are the variant formats the device prepares, in its order of
	// preference (a CUDA device: gemm, then cuda).
	Formats []Format `json:"formats"`
	// Extra holds backend-specific facts for probe (driver version, PCI
	// address, clocks, cache sizes …).
	Extra map[string]string `json:"extra,omitempty"`
}

// Supports returns the operations d supports for dtype t.
func (d *DeviceInfo) Supports(t DType) DTypeCapability {
	if !t.Valid() {
		return CapNone
	}
	return d.DTypeCaps[t]
}
