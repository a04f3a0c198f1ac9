#!/usr/bin/env bash
# Builds and runs the emulator compute benchmark (compute_bench.cpp).
# Usage: bench/emu/compute.sh [repeats] [add|watcher|mm1|mm|scale|tile|all]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${ZYX_EMU_BUILD:-$root/build/emu-dev}
cmake -S "$root/cpp/emu" -B "$build" -DCMAKE_BUILD_TYPE=Release -DZYX_EMU_BENCH=ON >/dev/null
cmake --build "$build" --target emu_compute_bench -j2 >/dev/null
"$build/bench/emu_compute_bench" "${1:-5}" "${2:-all}"
