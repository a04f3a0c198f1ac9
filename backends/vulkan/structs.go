package vulkan

import "unsafe"

// The Vulkan structs this backend passes to the driver, field for field as
// vulkan_core.h declares them; on the 64-bit targets Go lays them out as C
// does. TestStructLayouts checks every size and offset against the C
// compiler's (testdata/layout.golden). Pointer fields are unsafe.Pointer so
// the collector sees them; what they point to is pinned for each call.

// vkApplicationInfo is VkApplicationInfo.
type vkApplicationInfo struct {
	SType              uint32
	PNext              unsafe.Pointer
	PApplicationName   unsafe.Pointer
	ApplicationVersion uint32
	PEngineName        unsafe.Pointer
	EngineVersion      uint32
	ApiVersion         uint32
}

// vkInstanceCreateInfo is VkInstanceCreateInfo.
type vkInstanceCreateInfo struct {
	SType                   uint32
	PNext                   unsafe.Pointer
	Flags                   uint32
	PApplicationInfo        unsafe.Pointer
	EnabledLayerCount       uint32
	PpEnabledLayerNames     unsafe.Pointer
	EnabledExtensionCount   uint32
	PpEnabledExtensionNames unsafe.Pointer
}

// vkPhysicalDeviceLimits is VkPhysicalDeviceLimits.
type vkPhysicalDeviceLimits struct {
	MaxImageDimension1D                             uint32
	MaxImageDimension2D                             uint32
	MaxImageDimension3D                             uint32
	MaxImageDimensionCube                           uint32
	MaxImageArrayLayers                             uint32
	MaxTexelBufferElements                          uint32
	MaxUniformBufferRange                           uint32
	MaxStorageBufferRange                           uint32
	MaxPushConstantsSize                            uint32
	MaxMemoryAllocationCount                        uint32
	MaxSamplerAllocationCount                       uint32
	BufferImageGranularity                          uint64
	SparseAddressSpaceSize                          uint64
	MaxBoundDescriptorSets                          uint32
	MaxPerStageDescriptorSamplers                   uint32
	MaxPerStageDescriptorUniformBuffers             uint32
	MaxPerStageDescriptorStorageBuffers             uint32
	MaxPerStageDescriptorSampledImages              uint32
	MaxPerStageDescriptorStorageImages              uint32
	MaxPerStageDescriptorInputAttachments           uint32
	MaxPerStageResources                            uint32
	MaxDescriptorSetSamplers                        uint32
	MaxDescriptorSetUniformBuffers                  uint32
	MaxDescriptorSetUniformBuffersDynamic           uint32
	MaxDescriptorSetStorageBuffers                  uint32
	MaxDescriptorSetStorageBuffersDynamic           uint32
	MaxDescriptorSetSampledImages                   uint32
	MaxDescriptorSetStorageImages                   uint32
	MaxDescriptorSetInputAttachments                uint32
	MaxVertexInputAttributes                        uint32
	MaxVertexInputBindings                          uint32
	MaxVertexInputAttributeOffset                   uint32
	MaxVertexInputBindingStride                     uint32
	MaxVertexOutputComponents                       uint32
	MaxTessellationGenerationLevel                  uint32
	MaxTessellationPatchSize                        uint32
	MaxTessellationControlPerVertexInputComponents  uint32
	MaxTessellationControlPerVertexOutputComponents uint32
	MaxTessellationControlPerPatchOutputComponents  uint32
	MaxTessellationControlTotalOutputComponents     uint32
	MaxTessellationEvaluationInputComponents        uint32
	MaxTessellationEvaluationOutputComponents       uint32
	MaxGeometryShaderInvocations                    uint32
	MaxGeometryInputComponents                      uint32
	MaxGeometryOutputComponents                     uint32
	MaxGeometryOutputVertices                       uint32
	MaxGeometryTotalOutputComponents                uint32
	MaxFragmentInputComponents                      uint32
	MaxFragmentOutputAttachments                    uint32
	MaxFragmentDualSrcAttachments                   uint32
	MaxFragmentCombinedOutputResources              uint32
	MaxComputeSharedMemorySize                      uint32
	MaxComputeWorkGroupCount                        [3]uint32
	MaxComputeWorkGroupInvocations                  uint32
	MaxComputeWorkGroupSize                         [3]uint32
	SubPixelPrecisionBits                           uint32
	SubTexelPrecisionBits                           uint32
	MipmapPrecisionBits                             uint32
	MaxDrawIndexedIndexValue                        uint32
	MaxDrawIndirectCount                            uint32
	MaxSamplerLodBias                               float32
	MaxSamplerAnisotropy                            float32
	MaxViewports                                    uint32
	MaxViewportDimensions                           [2]uint32
	ViewportBoundsRange                             [2]float32
	ViewportSubPixelBits                            uint32
	MinMemoryMapAlignment                           uintptr
	MinTexelBufferOffsetAlignment                   uint64
	MinUniformBufferOffsetAlignment                 uint64
	MinStorageBufferOffsetAlignment                 uint64
	MinTexelOffset                                  int32
	MaxTexelOffset                                  uint32
	MinTexelGatherOffset                            int32
	MaxTexelGatherOffset                            uint32
	MinInterpolationOffset                          float32
	MaxInterpolationOffset                          float32
	SubPixelInterpolationOffsetBits                 uint32
	MaxFramebufferWidth                             uint32
	MaxFramebufferHeight                            uint32
	MaxFramebufferLayers                            uint32
	FramebufferColorSampleCounts                    uint32
	FramebufferDepthSampleCounts                    uint32
	FramebufferStencilSampleCounts                  uint32
	FramebufferNoAttachmentsSampleCounts            uint32
	MaxColorAttachments                             uint32
	SampledImageColorSampleCounts                   uint32
	SampledImageIntegerSampleCounts                 uint32
	SampledImageDepthSampleCounts                   uint32
	SampledImageStencilSampleCounts                 uint32
	StorageImageSampleCounts                        uint32
	MaxSampleMaskWords                              uint32
	TimestampComputeAndGraphics                     uint32
	TimestampPeriod                                 float32
	MaxClipDistances                                uint32
	MaxCullDistances                                uint32
	MaxCombinedClipAndCullDistances                 uint32
	DiscreteQueuePriorities                         uint32
	PointSizeRange                                  [2]float32
	LineWidthRange                                  [2]float32
	PointSizeGranularity                            float32
	LineWidthGranularity                            float32
	StrictLines                                     uint32
	StandardSampleLocations                         uint32
	OptimalBufferCopyOffsetAlignment                uint64
	OptimalBufferCopyRowPitchAlignment              uint64
	NonCoherentAtomSize                             uint64
}

// vkPhysicalDeviceSparseProperties is VkPhysicalDeviceSparseProperties.
type vkPhysicalDeviceSparseProperties struct {
	ResidencyStandard2DBlockShape            uint32
	ResidencyStandard2DMultisampleBlockShape uint32
	ResidencyStandard3DBlockShape            uint32
	ResidencyAlignedMipSize                  uint32
	ResidencyNonResidentStrict               uint32
}

// vkPhysicalDeviceProperties is VkPhysicalDeviceProperties.
type vkPhysicalDeviceProperties struct {
	ApiVersion        uint32
	DriverVersion     uint32
	VendorID          uint32
	DeviceID          uint32
	DeviceType        uint32
	DeviceName        [256]byte
	PipelineCacheUUID [16]uint8
	Limits            vkPhysicalDeviceLimits
	SparseProperties  vkPhysicalDeviceSparseProperties
}

// vkExtent3D is VkExtent3D.
type vkExtent3D struct {
	Width  uint32
	Height uint32
	Depth  uint32
}

// vkQueueFamilyProperties is VkQueueFamilyProperties.
type vkQueueFamilyProperties struct {
	QueueFlags                  uint32
	QueueCount                  uint32
	TimestampValidBits          uint32
	MinImageTransferGranularity vkExtent3D
}

// vkMemoryType is VkMemoryType.
type vkMemoryType struct {
	PropertyFlags uint32
	HeapIndex     uint32
}

// vkMemoryHeap is VkMemoryHeap.
type vkMemoryHeap struct {
	Size  uint64
	Flags uint32
}

// vkPhysicalDeviceMemoryProperties is VkPhysicalDeviceMemoryProperties.
type vkPhysicalDeviceMemoryProperties struct {
	MemoryTypeCount uint32
	MemoryTypes     [32]vkMemoryType
	MemoryHeapCount uint32
	MemoryHeaps     [16]vkMemoryHeap
}

// vkPhysicalDeviceFeatures is VkPhysicalDeviceFeatures.
type vkPhysicalDeviceFeatures struct {
	RobustBufferAccess                      uint32
	FullDrawIndexUint32                     uint32
	ImageCubeArray                          uint32
	IndependentBlend                        uint32
	GeometryShader                          uint32
	TessellationShader                      uint32
	SampleRateShading                       uint32
	DualSrcBlend                            uint32
	LogicOp                                 uint32
	MultiDrawIndirect                       uint32
	DrawIndirectFirstInstance               uint32
	DepthClamp                              uint32
	DepthBiasClamp                          uint32
	FillModeNonSolid                        uint32
	DepthBounds                             uint32
	WideLines                               uint32
	LargePoints                             uint32
	AlphaToOne                              uint32
	MultiViewport                           uint32
	SamplerAnisotropy                       uint32
	TextureCompressionETC2                  uint32
	TextureCompressionASTC_LDR              uint32
	TextureCompressionBC                    uint32
	OcclusionQueryPrecise                   uint32
	PipelineStatisticsQuery                 uint32
	VertexPipelineStoresAndAtomics          uint32
	FragmentStoresAndAtomics                uint32
	ShaderTessellationAndGeometryPointSize  uint32
	ShaderImageGatherExtended               uint32
	ShaderStorageImageExtendedFormats       uint32
	ShaderStorageImageMultisample           uint32
	ShaderStorageImageReadWithoutFormat     uint32
	ShaderStorageImageWriteWithoutFormat    uint32
	ShaderUniformBufferArrayDynamicIndexing uint32
	ShaderSampledImageArrayDynamicIndexing  uint32
	ShaderStorageBufferArrayDynamicIndexing uint32
	ShaderStorageImageArrayDynamicIndexing  uint32
	ShaderClipDistance                      uint32
	ShaderCullDistance                      uint32
	ShaderFloat64                           uint32
	ShaderInt64                             uint32
	ShaderInt16                             uint32
	ShaderResourceResidency                 uint32
	ShaderResourceMinLod                    uint32
	SparseBinding                           uint32
	SparseResidencyBuffer                   uint32
	SparseResidencyImage2D                  uint32
	SparseResidencyImage3D                  uint32
	SparseResidency2Samples                 uint32
	SparseResidency4Samples                 uint32
	SparseResidency8Samples                 uint32
	SparseResidency16Samples                uint32
	SparseResidencyAliased                  uint32
	VariableMultisampleRate                 uint32
	InheritedQueries                        uint32
}

// vkDeviceQueueCreateInfo is VkDeviceQueueCreateInfo.
type vkDeviceQueueCreateInfo struct {
	SType            uint32
	PNext            unsafe.Pointer
	Flags            uint32
	QueueFamilyIndex uint32
	QueueCount       uint32
	PQueuePriorities unsafe.Pointer
}

// vkDeviceCreateInfo is VkDeviceCreateInfo.
type vkDeviceCreateInfo struct {
	SType                   uint32
	PNext                   unsafe.Pointer
	Flags                   uint32
	QueueCreateInfoCount    uint32
	PQueueCreateInfos       unsafe.Pointer
	EnabledLayerCount       uint32
	PpEnabledLayerNames     unsafe.Pointer
	EnabledExtensionCount   uint32
	PpEnabledExtensionNames unsafe.Pointer
	PEnabledFeatures        unsafe.Pointer
}

// vkBufferCreateInfo is VkBufferCreateInfo.
type vkBufferCreateInfo struct {
	SType                 uint32
	PNext                 unsafe.Pointer
	Flags                 uint32
	Size                  uint64
	Usage                 uint32
	SharingMode           uint32
	QueueFamilyIndexCount uint32
	PQueueFamilyIndices   unsafe.Pointer
}

// vkMemoryRequirements is VkMemoryRequirements.
type vkMemoryRequirements struct {
	Size           uint64
	Alignment      uint64
	MemoryTypeBits uint32
}

// vkMemoryAllocateInfo is VkMemoryAllocateInfo.
type vkMemoryAllocateInfo struct {
	SType           uint32
	PNext           unsafe.Pointer
	AllocationSize  uint64
	MemoryTypeIndex uint32
}

// vkCommandPoolCreateInfo is VkCommandPoolCreateInfo.
type vkCommandPoolCreateInfo struct {
	SType            uint32
	PNext            unsafe.Pointer
	Flags            uint32
	QueueFamilyIndex uint32
}

// vkCommandBufferAllocateInfo is VkCommandBufferAllocateInfo.
type vkCommandBufferAllocateInfo struct {
	SType              uint32
	PNext              unsafe.Pointer
	CommandPool        vkCommandPool
	Level              uint32
	CommandBufferCount uint32
}

// vkCommandBufferBeginInfo is VkCommandBufferBeginInfo.
type vkCommandBufferBeginInfo struct {
	SType            uint32
	PNext            unsafe.Pointer
	Flags            uint32
	PInheritanceInfo unsafe.Pointer
}

// vkBufferCopy is VkBufferCopy.
type vkBufferCopy struct {
	SrcOffset uint64
	DstOffset uint64
	Size      uint64
}

// vkMemoryBarrier is VkMemoryBarrier.
type vkMemoryBarrier struct {
	SType         uint32
	PNext         unsafe.Pointer
	SrcAccessMask uint32
	DstAccessMask uint32
}

// vkSubmitInfo is VkSubmitInfo.
type vkSubmitInfo struct {
	SType                uint32
	PNext                unsafe.Pointer
	WaitSemaphoreCount   uint32
	PWaitSemaphores      unsafe.Pointer
	PWaitDstStageMask    unsafe.Pointer
	CommandBufferCount   uint32
	PCommandBuffers      unsafe.Pointer
	SignalSemaphoreCount uint32
	PSignalSemaphores    unsafe.Pointer
}

// vkFenceCreateInfo is VkFenceCreateInfo.
type vkFenceCreateInfo struct {
	SType uint32
	PNext unsafe.Pointer
	Flags uint32
}

// vkShaderModuleCreateInfo is VkShaderModuleCreateInfo.
type vkShaderModuleCreateInfo struct {
	SType    uint32
	PNext    unsafe.Pointer
	Flags    uint32
	CodeSize uintptr
	PCode    unsafe.Pointer
}

// vkDescriptorSetLayoutBinding is VkDescriptorSetLayoutBinding.
type vkDescriptorSetLayoutBinding struct {
	Binding            uint32
	DescriptorType     uint32
	DescriptorCount    uint32
	StageFlags         uint32
	PImmutableSamplers unsafe.Pointer
}

// vkDescriptorSetLayoutCreateInfo is VkDescriptorSetLayoutCreateInfo.
type vkDescriptorSetLayoutCreateInfo struct {
	SType        uint32
	PNext        unsafe.Pointer
	Flags        uint32
	BindingCount uint32
	PBindings    unsafe.Pointer
}

// vkPushConstantRange is VkPushConstantRange.
type vkPushConstantRange struct {
	StageFlags uint32
	Offset     uint32
	Size       uint32
}

// vkPipelineLayoutCreateInfo is VkPipelineLayoutCreateInfo.
type vkPipelineLayoutCreateInfo struct {
	SType                  uint32
	PNext                  unsafe.Pointer
	Flags                  uint32
	SetLayoutCount         uint32
	PSetLayouts            unsafe.Pointer
	PushConstantRangeCount uint32
	PPushConstantRanges    unsafe.Pointer
}

// vkPipelineShaderStageCreateInfo is VkPipelineShaderStageCreateInfo.
type vkPipelineShaderStageCreateInfo struct {
	SType               uint32
	PNext               unsafe.Pointer
	Flags               uint32
	Stage               uint32
	Module              vkShaderModule
	PName               unsafe.Pointer
	PSpecializationInfo unsafe.Pointer
}

// vkComputePipelineCreateInfo is VkComputePipelineCreateInfo.
type vkComputePipelineCreateInfo struct {
	SType              uint32
	PNext              unsafe.Pointer
	Flags              uint32
	Stage              vkPipelineShaderStageCreateInfo
	Layout             vkPipelineLayout
	BasePipelineHandle vkPipeline
	BasePipelineIndex  int32
}

// vkDescriptorPoolSize is VkDescriptorPoolSize.
type vkDescriptorPoolSize struct {
	Type            uint32
	DescriptorCount uint32
}

// vkDescriptorPoolCreateInfo is VkDescriptorPoolCreateInfo.
type vkDescriptorPoolCreateInfo struct {
	SType         uint32
	PNext         unsafe.Pointer
	Flags         uint32
	MaxSets       uint32
	PoolSizeCount uint32
	PPoolSizes    unsafe.Pointer
}

// vkDescriptorSetAllocateInfo is VkDescriptorSetAllocateInfo.
type vkDescriptorSetAllocateInfo struct {
	SType              uint32
	PNext              unsafe.Pointer
	DescriptorPool     vkDescriptorPool
	DescriptorSetCount uint32
	PSetLayouts        unsafe.Pointer
}

// vkDescriptorBufferInfo is VkDescriptorBufferInfo.
type vkDescriptorBufferInfo struct {
	Buffer vkBuffer
	Offset uint64
	Range  uint64
}

// vkWriteDescriptorSet is VkWriteDescriptorSet.
type vkWriteDescriptorSet struct {
	SType            uint32
	PNext            unsafe.Pointer
	DstSet           vkDescriptorSet
	DstBinding       uint32
	DstArrayElement  uint32
	DescriptorCount  uint32
	DescriptorType   uint32
	PImageInfo       unsafe.Pointer
	PBufferInfo      unsafe.Pointer
	PTexelBufferView unsafe.Pointer
}

// vkPipelineCacheCreateInfo is VkPipelineCacheCreateInfo.
type vkPipelineCacheCreateInfo struct {
	SType           uint32
	PNext           unsafe.Pointer
	Flags           uint32
	InitialDataSize uintptr
	PInitialData    unsafe.Pointer
}

// vkQueryPoolCreateInfo is VkQueryPoolCreateInfo.
type vkQueryPoolCreateInfo struct {
	SType              uint32
	PNext              unsafe.Pointer
	Flags              uint32
	QueryType          uint32
	QueryCount         uint32
	PipelineStatistics uint32
}

// layoutTypes names every struct above for TestStructLayouts.
var layoutTypes = map[string]any{
	"VkApplicationInfo":                vkApplicationInfo{},
	"VkInstanceCreateInfo":             vkInstanceCreateInfo{},
	"VkPhysicalDeviceLimits":           vkPhysicalDeviceLimits{},
	"VkPhysicalDeviceSparseProperties": vkPhysicalDeviceSparseProperties{},
	"VkPhysicalDeviceProperties":       vkPhysicalDeviceProperties{},
	"VkExtent3D":                       vkExtent3D{},
	"VkQueueFamilyProperties":          vkQueueFamilyProperties{},
	"VkMemoryType":                     vkMemoryType{},
	"VkMemoryHeap":                     vkMemoryHeap{},
	"VkPhysicalDeviceMemoryProperties": vkPhysicalDeviceMemoryProperties{},
	"VkPhysicalDeviceFeatures":         vkPhysicalDeviceFeatures{},
	"VkDeviceQueueCreateInfo":          vkDeviceQueueCreateInfo{},
	"VkDeviceCreateInfo":               vkDeviceCreateInfo{},
	"VkBufferCreateInfo":               vkBufferCreateInfo{},
	"VkMemoryRequirements":             vkMemoryRequirements{},
	"VkMemoryAllocateInfo":             vkMemoryAllocateInfo{},
	"VkCommandPoolCreateInfo":          vkCommandPoolCreateInfo{},
	"VkCommandBufferAllocateInfo":      vkCommandBufferAllocateInfo{},
	"VkCommandBufferBeginInfo":         vkCommandBufferBeginInfo{},
	"VkBufferCopy":                     vkBufferCopy{},
	"VkMemoryBarrier":                  vkMemoryBarrier{},
	"VkSubmitInfo":                     vkSubmitInfo{},
	"VkFenceCreateInfo":                vkFenceCreateInfo{},
	"VkShaderModuleCreateInfo":         vkShaderModuleCreateInfo{},
	"VkDescriptorSetLayoutBinding":     vkDescriptorSetLayoutBinding{},
	"VkDescriptorSetLayoutCreateInfo":  vkDescriptorSetLayoutCreateInfo{},
	"VkPushConstantRange":              vkPushConstantRange{},
	"VkPipelineLayoutCreateInfo":       vkPipelineLayoutCreateInfo{},
	"VkPipelineShaderStageCreateInfo":  vkPipelineShaderStageCreateInfo{},
	"VkComputePipelineCreateInfo":      vkComputePipelineCreateInfo{},
	"VkDescriptorPoolSize":             vkDescriptorPoolSize{},
	"VkDescriptorPoolCreateInfo":       vkDescriptorPoolCreateInfo{},
	"VkDescriptorSetAllocateInfo":      vkDescriptorSetAllocateInfo{},
	"VkDescriptorBufferInfo":           vkDescriptorBufferInfo{},
	"VkWriteDescriptorSet":             vkWriteDescriptorSet{},
	"VkPipelineCacheCreateInfo":        vkPipelineCacheCreateInfo{},
	"VkQueryPoolCreateInfo":            vkQueryPoolCreateInfo{},
}
