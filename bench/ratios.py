#!/usr/bin/env python3
"""Reads bench/run-h200.sh's log (rounds of Go benchmark output and native
programs' output, each round headed "## round N") and prints, for every
figure, the zyx-tt value against its native reference of the same round,
the ratio of each round, and whether every round meets the target."""
import re
import sys

text = open(sys.argv[1]).read()
rounds = re.split(r"^## round \d+$", text, flags=re.M)[1:]


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def parse(chunk):
    """A round's figures: each Go metric and native value is the median of
    its occurrences in the round (run-h200.sh runs some several times,
    alternating with their references)."""
    gos, natives = {}, {}
    for m in re.finditer(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$", chunk, re.M):
        name, rest = m.group(1), m.group(2)
        vals = {}
        for v, unit in re.findall(r"([\d.]+) (\S+)", rest):
            vals["ns" if unit == "ns/op" else unit] = float(v)
        # Per-device sub-benchmarks keep their full name
        # (QueuedLaunches/opencl:1).
        for unit, v in vals.items():
            gos.setdefault(name, {}).setdefault(unit, []).append(v)
    for k, v in re.findall(r"^native (\S+) ([\d.]+)$", chunk, re.M):
        natives.setdefault(k, []).append(float(v))
    go = {k: {u: median(v) for u, v in units.items()} for k, units in gos.items()}
    native = {k: median(v) for k, v in natives.items()}
    # The emulator benchmark's lines (bench/emu/compute_bench.cpp): the bf16
    # add against its plain loop, and the scaling table's matmul times.
    m = re.search(r"bf16 add 1M, 8x8 grid:\s+hardware numerics ([\d.]+) ms, exact ([\d.]+) ms, plain loop ([\d.]+) ms", chunk)
    if m:
        native["emu_add_hw_ms"], native["emu_add_exact_ms"], native["emu_add_loop_ms"] = map(float, m.groups())
    for t, mm in re.findall(r"^\s+(\d+)\s+([\d.]+) ms\s+[\d.]+x\s+[\d.]+ ms\s+[\d.]+x", chunk, re.M):
        native.setdefault(f"emu_mm_{t}_ms", float(mm))
    threads = sorted(int(k.split("_")[2]) for k in native if k.startswith("emu_mm_"))
    if threads:
        native["emu_mm_most_ms"] = native[f"emu_mm_{threads[-1]}_ms"]
        native["emu_mm_threads"] = threads[-1]
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
        ("CUDA launch + wait, empty kernel, native in the same process (VsNative)", g(go, "VsNative", "zyx-sync-µs"), g(go, "VsNative", "native-sync-µs"), "µs", False, 1.05),
        ("CUDA queued, 10,000 then one wait, vs native with an event per launch, same process (VsNative)", g(go, "VsNative", "zyx-queued-µs"), g(go, "VsNative", "native-queued-µs"), "µs", False, 1.10),
        ("CUDA launch + wait, empty kernel (LaunchEmpty; native a separate process, info)", g(go, "LaunchEmpty", "ns") and g(go, "LaunchEmpty", "ns") / 1e3, n(nat, "launch_ns", 1e-3), "µs", False, None),
        ("CUDA queued, 10,000 then one wait, vs native with an event per launch (a separate process, info)", g(go, "QueuedLaunches", "queued-µs/launch"), n(nat, "queued_event_ns", 1e-3), "µs", False, None),
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
        ("OpenCL (PoCL, opencl:0) launch + wait, empty kernel", g(go, "QueuedLaunches/opencl:0", "sync-µs/launch"), n(nat, "cl_sync_us"), "µs", False, 1.25),
        ("OpenCL (PoCL, opencl:0) queued, 10,000 then one clFinish", g(go, "QueuedLaunches/opencl:0", "queued-µs/launch"), n(nat, "cl_queued_us"), "µs", False, 1.25),
        ("OpenCL (PoCL) queued vs native with an event per launch (info)", g(go, "QueuedLaunches/opencl:0", "queued-µs/launch"), n(nat, "cl_queued_event_us"), "µs", False, None),
        ("OpenCL (NVIDIA, opencl:1) launch + wait, empty kernel", g(go, "QueuedLaunches/opencl:1", "sync-µs/launch"), n(nat, "clgpu_sync_us"), "µs", False, 1.25),
        ("OpenCL (NVIDIA) launch + wait vs native with an event, its status read and released (info)", g(go, "QueuedLaunches/opencl:1", "sync-µs/launch"), n(nat, "clgpu_sync_event_us"), "µs", False, None),
        ("OpenCL (NVIDIA) native: an event per launch / none (info: the driver's cost of an event)", n(nat, "clgpu_sync_event_us"), n(nat, "clgpu_sync_us"), "µs", False, None),
        ("OpenCL (NVIDIA) native on a profiling queue: an event per launch / none (info: an event's cost there)", n(nat, "clgpuprof_sync_event_us"), n(nat, "clgpuprof_sync_us"), "µs", False, None),
        ("OpenCL (NVIDIA, opencl:1) queued, 10,000 then one clFinish", g(go, "QueuedLaunches/opencl:1", "queued-µs/launch"), n(nat, "clgpu_queued_us"), "µs", False, 1.25),
        ("OpenCL (NVIDIA) queued vs native with an event per launch (info)", g(go, "QueuedLaunches/opencl:1", "queued-µs/launch"), n(nat, "clgpu_queued_event_us"), "µs", False, None),
        ("OpenCL (NVIDIA) launch + wait on a goroutine locked to its thread (info)", g(go, "QueuedLaunchesLocked/opencl:1", "sync-µs/launch"), n(nat, "clgpu_sync_us"), "µs", False, None),
        ("OpenCL (NVIDIA) queued on a goroutine locked to its thread (info)", g(go, "QueuedLaunchesLocked/opencl:1", "queued-µs/launch"), n(nat, "clgpu_queued_us"), "µs", False, None),
        ("CUDA Launch without package backends in front (info)", g(go, "LaunchEmptyDriver", "ns") and g(go, "LaunchEmptyDriver", "ns") / 1e3, n(nat, "launch_ns", 1e-3), "µs", False, None),
        ("CUDA raw + cuCtxSetCurrent per launch (info)", g(go, "RawLaunchSyncCtx", "ns") and g(go, "RawLaunchSyncCtx", "ns") / 1e3, n(nat, "launch_ns", 1e-3), "µs", False, None),
        ("CUDA raw + cuCtxSetCurrent + thread locked per launch (info)", g(go, "RawLaunchSyncRelock", "ns") and g(go, "RawLaunchSyncRelock", "ns") / 1e3, n(nat, "launch_ns", 1e-3), "µs", False, None),
        ("CUDA raw queued + cuCtxSetCurrent per launch (info)", g(go, "RawQueuedCtx", "ns") and g(go, "RawQueuedCtx", "ns") / 1e3, n(nat, "queued_ns", 1e-3), "µs", False, None),
        ("CUDA raw queued, the benchmark's one-pointer kernel, + cuCtxSetCurrent (info)", g(go, "RawQueuedParam", "ns") and g(go, "RawQueuedParam", "ns") / 1e3, n(nat, "queued_event_param_ns", 1e-3), "µs", False, None),
        ("CUDA queued vs native with an event per launch, the one-pointer kernel (info)", g(go, "QueuedLaunches", "queued-µs/launch"), n(nat, "queued_event_param_ns", 1e-3), "µs", False, None),
        ("CUDA queued with the reaper every 50 ms, vs native with an event (info)", g(go, "QueuedLaunchesSlowReaper", "queued-µs/launch"), n(nat, "queued_event_ns", 1e-3), "µs", False, None),
        ("CUDA queued with the reaper at its fast pace, vs native with an event (info)", g(go, "QueuedLaunchesFastReaper", "queued-µs/launch"), n(nat, "queued_event_ns", 1e-3), "µs", False, None),
        ("emulator bf16 add 1M, 8x8 grid, hardware numerics, vs the plain loop", n(nat, "emu_add_hw_ms"), n(nat, "emu_add_loop_ms"), "ms", False, 1.0),
        ("emulator bf16 add 1M, exact numerics, vs the plain loop (info)", n(nat, "emu_add_exact_ms"), n(nat, "emu_add_loop_ms"), "ms", False, None),
        (f"emulator f32 matmul 512^3, 8x8 grid: 1 thread / {int(nat.get('emu_mm_threads', 0))} threads (speed-up)", n(nat, "emu_mm_1_ms"), n(nat, "emu_mm_most_ms"), "ms", True, 12.0),
        ("host ceiling: arithmetic in L1, all host threads / one (bench/emu/host_ceiling.c; info)", n(nat, "host_fma_n_tput"), n(nat, "host_fma_1_tput"), "rounds/s", True, None),
        ("host ceiling: 32 MiB copies, all host threads / one (info)", n(nat, "host_copy_n_tput"), n(nat, "host_copy_1_tput"), "rounds/s", True, None),
        ("driver-runtime round trip, C++ runtime in mock mode (PingVsPipe, medians)", g(go, "PingVsPipe", "ns/ping"), g(go, "PingVsPipe", "ns/raw-echo"), "ns", False, 1.10),
        ("driver-runtime round trip, C++ runtime, emulator layer (RuntimePingVsPipe, medians; info)", g(go, "RuntimePingVsPipe", "ns/ping"), g(go, "RuntimePingVsPipe", "ns/raw-echo"), "ns", False, None),
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
