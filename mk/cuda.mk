# CUDA backend: tests (they skip without libcuda.so.1) and the test binary
# that runs on an NVIDIA host without Go (bench/run-h200.sh runs it with
# the others that make h200-devbin builds).
.PHONY: cuda-test cuda-devbin

cuda-test:
	$(GO) test -race -count=1 ./backends/cuda/...

cuda-devbin:
	@mkdir -p devbin
	CGO_ENABLED=0 $(GO) test -c -o devbin/cuda.test ./backends/cuda
