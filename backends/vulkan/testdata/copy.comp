#version 450
// dst = src over n f32 elements, strided like the vadd example: the
// compute-shader copy that the bandwidth benchmark compares vadd with,
// beside vkCmdCopyBuffer.
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Src { float src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { float dst[]; };
layout(push_constant) uniform Vars { uint n; };

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
        dst[i] = src[i];
    }
}
