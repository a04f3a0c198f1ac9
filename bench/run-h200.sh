#!/usr/bin/env bash
# Every launch and copy ratio of the GPU backends against its native
# reference, on an NVIDIA host without Go (or here, on lavapipe and PoCL),
# each zyx-tt figure measured in the same run as its reference and the two
# alternated ROUNDS times (default 3). Run from the repository root with
# test binaries built on a machine with Go:
#
#   make h200-devbin            # CGO_ENABLED=0 go test -c -o devbin/{cuda,opencl,vulkan}.test
#   bash bench/run-h200.sh      # logs and ratios.md go to $OUT (default /tmp/zyx-h200)
#
# TESTS=1 runs the three backends' test suites first. A backend whose test
# binary or native reference is missing is skipped (the table says so).
# Native references: bench/cuda/{launch,memcpy}_native.cu (nvcc),
# bench/gpu/{vk,cl}_launch_native.c (cc; Vulkan and OpenCL headers from
# VK_INCLUDE / CL_INCLUDE, default /usr/include). Where the host has no
# Vulkan or OpenCL loader, .gl/*.deb and devbin/ocl-icd-libopencl1*.deb are
# unpacked first; NVIDIA's ICDs are registered when only their libraries
# are present. PROFILE=1 also writes CPU profiles of the zyx-tt launch
# benchmarks' first round to $OUT. BACKENDS (default "cuda vulkan opencl")
# picks the backends measured.
set -u
OUT=${OUT:-/tmp/zyx-h200}
ROUNDS=${ROUNDS:-3}
BIN=${BIN:-devbin}
mkdir -p "$OUT"
ROOT=$(pwd)
NATIVE=$(mktemp -d)
LOG=$OUT/bench.log
log() { echo "## $*"; }

# Loaders and ICDs (see bench/gpu/run.sh).
if ! ldconfig -p | grep -q 'libvulkan.so.1'; then
  for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
  ldconfig
fi
if ! ldconfig -p | grep -q 'libOpenCL.so.1'; then
  for f in "$BIN"/ocl-icd-libopencl1*.deb; do [ -f "$f" ] && dpkg -x "$f" /tmp/ocl; done
  export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ] && ldconfig -p | grep -q libnvidia-opencl.so.1; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
for j in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$j" ]; then export VK_DRIVER_FILES=$j; break; fi
done

{
log "machine"
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -2
echo "cpus $(nproc); VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"
lscpu 2>/dev/null | grep -E '^(Model name|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|NUMA node\(s\))' 
log "native build"
if command -v nvcc >/dev/null; then
  nvcc -O2 -arch=sm_90 -o "$NATIVE/launch_native" bench/cuda/launch_native.cu &&
  nvcc -O2 -arch=sm_90 -o "$NATIVE/memcpy_native" bench/cuda/memcpy_native.cu && echo "CUDA references built"
else
  echo "nvcc not found: no CUDA references"
fi
cc -O2 -I"${VK_INCLUDE:-/usr/include}" -o "$NATIVE/vk_launch_native" bench/gpu/vk_launch_native.c -ldl && echo "Vulkan reference built"
cc -O2 -I"${CL_INCLUDE:-/usr/include}" -o "$NATIVE/cl_launch_native" bench/gpu/cl_launch_native.c -ldl && echo "OpenCL reference built"
} 2>&1 | tee "$OUT/machine.log"

if [ "${TESTS:-0}" = 1 ]; then
  for b in cuda opencl vulkan; do
    [ -x "$BIN/$b.test" ] || continue
    log "$b tests" | tee "$OUT/$b-tests.log"
    (cd "backends/$b" && timeout "${TEST_LIMIT:-280}" "$ROOT/$BIN/$b.test" -test.count=1 -test.timeout "$((${TEST_LIMIT:-280} - 10))s") 2>&1 | tee -a "$OUT/$b-tests.log" | tail -15
    echo "$b tests exit: ${PIPESTATUS[0]}" | tee -a "$OUT/$b-tests.log"
  done
fi

# gobench BACKEND ARGS...: the backend's test binary from its package folder.
# Every command is bounded (LIMIT seconds, default 90): a hang costs a
# figure, not the run.
LIMIT=${LIMIT:-90}
gobench() {
  local b=$1; shift
  [ -x "$BIN/$b.test" ] || { echo "no $BIN/$b.test"; return; }
  (cd "backends/$b" && timeout "$LIMIT" "$ROOT/$BIN/$b.test" -test.run '^$' "$@") || echo "$b benchmark exit $?"
}
native() { timeout "$LIMIT" "$@" || echo "$1 exit $?"; }
# prof NAME: a CPU profile of the first round's benchmark, with PROFILE=1.
prof() { [ "${PROFILE:-0}" = 1 ] && [ "$r" = 1 ] && echo "-test.cpuprofile=$OUT/$1.prof"; }
has() { case " ${BACKENDS:-cuda vulkan opencl} " in *" $1 "*) return 0;; esac; return 1; }

: > "$LOG"
for r in $(seq 1 "$ROUNDS"); do
  {
  log "round $r"
  if has cuda && [ -x "$NATIVE/launch_native" ]; then
    gobench cuda -test.bench '^BenchmarkLaunchEmpty$' -test.benchtime 100000x $(prof cuda-launch)
    native "$NATIVE/launch_native" 100000 10000 1
    gobench cuda -test.bench '^BenchmarkQueuedLaunches$' -test.benchtime 3x $(prof cuda-queued)
    gobench cuda -test.bench '^BenchmarkRaw' -test.benchtime 20000x -test.timeout 60s
    gobench cuda -test.bench '1GiBHostPool$' -test.benchtime 10x
    native "$NATIVE/memcpy_native" 10
  fi
  if has vulkan && [ -x "$NATIVE/vk_launch_native" ]; then
    gobench vulkan -test.bench '^BenchmarkQueuedLaunches$' -test.benchtime 1x $(prof vulkan)
    native "$NATIVE/vk_launch_native" backends/vulkan/testdata/empty.spv 10000 1
  fi
  if has opencl && [ -x "$NATIVE/cl_launch_native" ]; then
    gobench opencl -test.bench '^BenchmarkQueuedLaunches$' -test.benchtime 1x $(prof opencl)
    native "$NATIVE/cl_launch_native" 10000 1
  fi
  } 2>&1 | tee -a "$LOG"
done

log "ratios"
python3 bench/ratios.py "$LOG" 2>&1 | tee "$OUT/ratios.md"
