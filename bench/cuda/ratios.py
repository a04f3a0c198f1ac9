#!/usr/bin/env python3
"""Reads the Go benchmark output and the native programs' output (one log)
and prints the zyx-tt CUDA benchmark table: each figure against its native
reference from the same run, with the ratio and the target."""
import re
import sys

text = open(sys.argv[1]).read()
go = {}
for m in re.finditer(r"^Benchmark(\S+?)-\d+\s+\d+\s+([\d.]+) ns/op(.*)$", text, re.M):
    name, ns, rest = m.group(1), float(m.group(2)), m.group(3)
    vals = {"ns": ns}
    for v, unit in re.findall(r"([\d.]+) (\S+)", rest):
        vals[unit] = float(v)
    go[name] = vals
native = {k: float(v) for k, v in re.findall(r"^native (\S+) ([\d.]+)$", text, re.M)}

def gibps(name):
    v = go.get(name, {}).get("MB/s")
    return None if v is None else v * 1e6 / 2**30

rows = [
    # label, ours, native, unit, higher is better, target
    ("H2D 1 GiB from a host-pool buffer", gibps("H2D1GiBHostPool"), native.get("h2d_gibps"), "GiB/s", True, 0.9),
    ("D2H 1 GiB into a host-pool buffer", gibps("D2H1GiBHostPool"), native.get("d2h_gibps"), "GiB/s", True, 0.9),
    ("H2D 1 GiB from Go heap (staged; info)", gibps("H2D1GiBGoHeap"), native.get("h2d_gibps"), "GiB/s", True, None),
    ("D2H 1 GiB into Go heap (staged; info)", gibps("D2H1GiBGoHeap"), native.get("d2h_gibps"), "GiB/s", True, None),
    ("launch + sync of an empty kernel", go.get("LaunchEmpty", {}).get("ns"), native.get("launch_ns"), "ns", False, 1.3),
    ("sgemm 8192^3 (f32, cuBLAS)", go.get("Sgemm8192", {}).get("TFLOP/s"), native.get("sgemm_tflops"), "TFLOP/s", True, 0.95),
    ("tf32 gemm 8192^3 (cuBLAS)", go.get("TF32Gemm8192", {}).get("TFLOP/s"), native.get("tf32_tflops"), "TFLOP/s", True, 0.95),
    ("bf16 gemm 8192^3 (cuBLAS)", go.get("BF16Gemm8192", {}).get("TFLOP/s"), native.get("bf16_tflops"), "TFLOP/s", True, 0.95),
]
print("| benchmark | zyx-tt | native | unit | ratio | target | met |")
print("|---|---|---|---|---|---|---|")
failed = False
for label, ours, ref, unit, higher, target in rows:
    if ours is None or ref is None or ref == 0:
        print(f"| {label} | {ours} | {ref} | {unit} | - | - | missing |")
        failed = failed or target is not None
        continue
    ratio = ours / ref
    if target is None:
        met = "info"
    else:
        ok = ratio >= target if higher else ratio <= target
        met = "yes" if ok else "NO"
        failed = failed or not ok
    tgt = "-" if target is None else (f">= {target}x" if higher else f"<= {target}x")
    print(f"| {label} | {ours:.2f} | {ref:.2f} | {unit} | {ratio:.3f}x | {tgt} | {met} |")
sys.exit(1 if failed else 0)
