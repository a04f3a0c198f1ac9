#version 450
// z = x + y over n f32 elements. The grid may be smaller than n / 256
// (Vulkan devices cap a dispatch at maxComputeWorkGroupCount, 65535 on
// many), so each invocation strides over the whole array.
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer Y { float y[]; };
layout(set = 0, binding = 2) writeonly buffer Z { float z[]; };
layout(push_constant) uniform Vars { uint n; };

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
        z[i] = x[i] + y[i];
    }
}
