#!/usr/bin/env bash
# The CUDA backend's multi-GPU run, for a host with two GPUs (device kind
# nvidia-h200-x2). From the repository root, after building the test binary
# on a machine with Go:
#   CGO_ENABLED=0 go test -c -o devbin/cuda.test ./backends/cuda
# then run this script there (carry devbin). It prints the topology, runs
# every test with -test.v (TestPeerCopy needs the second GPU) and writes
# the log to $OUT (default /tmp/zyx-cuda-x2).
set -u
OUT=${OUT:-/tmp/zyx-cuda-x2}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
nvidia-smi topo -m
cd backends/cuda
timeout 300 ../../devbin/cuda.test -test.v -test.count=1 -test.timeout 290s
echo "tests exit: $?"
ZYX_DEBUG=1 timeout 120 ../../devbin/cuda.test -test.v -test.run 'TestPeerCopy|TestBackendStatus|TestDeviceInfo' -test.count=1
} 2>&1 | tee "$OUT/x2.log"
