// Reference for the zyx-tt CUDA peer-copy benchmark: 1 GiB from GPU 0 to
// GPU 1 with cudaMemcpyPeerAsync on a stream of GPU 1 and a stream
// synchronize, timed on the wall clock like the Go benchmark (each copy is
// waited for). Peer access is enabled when the pair allows it; without it
// the runtime copies through the host, and the program says which.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                                       \
    do {                                                                               \
        cudaError_t e = (x);                                                           \
        if (e != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main(int argc, char **argv) {
    const size_t bytes = size_t(1) << 30;
    const int iters = argc > 1 ? atoi(argv[1]) : 10;
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        fprintf(stderr, "needs 2 CUDA devices, have %d\n", count);
        return 2;
    }
    int can = 0;
    CHECK(cudaDeviceCanAccessPeer(&can, 1, 0));
    void *src = nullptr, *dst = nullptr;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&src, bytes));
    CHECK(cudaMemset(src, 1, bytes));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaSetDevice(1));
    if (can) CHECK(cudaDeviceEnablePeerAccess(0, 0));
    CHECK(cudaMalloc(&dst, bytes));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    for (int w = 0; w < 2; w++) {
        CHECK(cudaMemcpyPeerAsync(dst, 1, src, 0, bytes, s));
        CHECK(cudaStreamSynchronize(s));
    }
    using clk = std::chrono::steady_clock;
    auto t0 = clk::now();
    for (int i = 0; i < iters; i++) {
        CHECK(cudaMemcpyPeerAsync(dst, 1, src, 0, bytes, s));
        CHECK(cudaStreamSynchronize(s));
    }
    double t = std::chrono::duration<double>(clk::now() - t0).count() / iters;
    printf("native peer_access %d\n", can);
    printf("native peer_gibps %.3f\n", 1.0 / t);
    return 0;
}
