package opencl

import (
	"errors"
	"runtime"
	"strconv"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/internal/dl"
)

// sonames are tried in order; the ICD loader's versioned name first.
var sonames = []string{"libOpenCL.so.1", "libOpenCL.so"}

// OpenCL constants used here (values from the Khronos cl.h).
const (
	clSuccess = 0
	clTrue    = 1

	clPlatformVersion = 0x0901
	clPlatformName    = 0x0902
	clPlatformVendor  = 0x0903

	clDeviceTypeCPU         = 1 << 1
	clDeviceTypeGPU         = 1 << 2
	clDeviceTypeAccelerator = 1 << 3
	clDeviceTypeAll         = 0xFFFFFFFF

	clDeviceType                  = 0x1000
	clDeviceMaxComputeUnits       = 0x1002
	clDeviceMaxWorkItemDimensions = 0x1003
	clDeviceMaxWorkGroupSize      = 0x1004
	clDeviceMaxWorkItemSizes      = 0x1005
	clDevicePrefVecWidthChar      = 0x1006
	clDevicePrefVecWidthShort     = 0x1007
	clDevicePrefVecWidthInt       = 0x1008
	clDevicePrefVecWidthLong      = 0x1009
	clDevicePrefVecWidthFloat     = 0x100A
	clDevicePrefVecWidthDouble    = 0x100B
	clDeviceMaxClockFrequency     = 0x100C
	clDeviceAddressBits           = 0x100D
	clDeviceMaxMemAllocSize       = 0x1010
	clDeviceMaxParameterSize      = 0x1017
	clDeviceGlobalMemCacheSize    = 0x101E
	clDeviceGlobalMemSize         = 0x101F
	clDeviceLocalMemSize          = 0x1023
	clDeviceName                  = 0x102B
	clDeviceVendor                = 0x102C
	clDriverVersion               = 0x102D
	clDeviceVersion               = 0x102F
	clDeviceExtensions            = 0x1030
	clDevicePrefVecWidthHalf      = 0x1034

	clQueueProfilingEnable = 1 << 1
	clQueueProperties      = 0x1093

	clMemReadWrite = 1 << 0

	clProgramBinarySizes = 0x1165
	clProgramBinaries    = 0x1166
	clProgramBuildLog    = 0x1183

	clKernelNumArgs       = 0x1191
	clKernelWorkGroupSize = 0x11B0

	clProfilingCommandStart = 0x1282
	clProfilingCommandEnd   = 0x1283

	clBuildProgramFailure       = -11
	clMemObjectAllocationFailed = -4
	clOutOfResources            = -5
	clOutOfHostMemory           = -6
)

// lib holds the entry points of one loaded OpenCL ICD loader. Every call
// goes through purego.SyscallN: the arguments are handles, sizes and
// pointers, and the hot paths (copies, launches) pay no reflection.
type lib struct {
	handle uintptr
	name   string

	getPlatformIDs, getPlatformInfo, getDeviceIDs, getDeviceInfo uintptr
	createContext, releaseContext                                uintptr
	createCommandQueue, createQueueWithProperties                uintptr
	releaseCommandQueue, finish                                  uintptr
	createBuffer, releaseMemObject                               uintptr
	enqueueReadBuffer, enqueueWriteBuffer, enqueueCopyBuffer     uintptr
	createProgramWithSource, createProgramWithBinary             uintptr
	buildProgram, getProgramBuildInfo, getProgramInfo            uintptr
	releaseProgram                                               uintptr
	createKernel, releaseKernel, setKernelArg, getKernelInfo     uintptr
	getKernelWorkGroupInfo                                       uintptr
	enqueueNDRangeKernel                                         uintptr
	waitForEvents, getEventProfilingInfo, releaseEvent           uintptr
}

var (
	libOnce sync.Once
	libVal  *lib
	libErr  error
)

// load opens the OpenCL loader once; every soname that failed is reported.
func load() (*lib, error) {
	libOnce.Do(func() { libVal, libErr = open() })
	return libVal, libErr
}

func open() (*lib, error) {
	var l *lib
	_, name, err := dl.OpenFirst(sonames, func(h uintptr) error {
		l = &lib{handle: h}
		return l.bind()
	})
	if err != nil {
		return nil, err
	}
	l.name = name
	return l, nil
}

func (l *lib) bind() error {
	required := []dl.Symbol{
		{Addr: &l.getPlatformIDs, Name: "clGetPlatformIDs"},
		{Addr: &l.getPlatformInfo, Name: "clGetPlatformInfo"},
		{Addr: &l.getDeviceIDs, Name: "clGetDeviceIDs"},
		{Addr: &l.getDeviceInfo, Name: "clGetDeviceInfo"},
		{Addr: &l.createContext, Name: "clCreateContext"},
		{Addr: &l.releaseContext, Name: "clReleaseContext"},
		{Addr: &l.releaseCommandQueue, Name: "clReleaseCommandQueue"},
		{Addr: &l.finish, Name: "clFinish"},
		{Addr: &l.createBuffer, Name: "clCreateBuffer"},
		{Addr: &l.releaseMemObject, Name: "clReleaseMemObject"},
		{Addr: &l.enqueueReadBuffer, Name: "clEnqueueReadBuffer"},
		{Addr: &l.enqueueWriteBuffer, Name: "clEnqueueWriteBuffer"},
		{Addr: &l.enqueueCopyBuffer, Name: "clEnqueueCopyBuffer"},
		{Addr: &l.createProgramWithSource, Name: "clCreateProgramWithSource"},
		{Addr: &l.createProgramWithBinary, Name: "clCreateProgramWithBinary"},
		{Addr: &l.buildProgram, Name: "clBuildProgram"},
		{Addr: &l.getProgramBuildInfo, Name: "clGetProgramBuildInfo"},
		{Addr: &l.getProgramInfo, Name: "clGetProgramInfo"},
		{Addr: &l.releaseProgram, Name: "clReleaseProgram"},
		{Addr: &l.createKernel, Name: "clCreateKernel"},
		{Addr: &l.releaseKernel, Name: "clReleaseKernel"},
		{Addr: &l.setKernelArg, Name: "clSetKernelArg"},
		{Addr: &l.getKernelInfo, Name: "clGetKernelInfo"},
		{Addr: &l.getKernelWorkGroupInfo, Name: "clGetKernelWorkGroupInfo"},
		{Addr: &l.enqueueNDRangeKernel, Name: "clEnqueueNDRangeKernel"},
		{Addr: &l.waitForEvents, Name: "clWaitForEvents"},
		{Addr: &l.getEventProfilingInfo, Name: "clGetEventProfilingInfo"},
		{Addr: &l.releaseEvent, Name: "clReleaseEvent"},
	}
	errs := []error{dl.Resolve(l.handle, required)}
	// OpenCL 2.0 replaced clCreateCommandQueue; loaders keep both, but a
	// 1.x-only or 3.0-only library may lack one. Either will do.
	l.createQueueWithProperties, _ = purego.Dlsym(l.handle, "clCreateCommandQueueWithProperties")
	l.createCommandQueue, _ = purego.Dlsym(l.handle, "clCreateCommandQueue")
	if l.createQueueWithProperties == 0 && l.createCommandQueue == 0 {
		errs = append(errs, errors.New("neither clCreateCommandQueueWithProperties nor clCreateCommandQueue"))
	}
	return errors.Join(errs...)
}

// call runs an OpenCL function that returns a cl_int status. Like
// purego.SyscallN it keeps the objects behind uintptr(unsafe.Pointer(…))
// arguments alive and on the heap for the length of the call, so callers
// convert pointers inside the call expression.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}

// callHandle runs a create function that returns a handle and reports its
// status through the last argument.
//
//go:uintptrescapes
func callHandle(fn uintptr, args ...uintptr) (uintptr, int32) {
	status := new(int32)
	var pin runtime.Pinner
	pin.Pin(status)
	defer pin.Unpin()
	args = append(args, uintptr(unsafe.Pointer(status)))
	r, _, _ := purego.SyscallN(fn, args...)
	return r, *status
}

// statusName is the symbolic name of an OpenCL status code.
func statusName(s int32) string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return "CL_STATUS_" + strconv.Itoa(int(s))
}

// clError turns a failed status into a typed error with the sentinel the
// status amounts to.
func clError(op string, status int32) error {
	sentinel := error(errors.New("call failed"))
	switch status {
	case clMemObjectAllocationFailed, clOutOfResources, clOutOfHostMemory:
		sentinel = backends.ErrOutOfMemory
	case clBuildProgramFailure:
		sentinel = backends.ErrCompile
	case -30, -48, -49, -50, -51, -52, -53, -54, -55, -56, -63:
		// CL_INVALID_VALUE and the CL_INVALID_KERNEL_*/WORK_* family.
		sentinel = backends.ErrInvalidArgument
	}
	return &backends.Error{Backend: Name, Op: op, Native: statusName(status), Err: sentinel}
}

// cString returns a NUL-terminated copy of s for C to read.
func cString(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

// goString reads a NUL-terminated C string from a byte slice.
func goString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
