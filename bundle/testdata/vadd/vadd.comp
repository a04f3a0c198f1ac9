#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer Y { float y[]; };
layout(set = 0, binding = 2) writeonly buffer Z { float z[]; };
layout(push_constant) uniform P { uint n; };
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < n) z[i] = x[i] + y[i];
}
