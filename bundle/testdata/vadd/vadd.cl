__kernel void vadd(__global const float *x, __global const float *y, __global float *z, uint n) {
	size_t i = get_global_id(0);
	if (i < n) z[i] = x[i] + y[i];
}
