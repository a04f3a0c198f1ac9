#!/usr/bin/env bash
# Every ratio of the launch-speed table (docs/cuda.md, "Benchmarks") in one
# run on an NVIDIA host without Go: CUDA, Vulkan and OpenCL launches and
# copies against native programs built here, the emulator's scaling and
# bf16 add against a plain loop, and the driver-runtime round trip against
# a raw pipe. Each zyx-tt figure is measured in the same round as its
# reference and the rounds alternate ROUNDS times (default 3). Run from the
# repository root with binaries built on a machine with Go:
#
#   make h200-devbin runtime   # devbin/{cuda,opencl,vulkan,ttruntime}.test, bin/zyx-tt-runtime
#   bash bench/run-h200.sh     # logs and ratios.md go to $OUT (default /tmp/zyx-h200)
#
# Environment:
#   ROUNDS     rounds (default 3)
#   BACKENDS   what is measured (default "cuda vulkan opencl emu ping")
#   TESTS=1    the CUDA, OpenCL and Vulkan test suites first (TEST_LIMIT
#              seconds each, default 280)
#   PROFILE=1  CPU profiles of the first round's CUDA and OpenCL launch
#              benchmarks in $OUT
#   LIMIT      seconds any one benchmark command may take (default 90): a
#              hang costs a figure, not the run
#   EMU_BUILD  where the emulator benchmark is built with cmake (default
#              /tmp/zyx-emu-bench); EMU_THREADS the thread counts of its
#              scaling table (default "1,<nproc>")
# Native references: bench/cuda/{launch,memcpy}_native.cu (nvcc),
# bench/gpu/{vk,cl}_launch_native.c (cc; headers from VK_INCLUDE /
# CL_INCLUDE, default /usr/include). Loaders and ICDs: bench/gpu-env.sh.
# A figure whose binary or reference is missing is reported as not
# measured. bench/ratios.py prints the table from $OUT/bench.log.
set -u
OUT=${OUT:-/tmp/zyx-h200}
ROUNDS=${ROUNDS:-3}
BIN=${BIN:-devbin}
LIMIT=${LIMIT:-90}
EMU_BUILD=${EMU_BUILD:-/tmp/zyx-emu-bench}
mkdir -p "$OUT"
ROOT=$(pwd)
NATIVE=$(mktemp -d)
LOG=$OUT/bench.log
log() { echo "## $*"; }
has() { case " ${BACKENDS:-cuda vulkan opencl emu ping} " in *" $1 "*) return 0 ;; esac; return 1; }

DEBS=$BIN
. bench/gpu-env.sh >"$OUT/gpu-env.log" 2>&1

{
  log "machine"
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -2
  echo "cpus $(nproc); VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"
  cat "$OUT/gpu-env.log"
  lscpu 2>/dev/null | grep -E '^(Model name|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|NUMA node\(s\))'
  log "builds"
  if has cuda && command -v nvcc >/dev/null; then
    nvcc -O2 -arch=sm_90 -o "$NATIVE/launch_native" bench/cuda/launch_native.cu &&
      nvcc -O2 -arch=sm_90 -shared -Xcompiler -fPIC -o "$NATIVE/liblaunch_native.so" bench/cuda/launch_native.cu &&
      nvcc -O2 -arch=sm_90 -o "$NATIVE/memcpy_native" bench/cuda/memcpy_native.cu && echo "CUDA references built"
  fi
  has vulkan && cc -O2 -I"${VK_INCLUDE:-/usr/include}" -o "$NATIVE/vk_launch_native" bench/gpu/vk_launch_native.c -ldl && echo "Vulkan reference built"
  has opencl && cc -O2 -I"${CL_INCLUDE:-/usr/include}" -o "$NATIVE/cl_launch_native" bench/gpu/cl_launch_native.c -ldl && echo "OpenCL reference built"
  has emu && cc -O2 -march=native -pthread -o "$NATIVE/host_ceiling" bench/emu/host_ceiling.c && echo "host ceiling probe built"
  if has emu; then
    if cmake -S cpp/emu -B "$EMU_BUILD" -DCMAKE_BUILD_TYPE=Release -DZYX_EMU_BENCH=ON >"$OUT/emu-build.log" 2>&1 &&
      cmake --build "$EMU_BUILD" --target emu_compute_bench -j"$(nproc)" >>"$OUT/emu-build.log" 2>&1; then
      echo "emulator benchmark built"
    else
      tail -20 "$OUT/emu-build.log"
    fi
  fi
  if has ping; then
    ldd bin/zyx-tt-runtime 2>&1 | grep -i 'not found' && echo "bin/zyx-tt-runtime lacks libraries"
    [ -x bin/zyx-tt-runtime ] && echo "runtime: bin/zyx-tt-runtime"
  fi
} 2>&1 | tee "$OUT/machine.log"

if [ "${TESTS:-0}" = 1 ]; then
  for b in cuda opencl vulkan; do
    [ -x "$BIN/$b.test" ] || continue
    log "$b tests" | tee "$OUT/$b-tests.log"
    (cd "backends/$b" && timeout "${TEST_LIMIT:-280}" "$ROOT/$BIN/$b.test" -test.count=1 -test.timeout "$((${TEST_LIMIT:-280} - 10))s") 2>&1 | tee -a "$OUT/$b-tests.log" | tail -15
    echo "$b tests exit: ${PIPESTATUS[0]}" | tee -a "$OUT/$b-tests.log"
  done
fi

# gobench PKGDIR BINARY ARGS...: a test binary's benchmarks, run from its
# package folder.
gobench() {
  local dir=$1 bin=$2
  shift 2
  [ -x "$BIN/$bin.test" ] || { echo "no $BIN/$bin.test"; return; }
  (cd "$dir" && timeout "$LIMIT" "$ROOT/$BIN/$bin.test" -test.run '^$' "$@") || echo "$bin benchmark exit $?"
}
native() { [ -x "$1" ] || { echo "no $1"; return; }; timeout "$LIMIT" "$@" || echo "$1 exit $?"; }
# prof NAME: a CPU profile of the first round's benchmark, with PROFILE=1.
prof() { [ "${PROFILE:-0}" = 1 ] && [ "$r" = 1 ] && echo "-test.cpuprofile=$OUT/$1.prof"; }

: >"$LOG"
for r in $(seq 1 "$ROUNDS"); do
  {
    log "round $r"
    if has cuda; then
      # The launch figures vary by some 10% from one process to the next
      # (where the host puts its threads): within a round, each side runs
      # PAIRS times (default 3), alternating, and bench/ratios.py takes
      # each side's median.
      for i in $(seq 1 "${PAIRS:-3}"); do
        gobench backends/cuda cuda -test.bench '^BenchmarkLaunchEmpty$' -test.benchtime 50000x $([ "$i" = 1 ] && prof cuda-launch)
        native "$NATIVE/launch_native" 50000 10000 1
        gobench backends/cuda cuda -test.bench '^BenchmarkQueuedLaunches$' -test.benchtime 2x $([ "$i" = 1 ] && prof cuda-queued)
      done
      # The targets: each launch figure alternated with its native loop in
      # one process (the native program built as a shared library).
      ZYX_CUDA_NATIVE_LIB=$NATIVE/liblaunch_native.so gobench backends/cuda cuda -test.bench '^BenchmarkVsNative$' -test.benchtime 7x
      gobench backends/cuda cuda -test.bench '^Benchmark(Raw|LaunchEmptyDriver$)' -test.benchtime 20000x -test.timeout 80s
      gobench backends/cuda cuda -test.bench '^BenchmarkQueuedLaunches(Fast|Slow)Reaper$' -test.benchtime 3x
      gobench backends/cuda cuda -test.bench '1GiBHostPool$' -test.benchtime 10x
      native "$NATIVE/memcpy_native" 10
    fi
    if has vulkan; then
      gobench backends/vulkan vulkan -test.bench '^BenchmarkQueuedLaunches$' -test.benchtime 1x
      native "$NATIVE/vk_launch_native" backends/vulkan/testdata/empty.spv 10000 1
    fi
    if has opencl; then
      gobench backends/opencl opencl -test.bench '^BenchmarkQueuedLaunches$' -test.benchtime 1x $(prof opencl)
      gobench backends/opencl opencl -test.bench '^BenchmarkQueuedLaunchesLocked$' -test.benchtime 1x
      native "$NATIVE/cl_launch_native" 10000 1 cpu
      # The GPU's figures under their own names (bench/ratios.py: clgpu_).
      native "$NATIVE/cl_launch_native" 10000 1 gpu | sed 's/^native cl_/native clgpu_/'
      # On a queue with profiling enabled, as the backend's queue is.
      native "$NATIVE/cl_launch_native" 10000 1 gpu profiling | sed 's/^native cl_/native clgpuprof_/'
    fi
    if has emu && [ -x "$EMU_BUILD/bench/emu_compute_bench" ]; then
      timeout "$LIMIT" "$EMU_BUILD/bench/emu_compute_bench" 10 add || echo "emu add exit $?"
      ZYX_BENCH_THREADS=${EMU_THREADS:-1,$(nproc)} timeout "$LIMIT" "$EMU_BUILD/bench/emu_compute_bench" 10 scaling || echo "emu scaling exit $?"
    fi
    # The host's own ceiling for the scaling figure (bench/emu/host_ceiling.c).
    if has emu && [ -x "$NATIVE/host_ceiling" ]; then
      timeout "$LIMIT" "$NATIVE/host_ceiling" "$(nproc)" || echo "host ceiling exit $?"
    fi
    if has ping; then
      gobench ttruntime ttruntime -test.bench 'PingVsPipe$' -test.benchtime 20000x
    fi
  } 2>&1 | tee -a "$LOG"
done

log "ratios"
python3 bench/ratios.py "$LOG" 2>&1 | tee "$OUT/ratios.md"
