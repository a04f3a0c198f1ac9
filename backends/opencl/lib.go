package opencl

import (
	"errors"
	"strconv"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends/driver"
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

	clEventCommandExecutionStatus = 0x11D3
	clComplete                    = 0

	clPlatformNotFoundKHR       = -1001
	clBuildProgramFailure       = -11
	clMemObjectAllocationFailed = -4
	clOutOfResources            = -5
	clOutOfHostMemory           = -6
	clDeviceNotAvailable        = -2
	clExecStatusErrorForEvents  = -14
)

// The OpenCL object handles, each its own type so that a queue cannot be
// passed where a kernel belongs. They are the loader's opaque pointers.
type (
	platformID   uintptr // cl_platform_id
	deviceID     uintptr // cl_device_id
	clContext    uintptr // cl_context
	commandQueue uintptr // cl_command_queue
	memObject    uintptr // cl_mem
	clProgram    uintptr // cl_program
	clKernel     uintptr // cl_kernel
	clEvent      uintptr // cl_event
)

// lib is one loaded OpenCL ICD loader: the address of every entry point
// this backend calls, and one method per C function that takes and returns
// Go types, makes the call with purego.SyscallN (through dl.CallN, which
// spares it the allocation of its variadic argument slice) and turns a
// failed cl_int status into an error naming the function and the status.
// Nothing reflects and, in steady state, nothing allocates: the hot paths
// (enqueues, kernel arguments, events) hand the loader memory that the
// caller keeps on the heap (TestHotPathsDoNotAllocate).
type lib struct {
	dl.Library

	fnGetPlatformIDs, fnGetPlatformInfo, fnGetDeviceIDs, fnGetDeviceInfo uintptr
	fnCreateContext, fnReleaseContext                                    uintptr
	fnCreateCommandQueue, fnCreateCommandQueueWithProperties             uintptr
	fnReleaseCommandQueue, fnFinish, fnFlush                             uintptr
	fnCreateBuffer, fnReleaseMemObject                                   uintptr
	fnEnqueueReadBuffer, fnEnqueueWriteBuffer, fnEnqueueCopyBuffer       uintptr
	fnCreateProgramWithSource, fnCreateProgramWithBinary                 uintptr
	fnBuildProgram, fnGetProgramBuildInfo, fnGetProgramInfo              uintptr
	fnReleaseProgram                                                     uintptr
	fnCreateKernel, fnReleaseKernel, fnSetKernelArg, fnGetKernelInfo     uintptr
	fnGetKernelWorkGroupInfo                                             uintptr
	fnEnqueueNDRangeKernel                                               uintptr
	fnWaitForEvents, fnGetEventProfilingInfo, fnReleaseEvent             uintptr
	fnRetainEvent, fnGetEventInfo                                        uintptr
	fnEnqueueMarkerWithWaitList                                          uintptr // optional: OpenCL 1.2
}

// loader is the process's OpenCL loader, opened on first use.
var loader dl.Lazy[*lib]

// load opens the OpenCL loader once; every soname that failed is reported.
func load() (*lib, error) {
	return loader.Load(func() (*lib, error) { return dl.OpenTable(sonames, &lib{}) })
}

// Bind resolves every entry point the backend calls.
func (l *lib) Bind(h uintptr) error {
	err := dl.Resolve(h, []dl.Symbol{
		{Addr: &l.fnGetPlatformIDs, Name: "clGetPlatformIDs"},
		{Addr: &l.fnGetPlatformInfo, Name: "clGetPlatformInfo"},
		{Addr: &l.fnGetDeviceIDs, Name: "clGetDeviceIDs"},
		{Addr: &l.fnGetDeviceInfo, Name: "clGetDeviceInfo"},
		{Addr: &l.fnCreateContext, Name: "clCreateContext"},
		{Addr: &l.fnReleaseContext, Name: "clReleaseContext"},
		{Addr: &l.fnReleaseCommandQueue, Name: "clReleaseCommandQueue"},
		{Addr: &l.fnFinish, Name: "clFinish"},
		{Addr: &l.fnFlush, Name: "clFlush"},
		{Addr: &l.fnCreateBuffer, Name: "clCreateBuffer"},
		{Addr: &l.fnReleaseMemObject, Name: "clReleaseMemObject"},
		{Addr: &l.fnEnqueueReadBuffer, Name: "clEnqueueReadBuffer"},
		{Addr: &l.fnEnqueueWriteBuffer, Name: "clEnqueueWriteBuffer"},
		{Addr: &l.fnEnqueueCopyBuffer, Name: "clEnqueueCopyBuffer"},
		{Addr: &l.fnCreateProgramWithSource, Name: "clCreateProgramWithSource"},
		{Addr: &l.fnCreateProgramWithBinary, Name: "clCreateProgramWithBinary"},
		{Addr: &l.fnBuildProgram, Name: "clBuildProgram"},
		{Addr: &l.fnGetProgramBuildInfo, Name: "clGetProgramBuildInfo"},
		{Addr: &l.fnGetProgramInfo, Name: "clGetProgramInfo"},
		{Addr: &l.fnReleaseProgram, Name: "clReleaseProgram"},
		{Addr: &l.fnCreateKernel, Name: "clCreateKernel"},
		{Addr: &l.fnReleaseKernel, Name: "clReleaseKernel"},
		{Addr: &l.fnSetKernelArg, Name: "clSetKernelArg"},
		{Addr: &l.fnGetKernelInfo, Name: "clGetKernelInfo"},
		{Addr: &l.fnGetKernelWorkGroupInfo, Name: "clGetKernelWorkGroupInfo"},
		{Addr: &l.fnEnqueueNDRangeKernel, Name: "clEnqueueNDRangeKernel"},
		{Addr: &l.fnWaitForEvents, Name: "clWaitForEvents"},
		{Addr: &l.fnGetEventProfilingInfo, Name: "clGetEventProfilingInfo"},
		{Addr: &l.fnReleaseEvent, Name: "clReleaseEvent"},
		{Addr: &l.fnRetainEvent, Name: "clRetainEvent"},
		{Addr: &l.fnGetEventInfo, Name: "clGetEventInfo"},
		{Addr: &l.fnEnqueueMarkerWithWaitList, Name: "clEnqueueMarkerWithWaitList", Optional: true},
		// OpenCL 2.0 replaced clCreateCommandQueue; loaders keep both,
		// but a 1.x-only or 3.0-only library may lack one.
		{Addr: &l.fnCreateCommandQueueWithProperties, Name: "clCreateCommandQueueWithProperties", Optional: true},
		{Addr: &l.fnCreateCommandQueue, Name: "clCreateCommandQueue", Optional: true},
	})
	if l.fnCreateCommandQueueWithProperties == 0 && l.fnCreateCommandQueue == 0 {
		err = errors.Join(err, errors.New("neither clCreateCommandQueueWithProperties nor clCreateCommandQueue"))
	}
	return err
}

// status is a cl_int status code.
type status int32

// check is nil for CL_SUCCESS, else the typed error for op.
// call1 calls the one-argument entry point fn, named op, with handle h.
func call1[H ~uintptr](op string, fn uintptr, h H) error {
	return check(op, dl.Call1(fn, uintptr(h)))
}

func check(op string, r uintptr) error {
	if st := status(int32(r)); st != clSuccess {
		return clError(op, st)
	}
	return nil
}

// clBool is a cl_bool.
func clBool(b bool) uintptr {
	if b {
		return clTrue
	}
	return 0
}

// GetPlatformIDs is clGetPlatformIDs: it fills platforms (which may be
// empty) and returns how many platforms there are.
func (l *lib) GetPlatformIDs(platforms []platformID) (uint32, error) {
	var n uint32
	r := dl.Call3(l.fnGetPlatformIDs, uintptr(len(platforms)), uintptr(unsafe.Pointer(unsafe.SliceData(platforms))), uintptr(unsafe.Pointer(&n)))
	return n, check("clGetPlatformIDs", r)
}

// GetPlatformInfo is clGetPlatformInfo: it fills value (which may be
// empty) and returns the size of the whole value.
func (l *lib) GetPlatformInfo(p platformID, param uint32, value []byte) (uintptr, error) {
	var size uintptr
	r := dl.Call5(l.fnGetPlatformInfo, uintptr(p), uintptr(param), uintptr(len(value)), uintptr(unsafe.Pointer(unsafe.SliceData(value))), uintptr(unsafe.Pointer(&size)))
	return size, check("clGetPlatformInfo", r)
}

// GetDeviceIDs is clGetDeviceIDs for the device types in typ: it fills
// devices (which may be empty) and returns how many devices there are.
func (l *lib) GetDeviceIDs(p platformID, typ uint64, devices []deviceID) (uint32, error) {
	var n uint32
	r := dl.Call5(l.fnGetDeviceIDs, uintptr(p), uintptr(typ), uintptr(len(devices)), uintptr(unsafe.Pointer(unsafe.SliceData(devices))), uintptr(unsafe.Pointer(&n)))
	return n, check("clGetDeviceIDs", r)
}

// GetDeviceInfo is clGetDeviceInfo: it fills value (which may be empty)
// and returns the size of the whole value.
func (l *lib) GetDeviceInfo(d deviceID, param uint32, value []byte) (uintptr, error) {
	var size uintptr
	r := dl.Call5(l.fnGetDeviceInfo, uintptr(d), uintptr(param), uintptr(len(value)), uintptr(unsafe.Pointer(unsafe.SliceData(value))), uintptr(unsafe.Pointer(&size)))
	if err := check("clGetDeviceInfo", r); err != nil {
		err.(*driver.Error).Op = "clGetDeviceInfo(0x" + strconv.FormatUint(uint64(param), 16) + ")"
		return 0, err
	}
	return size, nil
}

// CreateContext is clCreateContext over devices, with no properties and
// no notification callback.
func (l *lib) CreateContext(devices []deviceID) (clContext, error) {
	var st int32
	h := dl.Call6(l.fnCreateContext, 0, uintptr(len(devices)), uintptr(unsafe.Pointer(unsafe.SliceData(devices))), 0, 0, uintptr(unsafe.Pointer(&st)))
	return clContext(h), check("clCreateContext", uintptr(st))
}

// ReleaseContext is clReleaseContext.
func (l *lib) ReleaseContext(c clContext) error {
	return call1("clReleaseContext", l.fnReleaseContext, c)
}

// HasQueueWithProperties reports whether the loader has
// clCreateCommandQueueWithProperties (OpenCL 2.0 and later).
func (l *lib) HasQueueWithProperties() bool { return l.fnCreateCommandQueueWithProperties != 0 }

// CreateCommandQueueWithProperties is clCreateCommandQueueWithProperties;
// props is the zero-terminated property list.
func (l *lib) CreateCommandQueueWithProperties(c clContext, d deviceID, props []uint64) (commandQueue, error) {
	var st int32
	h := dl.Call4(l.fnCreateCommandQueueWithProperties, uintptr(c), uintptr(d), uintptr(unsafe.Pointer(unsafe.SliceData(props))), uintptr(unsafe.Pointer(&st)))
	return commandQueue(h), check("clCreateCommandQueueWithProperties", uintptr(st))
}

// CreateCommandQueue is the OpenCL 1.x clCreateCommandQueue.
func (l *lib) CreateCommandQueue(c clContext, d deviceID, props uint64) (commandQueue, error) {
	var st int32
	h := dl.Call4(l.fnCreateCommandQueue, uintptr(c), uintptr(d), uintptr(props), uintptr(unsafe.Pointer(&st)))
	return commandQueue(h), check("clCreateCommandQueue", uintptr(st))
}

// ReleaseCommandQueue is clReleaseCommandQueue.
func (l *lib) ReleaseCommandQueue(q commandQueue) error {
	return call1("clReleaseCommandQueue", l.fnReleaseCommandQueue, q)
}

// Finish is clFinish.
func (l *lib) Finish(q commandQueue) error { return call1("clFinish", l.fnFinish, q) }

// Flush is clFlush: the commands enqueued so far are handed to the device.
func (l *lib) Flush(q commandQueue) error { return call1("clFlush", l.fnFlush, q) }

// CreateBuffer is clCreateBuffer with no host pointer.
func (l *lib) CreateBuffer(c clContext, flags uint64, size uintptr) (memObject, error) {
	var st int32
	h := dl.Call5(l.fnCreateBuffer, uintptr(c), uintptr(flags), size, 0, uintptr(unsafe.Pointer(&st)))
	return memObject(h), check("clCreateBuffer", uintptr(st))
}

// ReleaseMemObject is clReleaseMemObject.
func (l *lib) ReleaseMemObject(m memObject) error {
	return call1("clReleaseMemObject", l.fnReleaseMemObject, m)
}

// EnqueueReadBuffer is clEnqueueReadBuffer of size bytes at off into host,
// after the events in wait; ev, when not nil, receives the command's event.
func (l *lib) EnqueueReadBuffer(q commandQueue, m memObject, blocking bool, off, size uintptr, host unsafe.Pointer, wait []clEvent, ev *clEvent) error {
	if len(wait) == 0 {
		wait = nil // a wait list of no events is NULL
	}
	r := dl.Call9(l.fnEnqueueReadBuffer, uintptr(q), uintptr(m), clBool(blocking), off, size, uintptr(host), uintptr(len(wait)), uintptr(unsafe.Pointer(unsafe.SliceData(wait))), uintptr(unsafe.Pointer(ev)))
	return check("clEnqueueReadBuffer", r)
}

// EnqueueWriteBuffer is clEnqueueWriteBuffer of size bytes from host at
// off, after the events in wait; ev, when not nil, receives the command's
// event.
func (l *lib) EnqueueWriteBuffer(q commandQueue, m memObject, blocking bool, off, size uintptr, host unsafe.Pointer, wait []clEvent, ev *clEvent) error {
	if len(wait) == 0 {
		wait = nil // a wait list of no events is NULL
	}
	r := dl.Call9(l.fnEnqueueWriteBuffer, uintptr(q), uintptr(m), clBool(blocking), off, size, uintptr(host), uintptr(len(wait)), uintptr(unsafe.Pointer(unsafe.SliceData(wait))), uintptr(unsafe.Pointer(ev)))
	return check("clEnqueueWriteBuffer", r)
}

// EnqueueCopyBuffer is clEnqueueCopyBuffer after the events in wait; ev,
// when not nil, receives the command's event.
func (l *lib) EnqueueCopyBuffer(q commandQueue, src, dst memObject, srcOff, dstOff, size uintptr, wait []clEvent, ev *clEvent) error {
	if len(wait) == 0 {
		wait = nil // a wait list of no events is NULL
	}
	r := dl.Call9(l.fnEnqueueCopyBuffer, uintptr(q), uintptr(src), uintptr(dst), srcOff, dstOff, size, uintptr(len(wait)), uintptr(unsafe.Pointer(unsafe.SliceData(wait))), uintptr(unsafe.Pointer(ev)))
	return check("clEnqueueCopyBuffer", r)
}

// HasMarkerWithWaitList reports whether the loader has
// clEnqueueMarkerWithWaitList (OpenCL 1.2 and later).
func (l *lib) HasMarkerWithWaitList() bool { return l.fnEnqueueMarkerWithWaitList != 0 }

// EnqueueMarkerWithWaitList is clEnqueueMarkerWithWaitList: a command that
// does nothing, after the events in wait (and, on an in-order queue, after
// every command enqueued before it); ev receives its event.
func (l *lib) EnqueueMarkerWithWaitList(q commandQueue, wait []clEvent, ev *clEvent) error {
	if len(wait) == 0 {
		wait = nil // a wait list of no events is NULL
	}
	r := dl.Call4(l.fnEnqueueMarkerWithWaitList, uintptr(q), uintptr(len(wait)), uintptr(unsafe.Pointer(unsafe.SliceData(wait))), uintptr(unsafe.Pointer(ev)))
	return check("clEnqueueMarkerWithWaitList", r)
}

// CreateProgramWithSource is clCreateProgramWithSource of one source
// string.
func (l *lib) CreateProgramWithSource(c clContext, source string) (clProgram, error) {
	src := unsafe.StringData(source)
	length := uintptr(len(source))
	var st int32
	h := dl.Call5(l.fnCreateProgramWithSource, uintptr(c), 1, uintptr(unsafe.Pointer(&src)), uintptr(unsafe.Pointer(&length)), uintptr(unsafe.Pointer(&st)))
	return clProgram(h), check("clCreateProgramWithSource", uintptr(st))
}

// CreateProgramWithBinary is clCreateProgramWithBinary of one binary for
// one device; the binary's own status is checked as well as the call's.
func (l *lib) CreateProgramWithBinary(c clContext, d deviceID, binary []byte) (clProgram, error) {
	bin := unsafe.SliceData(binary)
	length := uintptr(len(binary))
	var st, binStatus int32
	h := dl.Call7(l.fnCreateProgramWithBinary, uintptr(c), 1, uintptr(unsafe.Pointer(&d)), uintptr(unsafe.Pointer(&length)),
		uintptr(unsafe.Pointer(&bin)), uintptr(unsafe.Pointer(&binStatus)), uintptr(unsafe.Pointer(&st)))
	if err := check("clCreateProgramWithBinary", uintptr(st)); err != nil {
		return 0, err
	}
	if err := check("clCreateProgramWithBinary", uintptr(binStatus)); err != nil {
		_ = l.ReleaseProgram(clProgram(h))
		return 0, err
	}
	return clProgram(h), nil
}

// BuildProgram is clBuildProgram for one device, synchronously.
func (l *lib) BuildProgram(p clProgram, d deviceID, options string) error {
	opts := cString(options)
	r := dl.Call6(l.fnBuildProgram, uintptr(p), 1, uintptr(unsafe.Pointer(&d)), uintptr(unsafe.Pointer(opts)), 0, 0)
	return check("clBuildProgram", r)
}

// GetProgramBuildInfo is clGetProgramBuildInfo: it fills value (which may
// be empty) and returns the size of the whole value.
func (l *lib) GetProgramBuildInfo(p clProgram, d deviceID, param uint32, value []byte) (uintptr, error) {
	var size uintptr
	r := dl.Call6(l.fnGetProgramBuildInfo, uintptr(p), uintptr(d), uintptr(param), uintptr(len(value)), uintptr(unsafe.Pointer(unsafe.SliceData(value))), uintptr(unsafe.Pointer(&size)))
	return size, check("clGetProgramBuildInfo", r)
}

// GetProgramInfo is clGetProgramInfo into the size bytes at value.
func (l *lib) GetProgramInfo(p clProgram, param uint32, size uintptr, value unsafe.Pointer) error {
	r := dl.Call5(l.fnGetProgramInfo, uintptr(p), uintptr(param), size, uintptr(value), 0)
	return check("clGetProgramInfo", r)
}

// ReleaseProgram is clReleaseProgram.
func (l *lib) ReleaseProgram(p clProgram) error {
	return call1("clReleaseProgram", l.fnReleaseProgram, p)
}

// CreateKernel is clCreateKernel for the kernel named name.
func (l *lib) CreateKernel(p clProgram, name string) (clKernel, error) {
	cname := cString(name)
	var st int32
	h := dl.Call3(l.fnCreateKernel, uintptr(p), uintptr(unsafe.Pointer(cname)), uintptr(unsafe.Pointer(&st)))
	return clKernel(h), check("clCreateKernel", uintptr(st))
}

// ReleaseKernel is clReleaseKernel.
func (l *lib) ReleaseKernel(k clKernel) error { return call1("clReleaseKernel", l.fnReleaseKernel, k) }

// SetKernelArg is clSetKernelArg: argument index takes the size bytes at
// value.
func (l *lib) SetKernelArg(k clKernel, index uint32, size uintptr, value unsafe.Pointer) error {
	r := dl.Call4(l.fnSetKernelArg, uintptr(k), uintptr(index), size, uintptr(value))
	return check("clSetKernelArg", r)
}

// GetKernelInfo is clGetKernelInfo into the size bytes at value.
func (l *lib) GetKernelInfo(k clKernel, param uint32, size uintptr, value unsafe.Pointer) error {
	r := dl.Call5(l.fnGetKernelInfo, uintptr(k), uintptr(param), size, uintptr(value), 0)
	return check("clGetKernelInfo", r)
}

// GetKernelWorkGroupInfo is clGetKernelWorkGroupInfo into the size bytes
// at value.
func (l *lib) GetKernelWorkGroupInfo(k clKernel, d deviceID, param uint32, size uintptr, value unsafe.Pointer) error {
	r := dl.Call6(l.fnGetKernelWorkGroupInfo, uintptr(k), uintptr(d), uintptr(param), size, uintptr(value), 0)
	return check("clGetKernelWorkGroupInfo", r)
}

// EnqueueNDRangeKernel is clEnqueueNDRangeKernel over dims axes of global
// work items in groups of local, with no offset, after the events in wait;
// ev, when not nil, receives the command's event.
func (l *lib) EnqueueNDRangeKernel(q commandQueue, k clKernel, dims uint32, global, local *[3]uintptr, wait []clEvent, ev *clEvent) error {
	if len(wait) == 0 {
		wait = nil // a wait list of no events is NULL
	}
	r := dl.Call9(l.fnEnqueueNDRangeKernel, uintptr(q), uintptr(k), uintptr(dims), 0,
		uintptr(unsafe.Pointer(global)), uintptr(unsafe.Pointer(local)), uintptr(len(wait)), uintptr(unsafe.Pointer(unsafe.SliceData(wait))), uintptr(unsafe.Pointer(ev)))
	return check("clEnqueueNDRangeKernel", r)
}

// WaitForEvents is clWaitForEvents.
func (l *lib) WaitForEvents(events []clEvent) error {
	r := dl.Call2(l.fnWaitForEvents, uintptr(len(events)), uintptr(unsafe.Pointer(unsafe.SliceData(events))))
	return check("clWaitForEvents", r)
}

// GetEventProfilingInfo is clGetEventProfilingInfo of a cl_ulong counter
// into value.
func (l *lib) GetEventProfilingInfo(ev clEvent, param uint32, value *uint64) error {
	r := dl.Call5(l.fnGetEventProfilingInfo, uintptr(ev), uintptr(param), unsafe.Sizeof(*value), uintptr(unsafe.Pointer(value)), 0)
	return check("clGetEventProfilingInfo", r)
}

// EventStatus is clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS): the
// command's status (CL_COMPLETE, a state before it, or a negative error)
// into st.
func (l *lib) EventStatus(ev clEvent, st *int32) error {
	r := dl.Call5(l.fnGetEventInfo, uintptr(ev), clEventCommandExecutionStatus, unsafe.Sizeof(*st), uintptr(unsafe.Pointer(st)), 0)
	return check("clGetEventInfo", r)
}

// RetainEvent is clRetainEvent.
func (l *lib) RetainEvent(ev clEvent) error { return call1("clRetainEvent", l.fnRetainEvent, ev) }

// ReleaseEvent is clReleaseEvent.
func (l *lib) ReleaseEvent(ev clEvent) error { return call1("clReleaseEvent", l.fnReleaseEvent, ev) }

// statusName is the symbolic name of an OpenCL status code.
func statusName(s status) string {
	if n, ok := statusNames[int32(s)]; ok {
		return n
	}
	return "CL_STATUS_" + strconv.Itoa(int(s))
}

// clError turns a failed status into a typed error with the sentinel the
// status amounts to.
func clError(op string, st status) error {
	sentinel := error(errors.New("call failed"))
	switch st {
	case clMemObjectAllocationFailed, clOutOfResources, clOutOfHostMemory:
		sentinel = driver.ErrOutOfMemory
	case clBuildProgramFailure:
		sentinel = driver.ErrCompile
	case -30, -48, -49, -50, -51, -52, -53, -54, -55, -56, -63:
		// CL_INVALID_VALUE and the CL_INVALID_KERNEL_*/WORK_* family.
		sentinel = driver.ErrInvalidArgument
	}
	return &driver.Error{Backend: Name, Op: op, Native: statusName(st), Err: sentinel}
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
