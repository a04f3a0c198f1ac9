package cuda

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/zyxtt/zyxtt/backends"
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
		return backends.ErrOutOfMemory
	case r.sticky():
		return backends.ErrDeviceLost
	case r == cudaErrorInvalidValue, r == cudaErrorLaunchOutOfResources:
		return backends.ErrInvalidArgument
	case r == cudaErrorNoDevice, r == cudaErrorInvalidDevice:
		return backends.ErrNoDevice
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
)

// driverAPI holds the driver's entry points. Every call goes through
// purego.SyscallN on these addresses: no reflection on the hot paths.
type driverAPI struct {
	lib     library
	version int32 // cuDriverGetVersion, e.g. 13000

	init, driverGetVersion, deviceGetCount, deviceGet, deviceGetName, deviceGetAttribute  uintptr
	deviceTotalMem, primaryCtxRetain, primaryCtxRelease, ctxSetCurrent, deviceGetPCIBusID uintptr
	memAlloc, memFree, memGetInfo, memcpyHtoD, memcpyDtoH, memcpyHtoDAsync                uintptr
	memcpyDtoHAsync, memcpyDtoDAsync, memcpyPeerAsync, memHostRegister, memHostUnregister uintptr
	streamCreate, streamSynchronize, streamDestroy                                        uintptr
	eventCreate, eventRecord, eventSynchronize, eventElapsedTime, eventDestroy            uintptr
	moduleLoadData, moduleUnload, moduleGetFunction, funcGetAttribute, launchKernel       uintptr
	getErrorName, getErrorString, deviceCanAccessPeer, ctxEnablePeerAccess                uintptr
}

// driverSymbols lists, for each entry point, the names to try in order.
// Versioned names are the only ones taken where a versioned one exists.
func (d *driverAPI) symbols() []struct {
	dst   *uintptr
	names []string
} {
	type s = struct {
		dst   *uintptr
		names []string
	}
	return []s{
		{&d.init, []string{"cuInit"}},
		{&d.driverGetVersion, []string{"cuDriverGetVersion"}},
		{&d.deviceGetCount, []string{"cuDeviceGetCount"}},
		{&d.deviceGet, []string{"cuDeviceGet"}},
		{&d.deviceGetName, []string{"cuDeviceGetName"}},
		{&d.deviceGetAttribute, []string{"cuDeviceGetAttribute"}},
		{&d.deviceTotalMem, []string{"cuDeviceTotalMem_v2"}},
		{&d.deviceGetPCIBusID, []string{"cuDeviceGetPCIBusId"}},
		{&d.primaryCtxRetain, []string{"cuDevicePrimaryCtxRetain"}},
		{&d.primaryCtxRelease, []string{"cuDevicePrimaryCtxRelease_v2"}},
		{&d.ctxSetCurrent, []string{"cuCtxSetCurrent"}},
		{&d.memAlloc, []string{"cuMemAlloc_v2"}},
		{&d.memFree, []string{"cuMemFree_v2"}},
		{&d.memGetInfo, []string{"cuMemGetInfo_v2"}},
		{&d.memcpyHtoD, []string{"cuMemcpyHtoD_v2"}},
		{&d.memcpyDtoH, []string{"cuMemcpyDtoH_v2"}},
		{&d.memcpyHtoDAsync, []string{"cuMemcpyHtoDAsync_v2"}},
		{&d.memcpyDtoHAsync, []string{"cuMemcpyDtoHAsync_v2"}},
		{&d.memcpyDtoDAsync, []string{"cuMemcpyDtoDAsync_v2"}},
		{&d.memcpyPeerAsync, []string{"cuMemcpyPeerAsync"}},
		{&d.memHostRegister, []string{"cuMemHostRegister_v2"}},
		{&d.memHostUnregister, []string{"cuMemHostUnregister"}},
		{&d.streamCreate, []string{"cuStreamCreate"}},
		{&d.streamSynchronize, []string{"cuStreamSynchronize"}},
		{&d.streamDestroy, []string{"cuStreamDestroy_v2"}},
		{&d.eventCreate, []string{"cuEventCreate"}},
		{&d.eventRecord, []string{"cuEventRecord"}},
		{&d.eventSynchronize, []string{"cuEventSynchronize"}},
		{&d.eventElapsedTime, []string{"cuEventElapsedTime_v2", "cuEventElapsedTime"}},
		{&d.eventDestroy, []string{"cuEventDestroy_v2"}},
		{&d.moduleLoadData, []string{"cuModuleLoadData"}},
		{&d.moduleUnload, []string{"cuModuleUnload"}},
		{&d.moduleGetFunction, []string{"cuModuleGetFunction"}},
		{&d.funcGetAttribute, []string{"cuFuncGetAttribute"}},
		{&d.launchKernel, []string{"cuLaunchKernel"}},
		{&d.getErrorName, []string{"cuGetErrorName"}},
		{&d.getErrorString, []string{"cuGetErrorString"}},
		{&d.deviceCanAccessPeer, []string{"cuDeviceCanAccessPeer"}},
		{&d.ctxEnablePeerAccess, []string{"cuCtxEnablePeerAccess"}},
	}
}

var (
	driverOnce sync.Once
	driverVal  *driverAPI
	driverErr  error
)

// driverSonames are tried in order to load the driver API.
var driverSonames = []string{"libcuda.so.1", "libcuda.so"}

// loadDriver opens libcuda once, resolves every entry point and calls cuInit.
func loadDriver() (*driverAPI, error) {
	driverOnce.Do(func() { driverVal, driverErr = openDriver(driverSonames) })
	return driverVal, driverErr
}

func openDriver(sonames []string) (*driverAPI, error) {
	lib, err := openFirst("CUDA driver", sonames)
	if err != nil {
		return nil, err
	}
	d := &driverAPI{lib: lib}
	var missing []error
	for _, s := range d.symbols() {
		p, _, err := lib.symbol(s.names...)
		if err != nil {
			missing = append(missing, err)
			continue
		}
		*s.dst = p
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("CUDA driver %s lacks entry points: %w", lib.path, errors.Join(missing...))
	}
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

// check turns a failed CUresult into a typed *backends.Error.
func (d *driverAPI) check(op string, r cuResult) error {
	if r == cudaSuccess {
		return nil
	}
	native := d.name(r)
	if s := d.describe(r); s != "" {
		native += " (" + s + ")"
	}
	return &backends.Error{Backend: "cuda", Op: op, Native: native, Err: r.sentinel()}
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
