#version 450
// c = a · b, row-major: a is m×k, b is k×n, c is m×n. Each 16×16 work
// group computes a 16×16 tile of c through shared memory. Axis x runs over
// columns of c, axis y over rows.
#define TILE 16
layout(local_size_x = TILE, local_size_y = TILE, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Vars { uint m; uint n; uint k; };

shared float ta[TILE][TILE];
shared float tb[TILE][TILE];

void main() {
    uint col = gl_GlobalInvocationID.x;
    uint row = gl_GlobalInvocationID.y;
    uint lc = gl_LocalInvocationID.x;
    uint lr = gl_LocalInvocationID.y;
    float acc = 0.0;
    for (uint t = 0; t < k; t += TILE) {
        ta[lr][lc] = (row < m && t + lc < k) ? a[row * k + t + lc] : 0.0;
        tb[lr][lc] = (col < n && t + lr < k) ? b[(t + lr) * n + col] : 0.0;
        barrier();
        for (uint l = 0; l < TILE; l++) {
            acc = fma(ta[lr][l], tb[l][lc], acc);
        }
        barrier();
    }
    if (row < m && col < n) {
        c[row * n + col] = acc;
    }
}
