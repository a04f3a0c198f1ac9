#include <stdint.h>
void vadd(void *const *args, const uint64_t group[3], const uint64_t grid[3]) {
	const float *x = args[0], *y = args[1];
	float *z = args[2];
	uint32_t n = *(const uint32_t *)args[3];
	for (uint64_t i = group[0] * 256; i < (group[0] + 1) * 256 && i < n; i++) z[i] = x[i] + y[i];
}
