# OpenCL and Vulkan backends: shaders, tests and the bandwidth benchmark.
.PHONY: gpu-shaders gpu-test bench-gpu

# Recompile the examples' GLSL compute shaders to the committed SPIR-V.
gpu-shaders:
	$(GO) generate ./backends/vulkan

gpu-test:
	$(GO) test -race -count=1 ./backends/opencl/... ./backends/vulkan/...

# vadd bandwidth vs the device's buffer copy, on every OpenCL and Vulkan device.
bench-gpu:
	$(GO) test -run '^$$' -bench VaddBandwidth -benchtime 5x ./backends/opencl ./backends/vulkan

bench: bench-gpu
