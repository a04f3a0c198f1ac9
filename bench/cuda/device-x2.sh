#!/usr/bin/env bash
# The CUDA backend's multi-GPU run, for a host with two GPUs (device kind
# nvidia-h200-x2). From the repository root, after building on a machine
# with Go:
#   CGO_ENABLED=0 go test -c -o devbin/cuda.test ./backends/cuda
#   CGO_ENABLED=0 go build -o devbin/zyx-tt ./cmd/zyx-tt
# then run this script there (carry devbin). It prints the topology, runs
# every test with -test.v (TestPeerCopy and the cross-device event suites
# need the second GPU), probes, runs an example on each GPU and with --dev
# auto, and times the 1 GiB peer copy against bench/cuda/peer_native.cu,
# alternated three times. Logs go to $OUT (default /tmp/zyx-cuda-x2).
set -u
OUT=${OUT:-/tmp/zyx-cuda-x2}
mkdir -p "$OUT"
ROOT=$(pwd)
NATIVE=$(mktemp -d)
# NVLink multicast stays off.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{
echo "## topology"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
nvidia-smi topo -m
echo "## tests"
(cd backends/cuda && timeout 300 "$ROOT/devbin/cuda.test" -test.v -test.count=1 -test.timeout 290s)
echo "tests exit: $?"
echo "## probe and runs"
"$ROOT/devbin/zyx-tt" probe --backends cuda
for dev in cuda:0 cuda:1 auto; do
  "$ROOT/devbin/zyx-tt" run --dev "$dev" --verify examples/vadd; echo "run --dev $dev exit: $?"
done
echo "## peer copy"
nvcc -O2 -arch=sm_90 -o "$NATIVE/peer_native" bench/cuda/peer_native.cu && echo "native program built"
for round in 1 2 3; do
  echo "# round $round"
  (cd backends/cuda && "$ROOT/devbin/cuda.test" -test.run '^$' -test.bench 'PeerCopy' -test.benchtime 10x)
  "$NATIVE/peer_native" 10
done
} 2>&1 | tee "$OUT/x2.log"
python3 - "$OUT/x2.log" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
ours = [float(v) * 1e6 / 2**30 for v in re.findall(r"^BenchmarkPeerCopy1GiB-\d+\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) MB/s", text, re.M)]
staged = [float(v) * 1e6 / 2**30 for v in re.findall(r"^BenchmarkPeerCopyStaged1GiB-\d+\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) MB/s", text, re.M)]
native = [float(v) for v in re.findall(r"^native peer_gibps ([\d.]+)$", text, re.M)]
print("| round | zyx-tt peer GiB/s | staged GiB/s | native GiB/s | zyx/native |")
print("|---|---|---|---|---|")
for i, (o, n) in enumerate(zip(ours, native)):
    s = staged[i] if i < len(staged) else float("nan")
    print(f"| {i+1} | {o:.2f} | {s:.2f} | {n:.2f} | {o/n:.3f} |")
PY
