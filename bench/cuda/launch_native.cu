// Reference for the zyx-tt launch benchmark: launch an empty kernel on a
// non-blocking stream and wait for it, as Executable.Launch does.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void empty() {}

int main(int argc, char **argv) {
    const int iters = argc > 1 ? atoi(argv[1]) : 100000;
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return 1;
    for (int i = 0; i < 1000; i++) {
        empty<<<1, 32, 0, s>>>();
        cudaStreamSynchronize(s);
    }
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; i++) {
        empty<<<1, 32, 0, s>>>();
        if (cudaStreamSynchronize(s) != cudaSuccess) return 1;
    }
    auto t1 = std::chrono::steady_clock::now();
    printf("native launch_ns %.1f\n", std::chrono::duration<double, std::nano>(t1 - t0).count() / iters);
    return 0;
}
