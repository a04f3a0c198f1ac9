# OpenCL and Vulkan backends: shaders, tests and the bandwidth benchmark.
.PHONY: gpu-shaders gpu-test bench-gpu h200-devbin

# Recompile the examples' GLSL compute shaders to the committed SPIR-V.
gpu-shaders:
	$(GO) generate ./backends/vulkan

gpu-test:
	$(GO) test -race -count=1 ./backends/opencl/... ./backends/vulkan/...

# vadd bandwidth vs the device's buffer copy, on every OpenCL and Vulkan device.
bench-gpu:
	$(GO) test -run '^$$' -bench VaddBandwidth -benchtime 5x ./backends/opencl ./backends/vulkan

bench: bench-gpu

# The CUDA, OpenCL and Vulkan test binaries and the runtime client's
# (PingVsPipe) that bench/run-h200.sh runs on an NVIDIA host without Go
# (stripped, to travel light; the round trip also needs `make runtime`).
h200-devbin:
	@mkdir -p devbin
	for b in cuda opencl vulkan; do CGO_ENABLED=0 $(GO) test -c -ldflags='-s -w' -o devbin/$$b.test ./backends/$$b || exit 1; done
	CGO_ENABLED=0 $(GO) test -c -ldflags='-s -w' -o devbin/ttruntime.test ./ttruntime
