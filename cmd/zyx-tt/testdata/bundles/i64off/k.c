/* Test kernel: off by one, which float64 cannot see at 2^60. */
#include <stdint.h>

void k(const int64_t *x, const int64_t *y, int64_t *z, uint32_t n, uint64_t gid0, uint64_t gid1, uint64_t gid2)
{
	(void)gid0;
	(void)gid1;
	(void)gid2;
	for (uint32_t i = 0; i < n; i++)
		z[i] = x[i] + y[i] + 1;
}
