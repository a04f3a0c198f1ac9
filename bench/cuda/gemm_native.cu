// Reference for the zyx-tt GEMM benchmarks: cublasGemmEx on 8192^3 with the
// same types, compute modes and data distribution (uniform [-1, 1)) as the
// Go benchmark, each call followed by a stream synchronize as Launch does.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cublas_v2.h>
#include <cuda_runtime.h>

static double run(cublasHandle_t h, cudaStream_t s, cudaDataType dt, cublasComputeType_t ct, size_t esize, int iters) {
    const int n = 8192;
    const size_t count = size_t(n) * n;
    std::vector<unsigned char> host(count * esize);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < count; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        float v = float(double(x >> 11) / double(1ull << 53) * 2.0 - 1.0);
        if (esize == 4) memcpy(&host[4 * i], &v, 4);
        else { uint32_t b; memcpy(&b, &v, 4); uint16_t h16 = uint16_t(b >> 16); memcpy(&host[2 * i], &h16, 2); }
    }
    void *a, *b, *c;
    cudaMalloc(&a, count * esize); cudaMalloc(&b, count * esize); cudaMalloc(&c, count * esize);
    cudaMemcpy(a, host.data(), count * esize, cudaMemcpyHostToDevice);
    cudaMemcpy(b, host.data(), count * esize, cudaMemcpyHostToDevice);
    cudaMemcpy(c, host.data(), count * esize, cudaMemcpyHostToDevice);
    float alpha = 1, beta = 0;
    auto gemm = [&]() {
        cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, b, dt, n, a, dt, n, &beta, c, dt, n, ct, CUBLAS_GEMM_DEFAULT);
        if (st != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "cublasGemmEx: %d\n", int(st)); exit(1); }
        cudaStreamSynchronize(s);
    };
    for (int i = 0; i < 3; i++) gemm();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; i++) gemm();
    auto t1 = std::chrono::steady_clock::now();
    cudaFree(a); cudaFree(b); cudaFree(c);
    double sec = std::chrono::duration<double>(t1 - t0).count() / iters;
    return 2.0 * n * double(n) * n / sec / 1e12;
}

int main() {
    cublasHandle_t h;
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
    cublasSetStream(h, s);
    printf("native sgemm_tflops %.2f\n", run(h, s, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 20));
    printf("native tf32_tflops %.2f\n", run(h, s, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 50));
    printf("native bf16_tflops %.2f\n", run(h, s, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 200));
    cublasDestroy(h);
    return 0;
}
