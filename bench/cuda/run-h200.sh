#!/usr/bin/env bash
# Runs the CUDA backend's tests and benchmarks on an NVIDIA host and prints
# the ratio table. Run from the repository root with a test binary built on
# a machine with Go:
#   CGO_ENABLED=0 go test -c -o devbin/cuda.test ./backends/cuda
#   bash bench/cuda/run-h200.sh            # logs go to $OUT (default /tmp/zyx-cuda)
# Steps: machine facts, native references (nvcc), every test (-test.v),
# the Go benchmarks, the native benchmarks, then bench/cuda/ratios.py.
set -u
OUT=${OUT:-/tmp/zyx-cuda}
mkdir -p "$OUT"
ROOT=$(pwd)
BIN=$ROOT/devbin/cuda.test
NATIVE=$(mktemp -d)
log() { echo "## $*"; }
{
log "machine"
nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
nproc; uname -r
command -v nvcc && nvcc --version | tail -2
ldconfig -p 2>/dev/null | grep -E 'libcuda.so|libnvrtc.so|libcublas.so' | head
ls /usr/local/cuda*/lib64/ 2>/dev/null | grep -E '^lib(nvrtc|cublas)\.so' | head

log "native build"
if command -v nvcc >/dev/null; then
  nvcc -O2 -arch=sm_90 -o "$NATIVE/memcpy_native" bench/cuda/memcpy_native.cu &&
  nvcc -O2 -arch=sm_90 -o "$NATIVE/launch_native" bench/cuda/launch_native.cu &&
  nvcc -O2 -arch=sm_90 -o "$NATIVE/gemm_native" bench/cuda/gemm_native.cu -lcublas && echo "native programs built"
else
  echo "nvcc not found: no native references"
fi
} 2>&1 | tee "$OUT/machine.log"

log "tests" | tee "$OUT/tests.log"
(cd backends/cuda && timeout 240 "$BIN" -test.v -test.count=1 -test.timeout 230s) 2>&1 | tee -a "$OUT/tests.log"
echo "tests exit: ${PIPESTATUS[0]}" | tee -a "$OUT/tests.log"

{
log "benchmarks (zyx-tt)"
cd backends/cuda
"$BIN" -test.run '^$' -test.bench '1GiB' -test.benchtime 10x
"$BIN" -test.run '^$' -test.bench 'LaunchEmpty' -test.benchtime 100000x
"$BIN" -test.run '^$' -test.bench 'Sgemm8192' -test.benchtime 20x
"$BIN" -test.run '^$' -test.bench 'TF32Gemm8192' -test.benchtime 50x
"$BIN" -test.run '^$' -test.bench 'BF16Gemm8192' -test.benchtime 200x
cd "$ROOT"
log "benchmarks (native)"
"$NATIVE/memcpy_native" 10
"$NATIVE/launch_native" 100000
"$NATIVE/gemm_native"
} 2>&1 | tee "$OUT/bench.log"

log "ratios"
python3 bench/cuda/ratios.py "$OUT/bench.log" 2>&1 | tee "$OUT/ratios.md"
