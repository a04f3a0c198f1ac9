#!/usr/bin/env python3
"""Reads bench/run-h200.sh's log (rounds of Go benchmark output and native
programs' output, each round headed "## round N") and prints, for every
figure, the zyx-tt value against its native reference of the same round,
the ratio of each round, and whether every round meets the target."""
import re
import sys

text = open(sys.argv[1]).read()
rounds = re.split(r"^## round \d+$", text, flags=re.M)[1:]


def parse(chunk):
    go, native = {}, {}
    for m in re.finditer(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$", chunk, re.M):
        name, rest = m.group(1), m.group(2)
        vals = {}
        for v, unit in re.findall(r"([\d.]+) (\S+)", rest):
            vals["ns" if unit == "ns/op" else unit] = float(v)
        # Per-device sub-benchmarks: keep the first device of each.
        base = name.split("/")[0]
        go.setdefault(base, vals)
        go.setdefault(name, vals)
    for k, v in re.findall(r"^native (\S+) ([\d.]+)$", chunk, re.M):
        native.setdefault(k, float(v))
    return go, native


def gib(mbps):
    return None if mbps is None else mbps * 1e6 / 2**30


def g(go, name, unit):
    return go.get(name, {}).get(unit)


def n(native, key, scale=1.0):
    v = native.get(key)
    return None if v is None else v * scale


# label, zyx-tt value, native value, unit, higher is better, target (None: info)
def rows(go, nat):
    return [
        ("CUDA launch + wait, empty kernel (LaunchEmpty)", g(go, "LaunchEmpty", "ns") and g(go, "LaunchEmpty", "ns") / 1e3, n(nat, "launch_ns", 1e-3), "µs", False, 1.05),
        ("CUDA queued, 10,000 then one wait, vs native with an event per launch", g(go, "QueuedLaunches", "queued-µs/launch"), n(nat, "queued_event_ns", 1e-3), "µs", False, 1.10),
        ("CUDA queued vs native plain (info)", g(go, "QueuedLaunches", "queued-µs/launch"), n(nat, "queued_ns", 1e-3), "µs", False, None),
        ("CUDA launch + wait in QueuedLaunches (info)", g(go, "QueuedLaunches", "sync-µs/launch"), n(nat, "launch_ns", 1e-3), "µs", False, None),
        ("CUDA raw cuLaunchKernel + cuStreamSynchronize via purego (info)", g(go, "RawLaunchSync", "ns") and g(go, "RawLaunchSync", "ns") / 1e3, n(nat, "launch_ns", 1e-3), "µs", False, None),
        ("CUDA raw launch + cuStreamQuery spin (info)", g(go, "RawLaunchStreamQuery", "ns") and g(go, "RawLaunchStreamQuery", "ns") / 1e3, n(nat, "launch_ns", 1e-3), "µs", False, None),
        ("CUDA raw launch + cuEventRecord + cuEventQuery spin (info)", g(go, "RawLaunchEventQuery", "ns") and g(go, "RawLaunchEventQuery", "ns") / 1e3, n(nat, "launch_ns", 1e-3), "µs", False, None),
        ("CUDA raw queued launches (info)", g(go, "RawQueued", "ns") and g(go, "RawQueued", "ns") / 1e3, n(nat, "queued_ns", 1e-3), "µs", False, None),
        ("CUDA H2D 1 GiB from the host pool", gib(g(go, "H2D1GiBHostPool", "MB/s")), n(nat, "h2d_gibps"), "GiB/s", True, 0.98),
        ("CUDA D2H 1 GiB into the host pool", gib(g(go, "D2H1GiBHostPool", "MB/s")), n(nat, "d2h_gibps"), "GiB/s", True, 0.98),
        ("Vulkan launch + wait, empty dispatch", g(go, "QueuedLaunches/vulkan:0", "sync-µs/launch"), n(nat, "vk_sync_us"), "µs", False, 1.25),
        ("Vulkan queued, 10,000 then one wait (native: a submit each)", g(go, "QueuedLaunches/vulkan:0", "queued-µs/launch"), n(nat, "vk_queued_us"), "µs", False, 1.25),
        ("OpenCL launch + wait, empty kernel", g(go, "QueuedLaunches/opencl:0", "sync-µs/launch"), n(nat, "cl_sync_us"), "µs", False, 1.25),
        ("OpenCL queued, 10,000 then one clFinish", g(go, "QueuedLaunches/opencl:0", "queued-µs/launch"), n(nat, "cl_queued_us"), "µs", False, 1.25),
        ("OpenCL queued vs native with an event per launch (info)", g(go, "QueuedLaunches/opencl:0", "queued-µs/launch"), n(nat, "cl_queued_event_us"), "µs", False, None),
    ]


table = {}
order = []
for chunk in rounds:
    go, nat = parse(chunk)
    for label, ours, ref, unit, higher, target in rows(go, nat):
        if label not in table:
            order.append(label)
            table[label] = (unit, higher, target, [])
        table[label][3].append((ours, ref))

print(f"{len(rounds)} rounds; per round: zyx-tt / native = ratio")
print()
print("| figure | unit | rounds (zyx-tt / native = ratio) | ratio range | target | met |")
print("|---|---|---|---|---|---|")
failed = False
for label in order:
    unit, higher, target, vals = table[label]
    cells, ratios = [], []
    for ours, ref in vals:
        if ours is None or not ref:
            cells.append("–")
            continue
        r = ours / ref
        ratios.append(r)
        cells.append(f"{ours:.3g} / {ref:.3g} = {r:.3f}")
    if not ratios:
        if target is not None:
            print(f"| {label} | {unit} | not measured | – | – | missing |")
        continue
    rng = f"{min(ratios):.3f}–{max(ratios):.3f}"
    if target is None:
        tgt, met = "–", "info"
    else:
        ok = all((r >= target) if higher else (r <= target) for r in ratios)
        tgt = (">= " if higher else "<= ") + f"{target}x"
        met = "yes" if ok else "NO"
        failed = failed or not ok
    print(f"| {label} | {unit} | {'; '.join(cells)} | {rng} | {tgt} | {met} |")
sys.exit(1 if failed else 0)
