// c = a · b, row-major f32: a is m×k, b is k×n, c is m×n. Each 16×16 block
// computes a 16×16 tile of c, staging tiles of a and b in shared memory.
// Axis x runs over columns of c, axis y over rows.
#define TILE 16

extern "C" __global__ void matmul(const float *__restrict__ a, const float *__restrict__ b,
                                  float *__restrict__ c, unsigned int m, unsigned int n,
                                  unsigned int k) {
    __shared__ float ta[TILE][TILE];
    __shared__ float tb[TILE][TILE];
    const unsigned int lc = threadIdx.x, lr = threadIdx.y;
    const unsigned int col = blockIdx.x * TILE + lc;
    const unsigned int row = blockIdx.y * TILE + lr;
    float acc = 0.0f;
    for (unsigned int t = 0; t < k; t += TILE) {
        ta[lr][lc] = (row < m && t + lc < k) ? a[(size_t)row * k + t + lc] : 0.0f;
        tb[lr][lc] = (col < n && t + lr < k) ? b[(size_t)(t + lr) * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (unsigned int l = 0; l < TILE; l++) {
            acc = fmaf(ta[lr][l], tb[l][lc], acc);
        }
        __syncthreads();
    }
    if (row < m && col < n) {
        c[(size_t)row * n + col] = acc;
    }
}
