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

int main(int argc, char **argv) {
    const int iters = argc > 1 ? atoi(argv[1]) : 100000;
    const int n = argc > 2 ? atoi(argv[2]) : 10000;
    const int rounds = argc > 3 ? atoi(argv[3]) : 1;
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return 1;
    float *buf = nullptr;
    if (cudaMalloc(&buf, 4) != cudaSuccess) return 1;
    std::vector<cudaEvent_t> evs(n);
    for (auto &e : evs)
        if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) return 1;
    for (int i = 0; i < 1000; i++) {
        empty<<<1, 32, 0, s>>>();
        cudaStreamSynchronize(s);
    }
    for (int r = 0; r < rounds; r++) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; i++) {
            empty<<<1, 32, 0, s>>>();
            if (cudaStreamSynchronize(s) != cudaSuccess) return 1;
        }
        printf("native launch_ns %.1f\n", ns_since(t0) / iters);
        t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; i++) empty<<<1, 32, 0, s>>>();
        if (cudaStreamSynchronize(s) != cudaSuccess) return 1;
        printf("native queued_ns %.1f\n", ns_since(t0) / n);
        t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; i++) {
            empty<<<1, 32, 0, s>>>();
            if (cudaEventRecord(evs[i], s) != cudaSuccess) return 1;
        }
        if (cudaStreamSynchronize(s) != cudaSuccess) return 1;
        printf("native queued_event_ns %.1f\n", ns_since(t0) / n);
        t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; i++) {
            empty_p<<<1, 32, 0, s>>>(buf);
            if (cudaEventRecord(evs[i], s) != cudaSuccess) return 1;
        }
        if (cudaStreamSynchronize(s) != cudaSuccess) return 1;
        printf("native queued_event_param_ns %.1f\n", ns_since(t0) / n);
        fflush(stdout);
    }
    return 0;
}
