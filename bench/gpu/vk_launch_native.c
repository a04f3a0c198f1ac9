// Native reference for the Vulkan backend's launch benchmark
// (BenchmarkQueuedLaunches in backends/vulkan): the same empty compute
// shader (backends/vulkan/testdata/empty.spv, one storage buffer at set 0,
// binding 0) dispatched over one work group.
//
//   sync:   record the dispatch into a command buffer, submit it with a
//           fence, wait on the fence; once per launch.
//   queued: record and submit each dispatch on its own (one vkQueueSubmit
//           per dispatch, as a program without batching does), then wait
//           for the last one's fence.
//
// Usage: vk_launch_native SHADER.spv [launches=10000] [rounds=3] [device=0]
// Prints "native vk_sync_us X" and "native vk_queued_us X" per round.
// The loader is opened with dlopen, so no libvulkan-dev is needed to link.
#define VK_NO_PROTOTYPES
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

#define CHECK(x)                                                              \
    do {                                                                      \
        VkResult r_ = (x);                                                    \
        if (r_ != VK_SUCCESS) {                                               \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, \
                    (int)r_);                                                 \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

static PFN_vkGetInstanceProcAddr gipa;
#define FN(name) static PFN_##name name
FN(vkCreateInstance);
FN(vkEnumeratePhysicalDevices);
FN(vkGetPhysicalDeviceProperties);
FN(vkGetPhysicalDeviceQueueFamilyProperties);
FN(vkGetPhysicalDeviceMemoryProperties);
FN(vkCreateDevice);
FN(vkGetDeviceQueue);
FN(vkCreateShaderModule);
FN(vkCreateDescriptorSetLayout);
FN(vkCreatePipelineLayout);
FN(vkCreateComputePipelines);
FN(vkCreateDescriptorPool);
FN(vkAllocateDescriptorSets);
FN(vkUpdateDescriptorSets);
FN(vkCreateBuffer);
FN(vkGetBufferMemoryRequirements);
FN(vkAllocateMemory);
FN(vkBindBufferMemory);
FN(vkCreateCommandPool);
FN(vkAllocateCommandBuffers);
FN(vkResetCommandPool);
FN(vkResetCommandBuffer);
FN(vkBeginCommandBuffer);
FN(vkEndCommandBuffer);
FN(vkCmdBindPipeline);
FN(vkCmdBindDescriptorSets);
FN(vkCmdDispatch);
FN(vkCreateFence);
FN(vkWaitForFences);
FN(vkResetFences);
FN(vkQueueSubmit);
FN(vkDeviceWaitIdle);

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *load(VkInstance inst, const char *name) {
    void *p = (void *)gipa(inst, name);
    if (!p) {
        fprintf(stderr, "no %s\n", name);
        exit(1);
    }
    return p;
}

static uint32_t *read_spv(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint32_t *code = malloc(n);
    if (fread(code, 1, n, f) != (size_t)n) {
        perror(path);
        exit(1);
    }
    fclose(f);
    *size = n;
    return code;
}

static VkDevice dev;
static VkQueue queue;
static VkPipeline pipe;
static VkPipelineLayout layout;
static VkDescriptorSet set;

static void record(VkCommandBuffer cb) {
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    CHECK(vkBeginCommandBuffer(cb, &bi));
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
    vkCmdDispatch(cb, 1, 1, 1);
    CHECK(vkEndCommandBuffer(cb));
}

static void submit(VkCommandBuffer cb, VkFence fence) {
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    CHECK(vkQueueSubmit(queue, 1, &si, fence));
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s SHADER.spv [launches] [rounds] [device]\n", argv[0]);
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 10000;
    int rounds = argc > 3 ? atoi(argv[3]) : 3;
    int devIndex = argc > 4 ? atoi(argv[4]) : 0;
    void *lib = dlopen("libvulkan.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
    vkCreateInstance = (PFN_vkCreateInstance)load(NULL, "vkCreateInstance");
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkInstance inst;
    CHECK(vkCreateInstance(&ici, NULL, &inst));
#define LOADI(name) name = (PFN_##name)load(inst, #name)
    LOADI(vkEnumeratePhysicalDevices);
    LOADI(vkGetPhysicalDeviceProperties);
    LOADI(vkGetPhysicalDeviceQueueFamilyProperties);
    LOADI(vkGetPhysicalDeviceMemoryProperties);
    LOADI(vkCreateDevice);
    LOADI(vkGetDeviceQueue);
    LOADI(vkCreateShaderModule);
    LOADI(vkCreateDescriptorSetLayout);
    LOADI(vkCreatePipelineLayout);
    LOADI(vkCreateComputePipelines);
    LOADI(vkCreateDescriptorPool);
    LOADI(vkAllocateDescriptorSets);
    LOADI(vkUpdateDescriptorSets);
    LOADI(vkCreateBuffer);
    LOADI(vkGetBufferMemoryRequirements);
    LOADI(vkAllocateMemory);
    LOADI(vkBindBufferMemory);
    LOADI(vkCreateCommandPool);
    LOADI(vkAllocateCommandBuffers);
    LOADI(vkResetCommandPool);
    LOADI(vkResetCommandBuffer);
    LOADI(vkBeginCommandBuffer);
    LOADI(vkEndCommandBuffer);
    LOADI(vkCmdBindPipeline);
    LOADI(vkCmdBindDescriptorSets);
    LOADI(vkCmdDispatch);
    LOADI(vkCreateFence);
    LOADI(vkWaitForFences);
    LOADI(vkResetFences);
    LOADI(vkQueueSubmit);
    LOADI(vkDeviceWaitIdle);

    uint32_t ndev = 0;
    CHECK(vkEnumeratePhysicalDevices(inst, &ndev, NULL));
    if (ndev == 0 || devIndex >= (int)ndev) {
        fprintf(stderr, "no Vulkan device %d (%u found)\n", devIndex, ndev);
        return 1;
    }
    VkPhysicalDevice *pds = calloc(ndev, sizeof *pds);
    CHECK(vkEnumeratePhysicalDevices(inst, &ndev, pds));
    VkPhysicalDevice pd = pds[devIndex];
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
    VkQueueFamilyProperties *qf = calloc(nq, sizeof *qf);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
    uint32_t family = UINT32_MAX;
    for (uint32_t i = 0; i < nq; i++) {
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
            family = i;
            break;
        }
    }
    if (family == UINT32_MAX) {
        fprintf(stderr, "no compute queue\n");
        return 1;
    }
    float prio = 1;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = family, .queueCount = 1, .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci};
    CHECK(vkCreateDevice(pd, &dci, NULL, &dev));
    vkGetDeviceQueue(dev, family, 0, &queue);

    size_t spvSize;
    uint32_t *spv = read_spv(argv[1], &spvSize);
    VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = spvSize,
                                     .pCode = spv};
    VkShaderModule sm;
    CHECK(vkCreateShaderModule(dev, &smci, NULL, &sm));
    VkDescriptorSetLayoutBinding b = {.binding = 0, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                      .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo dslci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                             .bindingCount = 1, .pBindings = &b};
    VkDescriptorSetLayout dsl;
    CHECK(vkCreateDescriptorSetLayout(dev, &dslci, NULL, &dsl));
    VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                       .setLayoutCount = 1, .pSetLayouts = &dsl};
    CHECK(vkCreatePipelineLayout(dev, &plci, NULL, &layout));
    VkComputePipelineCreateInfo cpci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = sm, .pName = "main"},
        .layout = layout};
    CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipe));

    // The one storage buffer: 4 bytes, in any memory type it allows.
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = 4,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
    VkBuffer buf;
    CHECK(vkCreateBuffer(dev, &bci, NULL, &buf));
    VkMemoryRequirements mr;
    vkGetBufferMemoryRequirements(dev, buf, &mr);
    uint32_t type = 0;
    while (type < 32 && !(mr.memoryTypeBits & (1u << type))) type++;
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = mr.size,
                                .memoryTypeIndex = type};
    VkDeviceMemory mem;
    CHECK(vkAllocateMemory(dev, &mai, NULL, &mem));
    CHECK(vkBindBufferMemory(dev, buf, mem, 0));
    VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1};
    VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1,
                                       .poolSizeCount = 1, .pPoolSizes = &ps};
    VkDescriptorPool dp;
    CHECK(vkCreateDescriptorPool(dev, &dpci, NULL, &dp));
    VkDescriptorSetAllocateInfo dsai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                        .descriptorPool = dp, .descriptorSetCount = 1, .pSetLayouts = &dsl};
    CHECK(vkAllocateDescriptorSets(dev, &dsai, &set));
    VkDescriptorBufferInfo dbi = {.buffer = buf, .offset = 0, .range = VK_WHOLE_SIZE};
    VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set, .dstBinding = 0,
                              .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              .pBufferInfo = &dbi};
    vkUpdateDescriptorSets(dev, 1, &w, 0, NULL);

    // sync reuses one command buffer (reset with its pool); queued records
    // n command buffers, one per dispatch, reset together at each round.
    VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = family};
    VkCommandPool syncPool, queuedPool;
    CHECK(vkCreateCommandPool(dev, &cpi, NULL, &syncPool));
    CHECK(vkCreateCommandPool(dev, &cpi, NULL, &queuedPool));
    VkCommandBuffer syncCB;
    VkCommandBufferAllocateInfo cbai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                        .commandPool = syncPool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                        .commandBufferCount = 1};
    CHECK(vkAllocateCommandBuffers(dev, &cbai, &syncCB));
    VkCommandBuffer *cbs = calloc(n, sizeof *cbs);
    cbai.commandPool = queuedPool;
    cbai.commandBufferCount = n;
    CHECK(vkAllocateCommandBuffers(dev, &cbai, cbs));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CHECK(vkCreateFence(dev, &fci, NULL, &fence));

    printf("native vk device %s\n", props.deviceName);
    // Warm up both paths.
    for (int i = 0; i < 100; i++) {
        CHECK(vkResetCommandPool(dev, syncPool, 0));
        record(syncCB);
        submit(syncCB, fence);
        CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
        CHECK(vkResetFences(dev, 1, &fence));
    }
    for (int r = 0; r < rounds; r++) {
        double t0 = now_us();
        for (int i = 0; i < n; i++) {
            CHECK(vkResetCommandPool(dev, syncPool, 0));
            record(syncCB);
            submit(syncCB, fence);
            CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
            CHECK(vkResetFences(dev, 1, &fence));
        }
        double t1 = now_us();
        CHECK(vkResetCommandPool(dev, queuedPool, 0));
        for (int i = 0; i < n; i++) {
            record(cbs[i]);
            submit(cbs[i], i == n - 1 ? fence : VK_NULL_HANDLE);
        }
        CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
        CHECK(vkResetFences(dev, 1, &fence));
        double t2 = now_us();
        printf("native vk_sync_us %.3f\n", (t1 - t0) / n);
        printf("native vk_queued_us %.3f\n", (t2 - t1) / n);
        fflush(stdout);
    }
    CHECK(vkDeviceWaitIdle(dev));
    return 0;
}
