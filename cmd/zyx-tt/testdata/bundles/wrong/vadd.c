/* Test kernel: one group per 64 elements. */
#include <stdint.h>

void vadd(const float *x, const float *y, float *z, uint32_t n,
          uint64_t gid0, uint64_t gid1, uint64_t gid2)
{
	(void)gid1;
	(void)gid2;
	for (uint64_t i = gid0 * 64; i < gid0 * 64 + 64 && i < n; i++)
		z[i] = x[i] - y[i];
}
