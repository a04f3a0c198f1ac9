// Native reference for the OpenCL backend's launch benchmark
// (BenchmarkQueuedLaunches in backends/opencl): an empty kernel with one
// global buffer argument over one work item, on an in-order queue.
//
//   sync:   clEnqueueNDRangeKernel + clFinish, once per launch.
//   sync with an event: the enqueue returns its cl_event, and after the
//           clFinish its status is read (clGetEventInfo) and it is
//           released: the driver calls the backend's synchronous launch
//           makes, so that the difference to sync is the driver's cost of
//           an event per command.
//   queued: n clEnqueueNDRangeKernel, then one clFinish.
//   queued with events: the same, each enqueue returning its cl_event,
//           released after the clFinish (what a runtime that hands out an
//           event per launch pays).
//
// Usage: cl_launch_native [launches=10000] [rounds=3] [gpu|cpu|any=any] [profiling]
// With "profiling" the queue is made with CL_QUEUE_PROFILING_ENABLE, as
// the backend's queue is while it times launches: the driver's cost of
// profiling.
// Prints "native cl_sync_us X", "native cl_queued_us X" and
// "native cl_queued_event_us X" per round, and "native cl_sync_event_us X". libOpenCL.so.1 is opened with
// dlopen.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FN(name) static __typeof__(&name) p_##name
FN(clGetPlatformIDs);
FN(clGetDeviceIDs);
FN(clGetDeviceInfo);
FN(clCreateContext);
FN(clCreateCommandQueue);
FN(clCreateProgramWithSource);
FN(clBuildProgram);
FN(clCreateKernel);
FN(clCreateBuffer);
FN(clSetKernelArg);
FN(clEnqueueNDRangeKernel);
FN(clFinish);
FN(clReleaseEvent);
FN(clGetEventInfo);

#define CHECK(x)                                                                       \
    do {                                                                               \
        cl_int r_ = (x);                                                               \
        if (r_ != CL_SUCCESS) {                                                        \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, (int)r_); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static const char *src = "__kernel void empty(__global float *x) {}\n";

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    const char *want = argc > 3 ? argv[3] : "any";
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
#define LOAD(name)                                                   \
    if (!(p_##name = (__typeof__(&name))dlsym(lib, #name))) {        \
        fprintf(stderr, "no %s\n", #name);                           \
        return 1;                                                    \
    }
    LOAD(clGetPlatformIDs);
    LOAD(clGetDeviceIDs);
    LOAD(clGetDeviceInfo);
    LOAD(clCreateContext);
    LOAD(clCreateCommandQueue);
    LOAD(clCreateProgramWithSource);
    LOAD(clBuildProgram);
    LOAD(clCreateKernel);
    LOAD(clCreateBuffer);
    LOAD(clSetKernelArg);
    LOAD(clEnqueueNDRangeKernel);
    LOAD(clFinish);
    LOAD(clReleaseEvent);
    LOAD(clGetEventInfo);

    cl_device_type type = CL_DEVICE_TYPE_ALL;
    if (!strcmp(want, "gpu")) type = CL_DEVICE_TYPE_GPU;
    if (!strcmp(want, "cpu")) type = CL_DEVICE_TYPE_CPU;
    cl_platform_id plats[16];
    cl_uint np = 0;
    CHECK(p_clGetPlatformIDs(16, plats, &np));
    cl_device_id dev = NULL;
    for (cl_uint i = 0; i < np && !dev; i++) {
        cl_uint nd = 0;
        if (p_clGetDeviceIDs(plats[i], type, 1, &dev, &nd) != CL_SUCCESS || nd == 0) dev = NULL;
    }
    if (!dev) {
        fprintf(stderr, "no OpenCL device of type %s\n", want);
        return 1;
    }
    char name[256] = "";
    p_clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    cl_int err;
    cl_context ctx = p_clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue_properties props = argc > 4 && strcmp(argv[4], "profiling") == 0 ? CL_QUEUE_PROFILING_ENABLE : 0;
    cl_command_queue q = p_clCreateCommandQueue(ctx, dev, props, &err);
    CHECK(err);
    cl_program prog = p_clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(p_clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    cl_kernel k = p_clCreateKernel(prog, "empty", &err);
    CHECK(err);
    cl_mem buf = p_clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &err);
    CHECK(err);
    CHECK(p_clSetKernelArg(k, 0, sizeof buf, &buf));
    size_t global = 1;
    cl_event *evs = calloc(n, sizeof *evs);

    printf("native cl device %s\n", name);
    for (int i = 0; i < 100; i++) {
        CHECK(p_clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(p_clFinish(q));
    }
    for (int r = 0; r < rounds; r++) {
        double t0 = now_us();
        for (int i = 0; i < n; i++) {
            CHECK(p_clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
            CHECK(p_clFinish(q));
        }
        double t1 = now_us();
        for (int i = 0; i < n; i++) CHECK(p_clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(p_clFinish(q));
        double t2 = now_us();
        for (int i = 0; i < n; i++) CHECK(p_clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &evs[i]));
        CHECK(p_clFinish(q));
        for (int i = 0; i < n; i++) CHECK(p_clReleaseEvent(evs[i]));
        double t3 = now_us();
        for (int i = 0; i < n; i++) {
            cl_event ev;
            cl_int st;
            CHECK(p_clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &ev));
            CHECK(p_clFinish(q));
            CHECK(p_clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
            if (st != CL_COMPLETE) {
                fprintf(stderr, "status %d after clFinish\n", (int)st);
                return 1;
            }
            CHECK(p_clReleaseEvent(ev));
        }
        double t4 = now_us();
        printf("native cl_sync_us %.3f\n", (t1 - t0) / n);
        printf("native cl_queued_us %.3f\n", (t2 - t1) / n);
        printf("native cl_queued_event_us %.3f\n", (t3 - t2) / n);
        printf("native cl_sync_event_us %.3f\n", (t4 - t3) / n);
        fflush(stdout);
    }
    return 0;
}
