// c = a · b, row-major: a is m×k, b is k×n, c is m×n. One group per row of
// c (c.json sets the grid to m): the row is accumulated as a sum of rows of
// b scaled by a[row][l], so the inner loop runs along contiguous memory and
// vectorises.
#include <stdint.h>
#include <string.h>

void matmul(const float *a, const float *b, float *c,
            uint32_t m, uint32_t n, uint32_t k,
            uint64_t row, uint64_t gid1, uint64_t gid2)
{
	(void)gid1;
	(void)gid2;
	if (row >= m)
		return;
	float *restrict out = c + row * (uint64_t)n;
	memset(out, 0, sizeof(float) * n);
	for (uint32_t l = 0; l < k; l++) {
		const float s = a[row * (uint64_t)k + l];
		const float *restrict brow = b + l * (uint64_t)n;
		for (uint32_t j = 0; j < n; j++)
			out[j] += s * brow[j];
	}
}
