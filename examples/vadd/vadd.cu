// z = x + y over n f32 elements; one thread per element.
extern "C" __global__ void vadd(const float *__restrict__ x, const float *__restrict__ y,
                                float *__restrict__ z, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        z[i] = x[i] + y[i];
    }
}
