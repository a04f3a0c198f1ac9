/* Test kernel: writes a constant, or NaN where x is negative. */
#include <math.h>
#include <stdint.h>

void k(const float *x, float *z, uint32_t n, uint64_t gid0, uint64_t gid1, uint64_t gid2)
{
	(void)gid1;
	(void)gid2;
	for (uint64_t i = gid0 * 64; i < gid0 * 64 + 64 && i < n; i++)
		z[i] = x[i] < 0 ? NAN : 12345.0f;
}
