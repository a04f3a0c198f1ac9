package vulkan

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

// sonames are tried in order: the loader's versioned name, then the
// development symlink.
var sonames = []string{"libvulkan.so.1", "libvulkan.so"}

// Vulkan constants used here (values from the Khronos vulkan_core.h).
const (
	vkSuccess  = 0
	vkNotReady = 1
	vkTimeout  = 2

	vkErrOutOfHostMemory   = -1
	vkErrOutOfDeviceMemory = -2
	vkErrDeviceLost        = -4
	vkErrTooManyObjects    = -10
	vkErrOutOfPoolMemory   = -1000069000
	vkErrInvalidShaderNV   = -1000012000

	stApplicationInfo               = 0
	stInstanceCreateInfo            = 1
	stDeviceQueueCreateInfo         = 2
	stDeviceCreateInfo              = 3
	stSubmitInfo                    = 4
	stMemoryAllocateInfo            = 5
	stFenceCreateInfo               = 8
	stQueryPoolCreateInfo           = 11
	stBufferCreateInfo              = 12
	stShaderModuleCreateInfo        = 16
	stPipelineCacheCreateInfo       = 17
	stPipelineShaderStageCreateInfo = 18
	stComputePipelineCreateInfo     = 29
	stPipelineLayoutCreateInfo      = 30
	stDescriptorSetLayoutCreateInfo = 32
	stDescriptorPoolCreateInfo      = 33
	stDescriptorSetAllocateInfo     = 34
	stWriteDescriptorSet            = 35
	stCommandPoolCreateInfo         = 39
	stCommandBufferAllocateInfo     = 40
	stCommandBufferBeginInfo        = 42
	stMemoryBarrier                 = 46

	physicalDeviceTypeOther      = 0
	physicalDeviceTypeIntegrated = 1
	physicalDeviceTypeDiscrete   = 2
	physicalDeviceTypeVirtual    = 3
	physicalDeviceTypeCPU        = 4

	queueCompute = 0x2

	memDeviceLocal  = 0x1
	memHostVisible  = 0x2
	memHostCoherent = 0x4
	memHostCached   = 0x8
	heapDeviceLocal = 0x1

	bufferUsageTransferSrc = 0x1
	bufferUsageTransferDst = 0x2
	bufferUsageStorage     = 0x20

	commandPoolResetBuffer    = 0x2
	commandBufferOneTimeUsage = 0x1
	descriptorStorageBuffer   = 7
	descriptorPoolFreeSet     = 0x1
	shaderStageCompute        = 0x20
	pipelineBindCompute       = 1
	queryTypeTimestamp        = 2
	queryResult64Wait         = 0x1 | 0x2

	stageTopOfPipe    = 0x1
	stageBottomOfPipe = 0x2000
	stageHost         = 0x4000
	stageAllCommands  = 0x10000

	accessHostRead    = 0x2000
	accessMemoryRead  = 0x8000
	accessMemoryWrite = 0x10000

	wholeSize = ^uint64(0)
)

// apiVersion makes a VK_MAKE_API_VERSION(0, major, minor, 0) value.
func apiVersion(major, minor uint32) uint32 { return major<<22 | minor<<12 }

// lib holds the Vulkan loader's exported commands. The loader exports every
// core 1.0 command and dispatches it to the right driver, so no
// vkGet*ProcAddr step is needed. Every call goes through purego.SyscallN.
type lib struct {
	handle uintptr
	name   string

	createInstance, destroyInstance, enumeratePhysicalDevices                  uintptr
	getPhysicalDeviceProperties, getPhysicalDeviceQueueFamilyProperties        uintptr
	getPhysicalDeviceMemoryProperties, getPhysicalDeviceFeatures               uintptr
	createDevice, destroyDevice, getDeviceQueue, deviceWaitIdle                uintptr
	createBuffer, destroyBuffer, getBufferMemoryRequirements, bindBufferMemory uintptr
	allocateMemory, freeMemory, mapMemory, unmapMemory                         uintptr
	createCommandPool, destroyCommandPool, allocateCommandBuffers              uintptr
	beginCommandBuffer, endCommandBuffer, resetCommandBuffer                   uintptr
	cmdCopyBuffer, cmdPipelineBarrier, cmdBindPipeline, cmdBindDescriptorSets  uintptr
	cmdPushConstants, cmdDispatch, cmdWriteTimestamp, cmdResetQueryPool        uintptr
	queueSubmit, createFence, destroyFence, waitForFences, resetFences         uintptr
	createShaderModule, destroyShaderModule                                    uintptr
	createDescriptorSetLayout, destroyDescriptorSetLayout                      uintptr
	createPipelineLayout, destroyPipelineLayout                                uintptr
	createComputePipelines, destroyPipeline                                    uintptr
	createDescriptorPool, destroyDescriptorPool, allocateDescriptorSets        uintptr
	updateDescriptorSets                                                       uintptr
	createPipelineCache, destroyPipelineCache, getPipelineCacheData            uintptr
	createQueryPool, destroyQueryPool, getQueryPoolResults                     uintptr
	enumerateInstanceVersion                                                   uintptr // optional: Vulkan 1.1 loaders
}

var (
	libOnce sync.Once
	libVal  *lib
	libErr  error
)

// load opens the Vulkan loader once; every soname that failed is reported.
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
	syms := []dl.Symbol{
		{Addr: &l.createInstance, Name: "vkCreateInstance"},
		{Addr: &l.destroyInstance, Name: "vkDestroyInstance"},
		{Addr: &l.enumeratePhysicalDevices, Name: "vkEnumeratePhysicalDevices"},
		{Addr: &l.getPhysicalDeviceProperties, Name: "vkGetPhysicalDeviceProperties"},
		{Addr: &l.getPhysicalDeviceQueueFamilyProperties, Name: "vkGetPhysicalDeviceQueueFamilyProperties"},
		{Addr: &l.getPhysicalDeviceMemoryProperties, Name: "vkGetPhysicalDeviceMemoryProperties"},
		{Addr: &l.getPhysicalDeviceFeatures, Name: "vkGetPhysicalDeviceFeatures"},
		{Addr: &l.createDevice, Name: "vkCreateDevice"},
		{Addr: &l.destroyDevice, Name: "vkDestroyDevice"},
		{Addr: &l.getDeviceQueue, Name: "vkGetDeviceQueue"},
		{Addr: &l.deviceWaitIdle, Name: "vkDeviceWaitIdle"},
		{Addr: &l.createBuffer, Name: "vkCreateBuffer"},
		{Addr: &l.destroyBuffer, Name: "vkDestroyBuffer"},
		{Addr: &l.getBufferMemoryRequirements, Name: "vkGetBufferMemoryRequirements"},
		{Addr: &l.bindBufferMemory, Name: "vkBindBufferMemory"},
		{Addr: &l.allocateMemory, Name: "vkAllocateMemory"},
		{Addr: &l.freeMemory, Name: "vkFreeMemory"},
		{Addr: &l.mapMemory, Name: "vkMapMemory"},
		{Addr: &l.unmapMemory, Name: "vkUnmapMemory"},
		{Addr: &l.createCommandPool, Name: "vkCreateCommandPool"},
		{Addr: &l.destroyCommandPool, Name: "vkDestroyCommandPool"},
		{Addr: &l.allocateCommandBuffers, Name: "vkAllocateCommandBuffers"},
		{Addr: &l.beginCommandBuffer, Name: "vkBeginCommandBuffer"},
		{Addr: &l.endCommandBuffer, Name: "vkEndCommandBuffer"},
		{Addr: &l.resetCommandBuffer, Name: "vkResetCommandBuffer"},
		{Addr: &l.cmdCopyBuffer, Name: "vkCmdCopyBuffer"},
		{Addr: &l.cmdPipelineBarrier, Name: "vkCmdPipelineBarrier"},
		{Addr: &l.cmdBindPipeline, Name: "vkCmdBindPipeline"},
		{Addr: &l.cmdBindDescriptorSets, Name: "vkCmdBindDescriptorSets"},
		{Addr: &l.cmdPushConstants, Name: "vkCmdPushConstants"},
		{Addr: &l.cmdDispatch, Name: "vkCmdDispatch"},
		{Addr: &l.cmdWriteTimestamp, Name: "vkCmdWriteTimestamp"},
		{Addr: &l.cmdResetQueryPool, Name: "vkCmdResetQueryPool"},
		{Addr: &l.queueSubmit, Name: "vkQueueSubmit"},
		{Addr: &l.createFence, Name: "vkCreateFence"},
		{Addr: &l.destroyFence, Name: "vkDestroyFence"},
		{Addr: &l.waitForFences, Name: "vkWaitForFences"},
		{Addr: &l.resetFences, Name: "vkResetFences"},
		{Addr: &l.createShaderModule, Name: "vkCreateShaderModule"},
		{Addr: &l.destroyShaderModule, Name: "vkDestroyShaderModule"},
		{Addr: &l.createDescriptorSetLayout, Name: "vkCreateDescriptorSetLayout"},
		{Addr: &l.destroyDescriptorSetLayout, Name: "vkDestroyDescriptorSetLayout"},
		{Addr: &l.createPipelineLayout, Name: "vkCreatePipelineLayout"},
		{Addr: &l.destroyPipelineLayout, Name: "vkDestroyPipelineLayout"},
		{Addr: &l.createComputePipelines, Name: "vkCreateComputePipelines"},
		{Addr: &l.destroyPipeline, Name: "vkDestroyPipeline"},
		{Addr: &l.createDescriptorPool, Name: "vkCreateDescriptorPool"},
		{Addr: &l.destroyDescriptorPool, Name: "vkDestroyDescriptorPool"},
		{Addr: &l.allocateDescriptorSets, Name: "vkAllocateDescriptorSets"},
		{Addr: &l.updateDescriptorSets, Name: "vkUpdateDescriptorSets"},
		{Addr: &l.createPipelineCache, Name: "vkCreatePipelineCache"},
		{Addr: &l.destroyPipelineCache, Name: "vkDestroyPipelineCache"},
		{Addr: &l.getPipelineCacheData, Name: "vkGetPipelineCacheData"},
		{Addr: &l.createQueryPool, Name: "vkCreateQueryPool"},
		{Addr: &l.destroyQueryPool, Name: "vkDestroyQueryPool"},
		{Addr: &l.getQueryPoolResults, Name: "vkGetQueryPoolResults"},
	}
	errs := []error{dl.Resolve(l.handle, syms)}
	l.enumerateInstanceVersion, _ = purego.Dlsym(l.handle, "vkEnumerateInstanceVersion")
	return errors.Join(errs...)
}

// call runs a Vulkan command that returns a VkResult (or nothing, in which
// case the result is ignored by the caller). Like purego.SyscallN it keeps
// the objects behind uintptr(unsafe.Pointer(…)) arguments alive and on the
// heap for the call, so callers convert pointers in the call expression.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}

// pins keeps the Go memory that a create-info struct points to in place
// while the driver reads it.
type pins struct{ runtime.Pinner }

// ptr pins v and returns it as a struct field value.
func ptr[T any](p *pins, v *T) unsafe.Pointer {
	p.Pin(v)
	return unsafe.Pointer(v)
}

// slicePtr pins a slice's backing array and returns its first element, or
// nil for an empty slice.
func slicePtr[T any](p *pins, v []T) unsafe.Pointer {
	if len(v) == 0 {
		return nil
	}
	p.Pin(&v[0])
	return unsafe.Pointer(&v[0])
}

// cstr pins a NUL-terminated copy of s.
func cstr(p *pins, s string) unsafe.Pointer {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return slicePtr(p, b)
}

var resultNames = map[int32]string{
	0: "VK_SUCCESS", 1: "VK_NOT_READY", 2: "VK_TIMEOUT", 5: "VK_INCOMPLETE",
	-1: "VK_ERROR_OUT_OF_HOST_MEMORY", -2: "VK_ERROR_OUT_OF_DEVICE_MEMORY",
	-3: "VK_ERROR_INITIALIZATION_FAILED", -4: "VK_ERROR_DEVICE_LOST",
	-5: "VK_ERROR_MEMORY_MAP_FAILED", -6: "VK_ERROR_LAYER_NOT_PRESENT",
	-7: "VK_ERROR_EXTENSION_NOT_PRESENT", -8: "VK_ERROR_FEATURE_NOT_PRESENT",
	-9: "VK_ERROR_INCOMPATIBLE_DRIVER", -10: "VK_ERROR_TOO_MANY_OBJECTS",
	-11: "VK_ERROR_FORMAT_NOT_SUPPORTED", -12: "VK_ERROR_FRAGMENTED_POOL",
	-13: "VK_ERROR_UNKNOWN", -1000069000: "VK_ERROR_OUT_OF_POOL_MEMORY",
	-1000161000: "VK_ERROR_FRAGMENTATION", -1000012000: "VK_ERROR_INVALID_SHADER_NV",
}

func resultName(r int32) string {
	if n, ok := resultNames[r]; ok {
		return n
	}
	return "VkResult(" + strconv.Itoa(int(r)) + ")"
}

// vkError turns a failed VkResult into a typed error with the sentinel it
// amounts to.
func vkError(op string, r int32) error {
	sentinel := error(errors.New("call failed"))
	switch r {
	case vkErrOutOfHostMemory, vkErrOutOfDeviceMemory, vkErrTooManyObjects, vkErrOutOfPoolMemory:
		sentinel = backends.ErrOutOfMemory
	case vkErrDeviceLost:
		sentinel = backends.ErrDeviceLost
	case vkErrInvalidShaderNV:
		sentinel = backends.ErrCompile
	}
	return &backends.Error{Backend: Name, Op: op, Native: resultName(r), Err: sentinel}
}

func goString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
