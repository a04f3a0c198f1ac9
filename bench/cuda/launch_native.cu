// Reference for the zyx-tt launch benchmarks: an empty kernel on a
// non-blocking stream.
//   launch_ns:       launch + cudaStreamSynchronize, as Executable.Launch
//                    does (BenchmarkLaunchEmpty).
//   queued_ns:       n launches, then one cudaStreamSynchronize.
//   queued_event_ns: n launches, each followed by a cudaEventRecord of its
//                    own event (timing disabled), then one synchronize: what
//                    a runtime that tracks every launch with an event pays
//                    (BenchmarkQueuedLaunches' queued figure is held to it).
//   queued_event_param_ns: the same with the kernel of
//                    BenchmarkQueuedLaunches, which takes one pointer.
// Usage: launch_native [iters=100000] [queued n=10000] [rounds=1]
// Built with -shared it is the in-process reference of BenchmarkVsNative
// (the zyx_native_* functions).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

__global__ void empty() {}
__global__ void empty_p(float *) {}

static double ns_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
}

// The reference's state: one non-blocking stream, the one-pointer kernel's
// buffer and an event per queued launch.
static cudaStream_t stream;
static float *buf;
static std::vector<cudaEvent_t> evs;

// The loops are exported too, so that a benchmark can load this file built
// as a shared library and alternate them with its own in one process
// (BenchmarkVsNative): figures from separate processes differ by up to 10%.
extern "C" {

// zyx_native_setup makes the stream, buffer and n events and warms up:
// 0 on success.
int zyx_native_setup(int n) {
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return 1;
    if (cudaMalloc(&buf, 4) != cudaSuccess) return 1;
    evs.resize(n);
    for (auto &e : evs)
        if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) return 1;
    for (int i = 0; i < 1000; i++) {
        empty<<<1, 32, 0, stream>>>();
        cudaStreamSynchronize(stream);
    }
    return 0;
}

// zyx_native_launch_ns: iters launches, each followed by
// cudaStreamSynchronize; ns per launch, negative on failure.
double zyx_native_launch_ns(int iters) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; i++) {
        empty<<<1, 32, 0, stream>>>();
        if (cudaStreamSynchronize(stream) != cudaSuccess) return -1;
    }
    return ns_since(t0) / iters;
}

// zyx_native_queued_ns: n launches (of the one-pointer kernel when param),
// each followed by a cudaEventRecord of its own event when events, then
// one synchronize; ns per launch, negative on failure. n is at most
// zyx_native_setup's.
double zyx_native_queued_ns(int n, int events, int param) {
    if (n > (int)evs.size()) return -1;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; i++) {
        if (param)
            empty_p<<<1, 32, 0, stream>>>(buf);
        else
            empty<<<1, 32, 0, stream>>>();
        if (events && cudaEventRecord(evs[i], stream) != cudaSuccess) return -1;
    }
    if (cudaStreamSynchronize(stream) != cudaSuccess) return -1;
    return ns_since(t0) / n;
}

} // extern "C"

int main(int argc, char **argv) {
    const int iters = argc > 1 ? atoi(argv[1]) : 100000;
    const int n = argc > 2 ? atoi(argv[2]) : 10000;
    const int rounds = argc > 3 ? atoi(argv[3]) : 1;
    if (zyx_native_setup(n) != 0) return 1;
    for (int r = 0; r < rounds; r++) {
        double v[4] = {zyx_native_launch_ns(iters), zyx_native_queued_ns(n, 0, 0),
                       zyx_native_queued_ns(n, 1, 0), zyx_native_queued_ns(n, 1, 1)};
        for (double x : v)
            if (x < 0) return 1;
        printf("native launch_ns %.1f\n", v[0]);
        printf("native queued_ns %.1f\n", v[1]);
        printf("native queued_event_ns %.1f\n", v[2]);
        printf("native queued_event_param_ns %.1f\n", v[3]);
        fflush(stdout);
    }
    return 0;
}
