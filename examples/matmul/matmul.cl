// c = a · b, row-major: a is m×k, b is k×n, c is m×n. Each 16×16 work
// group computes a 16×16 tile of c, staging tiles of a and b in local
// memory. Axis 0 runs over columns of c, axis 1 over rows.
#define TILE 16

__kernel void matmul(__global const float *a, __global const float *b,
                     __global float *c, const uint m, const uint n,
                     const uint k) {
    __local float ta[TILE][TILE];
    __local float tb[TILE][TILE];
    const uint col = get_global_id(0);
    const uint row = get_global_id(1);
    const uint lc = get_local_id(0);
    const uint lr = get_local_id(1);
    float acc = 0.0f;
    for (uint t = 0; t < k; t += TILE) {
        ta[lr][lc] = (row < m && t + lc < k) ? a[row * k + t + lc] : 0.0f;
        tb[lr][lc] = (col < n && t + lr < k) ? b[(t + lr) * n + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint l = 0; l < TILE; l++) {
            acc = fma(ta[lr][l], tb[l][lc], acc);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < m && col < n) {
        c[row * n + col] = acc;
    }
}
