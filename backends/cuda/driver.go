package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/dl"
)

// cuResult is a CUresult.
type cuResult int32

// The CUresult values the package acts on.
const (
	cudaSuccess                       cuResult = 0
	cudaErrorInvalidValue             cuResult = 1
	cudaErrorOutOfMemory              cuResult = 2
	cudaErrorNoDevice                 cuResult = 100
	cudaErrorInvalidDevice            cuResult = 101
	cudaErrorECCUncorrectable         cuResult = 214
	cudaErrorNotFound                 cuResult = 500
	cudaErrorNotReady                 cuResult = 600
	cudaErrorIllegalAddress           cuResult = 700
	cudaErrorLaunchOutOfResources     cuResult = 701
	cudaErrorLaunchTimeout            cuResult = 702
	cudaErrorPeerAccessAlreadyEnabled cuResult = 704
	cudaErrorAssert                   cuResult = 710
	cudaErrorHostMemAlreadyRegistered cuResult = 712
	cudaErrorHardwareStackError       cuResult = 714
	cudaErrorIllegalInstruction       cuResult = 715
	cudaErrorMisalignedAddress        cuResult = 716
	cudaErrorInvalidAddressSpace      cuResult = 717
	cudaErrorInvalidPC                cuResult = 718
	cudaErrorLaunchFailed             cuResult = 719
)

// sticky reports whether r leaves the context unusable: after such an
// error every later call in the context fails, so the device is lost.
func (r cuResult) sticky() bool {
	switch r {
	case cudaErrorIllegalAddress, cudaErrorLaunchTimeout, cudaErrorAssert, cudaErrorHardwareStackError,
		cudaErrorIllegalInstruction, cudaErrorMisalignedAddress, cudaErrorInvalidAddressSpace,
		cudaErrorInvalidPC, cudaErrorLaunchFailed, cudaErrorECCUncorrectable:
		return true
	}
	return false
}

// sentinel maps a CUresult to the backends sentinel it amounts to.
func (r cuResult) sentinel() error {
	switch {
	case r == cudaErrorOutOfMemory:
		return driver.ErrOutOfMemory
	case r.sticky():
		return driver.ErrDeviceLost
	case r == cudaErrorInvalidValue, r == cudaErrorLaunchOutOfResources:
		return driver.ErrInvalidArgument
	case r == cudaErrorNoDevice, r == cudaErrorInvalidDevice:
		return driver.ErrNoDevice
	}
	return errors.New("driver error")
}

// Device attributes (CUdevice_attribute).
const (
	attrMaxThreadsPerBlock      = 1
	attrMaxBlockDimX            = 2
	attrMaxGridDimX             = 5
	attrMaxSharedMemPerBlock    = 8
	attrWarpSize                = 10
	attrMaxRegistersPerBlock    = 12
	attrClockRate               = 13
	attrMultiprocessorCount     = 16
	attrMemoryClockRate         = 36
	attrGlobalMemoryBusWidth    = 37
	attrL2CacheSize             = 38
	attrMaxThreadsPerSM         = 39
	attrComputeCapabilityMajor  = 75
	attrComputeCapabilityMinor  = 76
	attrMaxSharedMemPerBlockOpt = 97
)

// Other driver constants.
const (
	funcAttrMaxThreadsPerBlock = 0 // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
	streamNonBlocking          = 1 // CU_STREAM_NON_BLOCKING
	eventDefault               = 0 // CU_EVENT_DEFAULT
	eventDisableTiming         = 2 // CU_EVENT_DISABLE_TIMING
	hostRegisterPortable       = 1 // CU_MEMHOSTREGISTER_PORTABLE
	hostRegisterDeviceMap      = 2 // CU_MEMHOSTREGISTER_DEVICEMAP
)

// driverAPI holds the driver's entry points. Every call goes through
// purego.SyscallN on these addresses: no reflection on the hot paths.
type driverAPI struct {
	lib     library
	version int32 // cuDriverGetVersion, e.g. 13000

	init, driverGetVersion, deviceGetCount, deviceGet, deviceGetName, deviceGetAttribute  uintptr
	deviceTotalMem, primaryCtxRetain, primaryCtxRelease, ctxSetCurrent, deviceGetPCIBusID uintptr
	ctxGetCurrent                                                                         uintptr
	memAlloc, memFree, memGetInfo, memcpyHtoD, memcpyDtoH, memcpyHtoDAsync                uintptr
	memcpyDtoHAsync, memcpyDtoDAsync, memcpyPeerAsync, memHostRegister, memHostUnregister uintptr
	streamCreate, streamSynchronize, streamDestroy, streamWaitEvent, streamQuery          uintptr
	eventCreate, eventRecord, eventSynchronize, eventElapsedTime, eventDestroy            uintptr
	eventQuery                                                                            uintptr
	moduleLoadData, moduleUnload, moduleGetFunction, funcGetAttribute, launchKernel       uintptr
	getErrorName, getErrorString, deviceCanAccessPeer, ctxEnablePeerAccess                uintptr
	// Optional: drivers without stream memory operations lack them
	// (zero), and a launch that runs alone then polls a CUDA event.
	memHostGetDevicePointer, streamWriteValue32 uintptr
}

// symbols lists every entry point by its versioned name where one exists;
// a legacy name is an alternative only where a driver may lack the
// versioned one.
func (d *driverAPI) symbols() []dl.Symbol {
	return []dl.Symbol{
		{Addr: &d.init, Name: "cuInit"},
		{Addr: &d.driverGetVersion, Name: "cuDriverGetVersion"},
		{Addr: &d.deviceGetCount, Name: "cuDeviceGetCount"},
		{Addr: &d.deviceGet, Name: "cuDeviceGet"},
		{Addr: &d.deviceGetName, Name: "cuDeviceGetName"},
		{Addr: &d.deviceGetAttribute, Name: "cuDeviceGetAttribute"},
		{Addr: &d.deviceTotalMem, Name: "cuDeviceTotalMem_v2"},
		{Addr: &d.deviceGetPCIBusID, Name: "cuDeviceGetPCIBusId"},
		{Addr: &d.primaryCtxRetain, Name: "cuDevicePrimaryCtxRetain"},
		{Addr: &d.primaryCtxRelease, Name: "cuDevicePrimaryCtxRelease_v2"},
		{Addr: &d.ctxSetCurrent, Name: "cuCtxSetCurrent"},
		{Addr: &d.ctxGetCurrent, Name: "cuCtxGetCurrent"},
		{Addr: &d.memAlloc, Name: "cuMemAlloc_v2"},
		{Addr: &d.memFree, Name: "cuMemFree_v2"},
		{Addr: &d.memGetInfo, Name: "cuMemGetInfo_v2"},
		{Addr: &d.memcpyHtoD, Name: "cuMemcpyHtoD_v2"},
		{Addr: &d.memcpyDtoH, Name: "cuMemcpyDtoH_v2"},
		{Addr: &d.memcpyHtoDAsync, Name: "cuMemcpyHtoDAsync_v2"},
		{Addr: &d.memcpyDtoHAsync, Name: "cuMemcpyDtoHAsync_v2"},
		{Addr: &d.memcpyDtoDAsync, Name: "cuMemcpyDtoDAsync_v2"},
		{Addr: &d.memcpyPeerAsync, Name: "cuMemcpyPeerAsync"},
		{Addr: &d.memHostRegister, Name: "cuMemHostRegister_v2"},
		{Addr: &d.memHostUnregister, Name: "cuMemHostUnregister"},
		{Addr: &d.streamCreate, Name: "cuStreamCreate"},
		{Addr: &d.streamSynchronize, Name: "cuStreamSynchronize"},
		{Addr: &d.streamDestroy, Name: "cuStreamDestroy_v2"},
		{Addr: &d.streamWaitEvent, Name: "cuStreamWaitEvent"},
		{Addr: &d.streamQuery, Name: "cuStreamQuery"},
		{Addr: &d.eventCreate, Name: "cuEventCreate"},
		{Addr: &d.eventRecord, Name: "cuEventRecord"},
		{Addr: &d.eventSynchronize, Name: "cuEventSynchronize"},
		{Addr: &d.eventQuery, Name: "cuEventQuery"},
		{Addr: &d.eventElapsedTime, Name: "cuEventElapsedTime_v2", Alt: []string{"cuEventElapsedTime"}},
		{Addr: &d.eventDestroy, Name: "cuEventDestroy_v2"},
		{Addr: &d.moduleLoadData, Name: "cuModuleLoadData"},
		{Addr: &d.moduleUnload, Name: "cuModuleUnload"},
		{Addr: &d.moduleGetFunction, Name: "cuModuleGetFunction"},
		{Addr: &d.funcGetAttribute, Name: "cuFuncGetAttribute"},
		{Addr: &d.launchKernel, Name: "cuLaunchKernel"},
		{Addr: &d.getErrorName, Name: "cuGetErrorName"},
		{Addr: &d.getErrorString, Name: "cuGetErrorString"},
		{Addr: &d.deviceCanAccessPeer, Name: "cuDeviceCanAccessPeer"},
		{Addr: &d.ctxEnablePeerAccess, Name: "cuCtxEnablePeerAccess"},
		{Addr: &d.memHostGetDevicePointer, Name: "cuMemHostGetDevicePointer_v2", Optional: true},
		{Addr: &d.streamWriteValue32, Name: "cuStreamWriteValue32_v2", Alt: []string{"cuStreamWriteValue32"}, Optional: true},
	}
}

// driverLib is the CUDA driver, loaded on first use of the backend.
var driverLib dl.Lazy[*driverAPI]

// driverSonames are tried in order to load the driver API.
var driverSonames = []string{"libcuda.so.1", "libcuda.so"}

// loadDriver opens libcuda once, resolves every entry point and calls cuInit.
func loadDriver() (*driverAPI, error) {
	return driverLib.Load(func() (*driverAPI, error) { return openDriver(driverSonames) })
}

func openDriver(sonames []string) (*driverAPI, error) {
	d := &driverAPI{}
	lib, err := openLibrary("CUDA driver", sonames, func(h uintptr) error { return entryPoints(h, d.symbols()) })
	if err != nil {
		return nil, err
	}
	d.lib = lib
	if err := d.check("cuInit", d.call(d.init, 0)); err != nil {
		return nil, err
	}
	var v int32
	if err := d.check("cuDriverGetVersion", d.call(d.driverGetVersion, uintptr(unsafe.Pointer(&v)))); err != nil {
		return nil, err
	}
	d.version = v
	return d, nil
}

// call invokes a driver entry point and returns its CUresult.
//
//go:uintptrescapes
func (d *driverAPI) call(fn uintptr, args ...uintptr) cuResult {
	r, _, _ := purego.SyscallN(fn, args...)
	return cuResult(int32(r))
}

// name is the CUresult's enum name ("CUDA_ERROR_ILLEGAL_ADDRESS").
func (d *driverAPI) name(r cuResult) string {
	var p *byte
	if d.call(d.getErrorName, uintptr(r), uintptr(unsafe.Pointer(&p))) != cudaSuccess || p == nil {
		return fmt.Sprintf("CUresult %d", r)
	}
	return goString(p)
}

// describe is the driver's description of r.
func (d *driverAPI) describe(r cuResult) string {
	var p *byte
	if d.call(d.getErrorString, uintptr(r), uintptr(unsafe.Pointer(&p))) != cudaSuccess || p == nil {
		return ""
	}
	return goString(p)
}

// check turns a failed CUresult into a typed *driver.Error.
func (d *driverAPI) check(op string, r cuResult) error {
	if r == cudaSuccess {
		return nil
	}
	native := d.name(r)
	if s := d.describe(r); s != "" {
		native += " (" + s + ")"
	}
	return &driver.Error{Backend: "cuda", Op: op, Native: native, Err: r.sentinel()}
}

// attribute reads one device attribute.
func (d *driverAPI) attribute(dev int32, attr int) (int32, error) {
	var v int32
	err := d.check("cuDeviceGetAttribute", d.call(d.deviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(dev)))
	return v, err
}

// goString copies a NUL-terminated C string.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// callPtr calls fn with one pointer argument.
func (d *driverAPI) callPtr(fn uintptr, p *int32) cuResult {
	return d.call(fn, uintptr(unsafe.Pointer(p)))
}

// Typed bindings of the calls on the submission and completion paths. They
// go through internal/dl's fixed-arity calls, which allocate nothing (the
// variadic call above allocates its argument slice).

func (d *driverAPI) cuCtxSetCurrent(ctx uintptr) cuResult {
	return cuResult(int32(dl.Call1(d.ctxSetCurrent, ctx)))
}

// cuCtxGetCurrent is the context current on the calling thread (0: none).
func (d *driverAPI) cuCtxGetCurrent() (uintptr, cuResult) {
	var ctx uintptr
	r := cuResult(int32(dl.Call1(d.ctxGetCurrent, uintptr(unsafe.Pointer(&ctx)))))
	return ctx, r
}

func (d *driverAPI) cuEventQuery(ev uintptr) cuResult {
	return cuResult(int32(dl.Call1(d.eventQuery, ev)))
}

func (d *driverAPI) cuStreamQuery(stream uintptr) cuResult {
	return cuResult(int32(dl.Call1(d.streamQuery, stream)))
}

func (d *driverAPI) cuStreamSynchronize(stream uintptr) cuResult {
	return cuResult(int32(dl.Call1(d.streamSynchronize, stream)))
}

func (d *driverAPI) cuEventRecord(ev, stream uintptr) cuResult {
	return cuResult(int32(dl.Call2(d.eventRecord, ev, stream)))
}

// cuStreamWriteValue32 puts on stream a write of v to the 32-bit word at
// device address addr, made once the stream's earlier work has ended
// (flags 0: after a memory barrier, so that work's writes are visible
// first).
func (d *driverAPI) cuStreamWriteValue32(stream uintptr, addr uint64, v uint32) cuResult {
	return cuResult(int32(dl.Call4(d.streamWriteValue32, stream, uintptr(addr), uintptr(v), 0)))
}

func (d *driverAPI) cuStreamWaitEvent(stream, ev uintptr) cuResult {
	return cuResult(int32(dl.Call3(d.streamWaitEvent, stream, ev, 0)))
}

// cuLaunchKernel launches fn with the parameter array at params (memory
// outside the Go heap) and no dynamic shared memory.
func (d *driverAPI) cuLaunchKernel(fn uintptr, grid, block [3]uint32, stream, params uintptr) cuResult {
	return cuResult(int32(dl.Call11(d.launchKernel, fn,
		uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
		uintptr(block[0]), uintptr(block[1]), uintptr(block[2]),
		0, stream, params, 0)))
}

func (d *driverAPI) cuMemcpyHtoDAsync(dst uint64, src unsafe.Pointer, n int, stream uintptr) cuResult {
	return cuResult(int32(dl.Call4(d.memcpyHtoDAsync, uintptr(dst), uintptr(src), uintptr(n), stream)))
}

func (d *driverAPI) cuMemcpyDtoHAsync(dst unsafe.Pointer, src uint64, n int, stream uintptr) cuResult {
	return cuResult(int32(dl.Call4(d.memcpyDtoHAsync, uintptr(dst), uintptr(src), uintptr(n), stream)))
}
