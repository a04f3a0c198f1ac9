// y = exp(x) over n f32 elements; one work item per element.
__kernel void unary(__global const float *x, __global float *y, const uint n) {
    size_t i = get_global_id(0);
    if (i < n) {
        y[i] = exp(x[i]);
    }
}
