package vulkan

import (
	"errors"
	"runtime"
	"strconv"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/dl"
)

// sonames are tried in order: the loader's versioned name, then the
// development symlink.
var sonames = []string{"libvulkan.so.1", "libvulkan.so"}

// Vulkan constants used here (values from the Khronos vulkan_core.h).
const (
	vkSuccess    = 0
	vkNotReady   = 1
	vkTimeout    = 2
	vkIncomplete = 5

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

// The Vulkan handles, each its own type. Dispatchable handles are
// pointers; the others are 64-bit values on every platform.
type (
	vkInstance       uintptr
	vkPhysicalDevice uintptr
	vkDevice         uintptr
	vkQueue          uintptr
	vkCommandBuffer  uintptr

	vkBuffer              uint64
	vkDeviceMemory        uint64
	vkCommandPool         uint64
	vkFence               uint64
	vkQueryPool           uint64
	vkShaderModule        uint64
	vkDescriptorSetLayout uint64
	vkPipelineLayout      uint64
	vkPipeline            uint64
	vkPipelineCache       uint64
	vkDescriptorPool      uint64
	vkDescriptorSet       uint64
)

// lib is the Vulkan loader: the address of every command this backend
// calls, and one method per command that takes and returns Go types, makes
// the call with purego.SyscallN (through dl.CallN, which spares it the
// allocation of its variadic argument slice) and turns a failed VkResult
// into an error naming the command and the result. The loader exports
// every core 1.0 command and dispatches it to the right driver, so no
// vkGet*ProcAddr step is needed. Nothing reflects and, in steady state,
// nothing allocates: recording and submitting hand the driver memory that
// the device and executable keep on the heap (see hot;
// TestHotPathsDoNotAllocate).
type lib struct {
	dl.Library

	fnCreateInstance, fnDestroyInstance, fnEnumeratePhysicalDevices                    uintptr
	fnGetPhysicalDeviceProperties, fnGetPhysicalDeviceQueueFamilyProperties            uintptr
	fnGetPhysicalDeviceMemoryProperties, fnGetPhysicalDeviceFeatures                   uintptr
	fnCreateDevice, fnDestroyDevice, fnGetDeviceQueue, fnDeviceWaitIdle                uintptr
	fnCreateBuffer, fnDestroyBuffer, fnGetBufferMemoryRequirements, fnBindBufferMemory uintptr
	fnAllocateMemory, fnFreeMemory, fnMapMemory, fnUnmapMemory                         uintptr
	fnCreateCommandPool, fnDestroyCommandPool, fnAllocateCommandBuffers                uintptr
	fnBeginCommandBuffer, fnEndCommandBuffer, fnResetCommandBuffer                     uintptr
	fnCmdCopyBuffer, fnCmdPipelineBarrier, fnCmdBindPipeline, fnCmdBindDescriptorSets  uintptr
	fnCmdPushConstants, fnCmdDispatch, fnCmdWriteTimestamp, fnCmdResetQueryPool        uintptr
	fnQueueSubmit, fnCreateFence, fnDestroyFence, fnWaitForFences, fnResetFences       uintptr
	fnCreateShaderModule, fnDestroyShaderModule                                        uintptr
	fnCreateDescriptorSetLayout, fnDestroyDescriptorSetLayout                          uintptr
	fnCreatePipelineLayout, fnDestroyPipelineLayout                                    uintptr
	fnCreateComputePipelines, fnDestroyPipeline                                        uintptr
	fnCreateDescriptorPool, fnDestroyDescriptorPool, fnAllocateDescriptorSets          uintptr
	fnUpdateDescriptorSets                                                             uintptr
	fnCreatePipelineCache, fnDestroyPipelineCache, fnGetPipelineCacheData              uintptr
	fnCreateQueryPool, fnDestroyQueryPool, fnGetQueryPoolResults                       uintptr
	fnEnumerateInstanceVersion                                                         uintptr // optional: Vulkan 1.1 loaders
}

// loader is the process's Vulkan loader, opened on first use.
var loader dl.Lazy[*lib]

// load opens the Vulkan loader once; every soname that failed is reported.
func load() (*lib, error) {
	return loader.Load(func() (*lib, error) { return dl.OpenTable(sonames, &lib{}) })
}

// Bind resolves every entry point the backend calls.
func (l *lib) Bind(h uintptr) error {
	return dl.Resolve(h, []dl.Symbol{
		{Addr: &l.fnCreateInstance, Name: "vkCreateInstance"},
		{Addr: &l.fnDestroyInstance, Name: "vkDestroyInstance"},
		{Addr: &l.fnEnumeratePhysicalDevices, Name: "vkEnumeratePhysicalDevices"},
		{Addr: &l.fnGetPhysicalDeviceProperties, Name: "vkGetPhysicalDeviceProperties"},
		{Addr: &l.fnGetPhysicalDeviceQueueFamilyProperties, Name: "vkGetPhysicalDeviceQueueFamilyProperties"},
		{Addr: &l.fnGetPhysicalDeviceMemoryProperties, Name: "vkGetPhysicalDeviceMemoryProperties"},
		{Addr: &l.fnGetPhysicalDeviceFeatures, Name: "vkGetPhysicalDeviceFeatures"},
		{Addr: &l.fnCreateDevice, Name: "vkCreateDevice"},
		{Addr: &l.fnDestroyDevice, Name: "vkDestroyDevice"},
		{Addr: &l.fnGetDeviceQueue, Name: "vkGetDeviceQueue"},
		{Addr: &l.fnDeviceWaitIdle, Name: "vkDeviceWaitIdle"},
		{Addr: &l.fnCreateBuffer, Name: "vkCreateBuffer"},
		{Addr: &l.fnDestroyBuffer, Name: "vkDestroyBuffer"},
		{Addr: &l.fnGetBufferMemoryRequirements, Name: "vkGetBufferMemoryRequirements"},
		{Addr: &l.fnBindBufferMemory, Name: "vkBindBufferMemory"},
		{Addr: &l.fnAllocateMemory, Name: "vkAllocateMemory"},
		{Addr: &l.fnFreeMemory, Name: "vkFreeMemory"},
		{Addr: &l.fnMapMemory, Name: "vkMapMemory"},
		{Addr: &l.fnUnmapMemory, Name: "vkUnmapMemory"},
		{Addr: &l.fnCreateCommandPool, Name: "vkCreateCommandPool"},
		{Addr: &l.fnDestroyCommandPool, Name: "vkDestroyCommandPool"},
		{Addr: &l.fnAllocateCommandBuffers, Name: "vkAllocateCommandBuffers"},
		{Addr: &l.fnBeginCommandBuffer, Name: "vkBeginCommandBuffer"},
		{Addr: &l.fnEndCommandBuffer, Name: "vkEndCommandBuffer"},
		{Addr: &l.fnResetCommandBuffer, Name: "vkResetCommandBuffer"},
		{Addr: &l.fnCmdCopyBuffer, Name: "vkCmdCopyBuffer"},
		{Addr: &l.fnCmdPipelineBarrier, Name: "vkCmdPipelineBarrier"},
		{Addr: &l.fnCmdBindPipeline, Name: "vkCmdBindPipeline"},
		{Addr: &l.fnCmdBindDescriptorSets, Name: "vkCmdBindDescriptorSets"},
		{Addr: &l.fnCmdPushConstants, Name: "vkCmdPushConstants"},
		{Addr: &l.fnCmdDispatch, Name: "vkCmdDispatch"},
		{Addr: &l.fnCmdWriteTimestamp, Name: "vkCmdWriteTimestamp"},
		{Addr: &l.fnCmdResetQueryPool, Name: "vkCmdResetQueryPool"},
		{Addr: &l.fnQueueSubmit, Name: "vkQueueSubmit"},
		{Addr: &l.fnCreateFence, Name: "vkCreateFence"},
		{Addr: &l.fnDestroyFence, Name: "vkDestroyFence"},
		{Addr: &l.fnWaitForFences, Name: "vkWaitForFences"},
		{Addr: &l.fnResetFences, Name: "vkResetFences"},
		{Addr: &l.fnCreateShaderModule, Name: "vkCreateShaderModule"},
		{Addr: &l.fnDestroyShaderModule, Name: "vkDestroyShaderModule"},
		{Addr: &l.fnCreateDescriptorSetLayout, Name: "vkCreateDescriptorSetLayout"},
		{Addr: &l.fnDestroyDescriptorSetLayout, Name: "vkDestroyDescriptorSetLayout"},
		{Addr: &l.fnCreatePipelineLayout, Name: "vkCreatePipelineLayout"},
		{Addr: &l.fnDestroyPipelineLayout, Name: "vkDestroyPipelineLayout"},
		{Addr: &l.fnCreateComputePipelines, Name: "vkCreateComputePipelines"},
		{Addr: &l.fnDestroyPipeline, Name: "vkDestroyPipeline"},
		{Addr: &l.fnCreateDescriptorPool, Name: "vkCreateDescriptorPool"},
		{Addr: &l.fnDestroyDescriptorPool, Name: "vkDestroyDescriptorPool"},
		{Addr: &l.fnAllocateDescriptorSets, Name: "vkAllocateDescriptorSets"},
		{Addr: &l.fnUpdateDescriptorSets, Name: "vkUpdateDescriptorSets"},
		{Addr: &l.fnCreatePipelineCache, Name: "vkCreatePipelineCache"},
		{Addr: &l.fnDestroyPipelineCache, Name: "vkDestroyPipelineCache"},
		{Addr: &l.fnGetPipelineCacheData, Name: "vkGetPipelineCacheData"},
		{Addr: &l.fnCreateQueryPool, Name: "vkCreateQueryPool"},
		{Addr: &l.fnDestroyQueryPool, Name: "vkDestroyQueryPool"},
		{Addr: &l.fnGetQueryPoolResults, Name: "vkGetQueryPoolResults"},
		{Addr: &l.fnEnumerateInstanceVersion, Name: "vkEnumerateInstanceVersion", Optional: true},
	})
}

// vkResult is a VkResult.
type vkResult int32

// check is nil for VK_SUCCESS, else the typed error for op.
func check(op string, r uintptr) error {
	if res := vkResult(int32(r)); res != vkSuccess {
		return vkError(op, res)
	}
	return nil
}

// checkComplete is check that also accepts VK_INCOMPLETE (an array the
// caller sized too small: it got what fits).
func checkComplete(op string, r uintptr) error {
	if vkResult(int32(r)) == vkIncomplete {
		return nil
	}
	return check(op, r)
}

func vkBool(b bool) uintptr {
	if b {
		return 1
	}
	return 0
}

// sliceAddr is the address of the first element of s (nil for a nil slice).
// Use it only inside a SyscallN argument list, where the conversion keeps
// the memory alive for the call.
func sliceAddr[T any](s []T) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }

// create runs a command of the form vkCreate*(parent, info, allocator,
// handle) with the default allocator and returns the new handle.
func create[H ~uintptr | ~uint64](fn uintptr, op string, parent uintptr, info unsafe.Pointer) (H, error) {
	var h H
	r := dl.Call4(fn, parent, uintptr(info), 0, uintptr(unsafe.Pointer(&h)))
	return h, check(op, r)
}

// destroy runs a command of the form vkDestroy*(device, handle, allocator)
// with the default allocator. A null handle is nothing to destroy (Vulkan
// allows it there): teardown of a half-built object destroys every member
// without checking which were made.
func destroy[H ~uint64](fn uintptr, d vkDevice, h H) {
	if h != 0 {
		dl.Call3(fn, uintptr(d), uintptr(h), 0)
	}
}

// HasEnumerateInstanceVersion reports whether the loader has
// vkEnumerateInstanceVersion (Vulkan 1.1 loaders).
func (l *lib) HasEnumerateInstanceVersion() bool { return l.fnEnumerateInstanceVersion != 0 }

// EnumerateInstanceVersion is vkEnumerateInstanceVersion.
func (l *lib) EnumerateInstanceVersion() (uint32, error) {
	var v uint32
	r := dl.Call1(l.fnEnumerateInstanceVersion, uintptr(unsafe.Pointer(&v)))
	return v, check("vkEnumerateInstanceVersion", r)
}

// CreateInstance is vkCreateInstance with the default allocator.
func (l *lib) CreateInstance(info *vkInstanceCreateInfo) (vkInstance, error) {
	var h vkInstance
	r := dl.Call3(l.fnCreateInstance, uintptr(unsafe.Pointer(info)), 0, uintptr(unsafe.Pointer(&h)))
	return h, check("vkCreateInstance", r)
}

// DestroyInstance is vkDestroyInstance.
func (l *lib) DestroyInstance(in vkInstance) {
	dl.Call2(l.fnDestroyInstance, uintptr(in), 0)
}

// EnumeratePhysicalDevices is vkEnumeratePhysicalDevices: it fills devs
// (which may be empty) and returns how many it wrote, or, with devs empty,
// how many there are.
func (l *lib) EnumeratePhysicalDevices(in vkInstance, devs []vkPhysicalDevice) (uint32, error) {
	n := uint32(len(devs))
	r := dl.Call3(l.fnEnumeratePhysicalDevices, uintptr(in), uintptr(unsafe.Pointer(&n)), uintptr(sliceAddr(devs)))
	return n, checkComplete("vkEnumeratePhysicalDevices", r)
}

// GetPhysicalDeviceProperties is vkGetPhysicalDeviceProperties.
func (l *lib) GetPhysicalDeviceProperties(pd vkPhysicalDevice, props *vkPhysicalDeviceProperties) {
	dl.Call2(l.fnGetPhysicalDeviceProperties, uintptr(pd), uintptr(unsafe.Pointer(props)))
}

// GetPhysicalDeviceFeatures is vkGetPhysicalDeviceFeatures.
func (l *lib) GetPhysicalDeviceFeatures(pd vkPhysicalDevice, features *vkPhysicalDeviceFeatures) {
	dl.Call2(l.fnGetPhysicalDeviceFeatures, uintptr(pd), uintptr(unsafe.Pointer(features)))
}

// GetPhysicalDeviceMemoryProperties is vkGetPhysicalDeviceMemoryProperties.
func (l *lib) GetPhysicalDeviceMemoryProperties(pd vkPhysicalDevice, props *vkPhysicalDeviceMemoryProperties) {
	dl.Call2(l.fnGetPhysicalDeviceMemoryProperties, uintptr(pd), uintptr(unsafe.Pointer(props)))
}

// GetPhysicalDeviceQueueFamilyProperties is
// vkGetPhysicalDeviceQueueFamilyProperties: it fills props (which may be
// empty) and returns how many it wrote, or, with props empty, how many
// there are.
func (l *lib) GetPhysicalDeviceQueueFamilyProperties(pd vkPhysicalDevice, props []vkQueueFamilyProperties) uint32 {
	n := uint32(len(props))
	dl.Call3(l.fnGetPhysicalDeviceQueueFamilyProperties, uintptr(pd), uintptr(unsafe.Pointer(&n)), uintptr(sliceAddr(props)))
	return n
}

// CreateDevice is vkCreateDevice with the default allocator.
func (l *lib) CreateDevice(pd vkPhysicalDevice, info *vkDeviceCreateInfo) (vkDevice, error) {
	return create[vkDevice](l.fnCreateDevice, "vkCreateDevice", uintptr(pd), unsafe.Pointer(info))
}

// DestroyDevice is vkDestroyDevice.
func (l *lib) DestroyDevice(d vkDevice) {
	dl.Call2(l.fnDestroyDevice, uintptr(d), 0)
}

// GetDeviceQueue is vkGetDeviceQueue.
func (l *lib) GetDeviceQueue(d vkDevice, family, index uint32) vkQueue {
	var q vkQueue
	dl.Call4(l.fnGetDeviceQueue, uintptr(d), uintptr(family), uintptr(index), uintptr(unsafe.Pointer(&q)))
	return q
}

// DeviceWaitIdle is vkDeviceWaitIdle.
func (l *lib) DeviceWaitIdle(d vkDevice) error {
	r := dl.Call1(l.fnDeviceWaitIdle, uintptr(d))
	return check("vkDeviceWaitIdle", r)
}

// CreateBuffer is vkCreateBuffer with the default allocator.
func (l *lib) CreateBuffer(d vkDevice, info *vkBufferCreateInfo) (vkBuffer, error) {
	return create[vkBuffer](l.fnCreateBuffer, "vkCreateBuffer", uintptr(d), unsafe.Pointer(info))
}

// DestroyBuffer is vkDestroyBuffer.
func (l *lib) DestroyBuffer(d vkDevice, b vkBuffer) { destroy(l.fnDestroyBuffer, d, b) }

// GetBufferMemoryRequirements is vkGetBufferMemoryRequirements.
func (l *lib) GetBufferMemoryRequirements(d vkDevice, b vkBuffer, req *vkMemoryRequirements) {
	dl.Call3(l.fnGetBufferMemoryRequirements, uintptr(d), uintptr(b), uintptr(unsafe.Pointer(req)))
}

// BindBufferMemory is vkBindBufferMemory.
func (l *lib) BindBufferMemory(d vkDevice, b vkBuffer, mem vkDeviceMemory, off uint64) error {
	r := dl.Call4(l.fnBindBufferMemory, uintptr(d), uintptr(b), uintptr(mem), uintptr(off))
	return check("vkBindBufferMemory", r)
}

// AllocateMemory is vkAllocateMemory with the default allocator.
func (l *lib) AllocateMemory(d vkDevice, info *vkMemoryAllocateInfo) (vkDeviceMemory, error) {
	return create[vkDeviceMemory](l.fnAllocateMemory, "vkAllocateMemory", uintptr(d), unsafe.Pointer(info))
}

// FreeMemory is vkFreeMemory.
func (l *lib) FreeMemory(d vkDevice, mem vkDeviceMemory) { destroy(l.fnFreeMemory, d, mem) }

// MapMemory is vkMapMemory: the host address of size bytes at off.
func (l *lib) MapMemory(d vkDevice, mem vkDeviceMemory, off, size uint64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	r := dl.Call6(l.fnMapMemory, uintptr(d), uintptr(mem), uintptr(off), uintptr(size), 0, uintptr(unsafe.Pointer(&p)))
	return p, check("vkMapMemory", r)
}

// UnmapMemory is vkUnmapMemory.
func (l *lib) UnmapMemory(d vkDevice, mem vkDeviceMemory) {
	dl.Call2(l.fnUnmapMemory, uintptr(d), uintptr(mem))
}

// CreateCommandPool is vkCreateCommandPool with the default allocator.
func (l *lib) CreateCommandPool(d vkDevice, info *vkCommandPoolCreateInfo) (vkCommandPool, error) {
	return create[vkCommandPool](l.fnCreateCommandPool, "vkCreateCommandPool", uintptr(d), unsafe.Pointer(info))
}

// DestroyCommandPool is vkDestroyCommandPool.
func (l *lib) DestroyCommandPool(d vkDevice, pool vkCommandPool) {
	destroy(l.fnDestroyCommandPool, d, pool)
}

// AllocateCommandBuffers is vkAllocateCommandBuffers into cmds, which
// holds info.CommandBufferCount entries.
func (l *lib) AllocateCommandBuffers(d vkDevice, info *vkCommandBufferAllocateInfo, cmds []vkCommandBuffer) error {
	r := dl.Call3(l.fnAllocateCommandBuffers, uintptr(d), uintptr(unsafe.Pointer(info)), uintptr(sliceAddr(cmds)))
	return check("vkAllocateCommandBuffers", r)
}

// BeginCommandBuffer is vkBeginCommandBuffer.
func (l *lib) BeginCommandBuffer(cmd vkCommandBuffer, info *vkCommandBufferBeginInfo) error {
	r := dl.Call2(l.fnBeginCommandBuffer, uintptr(cmd), uintptr(unsafe.Pointer(info)))
	return check("vkBeginCommandBuffer", r)
}

// EndCommandBuffer is vkEndCommandBuffer.
func (l *lib) EndCommandBuffer(cmd vkCommandBuffer) error {
	r := dl.Call1(l.fnEndCommandBuffer, uintptr(cmd))
	return check("vkEndCommandBuffer", r)
}

// ResetCommandBuffer is vkResetCommandBuffer.
func (l *lib) ResetCommandBuffer(cmd vkCommandBuffer, flags uint32) error {
	r := dl.Call2(l.fnResetCommandBuffer, uintptr(cmd), uintptr(flags))
	return check("vkResetCommandBuffer", r)
}

// CmdCopyBuffer is vkCmdCopyBuffer of regions.
func (l *lib) CmdCopyBuffer(cmd vkCommandBuffer, src, dst vkBuffer, regions []vkBufferCopy) {
	dl.Call5(l.fnCmdCopyBuffer, uintptr(cmd), uintptr(src), uintptr(dst), uintptr(len(regions)), uintptr(sliceAddr(regions)))
}

// CmdPipelineBarrier is vkCmdPipelineBarrier with memory barriers only.
func (l *lib) CmdPipelineBarrier(cmd vkCommandBuffer, srcStages, dstStages, dependency uint32, barriers []vkMemoryBarrier) {
	dl.Call10(l.fnCmdPipelineBarrier, uintptr(cmd), uintptr(srcStages), uintptr(dstStages), uintptr(dependency),
		uintptr(len(barriers)), uintptr(sliceAddr(barriers)), 0, 0, 0, 0)
}

// CmdBindPipeline is vkCmdBindPipeline.
func (l *lib) CmdBindPipeline(cmd vkCommandBuffer, bindPoint uint32, p vkPipeline) {
	dl.Call3(l.fnCmdBindPipeline, uintptr(cmd), uintptr(bindPoint), uintptr(p))
}

// CmdBindDescriptorSets is vkCmdBindDescriptorSets with no dynamic
// offsets.
func (l *lib) CmdBindDescriptorSets(cmd vkCommandBuffer, bindPoint uint32, layout vkPipelineLayout, firstSet uint32, sets []vkDescriptorSet) {
	dl.Call8(l.fnCmdBindDescriptorSets, uintptr(cmd), uintptr(bindPoint), uintptr(layout), uintptr(firstSet),
		uintptr(len(sets)), uintptr(sliceAddr(sets)), 0, 0)
}

// CmdPushConstants is vkCmdPushConstants of data at offset.
func (l *lib) CmdPushConstants(cmd vkCommandBuffer, layout vkPipelineLayout, stages, offset uint32, data []byte) {
	dl.Call6(l.fnCmdPushConstants, uintptr(cmd), uintptr(layout), uintptr(stages), uintptr(offset), uintptr(len(data)), uintptr(sliceAddr(data)))
}

// CmdDispatch is vkCmdDispatch.
func (l *lib) CmdDispatch(cmd vkCommandBuffer, x, y, z uint32) {
	dl.Call4(l.fnCmdDispatch, uintptr(cmd), uintptr(x), uintptr(y), uintptr(z))
}

// CmdWriteTimestamp is vkCmdWriteTimestamp.
func (l *lib) CmdWriteTimestamp(cmd vkCommandBuffer, stage uint32, pool vkQueryPool, query uint32) {
	dl.Call4(l.fnCmdWriteTimestamp, uintptr(cmd), uintptr(stage), uintptr(pool), uintptr(query))
}

// CmdResetQueryPool is vkCmdResetQueryPool.
func (l *lib) CmdResetQueryPool(cmd vkCommandBuffer, pool vkQueryPool, first, count uint32) {
	dl.Call4(l.fnCmdResetQueryPool, uintptr(cmd), uintptr(pool), uintptr(first), uintptr(count))
}

// QueueSubmit is vkQueueSubmit of submits, signalling fence.
func (l *lib) QueueSubmit(q vkQueue, submits []vkSubmitInfo, fence vkFence) error {
	r := dl.Call4(l.fnQueueSubmit, uintptr(q), uintptr(len(submits)), uintptr(sliceAddr(submits)), uintptr(fence))
	return check("vkQueueSubmit", r)
}

// CreateFence is vkCreateFence with the default allocator.
func (l *lib) CreateFence(d vkDevice, info *vkFenceCreateInfo) (vkFence, error) {
	return create[vkFence](l.fnCreateFence, "vkCreateFence", uintptr(d), unsafe.Pointer(info))
}

// DestroyFence is vkDestroyFence.
func (l *lib) DestroyFence(d vkDevice, f vkFence) { destroy(l.fnDestroyFence, d, f) }

// WaitForFences is vkWaitForFences for up to timeout nanoseconds. It
// reports whether the fences signalled (false: VK_TIMEOUT).
func (l *lib) WaitForFences(d vkDevice, fences []vkFence, all bool, timeout uint64) (bool, error) {
	r := dl.Call5(l.fnWaitForFences, uintptr(d), uintptr(len(fences)), uintptr(sliceAddr(fences)), vkBool(all), uintptr(timeout))
	if vkResult(int32(r)) == vkTimeout {
		return false, nil
	}
	return true, check("vkWaitForFences", r)
}

// ResetFences is vkResetFences.
func (l *lib) ResetFences(d vkDevice, fences []vkFence) error {
	r := dl.Call3(l.fnResetFences, uintptr(d), uintptr(len(fences)), uintptr(sliceAddr(fences)))
	return check("vkResetFences", r)
}

// CreateShaderModule is vkCreateShaderModule with the default allocator.
func (l *lib) CreateShaderModule(d vkDevice, info *vkShaderModuleCreateInfo) (vkShaderModule, error) {
	return create[vkShaderModule](l.fnCreateShaderModule, "vkCreateShaderModule", uintptr(d), unsafe.Pointer(info))
}

// DestroyShaderModule is vkDestroyShaderModule.
func (l *lib) DestroyShaderModule(d vkDevice, m vkShaderModule) {
	destroy(l.fnDestroyShaderModule, d, m)
}

// CreateDescriptorSetLayout is vkCreateDescriptorSetLayout with the
// default allocator.
func (l *lib) CreateDescriptorSetLayout(d vkDevice, info *vkDescriptorSetLayoutCreateInfo) (vkDescriptorSetLayout, error) {
	return create[vkDescriptorSetLayout](l.fnCreateDescriptorSetLayout, "vkCreateDescriptorSetLayout", uintptr(d), unsafe.Pointer(info))
}

// DestroyDescriptorSetLayout is vkDestroyDescriptorSetLayout.
func (l *lib) DestroyDescriptorSetLayout(d vkDevice, s vkDescriptorSetLayout) {
	destroy(l.fnDestroyDescriptorSetLayout, d, s)
}

// CreatePipelineLayout is vkCreatePipelineLayout with the default
// allocator.
func (l *lib) CreatePipelineLayout(d vkDevice, info *vkPipelineLayoutCreateInfo) (vkPipelineLayout, error) {
	return create[vkPipelineLayout](l.fnCreatePipelineLayout, "vkCreatePipelineLayout", uintptr(d), unsafe.Pointer(info))
}

// DestroyPipelineLayout is vkDestroyPipelineLayout.
func (l *lib) DestroyPipelineLayout(d vkDevice, p vkPipelineLayout) {
	destroy(l.fnDestroyPipelineLayout, d, p)
}

// CreateComputePipelines is vkCreateComputePipelines through cache (0 for
// none) into pipelines, one per info.
func (l *lib) CreateComputePipelines(d vkDevice, cache vkPipelineCache, infos []vkComputePipelineCreateInfo, pipelines []vkPipeline) error {
	if len(pipelines) < len(infos) {
		return driver.Errorf(Name, "vkCreateComputePipelines", driver.ErrInvalidArgument, "%d pipelines for %d create infos", len(pipelines), len(infos))
	}
	r := dl.Call6(l.fnCreateComputePipelines, uintptr(d), uintptr(cache), uintptr(len(infos)), uintptr(sliceAddr(infos)), 0, uintptr(sliceAddr(pipelines)))
	return check("vkCreateComputePipelines", r)
}

// DestroyPipeline is vkDestroyPipeline.
func (l *lib) DestroyPipeline(d vkDevice, p vkPipeline) { destroy(l.fnDestroyPipeline, d, p) }

// CreateDescriptorPool is vkCreateDescriptorPool with the default
// allocator.
func (l *lib) CreateDescriptorPool(d vkDevice, info *vkDescriptorPoolCreateInfo) (vkDescriptorPool, error) {
	return create[vkDescriptorPool](l.fnCreateDescriptorPool, "vkCreateDescriptorPool", uintptr(d), unsafe.Pointer(info))
}

// DestroyDescriptorPool is vkDestroyDescriptorPool.
func (l *lib) DestroyDescriptorPool(d vkDevice, p vkDescriptorPool) {
	destroy(l.fnDestroyDescriptorPool, d, p)
}

// AllocateDescriptorSets is vkAllocateDescriptorSets into sets, which
// holds info.DescriptorSetCount entries.
func (l *lib) AllocateDescriptorSets(d vkDevice, info *vkDescriptorSetAllocateInfo, sets []vkDescriptorSet) error {
	r := dl.Call3(l.fnAllocateDescriptorSets, uintptr(d), uintptr(unsafe.Pointer(info)), uintptr(sliceAddr(sets)))
	return check("vkAllocateDescriptorSets", r)
}

// UpdateDescriptorSets is vkUpdateDescriptorSets with writes only.
func (l *lib) UpdateDescriptorSets(d vkDevice, writes []vkWriteDescriptorSet) {
	dl.Call5(l.fnUpdateDescriptorSets, uintptr(d), uintptr(len(writes)), uintptr(sliceAddr(writes)), 0, 0)
}

// CreatePipelineCache is vkCreatePipelineCache with the default
// allocator.
func (l *lib) CreatePipelineCache(d vkDevice, info *vkPipelineCacheCreateInfo) (vkPipelineCache, error) {
	return create[vkPipelineCache](l.fnCreatePipelineCache, "vkCreatePipelineCache", uintptr(d), unsafe.Pointer(info))
}

// DestroyPipelineCache is vkDestroyPipelineCache.
func (l *lib) DestroyPipelineCache(d vkDevice, c vkPipelineCache) {
	destroy(l.fnDestroyPipelineCache, d, c)
}

// GetPipelineCacheData is vkGetPipelineCacheData: it fills data (which
// may be empty) and returns how many bytes it wrote, or, with data empty,
// the size of the whole cache.
func (l *lib) GetPipelineCacheData(d vkDevice, c vkPipelineCache, data []byte) (uintptr, error) {
	size := uintptr(len(data))
	r := dl.Call4(l.fnGetPipelineCacheData, uintptr(d), uintptr(c), uintptr(unsafe.Pointer(&size)), uintptr(sliceAddr(data)))
	return size, checkComplete("vkGetPipelineCacheData", r)
}

// CreateQueryPool is vkCreateQueryPool with the default allocator.
func (l *lib) CreateQueryPool(d vkDevice, info *vkQueryPoolCreateInfo) (vkQueryPool, error) {
	return create[vkQueryPool](l.fnCreateQueryPool, "vkCreateQueryPool", uintptr(d), unsafe.Pointer(info))
}

// DestroyQueryPool is vkDestroyQueryPool.
func (l *lib) DestroyQueryPool(d vkDevice, p vkQueryPool) { destroy(l.fnDestroyQueryPool, d, p) }

// GetQueryPoolResults is vkGetQueryPoolResults of count 64-bit results
// from first into data, one every stride bytes.
func (l *lib) GetQueryPoolResults(d vkDevice, p vkQueryPool, first, count uint32, data []uint64, stride uint64, flags uint32) error {
	r := dl.Call8(l.fnGetQueryPoolResults, uintptr(d), uintptr(p), uintptr(first), uintptr(count),
		uintptr(len(data))*8, uintptr(sliceAddr(data)), uintptr(stride), uintptr(flags))
	return check("vkGetQueryPoolResults", r)
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

var resultNames = map[vkResult]string{
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

func resultName(r vkResult) string {
	if n, ok := resultNames[r]; ok {
		return n
	}
	return "VkResult(" + strconv.Itoa(int(r)) + ")"
}

// vkError turns a failed VkResult into a typed error with the sentinel it
// amounts to.
func vkError(op string, r vkResult) error {
	sentinel := error(errors.New("call failed"))
	switch r {
	case vkErrOutOfHostMemory, vkErrOutOfDeviceMemory, vkErrTooManyObjects, vkErrOutOfPoolMemory:
		sentinel = driver.ErrOutOfMemory
	case vkErrDeviceLost:
		sentinel = driver.ErrDeviceLost
	case vkErrInvalidShaderNV:
		sentinel = driver.ErrCompile
	}
	return &driver.Error{Backend: Name, Op: op, Native: resultName(r), Err: sentinel}
}

func goString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
