package vulkan

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/internal/dl"
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
	syms := []struct {
		p    *uintptr
		name string
	}{
		{&l.createInstance, "vkCreateInstance"},
		{&l.destroyInstance, "vkDestroyInstance"},
		{&l.enumeratePhysicalDevices, "vkEnumeratePhysicalDevices"},
		{&l.getPhysicalDeviceProperties, "vkGetPhysicalDeviceProperties"},
		{&l.getPhysicalDeviceQueueFamilyProperties, "vkGetPhysicalDeviceQueueFamilyProperties"},
		{&l.getPhysicalDeviceMemoryProperties, "vkGetPhysicalDeviceMemoryProperties"},
		{&l.getPhysicalDeviceFeatures, "vkGetPhysicalDeviceFeatures"},
		{&l.createDevice, "vkCreateDevice"},
		{&l.destroyDevice, "vkDestroyDevice"},
		{&l.getDeviceQueue, "vkGetDeviceQueue"},
		{&l.deviceWaitIdle, "vkDeviceWaitIdle"},
		{&l.createBuffer, "vkCreateBuffer"},
		{&l.destroyBuffer, "vkDestroyBuffer"},
		{&l.getBufferMemoryRequirements, "vkGetBufferMemoryRequirements"},
		{&l.bindBufferMemory, "vkBindBufferMemory"},
		{&l.allocateMemory, "vkAllocateMemory"},
		{&l.freeMemory, "vkFreeMemory"},
		{&l.mapMemory, "vkMapMemory"},
		{&l.unmapMemory, "vkUnmapMemory"},
		{&l.createCommandPool, "vkCreateCommandPool"},
		{&l.destroyCommandPool, "vkDestroyCommandPool"},
		{&l.allocateCommandBuffers, "vkAllocateCommandBuffers"},
		{&l.beginCommandBuffer, "vkBeginCommandBuffer"},
		{&l.endCommandBuffer, "vkEndCommandBuffer"},
		{&l.resetCommandBuffer, "vkResetCommandBuffer"},
		{&l.cmdCopyBuffer, "vkCmdCopyBuffer"},
		{&l.cmdPipelineBarrier, "vkCmdPipelineBarrier"},
		{&l.cmdBindPipeline, "vkCmdBindPipeline"},
		{&l.cmdBindDescriptorSets, "vkCmdBindDescriptorSets"},
		{&l.cmdPushConstants, "vkCmdPushConstants"},
		{&l.cmdDispatch, "vkCmdDispatch"},
		{&l.cmdWriteTimestamp, "vkCmdWriteTimestamp"},
		{&l.cmdResetQueryPool, "vkCmdResetQueryPool"},
		{&l.queueSubmit, "vkQueueSubmit"},
		{&l.createFence, "vkCreateFence"},
		{&l.destroyFence, "vkDestroyFence"},
		{&l.waitForFences, "vkWaitForFences"},
		{&l.resetFences, "vkResetFences"},
		{&l.createShaderModule, "vkCreateShaderModule"},
		{&l.destroyShaderModule, "vkDestroyShaderModule"},
		{&l.createDescriptorSetLayout, "vkCreateDescriptorSetLayout"},
		{&l.destroyDescriptorSetLayout, "vkDestroyDescriptorSetLayout"},
		{&l.createPipelineLayout, "vkCreatePipelineLayout"},
		{&l.destroyPipelineLayout, "vkDestroyPipelineLayout"},
		{&l.createComputePipelines, "vkCreateComputePipelines"},
		{&l.destroyPipeline, "vkDestroyPipeline"},
		{&l.createDescriptorPool, "vkCreateDescriptorPool"},
		{&l.destroyDescriptorPool, "vkDestroyDescriptorPool"},
		{&l.allocateDescriptorSets, "vkAllocateDescriptorSets"},
		{&l.updateDescriptorSets, "vkUpdateDescriptorSets"},
		{&l.createPipelineCache, "vkCreatePipelineCache"},
		{&l.destroyPipelineCache, "vkDestroyPipelineCache"},
		{&l.getPipelineCacheData, "vkGetPipelineCacheData"},
		{&l.createQueryPool, "vkCreateQueryPool"},
		{&l.destroyQueryPool, "vkDestroyQueryPool"},
		{&l.getQueryPoolResults, "vkGetQueryPoolResults"},
	}
	var errs []error
	for _, s := range syms {
		p, err := purego.Dlsym(l.handle, s.name)
		if err != nil {
			errs = append(errs, fmt.Errorf("symbol %s: %w", s.name, err))
			continue
		}
		*s.p = p
	}
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
