// Reference for the zyx-tt CUDA copy benchmarks: cudaMemcpy of 1 GiB between
// pinned host memory (cudaMallocHost) and device memory, timed on the wall
// clock like the Go benchmark (each copy is synchronous).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x)                                                                   \
    do {                                                                           \
        cudaError_t e = (x);                                                       \
        if (e != cudaSuccess) {                                                    \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
            return 1;                                                              \
        }                                                                          \
    } while (0)

int main(int argc, char **argv) {
    const size_t bytes = size_t(1) << 30;
    const int iters = argc > 1 ? atoi(argv[1]) : 10;
    void *host = nullptr, *dev = nullptr;
    CHECK(cudaMallocHost(&host, bytes));
    CHECK(cudaMalloc(&dev, bytes));
    memset(host, 1, bytes);
    for (int w = 0; w < 2; w++) {
        CHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
    }
    using clk = std::chrono::steady_clock;
    auto t0 = clk::now();
    for (int i = 0; i < iters; i++) CHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
    auto t1 = clk::now();
    for (int i = 0; i < iters; i++) CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
    auto t2 = clk::now();
    double h2d = std::chrono::duration<double>(t1 - t0).count() / iters;
    double d2h = std::chrono::duration<double>(t2 - t1).count() / iters;
    printf("native h2d_gibps %.3f\n", 1.0 / h2d);
    printf("native d2h_gibps %.3f\n", 1.0 / d2h);
    return 0;
}
