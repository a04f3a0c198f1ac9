#!/usr/bin/env python3
"""Checks measured device selection (docs/selection.md) on this host.

For each example and size it runs `zyx-tt run --dev auto` with an empty
performance record (the static ranking), then `--dev fastest` (which measures
every candidate and records the winner), then `--dev auto` again (which
follows the record), and times every candidate with `--repeat` in the same
run. auto then runs one-shot (it weighs the recorded
transfers once and the launch once, and may pick a device with cheaper
transfers over one with a faster launch) and with --repeat --weigh (default
100: launches dominate, as in the launch medians the check compares). It prints one row per example and size: every candidate's median launch
time, auto's choice before and after the record, and the chosen device's
median against the fastest candidate's (the target is at most 1.25).

usage: bench/select/table.py [--bin bin/zyx-tt] [--repeat 30] [--budget 60s]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

CASES = [
    ("vadd", "default", []),
    ("vadd", "16x", ["--set", "n=16777216"]),
    ("unary", "default", []),
    ("unary", "16x", ["--set", "n=16777216"]),
    ("matmul", "default", []),
    # 16x the elements of each matrix: every dimension 4x.
    ("matmul", "16x", ["--set", "m=1024", "--set", "n=1024", "--set", "k=1024"]),
]
SOFTWARE_GPU = ("opencl", "vulkan")


def run(binary, env, bundle, args):
    # Flags go before the bundle for Go's flag package.
    cmd = [binary, "run", "--json"] + args + [bundle]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="bin/zyx-tt")
    ap.add_argument("--examples", default="examples")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--budget", default="60s")
    ap.add_argument("--weigh", type=int, default=100,
                    help="auto's --repeat: how many launches it weighs against one upload and download")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="zyx-select-")
    env = dict(os.environ, ZYX_PERF_RECORD=os.path.join(tmp, "perf.json"))
    ok = True
    rows = []
    for ex, size, sets in CASES:
        bundle = os.path.join(a.examples, ex)
        static = run(a.bin, env, bundle, sets)["device"]["name"]
        fastest = run(a.bin, env, bundle, ["--dev", "fastest", "--budget", a.budget] + sets)
        cands = [m["device"] for m in fastest["selection"].get("measured", [])]
        # auto weighs the recorded launch time by --repeat (transfers once),
        # as the medians below are measured.
        one_shot = run(a.bin, env, bundle, sets)["device"]["name"]
        auto = run(a.bin, env, bundle, ["--repeat", str(a.weigh)] + sets)
        chosen = auto["device"]["name"]
        medians = {}
        for c in cands:
            r = run(a.bin, env, bundle, ["--dev", c, "--repeat", str(a.repeat)] + sets)
            medians[c] = r["repeat"]["median_ns"]
        best = min(medians, key=medians.get)
        ratio = medians[chosen] / medians[best] if chosen in medians else float("nan")
        static_sw = static.split(":")[0] in SOFTWARE_GPU
        good = ratio <= 1.25 and not static_sw
        ok = ok and good
        rows.append((ex, size, medians, static, fastest["device"]["name"], one_shot, chosen, best, ratio, good))
    for ex, size, medians, static, measured, one_shot, chosen, best, ratio, good in rows:
        times = ", ".join(f"{d} {t / 1e3:.1f} µs" for d, t in sorted(medians.items(), key=lambda kv: kv[1]))
        print(f"{ex:7} {size:8} | {times}")
        print(f"{'':16} | no record: {static}; fastest chose {measured}; auto then: one-shot {one_shot}, "
              f"--repeat {a.weigh} {chosen}; "
              f"{chosen} / fastest ({best}) = {ratio:.2f} {'ok' if good else 'FAIL'}")
    print("all within 1.25x and no software GPU by static rank" if ok else "FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
