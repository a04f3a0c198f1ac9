// Package vulkan is the zyx-tt Vulkan compute backend: it loads the Vulkan
// loader with purego (no cgo), opens every physical device with a compute
// queue as "vulkan:N", keeps buffers in device-local memory with a reused
// host-visible staging buffer for transfers, and runs a program's SPIR-V
// variant as a compute pipeline whose cache is kept on disk.
package vulkan

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/internal/gpuqueue"
	"github.com/zyxtt/zyxtt/internal/config"
	"github.com/zyxtt/zyxtt/internal/diskcache"
)

// Name is the backend's registry key and the prefix of its device names.
const Name = "vulkan"

func init() {
	driver.Register(Name, driver.SectionDriver(Name, OpenDevices))
	driver.RegisterSection(Name, Config{})
}

// Config is the "vulkan" section of the config file.
type Config struct {
	// DeviceIDs keeps only these physical-device ordinals (the N of
	// "vulkan:N", vkEnumeratePhysicalDevices order). Absent means all.
	DeviceIDs *[]int `json:"device_ids" min:"0"`
	// CacheDir is where pipeline caches are kept. Empty means
	// $XDG_CACHE_HOME/zyx/vulkan (or ~/.cache/zyx/vulkan); "off" disables
	// the disk cache.
	CacheDir string `json:"cache_dir"`
	// StagingBytes is the size of each device's staging buffer for host
	// transfers (0: the default, 64 MiB); bigger transfers go through it
	// in chunks.
	StagingBytes int64 `json:"staging_bytes" min:"0" max:"4294967296" unit:"bytes"`
}

const defaultStaging = 64 << 20

// instance is one VkInstance shared by the devices opened with it; the
// last device to close destroys it.
type instance struct {
	l      *lib
	handle vkInstance
	mu     sync.Mutex
	refs   int
}

func (in *instance) release() {
	in.mu.Lock()
	in.refs--
	last := in.refs == 0
	in.mu.Unlock()
	if last {
		in.l.DestroyInstance(in.handle)
	}
}

// OpenDevices opens the devices that c allows. It is what the registered
// driver calls; tests and tools call it to open devices of their own.
func OpenDevices(ctx context.Context, c Config) ([]driver.Device, error) {
	l, err := load()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", driver.ErrNoDevice, err)
	}
	in, err := newInstance(l)
	if err != nil {
		return nil, err
	}
	in.refs = 1 // held while opening
	defer in.release()

	n, err := l.EnumeratePhysicalDevices(in.handle, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", driver.ErrNoDevice, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the Vulkan loader found no physical device (no ICD installed?)", driver.ErrNoDevice)
	}
	phys := make([]vkPhysicalDevice, n)
	if n, err = l.EnumeratePhysicalDevices(in.handle, phys); err != nil {
		return nil, err
	}
	cacheDir, err := diskcache.Open(c.CacheDir, Name)
	if err != nil {
		return nil, fmt.Errorf("%w: vulkan.cache_dir: %w", driver.ErrNoDevice, err)
	}
	staging := c.StagingBytes
	if staging <= 0 {
		staging = defaultStaging
	}
	return driver.OpenEach(ctx, Name, int(n), config.Common{DeviceIDs: c.DeviceIDs}, func(i int) (driver.Device, error) {
		d, err := newDevice(in, phys[i], i, cacheDir, staging)
		if err != nil {
			return nil, err // not a nil *device in an interface
		}
		return d, nil
	}, nil, "every device was filtered out by device_ids")
}

// newInstance creates an instance with no layers and no extensions: no
// window system is involved in compute.
func newInstance(l *lib) (*instance, error) {
	version := apiVersion(1, 0)
	if l.HasEnumerateInstanceVersion() {
		if v, err := l.EnumerateInstanceVersion(); err == nil && v >= apiVersion(1, 1) {
			version = apiVersion(1, 1)
		}
	}
	var p pins
	defer p.Unpin()
	app := &vkApplicationInfo{SType: stApplicationInfo, PApplicationName: cstr(&p, "zyx-tt"), PEngineName: cstr(&p, "zyx-tt"), ApiVersion: version}
	info := &vkInstanceCreateInfo{SType: stInstanceCreateInfo, PApplicationInfo: ptr(&p, app)}
	p.Pin(info)
	h, err := l.CreateInstance(info)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", driver.ErrNoDevice, err)
	}
	return &instance{l: l, handle: h}, nil
}

// memTypes is what a device's memory offers, resolved once.
type memTypes struct {
	props     vkPhysicalDeviceMemoryProperties
	deviceMem int64 // bytes in device-local heaps
}

// pick returns the first memory type allowed by bits that has all of
// want, preferring one that also has prefer.
func (m *memTypes) pick(bits, want, prefer uint32) (uint32, bool) {
	best, found := uint32(0), false
	for i := uint32(0); i < m.props.MemoryTypeCount && i < 32; i++ {
		if bits&(1<<i) == 0 {
			continue
		}
		f := m.props.MemoryTypes[i].PropertyFlags
		if f&want != want {
			continue
		}
		if f&prefer == prefer {
			return i, true
		}
		if !found {
			best, found = i, true
		}
	}
	return best, found
}

type device struct {
	in       *instance
	l        *lib
	name     string
	phys     vkPhysicalDevice
	handle   vkDevice
	queue    vkQueue
	family   uint32
	props    vkPhysicalDeviceProperties
	features vkPhysicalDeviceFeatures
	mem      memTypes
	info     *driver.DeviceInfo
	pool     *pool

	cmdPool   vkCommandPool
	queryPool vkQueryPool // zero when the queue has no timestamps
	tsBits    uint32
	hot       *hot

	pipelineCache vkPipelineCache
	cacheDir      *diskcache.Dir // nil: no disk cache
	cacheName     string         // the pipeline cache's entry in cacheDir

	staging      *buffer // host-visible, persistently mapped; made on first use
	stagingBytes int64
	ring         ring // the staging buffer's bytes, taken and given back in order
	// stageAlways sends every transfer through the staging buffer even
	// when buffers are mapped, so tests on CPU implementations (whose
	// memory is all host-visible) run the path discrete GPUs take.
	stageAlways bool

	// q.Mu serialises recording and submission: the open batch, the
	// batches in flight and free, the staging ring, the deferred lists,
	// Closed. q.Cond (on q.Mu) wakes the completer for a submitted batch
	// and work waiting for staging memory when a batch ends.
	q          gpuqueue.Queue[*work] // with work waiting for events or staging memory (queue.go)
	open       *batch                // being recorded
	inflight   []*batch              // submitted, oldest first
	free       []*batch              // ended, to record again
	batches    []*batch              // every batch made, for Close to free
	nextSerial uint64
	flushed    atomic.Uint64 // the last serial submitted
	completed  atomic.Uint64 // the last serial ended: its work and all before it
	stopping   bool          // the completer returns once nothing is in flight
	// completing: the oldest batch in flight is being ended, by the
	// completer or by a waiter (queue.go: event.Wait); compCond (on q.Mu)
	// wakes the completer when a batch is submitted with none being ended,
	// when such an end is over with batches left, and at Close.
	completing bool
	compCond   *sync.Cond
	flushArmed bool // the flush timer is set (under q.Mu)

	completerDone chan struct{}
	flushTimer    *time.Timer // submits a batch left open flushDelay
	holdOpen      bool        // tests: the flush timer leaves the open batch alone (under q.Mu)
	timedMu       sync.Mutex  // one timed run at a time: the query pool

	// execs are the executables not yet destroyed: their pipelines are
	// the device's children, which Close destroys before the device.
	// Held under execMu (which nothing else is taken under).
	execMu      sync.Mutex
	execs       map[*executable]struct{}
	execsClosed bool
}

func newDevice(in *instance, pd vkPhysicalDevice, ordinal int, cacheDir *diskcache.Dir, staging int64) (*device, error) {
	l := in.l
	d := &device{in: in, l: l, name: Name + ":" + strconv.Itoa(ordinal), phys: pd, stagingBytes: staging, ring: ring{size: staging}, execs: map[*executable]struct{}{}}
	l.GetPhysicalDeviceProperties(pd, &d.props)
	l.GetPhysicalDeviceFeatures(pd, &d.features)
	l.GetPhysicalDeviceMemoryProperties(pd, &d.mem.props)
	for i := uint32(0); i < d.mem.props.MemoryHeapCount && i < 16; i++ {
		if h := d.mem.props.MemoryHeaps[i]; h.Flags&heapDeviceLocal != 0 {
			d.mem.deviceMem += int64(min(h.Size, 1<<62))
		}
	}

	nf := l.GetPhysicalDeviceQueueFamilyProperties(pd, nil)
	if nf == 0 {
		return nil, errors.New("no queue families")
	}
	fams := make([]vkQueueFamilyProperties, nf)
	nf = l.GetPhysicalDeviceQueueFamilyProperties(pd, fams)
	family := -1
	for i, f := range fams[:nf] {
		if f.QueueFlags&queueCompute == 0 || f.QueueCount == 0 {
			continue
		}
		if family < 0 || (fams[family].TimestampValidBits == 0 && f.TimestampValidBits > 0) {
			family = i
		}
	}
	if family < 0 {
		return nil, errors.New("no queue family with compute")
	}
	d.family = uint32(family)
	d.tsBits = fams[family].TimestampValidBits

	if err := d.createLogical(); err != nil {
		return nil, err
	}
	if err := d.createCommandObjects(); err != nil {
		d.destroy()
		return nil, err
	}
	d.openPipelineCache(cacheDir)
	d.info = d.describe()
	d.pool = newPool(d)
	in.mu.Lock()
	in.refs++
	in.mu.Unlock()
	return d, nil
}

func (d *device) createLogical() error {
	var p pins
	defer p.Unpin()
	priority := new(float32)
	*priority = 1
	qinfo := &vkDeviceQueueCreateInfo{SType: stDeviceQueueCreateInfo, QueueFamilyIndex: d.family, QueueCount: 1, PQueuePriorities: ptr(&p, priority)}
	// Enable the shader features that widen the dtypes SPIR-V may use.
	feats := &vkPhysicalDeviceFeatures{
		ShaderFloat64: d.features.ShaderFloat64,
		ShaderInt64:   d.features.ShaderInt64,
		ShaderInt16:   d.features.ShaderInt16,
	}
	info := &vkDeviceCreateInfo{SType: stDeviceCreateInfo, QueueCreateInfoCount: 1, PQueueCreateInfos: ptr(&p, qinfo), PEnabledFeatures: ptr(&p, feats)}
	p.Pin(info)
	var err error
	if d.handle, err = d.l.CreateDevice(d.phys, info); err != nil {
		return err
	}
	d.queue = d.l.GetDeviceQueue(d.handle, d.family, 0)
	return nil
}

func (d *device) createCommandObjects() error {
	l := d.l
	var p pins
	defer p.Unpin()
	poolInfo := &vkCommandPoolCreateInfo{SType: stCommandPoolCreateInfo, Flags: commandPoolResetBuffer, QueueFamilyIndex: d.family}
	p.Pin(poolInfo)
	var err error
	if d.cmdPool, err = l.CreateCommandPool(d.handle, poolInfo); err != nil {
		return err
	}
	if d.tsBits > 0 {
		q := &vkQueryPoolCreateInfo{SType: stQueryPoolCreateInfo, QueryType: queryTypeTimestamp, QueryCount: 2}
		p.Pin(q)
		if d.queryPool, err = l.CreateQueryPool(d.handle, q); err != nil {
			d.queryPool = 0
			driver.Debug(driver.DebugDevice, "vulkan: no timestamp query pool", "device", d.name, "err", err)
		}
	}
	d.hot = newHot()
	d.q.Init(Name, d.name, kinds, staged, gpuqueue.Hooks[*work]{
		Covered:    d.recorded,
		Own:        d.ownEnded,
		Admit:      d.admitFrom,
		BeforeWait: d.flush, // what is recorded runs while held-back work waits
		AfterAdmit: d.flushIdle,
	})
	d.completerDone = make(chan struct{})
	d.compCond = sync.NewCond(&d.q.Mu)
	d.flushTimer = time.AfterFunc(time.Hour, d.flushLate)
	d.flushTimer.Stop()
	go d.complete()
	return nil
}

// maxPipelineCache bounds the pipeline cache read back from disk: a larger
// file is not one the driver wrote, and the cache starts empty.
const maxPipelineCache = 256 << 20

// openPipelineCache seeds the device's pipeline cache from disk. The
// driver checks the data's header (vendor, device, cache UUID) and starts
// empty when it does not match, so a stale file costs nothing.
func (d *device) openPipelineCache(dir *diskcache.Dir) {
	var initial []byte
	if dir != nil {
		d.cacheDir = dir
		d.cacheName = fmt.Sprintf("%04x-%04x-%08x-%s.bin", d.props.VendorID, d.props.DeviceID, d.props.DriverVersion, hex.EncodeToString(d.props.PipelineCacheUUID[:]))
		var err error
		if initial, err = dir.ReadFile(d.cacheName, maxPipelineCache); err != nil && !errors.Is(err, fs.ErrNotExist) {
			driver.Debug(driver.DebugCompile, "vulkan: pipeline cache not read; starting empty", "err", err)
		}
	}
	var p pins
	defer p.Unpin()
	info := &vkPipelineCacheCreateInfo{SType: stPipelineCacheCreateInfo, InitialDataSize: uintptr(len(initial)), PInitialData: slicePtr(&p, initial)}
	p.Pin(info)
	var err error
	if d.pipelineCache, err = d.l.CreatePipelineCache(d.handle, info); err != nil {
		// A rejected seed: start empty.
		info.InitialDataSize, info.PInitialData = 0, nil
		if d.pipelineCache, err = d.l.CreatePipelineCache(d.handle, info); err != nil {
			d.pipelineCache = 0
		}
	}
}

// savePipelineCache writes the cache through a temporary file so that a
// concurrent reader never sees half of it.
func (d *device) savePipelineCache() error {
	if d.cacheDir == nil || d.pipelineCache == 0 {
		return nil
	}
	size, err := d.l.GetPipelineCacheData(d.handle, d.pipelineCache, nil)
	if err != nil || size == 0 {
		return err
	}
	data := make([]byte, size)
	if size, err = d.l.GetPipelineCacheData(d.handle, d.pipelineCache, data); err != nil {
		return err
	}
	return d.cacheDir.WriteFile(d.cacheName, data[:size])
}

var deviceTypes = map[uint32]string{
	physicalDeviceTypeOther: "other", physicalDeviceTypeIntegrated: "integrated_gpu",
	physicalDeviceTypeDiscrete: "discrete_gpu", physicalDeviceTypeVirtual: "virtual_gpu",
	physicalDeviceTypeCPU: "cpu",
}

func (d *device) describe() *driver.DeviceInfo {
	lim := &d.props.Limits
	info := &driver.DeviceInfo{
		Formats:           []driver.Format{driver.FormatSPIRV},
		Name:              goString(d.props.DeviceName[:]),
		Kind:              driver.KindOther,
		MaxLocalThreads:   lim.MaxComputeWorkGroupInvocations,
		LocalMemSize:      uint64(lim.MaxComputeSharedMemorySize),
		HasNativeExp2:     true,
		SupportedVecLens:  []uint8{1, 2, 3, 4},
		Memory:            uint64(d.mem.deviceMem),
		MaxGlobalWorkDims: []uint64{uint64(lim.MaxComputeWorkGroupCount[0]), uint64(lim.MaxComputeWorkGroupCount[1]), uint64(lim.MaxComputeWorkGroupCount[2])},
		MaxLocalWorkDims:  lim.MaxComputeWorkGroupSize[:],
	}
	// Vulkan core reports no unit counts or clocks; the compute figure is
	// a class estimate that only orders devices for selection.
	switch d.props.DeviceType {
	case physicalDeviceTypeDiscrete:
		info.Kind, info.Compute = driver.KindGPU, 10e12
	case physicalDeviceTypeIntegrated, physicalDeviceTypeVirtual:
		info.Kind, info.Compute = driver.KindGPU, 1e12
	case physicalDeviceTypeCPU:
		info.Kind, info.Compute, info.WarpSize = driver.KindCPU, 1e11, 1
		info.SoftwareImpl = true // lavapipe: Vulkan rasterised on the CPU
	}
	info.ComputeEstimated = true // Vulkan reports no clocks or unit counts: a figure per device class
	switch d.props.VendorID {
	case 0x10de:
		info.WarpSize, info.TensorCores = 32, true
	case 0x1002:
		info.WarpSize = 64
	}
	info.PreferredVectorSize = 16
	info.DTypeCaps[driver.F32] = driver.CapFloatOps
	info.DTypeCaps[driver.I32] = driver.CapIntOps
	info.DTypeCaps[driver.U32] = driver.CapIntOps
	info.DTypeCaps[driver.Bool] = driver.CapOr | driver.CapAnd | driver.CapNotEq | driver.CapEq
	if d.features.ShaderFloat64 != 0 {
		info.DTypeCaps[driver.F64] = driver.CapFloatOps
	}
	if d.features.ShaderInt64 != 0 {
		info.DTypeCaps[driver.I64] = driver.CapIntOps
		info.DTypeCaps[driver.U64] = driver.CapIntOps
	}
	if d.features.ShaderInt16 != 0 {
		info.DTypeCaps[driver.I16] = driver.CapIntOps
		info.DTypeCaps[driver.U16] = driver.CapIntOps
	}
	v := d.props.ApiVersion
	info.Extra = map[string]string{
		"library":                  d.l.Name,
		"device_type":              deviceTypes[d.props.DeviceType],
		"vendor_id":                fmt.Sprintf("0x%04x", d.props.VendorID),
		"device_id":                fmt.Sprintf("0x%04x", d.props.DeviceID),
		"driver_version":           fmt.Sprintf("0x%08x", d.props.DriverVersion),
		"api_version":              fmt.Sprintf("%d.%d.%d", v>>22&0x7f, v>>12&0x3ff, v&0xfff),
		"timestamp_period_ns":      strconv.FormatFloat(float64(lim.TimestampPeriod), 'g', -1, 32),
		"timestamp_bits":           strconv.FormatUint(uint64(d.tsBits), 10),
		"max_push_constants":       strconv.FormatUint(uint64(lim.MaxPushConstantsSize), 10),
		"max_storage_buffer_range": strconv.FormatUint(uint64(lim.MaxStorageBufferRange), 10),
		"shader_float64":           strconv.FormatBool(d.features.ShaderFloat64 != 0),
		"shader_int64":             strconv.FormatBool(d.features.ShaderInt64 != 0),
		"queue_family":             strconv.FormatUint(uint64(d.family), 10),
	}
	if d.props.DeviceType == physicalDeviceTypeCPU {
		info.Extra["implementation"] = "cpu"
	}
	return info
}

func (d *device) Name() string             { return d.name }
func (d *device) Backend() string          { return Name }
func (d *device) Info() *driver.DeviceInfo { return d.info }
func (d *device) Pool() driver.Pool        { return d.pool }
func (d *device) String() string           { return d.name + " (" + d.info.Name + ")" }

// Close cancels the work still waiting for events or staging memory (it
// fails with ErrClosed), submits what is recorded, lets the queue finish
// (vkDeviceWaitIdle), ends that work, and frees every buffer and every executable not yet released,
// saves the pipeline cache and destroys the device.
func (d *device) Close() error {
	d.q.Mu.Lock()
	deferred, ok := d.q.Shut()
	if !ok {
		d.q.Mu.Unlock()
		return nil
	}
	closedErr := driver.Errorf(Name, "queue", driver.ErrClosed, "%s was closed before the work started", d.name)
	d.flush() // what was submitted runs
	d.flushTimer.Stop()
	d.q.Mu.Unlock()
	waitErr := d.l.DeviceWaitIdle(d.handle)
	for _, w := range deferred {
		w.Release()
		w.ev.Complete(closedErr)
	}
	d.q.Mu.Lock()
	d.stopping = true
	d.compCond.Broadcast()
	d.q.Cond.Broadcast()
	d.q.Mu.Unlock()
	<-d.completerDone

	d.execMu.Lock()
	execs := d.execs
	d.execs, d.execsClosed = nil, true
	d.execMu.Unlock()
	for x := range execs {
		x.destroy()
	}
	d.pool.freeAll()
	err := d.savePipelineCache()
	d.destroy()
	d.in.release()
	return errors.Join(waitErr, err)
}

func (d *device) destroy() {
	l := d.l
	if d.staging != nil {
		d.freeBuffer(d.staging)
		d.staging = nil
	}
	l.DestroyPipelineCache(d.handle, d.pipelineCache)
	l.DestroyQueryPool(d.handle, d.queryPool)
	for _, b := range d.batches {
		l.DestroyFence(d.handle, b.fence)
	}
	d.batches, d.free = nil, nil
	l.DestroyCommandPool(d.handle, d.cmdPool)
	if d.hot != nil {
		d.hot.pin.Unpin()
	}
	l.DestroyDevice(d.handle)
}

// hot is the memory that recording and submitting command buffers hands
// the driver: it lives as long as the device, on the heap and pinned (the
// submit info points into it), so that a submission allocates nothing.
// Its recording part is used under the device's q.Mu, waitFences by the
// completer and stamps under timedMu.
type hot struct {
	cmds        [1]vkCommandBuffer
	resetFences [1]vkFence
	waitFences  [1]vkFence
	begin       vkCommandBufferBeginInfo
	submits     [1]vkSubmitInfo
	barriers    [1]vkMemoryBarrier
	regions     [1]vkBufferCopy
	stamps      [2]uint64
	pin         runtime.Pinner
}

func newHot() *hot {
	h := &hot{}
	h.pin.Pin(h)
	h.begin = vkCommandBufferBeginInfo{SType: stCommandBufferBeginInfo, Flags: commandBufferOneTimeUsage}
	h.submits[0] = vkSubmitInfo{SType: stSubmitInfo, CommandBufferCount: 1, PCommandBuffers: unsafe.Pointer(&h.cmds[0])}
	return h
}

// barrier records a memory barrier into cmd. The caller holds d.q.Mu.
func (d *device) barrier(cmd vkCommandBuffer, srcStage, srcAccess, dstStage, dstAccess uint32) {
	b := &d.hot.barriers
	b[0] = vkMemoryBarrier{SType: stMemoryBarrier, SrcAccessMask: srcAccess, DstAccessMask: dstAccess}
	d.l.CmdPipelineBarrier(cmd, srcStage, dstStage, 0, b[:])
}

// fullBarrier makes every earlier command's writes visible to the next
// command: what orders the device's work. The caller holds d.q.Mu.
func (d *device) fullBarrier(cmd vkCommandBuffer) {
	d.barrier(cmd, stageAllCommands, accessMemoryWrite, stageAllCommands, accessMemoryRead|accessMemoryWrite)
}
