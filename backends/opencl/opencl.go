// Package opencl is the zyx-tt OpenCL backend: it loads the OpenCL ICD
// loader with purego (no cgo), opens every device of every platform as
// "opencl:N", keeps device buffers in a per-device pool, and builds and
// launches a program's OpenCL C variant, caching compiled binaries on disk.
package opencl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/internal/gpuqueue"
	"github.com/zyxtt/zyxtt/internal/config"
	"github.com/zyxtt/zyxtt/internal/diskcache"
)

// Name is the backend's registry key and the prefix of its device names.
const Name = "opencl"

func init() {
	driver.Register(Name, driver.SectionDriver(Name, OpenDevices))
	driver.RegisterSection(Name, Config{})
}

// Config is the "opencl" section of the config file.
type Config struct {
	// DeviceIDs keeps only these device ordinals (the N of "opencl:N",
	// counted over the kept platforms). Absent means every device.
	DeviceIDs *[]int `json:"device_ids" min:"0"`
	// PlatformIDs keeps only these platform ordinals (clGetPlatformIDs
	// order). Absent means every platform.
	PlatformIDs *[]int `json:"platform_ids" min:"0"`
	// CacheDir is where compiled program binaries are kept. Empty means
	// $XDG_CACHE_HOME/zyx/opencl (or ~/.cache/zyx/opencl); "off" disables
	// the cache.
	CacheDir string `json:"cache_dir"`
}

// OpenDevices opens the devices that c allows. It is what the registered
// driver calls; tests and tools call it to open devices of their own.
func OpenDevices(ctx context.Context, c Config) ([]driver.Device, error) {
	l, err := load()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", driver.ErrNoDevice, err)
	}
	cacheDir, err := diskcache.Open(c.CacheDir, Name)
	if err != nil {
		return nil, fmt.Errorf("%w: opencl.cache_dir: %w", driver.ErrNoDevice, err)
	}
	platforms, err := l.platforms()
	if err != nil {
		return nil, err
	}
	// Both lists filter ordinals the way every section's device_ids does;
	// the devices of the kept platforms are numbered together.
	keptPlatforms := config.Common{DeviceIDs: c.PlatformIDs}
	type candidate struct {
		platform platformID
		id       deviceID
	}
	var cands []candidate
	var errs []error
	for pi, p := range platforms {
		if !keptPlatforms.Allows(pi) {
			continue
		}
		ids, err := l.deviceIDs(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("platform %d (%s): %w", pi, l.platformString(p, clPlatformName), err))
			continue
		}
		for _, id := range ids {
			cands = append(cands, candidate{p, id})
		}
	}
	return driver.OpenEach(ctx, Name, len(cands), config.Common{DeviceIDs: c.DeviceIDs}, func(n int) (driver.Device, error) {
		d, err := newDevice(l, cands[n].platform, cands[n].id, n, cacheDir)
		if err != nil {
			return nil, err // not a nil *device in an interface
		}
		return d, nil
	}, errs, "no OpenCL devices on the allowed platforms")
}

func (l *lib) platforms() ([]platformID, error) {
	n, err := l.GetPlatformIDs(nil)
	if err != nil {
		var be *driver.Error
		if errors.As(err, &be) && be.Native == statusName(clPlatformNotFoundKHR) {
			return nil, fmt.Errorf("%w: the OpenCL loader found no platform (no ICD installed)", driver.ErrNoDevice)
		}
		return nil, fmt.Errorf("%w: %w", driver.ErrNoDevice, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: no OpenCL platform", driver.ErrNoDevice)
	}
	ids := make([]platformID, n)
	if _, err := l.GetPlatformIDs(ids); err != nil {
		return nil, err
	}
	return ids, nil
}

func (l *lib) deviceIDs(p platformID) ([]deviceID, error) {
	n, err := l.GetDeviceIDs(p, clDeviceTypeAll, nil)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("no devices")
	}
	ids := make([]deviceID, n)
	if _, err := l.GetDeviceIDs(p, clDeviceTypeAll, ids); err != nil {
		return nil, err
	}
	return ids, nil
}

func (l *lib) platformString(p platformID, param uint32) string {
	size, err := l.GetPlatformInfo(p, param, nil)
	if err != nil || size == 0 {
		return ""
	}
	buf := make([]byte, size)
	if _, err := l.GetPlatformInfo(p, param, buf); err != nil {
		return ""
	}
	return strings.TrimSpace(goString(buf))
}

// deviceBytes reads a device query's raw value.
func (l *lib) deviceBytes(d deviceID, param uint32) ([]byte, error) {
	size, err := l.GetDeviceInfo(d, param, nil)
	if err != nil || size == 0 {
		return nil, err
	}
	buf := make([]byte, size)
	if _, err := l.GetDeviceInfo(d, param, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

func (l *lib) deviceString(d deviceID, param uint32) string {
	b, err := l.deviceBytes(d, param)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(goString(b))
}

// deviceUint reads an integer query of any width (cl_uint, cl_ulong,
// size_t, cl_bitfield).
func (l *lib) deviceUint(d deviceID, param uint32) uint64 {
	b, err := l.deviceBytes(d, param)
	if err != nil {
		return 0
	}
	var v uint64
	for i := len(b) - 1; i >= 0 && i < 8; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// limits is what Compile and Launch check a dispatch against.
type limits struct {
	maxWorkGroup uint64
	maxItems     [3]uint64
	addressBits  uint64
	maxAlloc     uint64
}

type device struct {
	l        *lib
	name     string
	id       deviceID
	context  clContext
	queue    commandQueue
	info     *driver.DeviceInfo
	lim      limits
	pool     *pool
	cacheDir *diskcache.Dir // nil: no binary cache
	cacheTag string         // device name, driver and platform versions: the binary cache's device half of the key

	// q.Mu orders submissions: the deferred lists and every enqueue are
	// under it, and Closed. Its Cond is broadcast when a command was
	// enqueued, or failed unqueued.
	q gpuqueue.Queue[*cmd]

	// The enqueued commands not yet taken to be settled, oldest first
	// (queue.go): under inqMu. settling is set while the completer or a
	// waiter settles commands taken from it (one at a time, so they end in
	// order); compCond wakes the completer when a command is enqueued with
	// no one settling, when a waiter's settling is over with commands
	// left, and at Close; roomCond wakes an enqueue waiting for room.
	inqMu         sync.Mutex
	inq           []*cmd
	seq           uint64 // the last command's number (cmd.seq), under inqMu
	settling      bool
	stopping      bool
	compCond      *sync.Cond
	roomCond      *sync.Cond
	completerDone chan struct{} // closed when the completer has returned
	// watched says someone waits for a pending command through its
	// event's Done or a Wait that can be cancelled (queue.go): the
	// completer then settles at once instead of letting a burst of
	// submissions gather for completerIdle. Cleared when inq runs empty.
	watched     atomic.Bool
	waitOne     [1]clEvent // the settler's wait list
	waiterBatch []*cmd     // the commands a waiter settles (settleThrough)
	prof        profile    // the settler's status and counters
}

func newDevice(l *lib, platform platformID, id deviceID, ordinal int, cacheDir *diskcache.Dir) (*device, error) {
	d := &device{l: l, name: Name + ":" + strconv.Itoa(ordinal), id: id, cacheDir: cacheDir}
	d.info, d.lim = l.describe(platform, id)
	d.cacheTag = strings.Join([]string{d.info.Name, d.info.Extra["driver_version"], d.info.Extra["platform_version"], d.info.Extra["device_version"]}, "\x00")

	var err error
	if d.context, err = l.CreateContext([]deviceID{id}); err != nil {
		return nil, err
	}
	if l.HasQueueWithProperties() {
		d.queue, err = l.CreateCommandQueueWithProperties(d.context, id, []uint64{clQueueProperties, clQueueProfilingEnable, 0})
	} else {
		d.queue, err = l.CreateCommandQueue(d.context, id, clQueueProfilingEnable)
	}
	if err != nil {
		_ = l.ReleaseContext(d.context)
		return nil, err
	}
	d.pool = newPool(d, d.info.Memory)
	d.q.Init(Name, d.name, gpuqueue.Lists, gpuqueue.Lists, gpuqueue.Hooks[*cmd]{
		Covered: d.enqueued,
		Own:     d.ownEnded,
		Admit:   func(_ int, c *cmd) error { return d.issue(c) },
	})
	d.compCond = sync.NewCond(&d.inqMu)
	d.roomCond = sync.NewCond(&d.inqMu)
	d.completerDone = make(chan struct{})
	go d.complete()
	return d, nil
}

func (l *lib) describe(platform platformID, id deviceID) (*driver.DeviceInfo, limits) {
	var lim limits
	typ := l.deviceUint(id, clDeviceType)
	name := l.deviceString(id, clDeviceName)
	vendor := l.deviceString(id, clDeviceVendor)
	exts := l.deviceString(id, clDeviceExtensions)
	cus := l.deviceUint(id, clDeviceMaxComputeUnits)
	clockMHz := l.deviceUint(id, clDeviceMaxClockFrequency)
	lim.maxWorkGroup = l.deviceUint(id, clDeviceMaxWorkGroupSize)
	lim.addressBits = l.deviceUint(id, clDeviceAddressBits)
	lim.maxAlloc = l.deviceUint(id, clDeviceMaxMemAllocSize)
	dims := l.deviceUint(id, clDeviceMaxWorkItemDimensions)
	if b, err := l.deviceBytes(id, clDeviceMaxWorkItemSizes); err == nil {
		for i := 0; i < 3 && i < int(dims) && (i+1)*8 <= len(b); i++ {
			var v uint64
			for j := 7; j >= 0; j-- {
				v = v<<8 | uint64(b[i*8+j])
			}
			lim.maxItems[i] = v
		}
	}
	vec := map[string]uint64{}
	for _, q := range []struct {
		name  string
		param uint32
	}{
		{"char", clDevicePrefVecWidthChar}, {"short", clDevicePrefVecWidthShort},
		{"int", clDevicePrefVecWidthInt}, {"long", clDevicePrefVecWidthLong},
		{"float", clDevicePrefVecWidthFloat}, {"double", clDevicePrefVecWidthDouble},
		{"half", clDevicePrefVecWidthHalf},
	} {
		vec[q.name] = l.deviceUint(id, q.param)
	}
	hasExt := func(e string) bool { return strings.Contains(" "+exts+" ", " "+e+" ") }

	info := &driver.DeviceInfo{
		Formats:             []driver.Format{driver.FormatOpenCL},
		Name:                name,
		Kind:                driver.KindOther,
		MaxLocalThreads:     uint32(min(lim.maxWorkGroup, math.MaxUint32)),
		PreferredVectorSize: uint8(min(vec["float"]*4, 255)),
		LocalMemSize:        l.deviceUint(id, clDeviceLocalMemSize),
		HasNativeExp2:       true,
		SupportedVecLens:    []uint8{1, 2, 4, 8, 16},
		Cores:               int(cus),
		Memory:              l.deviceUint(id, clDeviceGlobalMemSize),
	}
	lanes := uint64(1) // FP32 lanes per compute unit, for the compute estimate
	switch {
	case typ&clDeviceTypeGPU != 0:
		info.Kind = driver.KindGPU
		lanes = 64
	case typ&clDeviceTypeCPU != 0:
		info.Kind = driver.KindCPU
		info.SoftwareImpl = true // OpenCL on the CPU (PoCL): below the native CPU backends
		lanes = max(vec["float"], 1)
		info.WarpSize = 1
	case typ&clDeviceTypeAccelerator != 0:
		info.Kind = driver.KindAccelerator
	}
	switch v := strings.ToLower(vendor); {
	case strings.Contains(v, "nvidia"):
		info.WarpSize, lanes = 32, 128
		info.TensorCores = true
	case strings.Contains(v, "amd") || strings.Contains(v, "advanced micro"):
		info.WarpSize = 64
	}
	// Peak FP32: compute units × lanes × 2 (fused multiply-add) × clock.
	info.Compute = cus * lanes * 2 * clockMHz * 1_000_000
	for i := range 3 {
		info.MaxLocalWorkDims = append(info.MaxLocalWorkDims, uint32(min(lim.maxItems[i], math.MaxUint32)))
		// The global size (groups × local size) must fit a size_t; the
		// grid in groups is capped so that any legal local size fits.
		maxGlobal := uint64(math.MaxUint32)
		if lim.addressBits >= 64 {
			maxGlobal = math.MaxUint64
		}
		info.MaxGlobalWorkDims = append(info.MaxGlobalWorkDims, maxGlobal/max(lim.maxItems[i], 1))
	}
	for _, t := range []driver.DType{driver.I8, driver.I16, driver.I32, driver.I64, driver.U8, driver.U16, driver.U32, driver.U64} {
		info.DTypeCaps[t] = driver.CapIntOps
	}
	info.DTypeCaps[driver.Bool] = driver.CapOr | driver.CapAnd | driver.CapNotEq | driver.CapEq | driver.CapBitXor | driver.CapBitOr | driver.CapBitAnd
	info.DTypeCaps[driver.F32] = driver.CapFloatOps
	if hasExt("cl_khr_fp64") {
		info.DTypeCaps[driver.F64] = driver.CapFloatOps
	}
	if hasExt("cl_khr_fp16") {
		info.DTypeCaps[driver.F16] = driver.CapFloatOps
	}
	info.Extra = map[string]string{
		"library":          l.Name,
		"platform":         l.platformString(platform, clPlatformName),
		"platform_vendor":  l.platformString(platform, clPlatformVendor),
		"platform_version": l.platformString(platform, clPlatformVersion),
		"vendor":           vendor,
		"driver_version":   l.deviceString(id, clDriverVersion),
		"device_version":   l.deviceString(id, clDeviceVersion),
		"clock_mhz":        strconv.FormatUint(clockMHz, 10),
		"compute_units":    strconv.FormatUint(cus, 10),
		"max_alloc":        strconv.FormatUint(lim.maxAlloc, 10),
		"global_mem_cache": strconv.FormatUint(l.deviceUint(id, clDeviceGlobalMemCacheSize), 10),
		"max_param_size":   strconv.FormatUint(l.deviceUint(id, clDeviceMaxParameterSize), 10),
		"fp16":             strconv.FormatBool(hasExt("cl_khr_fp16")),
		"fp64":             strconv.FormatBool(hasExt("cl_khr_fp64")),
		"vector_widths": fmt.Sprintf("char=%d short=%d int=%d long=%d half=%d float=%d double=%d",
			vec["char"], vec["short"], vec["int"], vec["long"], vec["half"], vec["float"], vec["double"]),
	}
	if info.Kind == driver.KindCPU {
		info.Extra["implementation"] = "cpu"
	}
	return info, lim
}

func (d *device) Name() string             { return d.name }
func (d *device) Backend() string          { return Name }
func (d *device) Info() *driver.DeviceInfo { return d.info }
func (d *device) Pool() driver.Pool        { return d.pool }
func (d *device) String() string           { return d.name + " (" + d.info.Name + ")" }

// Close cancels the device's work that has not reached its queue (it fails
// with ErrClosed), lets the queue finish what it was given (clFinish),
// settles it, and frees every buffer of the pool, the queue and the
// context.
func (d *device) Close() error {
	d.q.Mu.Lock()
	deferred, ok := d.q.Shut()
	d.q.Mu.Unlock()
	if !ok {
		return nil
	}
	errs := []error{d.l.Finish(d.queue)}
	for _, c := range deferred {
		c.Release()
		c.ev.Complete(driver.Errorf(Name, c.op, driver.ErrClosed, "%s was closed before the work started", d.name))
	}
	d.inqMu.Lock() // nothing is enqueued once closed is set
	d.stopping = true
	d.compCond.Broadcast()
	d.inqMu.Unlock()
	<-d.completerDone
	d.pool.freeAll()
	errs = append(errs, d.l.ReleaseCommandQueue(d.queue), d.l.ReleaseContext(d.context))
	return errors.Join(errs...)
}
