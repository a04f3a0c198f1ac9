package cuda

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/diskcache"
)

// Device is one CUDA GPU. It uses the device's primary context (the one the
// CUDA runtime and other libraries share), so buffers interoperate with
// code built on the runtime API. Driver calls run on a locked OS thread with
// the context made current first; every method is safe for concurrent use.
type Device struct {
	drv     *driverAPI
	cfg     Config
	cache   *diskcache.Dir // the module cache; nil: none
	ordinal int
	dev     int32   // CUdevice
	ctx     uintptr // the retained primary context
	stream  uintptr // the compute stream (streams[streamCompute]): launches, cuBLAS, device copies
	// streams are the device's non-blocking streams (queue.go): compute,
	// host to device, device to host.
	streams [numStreams]uintptr
	name    string
	info    *driver.DeviceInfo
	cc      [2]int32
	limits  limits
	pool    *Pool
	// numaNode is the GPU's NUMA node on a host with several, else -1.
	numaNode int

	lost   atomic.Pointer[driver.Error]
	closed atomic.Bool

	stagingOnce sync.Once
	staging     *stager
	stagingErr  error

	blasMu   sync.Mutex
	blas     *blasHandle
	blasErr  error
	blasOnce sync.Once

	// Submission (queue.go). subMu orders everything put on the streams
	// and guards the gate and the buffers' last-access events.
	subMu     sync.Mutex
	gate      eventFIFO // submissions waiting on the host, in order
	working   bool      // the gate's worker runs
	workers   sync.WaitGroup
	allEvents []uintptr // every CUDA event of the pool, destroyed at Close; under fifoMu
	// unrecorded is, per stream, the work put on it since its last CUDA
	// event was recorded (queue.go: recordTailLocked).
	unrecorded [numStreams][]*event

	// seqs numbers each stream's work (event.seq), under subMu; tailSeq
	// is the newest, readable without it.
	seqs    [numStreams]uint64
	tailSeq [numStreams]atomic.Uint64
	// aloneCU is the CUDA event a launch that runs alone waits for
	// (runAloneLocked), one of allEvents, made at the first; under subMu.
	aloneCU   uintptr
	aloneMade bool
	// done is the word the GPU writes after an alone launch's work
	// (doneword.go); under subMu.
	done doneWord

	// reapMu orders the completion and retirement of ended work (the
	// reaper's and a waiter's, queue.go: completeThrough).
	reapMu sync.Mutex
	// reapBatch is completeThroughLocked's list of the events it retires
	// (kept between calls so that retiring allocates nothing); reapSeen
	// is each stream's tailSeq at the reaper's last round. Under reapMu.
	reapBatch []*event
	reapSeen  [numStreams]uint64

	fifoMu     sync.Mutex // guards fifo, freeEvents, allEvents and reaping
	fifo       [numStreams]eventFIFO
	freeEvents []uintptr
	reaping    bool
	reapers    sync.WaitGroup
	inflight   atomic.Int32
	// watched says someone waits for an event through Done or gave up a
	// Wait (queue.go: reap): the reaper then polls at its fast pace
	// instead of its idle one. Cleared when the reaper exits.
	watched atomic.Bool

	// Launches issued aside (issuer.go). Lock order: subMu, issueMu,
	// ringMu. issueMu is held while launches from the ring go on the
	// compute stream; ringMu guards the ring and the issuer's state.
	issueMu      sync.Mutex
	ringMu       sync.Mutex
	ring         []asideLaunch
	ringSpare    []asideLaunch // the issuer's last batch, for reuse
	issuing      bool          // the issuer's goroutine runs
	issuerIdle   bool          // it waits on ringKick
	ringKick     chan struct{}
	asidePending atomic.Int32 // launches in the ring or being issued

	stopMu   sync.Mutex
	stopWait context.CancelFunc // interrupts the worker's host-side wait

	bounceBytes atomic.Int64 // bytes of bounce buffers in use
}

// limits are the launch bounds read at open.
type limits struct {
	maxThreads int32
	maxBlock   [3]int32
	maxGrid    [3]int32
}

func openDevice(drv *driverAPI, ordinal int, cfg Config) (*Device, error) {
	d := &Device{drv: drv, cfg: cfg, ordinal: ordinal, name: Name + ":" + strconv.Itoa(ordinal)}
	var err error
	if d.cache, err = diskcache.Open(cfg.CacheDir, Name); err != nil {
		return nil, fmt.Errorf("%w: cuda.cache_dir: %w", driver.ErrNoDevice, err)
	}
	if err := drv.check("cuDeviceGet", drv.call(drv.deviceGet, uintptr(unsafe.Pointer(&d.dev)), uintptr(ordinal))); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := drv.check("cuDevicePrimaryCtxRetain", drv.call(drv.primaryCtxRetain, uintptr(unsafe.Pointer(&d.ctx)), uintptr(d.dev))); err != nil {
		return nil, err
	}
	if err := drv.check("cuCtxSetCurrent", drv.call(drv.ctxSetCurrent, d.ctx)); err != nil {
		drv.call(drv.primaryCtxRelease, uintptr(d.dev))
		return nil, err
	}
	destroyStreams := func() {
		for _, s := range d.streams {
			if s != 0 {
				drv.call(drv.streamDestroy, s)
			}
		}
	}
	for i := range d.streams {
		if err := drv.check("cuStreamCreate", drv.call(drv.streamCreate, uintptr(unsafe.Pointer(&d.streams[i])), streamNonBlocking)); err != nil {
			destroyStreams()
			drv.call(drv.primaryCtxRelease, uintptr(d.dev))
			return nil, err
		}
	}
	d.stream = d.streams[streamCompute]
	info, err := d.readInfo()
	if err != nil {
		destroyStreams()
		drv.call(drv.primaryCtxRelease, uintptr(d.dev))
		return nil, err
	}
	// The launch limit package backends checks grids against: the
	// device's, or 2^32-1 (cuLaunchKernel's 32 bits) where it reports none.
	info.MaxGlobalWorkDims = make([]uint64, 3)
	for i, l := range d.limits.maxGrid {
		info.MaxGlobalWorkDims[i] = math.MaxUint32
		if l > 0 {
			info.MaxGlobalWorkDims[i] = uint64(l)
		}
	}
	d.info = info
	d.pool = newPool(d)
	return d, nil
}

// readInfo fills DeviceInfo; the context must be current.
func (d *Device) readInfo() (*driver.DeviceInfo, error) {
	drv := d.drv
	attr := func(a int) int32 {
		v, err := drv.attribute(d.dev, a)
		if err != nil {
			return 0
		}
		return v
	}
	var nameBuf [256]byte
	if err := drv.check("cuDeviceGetName", drv.call(drv.deviceGetName, uintptr(unsafe.Pointer(&nameBuf[0])), uintptr(len(nameBuf)), uintptr(d.dev))); err != nil {
		return nil, err
	}
	var total uint64
	if err := drv.check("cuDeviceTotalMem_v2", drv.call(drv.deviceTotalMem, uintptr(unsafe.Pointer(&total)), uintptr(d.dev))); err != nil {
		return nil, err
	}
	var free, total2 uint64
	if err := drv.check("cuMemGetInfo_v2", drv.call(drv.memGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total2)))); err != nil {
		return nil, err
	}
	d.cc = [2]int32{attr(attrComputeCapabilityMajor), attr(attrComputeCapabilityMinor)}
	d.limits.maxThreads = attr(attrMaxThreadsPerBlock)
	for i := 0; i < 3; i++ {
		d.limits.maxBlock[i] = attr(attrMaxBlockDimX + i)
		d.limits.maxGrid[i] = attr(attrMaxGridDimX + i)
	}
	sms := attr(attrMultiprocessorCount)
	clockKHz := attr(attrClockRate)
	formats := []driver.Format{driver.FormatGEMM, driver.FormatCUDA} // cuBLAS runs a GEMM variant first
	if d.cfg.PreferKernel {
		formats = []driver.Format{driver.FormatCUDA, driver.FormatGEMM}
	}
	info := &driver.DeviceInfo{
		Formats:             formats,
		Name:                cString(nameBuf[:]),
		Kind:                driver.KindGPU,
		MaxGlobalWorkDims:   []uint64{uint64(d.limits.maxGrid[0]), uint64(d.limits.maxGrid[1]), uint64(d.limits.maxGrid[2])},
		MaxLocalThreads:     uint32(d.limits.maxThreads),
		MaxLocalWorkDims:    []uint32{uint32(d.limits.maxBlock[0]), uint32(d.limits.maxBlock[1]), uint32(d.limits.maxBlock[2])},
		PreferredVectorSize: 16,
		LocalMemSize:        uint64(attr(attrMaxSharedMemPerBlock)),
		MaxRegisterBytes:    uint64(attr(attrMaxRegistersPerBlock)) * 4 / uint64(max(d.limits.maxThreads, 1)),
		TensorCores:         d.cc[0] >= 7,
		WarpSize:            uint16(attr(attrWarpSize)),
		ComputeCapability:   d.cc,
		HasNativeExp2:       true,
		SupportedVecLens:    []uint8{1, 2, 4},
		Cores:               int(sms),
		Memory:              total,
		Compute:             computeEstimate(d.cc, sms, clockKHz),
		MMALayouts:          mmaLayouts(d.cc),
		Extra: map[string]string{
			"memory_free":            strconv.FormatUint(free, 10),
			"driver_version":         strconv.Itoa(int(drv.version)),
			"driver_library":         drv.lib.path,
			"arch":                   fmt.Sprintf("sm_%d%d", d.cc[0], d.cc[1]),
			"clock_khz":              strconv.Itoa(int(clockKHz)),
			"memory_clock_khz":       strconv.Itoa(int(attr(attrMemoryClockRate))),
			"memory_bus_bits":        strconv.Itoa(int(attr(attrGlobalMemoryBusWidth))),
			"l2_bytes":               strconv.Itoa(int(attr(attrL2CacheSize))),
			"max_threads_per_sm":     strconv.Itoa(int(attr(attrMaxThreadsPerSM))),
			"shared_mem_optin":       strconv.Itoa(int(attr(attrMaxSharedMemPerBlockOpt))),
			"shared_mem_per_block":   strconv.Itoa(int(attr(attrMaxSharedMemPerBlock))),
			"max_grid":               fmt.Sprint(d.limits.maxGrid),
			"max_block":              fmt.Sprint(d.limits.maxBlock),
			"multiprocessor_count":   strconv.Itoa(int(sms)),
			"primary_context_in_use": "true",
		},
	}
	var bus [64]byte
	d.numaNode = -1
	if drv.call(drv.deviceGetPCIBusID, uintptr(unsafe.Pointer(&bus[0])), uintptr(len(bus)), uintptr(d.dev)) == cudaSuccess {
		info.Extra["pci_bus_id"] = cString(bus[:])
		if node := gpuNUMANode(info.Extra["pci_bus_id"]); node >= 0 {
			info.Extra["numa_node"] = strconv.Itoa(node)
			if numaNodes() > 1 {
				d.numaNode = node
			}
		}
	}
	floatCaps := driver.CapFloatOps
	intCaps := driver.CapIntOps
	for _, t := range driver.AllDTypes() {
		switch {
		case t == driver.F8E4M3 || t == driver.F8E5M2:
			if d.cc[0] >= 9 || (d.cc[0] == 8 && d.cc[1] >= 9) {
				info.DTypeCaps[t] = driver.CapAdd | driver.CapMul
			}
		case t == driver.BF16 && d.cc[0] < 8:
			info.DTypeCaps[t] = floatCaps.Exclude(driver.CapExp | driver.CapLn | driver.CapSin | driver.CapCos)
		case t.IsFloat():
			info.DTypeCaps[t] = floatCaps
		case t == driver.Bool:
			info.DTypeCaps[t] = driver.CapAnd | driver.CapOr | driver.CapEq | driver.CapNotEq | driver.CapBitNot
		default:
			info.DTypeCaps[t] = intCaps
		}
	}
	return info, nil
}

// coresPerSM is the FP32 lanes per multiprocessor by compute capability.
func coresPerSM(cc [2]int32) int64 {
	switch cc[0] {
	case 3:
		return 192
	case 5:
		return 128
	case 6:
		if cc[1] == 0 {
			return 64
		}
		return 128
	case 7:
		return 64
	case 8:
		if cc[1] == 0 {
			return 64
		}
		return 128
	}
	return 128
}

// computeEstimate is the FP32 FMA peak in FLOP/s: lanes × 2 × clock. When
// the driver gives no clock, 1.5 GHz stands in.
func computeEstimate(cc [2]int32, sms, clockKHz int32) uint64 {
	hz := int64(clockKHz) * 1000
	if hz <= 0 {
		hz = 1_500_000_000
	}
	return uint64(int64(sms) * coresPerSM(cc) * 2 * hz)
}

func mmaLayouts(cc [2]int32) []driver.MMADims {
	var out []driver.MMADims
	if cc[0] >= 7 {
		out = append(out, driver.MMADims{M: 16, N: 16, K: 16, In: driver.F16, Acc: driver.F32})
	}
	if cc[0] >= 8 {
		out = append(out, driver.MMADims{M: 16, N: 16, K: 16, In: driver.BF16, Acc: driver.F32},
			driver.MMADims{M: 16, N: 16, K: 8, In: driver.F32, Acc: driver.F32})
	}
	return out
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// Name is the selector "cuda:N".
func (d *Device) Name() string { return d.name }

// Backend is "cuda".
func (d *Device) Backend() string { return Name }

// Info describes the GPU. Extra["memory_free"] is the free memory at open;
// Pool().FreeBytes() reads it now.
func (d *Device) Info() *driver.DeviceInfo { return d.info }

// Pool is the device's memory.
func (d *Device) Pool() driver.Pool { return d.pool }

// usable says why the device cannot be used, or nil.
func (d *Device) usable(op string) error {
	if d.closed.Load() {
		return driver.Errorf(Name, op, driver.ErrClosed, "%s is closed", d.name)
	}
	if cause := d.lost.Load(); cause != nil {
		return &driver.Error{Backend: Name, Op: op, Native: cause.Native,
			Err: fmt.Errorf("%w: %s: the context faulted earlier (%s) and cannot be used again", driver.ErrDeviceLost, d.name, cause.Op)}
	}
	return nil
}

// run calls f on a locked OS thread with the device's context current.
func (d *Device) run(op string, f func() error) error {
	if err := d.usable(op); err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := d.drv.call(d.drv.ctxSetCurrent, d.ctx); r != cudaSuccess {
		return d.fail("cuCtxSetCurrent", r)
	}
	return f()
}

// fail turns r into an error and marks the device lost when r is sticky.
func (d *Device) fail(op string, r cuResult) error {
	err := d.drv.check(op, r)
	if err == nil {
		return nil
	}
	if r.sticky() {
		be := err.(*driver.Error)
		if d.lost.CompareAndSwap(nil, be) {
			driver.Debug(driver.DebugDevice, "cuda context lost", "device", d.name, "op", op, "err", be.Native)
			d.stopWaiting() // the gate's work fails now, not when its dependencies end
		}
	}
	return err
}

// sync waits for the device's compute stream.
func (d *Device) sync() error { return d.syncStream(d.stream) }

// Close ends the device. Submissions still waiting on the host for their
// dependencies (in the gate) are cancelled: their events fail with
// ErrClosed. Work already on the GPU's streams runs to its end, and Close
// waits for it (a GPU finishes what it was given; its memory cannot be
// freed under it). Then Close frees the device's buffers, its streams and
// events and its hold on the primary context. Handles from the device are
// invalid afterwards.
func (d *Device) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	d.drainForClose()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	drv := d.drv
	drv.call(drv.ctxSetCurrent, d.ctx)
	healthy := d.lost.Load() == nil
	d.pool.freeAll(healthy)
	if d.staging != nil {
		d.staging.close(d)
	}
	if d.blas != nil {
		d.blas.destroy()
	}
	d.done.close(d, healthy)
	d.fifoMu.Lock()
	if healthy {
		for _, cu := range d.allEvents {
			drv.call(drv.eventDestroy, cu)
		}
		for _, s := range d.streams {
			drv.call(drv.streamDestroy, s)
		}
	}
	d.allEvents = nil
	d.freeEvents = nil
	d.fifoMu.Unlock()
	return drv.check("cuDevicePrimaryCtxRelease_v2", drv.call(drv.primaryCtxRelease, uintptr(d.dev)))
}

// Compile builds p for this GPU: the GEMM variant through cuBLAS (unless
// the config prefers kernels and a CUDA C variant exists), else the CUDA C
// variant through NVRTC.
func (d *Device) Compile(ctx context.Context, p *driver.Program) (driver.Executable, error) {
	if err := p.Validate(); err != nil {
		return nil, &driver.Error{Backend: Name, Op: "compile", Err: err}
	}
	if err := d.usable("compile"); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v := p.Variant(d.info.Formats...)
	switch {
	case v == nil:
	case v.Format == driver.FormatGEMM:
		return d.compileGEMM(p.WithVariant(v))
	case v.Format == driver.FormatCUDA:
		return d.compileKernel(ctx, p.WithVariant(v))
	}
	return nil, fmt.Errorf("%s: program %q: %w", d.name, p.Name, driver.ErrNoVariant)
}
