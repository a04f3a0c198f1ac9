extern "C" __global__ void vadd(const float *x, const float *y, float *z, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) z[i] = x[i] + y[i];
}
