#!/usr/bin/env bash
# The multicast bf16 matmul (examples/matmul_mcast, 8x8 emulated cores) at
# 1024^3 on tt-emu against OpenBLAS sgemm at 1024^3 (examples/matmul on
# cblas), in the same run: median launch times and their ratio, as
# throughput (emulator / OpenBLAS). Needs bin/zyx-tt and bin/zyx-tt-runtime
# (make build) and OpenBLAS; python3 reads the reports.
# Usage: bench/emu/mcast.sh [repeats] [size]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${ZYX_BIN:-$root/bin/zyx-tt}
reps=${1:-5}
size=${2:-1024}
case $reps$size in *[!0-9]*|'') echo "usage: $0 [repeats] [size]" >&2; exit 2 ;; esac
median() { python3 -c 'import json,sys; print(json.load(sys.stdin)["repeat"]["median_ns"])'; }
sets=(--set "m=$size" --set "n=$size" --set "k=$size")
emu=$("$bin" run --json --dev tt-emu --repeat "$reps" "${sets[@]}" "$root/examples/matmul_mcast" | median)
blas=$("$bin" run --json --dev cblas --repeat "$reps" "${sets[@]}" "$root/examples/matmul" | median)
python3 - "$emu" "$blas" "$size" <<'PY'
import sys
emu, blas, n = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
flop = 2.0 * n ** 3
print(f"matmul_mcast bf16 {n}^3 on tt-emu (8x8 cores): {emu / 1e6:.2f} ms ({flop / emu:.1f} GFLOP/s)")
print(f"OpenBLAS sgemm {n}^3 (cblas):            {blas / 1e6:.2f} ms ({flop / blas:.1f} GFLOP/s)")
print(f"emulator / OpenBLAS throughput: {blas / emu:.3f}")
PY
