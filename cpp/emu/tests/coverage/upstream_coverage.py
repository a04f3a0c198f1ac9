#!/usr/bin/env python3
"""Kernel-API coverage against a list regenerated from tt-metal (regen_api.py).

Each function of the regenerated list (one per scope and name; overloads are
one function) counts as present when the emulator's headers let a kernel call
it. The check, in order:

1. The hand-written family lists beside this script (name, well-typed call)
   name it: present when that call compiles (as coverage.py checks it).
2. A call of it with one of its listed arities compiles, each argument an
   object convertible to any type (a free function through its namespace, a
   member through an object of its class: the INSTANCES table gives objects
   of class templates).
3. A call must name template arguments (`get_arg_val<T>`): present when its
   name is declared in its namespace (a using-declaration compiles). A member
   of that kind not in the hand lists is counted missing.

A function the emulator declares only so that kernels build, whose every call
is a run error saying it is not emulated (`ZYX_API.fail("name: ... not
emulated")` outside any condition), is not present: it is counted apart as
"declared, a run error" and listed with --missing.

Multi-chip functions (fabric, sockets, ethernet, the remote CB, UDM) are
reported apart as "multi-chip, not yet" and are not in the total. Also
reported: whether the function's name appears in a test source of the
repository (cpp/emu/tests, kernels, examples), a sign, not a proof, that a
test exercises it.

Usage: upstream_coverage.py [--list FILE] [--include DIR]... [--missing]
                            [--threshold PCT]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import coverage

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
DEFAULT_LIST = os.path.join(HERE, "upstream_a8c5af0f.tsv")
COMPUTE_FAMILIES = {"compute", "sfpu_unary"}
MAX_PROBE_ARITY = 10

# An object of each class whose members are probed, where the class is a
# template or needs constructor arguments.
INSTANCES = {
    "TensorAccessor": "TensorAccessor(TensorAccessorArgs<0>(), 0, 2048)",
    "TensorAccessorArgs": "TensorAccessorArgs<0>()",
    "CircularBuffer": "experimental::CircularBuffer(0)",
    "DataflowBuffer": "experimental::DataflowBuffer(0)",
    "Noc": "experimental::Noc()",
    "Semaphore": "experimental::Semaphore(0)",
    "CoreLocalMem": "experimental::CoreLocalMem<uint32_t>(0)",
    "Pages": "TensorAccessor(TensorAccessorArgs<0>(), 0, 2048).pages(0, 4)",
    "ShardPages": "TensorAccessor(TensorAccessorArgs<4>(), 0x10000u, 2048).shard_pages(1)",
    "PagesAddressIteratorInterleaved": "TensorAccessor(TensorAccessorArgs<0>(), 0, 2048).pages(0, 4).begin()",
    "PagesAddressIteratorSharded": "TensorAccessor(TensorAccessorArgs<4>(), 0x10000u, 2048).pages(0, 4).begin()",
    "ShardPagesAddressIterator": "TensorAccessor(TensorAccessorArgs<4>(), 0x10000u, 2048).shard_pages(1).begin()",
    "PageView": "PageView(TensorAccessor(TensorAccessorArgs<0>(), 0, 2048))",
    "ShardView": "ShardView(TensorAccessor(TensorAccessorArgs<4>(), 0x10000u, 2048))",
    "InterleavedAddrGen": "InterleavedAddrGen<true>{0, 2048}",
    "InterleavedAddrGenFast": "InterleavedAddrGenFast<true>{0, 2048, DataFormat::Float16_b}",
    "InterleavedPow2AddrGen": "InterleavedPow2AddrGen<true>{0, 11}",
    "InterleavedPow2AddrGenFast": "InterleavedPow2AddrGenFast<true>{0, 11}",
}


def read_list(path):
    """{(family, scope, name): dict(header, arities, explicit)}"""
    units = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            family, header, scope, name, params, required, explicit = line.rstrip("\n").split("\t")
            u = units.setdefault((family, scope, name), dict(header=header, arities=set(), explicit=False))
            u["arities"].update(range(int(required), min(int(params), MAX_PROBE_ARITY) + 1))
            u["explicit"] |= explicit == "explicit"
    return units


def hand_results(includes, cxx):
    """{(class or '', name): present} from the hand-written family lists."""
    out = {}
    families = sorted(f[:-4] for f in os.listdir(HERE) if f.endswith(".txt") and f != "thresholds.txt")
    for fam in families:
        entries = coverage.parse_list(os.path.join(HERE, fam + ".txt"))
        dataflow = fam in coverage.DATAFLOW_FAMILIES
        bad = set()
        for style in (0, 1):
            src, _ = coverage.build_tu(entries, style, dataflow)
            b, diag = coverage.compile_errors(cxx, includes, src, len(entries))
            if b is None:
                raise SystemExit(f"upstream_coverage: hand list {fam} does not compile:\n{diag[:3000]}")
            bad |= b
        for i, e in enumerate(entries):
            base = e["name"].split("/")[0]
            cls, _, name = base.rpartition("::")
            key = (cls, name)
            out[key] = out.get(key, False) or i not in bad
    return out


def probe_block(index, scope, name, unit):
    """The lines that check one function; an error on any of them means missing."""
    cls = scope.split("::")[-1] if scope and scope.split("::")[-1] in INSTANCES or is_class(scope) else ""
    ns = scope if not cls else scope[: -len(cls)].rstrip(":")
    qual = (ns + "::" if ns else "::") + name
    if unit["explicit"]:
        if cls:
            return None
        return [f"void zyx_up_{index}() {{ using {qual}; }}"]
    arities = sorted(unit["arities"]) or [0]
    if cls:
        obj = INSTANCES.get(cls, f"std::declval<{scope}&>()")
        reqs = [f"requires (A a) {{ zyx_lvalue({obj}).{name}({', '.join(['a'] * k)}); }}" for k in arities]
    else:
        reqs = [f"requires (A a) {{ {qual}({', '.join(['a'] * k)}); }}" for k in arities]
    return [f"template <class A> constexpr bool zyx_up_{index} = {' || '.join(reqs)};",
            f'static_assert(zyx_up_{index}<ZyxAny>, "{name}");']


CLASS_SCOPES = set()


def is_class(scope):
    return scope in CLASS_SCOPES


def build(units, family_units, compute):
    lines = ["// generated by upstream_coverage.py",
             "#define ZYX_EMU_SECTION_%s 1" % ("COMPUTE" if compute else "DATAFLOW")]
    if not compute:
        lines.append("#define KERNEL_COMPILE_TIME_ARGS 2, 2048, 0, 0, 1, 2048, 2, 2, 2, 2, 1, 2, 0x02010101")
    lines += ["#include <cstdint>", "#include <utility>"]
    for h in sorted({units[k]["header"] for k in family_units}):
        path = h[len("hw/inc/"):] if h.startswith("hw/inc/") else h
        lines += [f'#if __has_include("{path}")', f'#include "{path}"', "#endif"]
    lines += ["using namespace ckernel;" if compute else "",
              "struct ZyxAny { template <class T> operator T&() const; };",
              "template <class T> T& zyx_lvalue(T&& t) { return t; }"]
    owner, skipped = {}, []
    for i, key in enumerate(family_units):
        block = probe_block(i, key[1], key[2], units[key])
        if block is None:
            skipped.append(key)
            continue
        for line in block:
            lines.append(line)
            owner[len(lines)] = key
    return "\n".join(lines) + "\n", owner, skipped


def compile_and_map(cxx, includes, src, owner):
    with tempfile.TemporaryDirectory(prefix="zyx-upcov-") as d:
        path = os.path.join(d, "tu.cpp")
        with open(path, "w", encoding="utf-8") as f:
            f.write(src)
        cmd = [cxx, "-std=c++20", "-fsyntax-only", "-fmax-errors=0", "-w", "-DARCH_WORMHOLE",
               "-DNUM_DRAM_BANKS=12"] + [x for inc in includes for x in ("-I", inc)] + [path]
        p = subprocess.run(cmd, capture_output=True, text=True)
    bad, stray = set(), []
    for line in p.stderr.splitlines():
        m = re.search(r"tu\.cpp:(\d+):\d+: error:", line)
        if m:
            key = owner.get(int(m.group(1)))
            if key is None:
                stray.append(line)
            else:
                bad.add(key)
    return bad, stray


def run_error_names(includes):
    """Names whose emulator definition fails unconditionally as not emulated."""
    pat = re.compile(r'ZYX_API\.fail\("([A-Za-z_]\w*)(?:<[^"]*>)?:[^"]*not emulated')
    names = set()
    for root in includes:
        for dirpath, _, files in os.walk(root):
            for f in files:
                if not f.endswith((".h", ".hpp", ".inc")):
                    continue
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        m = pat.search(line)
                        # A conditional failure (some forms not emulated) leaves the call present.
                        if m and not re.search(r"\bif\b|\?", line[: m.start()]):
                            names.add(m.group(1))
    return names


def tested_names():
    words = set()
    for sub in ("cpp/emu/tests", "kernels", "examples"):
        for dirpath, _, files in os.walk(os.path.join(REPO, sub)):
            for f in files:
                if f.endswith((".cpp", ".h", ".hpp", ".c", ".py")) and "coverage" not in dirpath:
                    with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                        words.update(re.findall(r"[A-Za-z_]\w*", fh.read()))
    return words


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", default=DEFAULT_LIST)
    ap.add_argument("--include", action="append")
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--cxx", default=os.environ.get("ZYX_EMU_CXX", "c++"))
    ap.add_argument("--missing", action="store_true", help="list the missing functions")
    ap.add_argument("--threshold", type=float, default=0.0, help="fail below this percent of the total")
    args = ap.parse_args()
    if args.include:
        return report(args, args.include)
    with coverage.default_includes(args.cmake) as includes:
        return report(args, includes)


def report(args, includes):
    units = read_list(args.list)
    CLASS_SCOPES.update(scope for (_, scope, _) in units if scope and scope.split("::")[-1][:1].isupper())
    hand = hand_results(includes, args.cxx)
    tested = tested_names()
    status = {}
    families = sorted({k[0] for k in units})
    for fam in families:
        keys = [k for k in sorted(units) if k[0] == fam]
        todo = []
        for k in keys:
            cls = k[1].split("::")[-1] if k[1] in CLASS_SCOPES else ""
            if (cls, k[2]) in hand:
                status[k] = hand[(cls, k[2])]
            else:
                todo.append(k)
        src, owner, skipped = build(units, todo, fam in COMPUTE_FAMILIES)
        bad, stray = compile_and_map(args.cxx, includes, src, owner)
        if stray:
            print(f"upstream_coverage: {fam}: errors outside any probe:\n" + "\n".join(stray[:20]), file=sys.stderr)
            return 2
        for k in todo:
            status[k] = k not in bad and k not in skipped
    run_errors = run_error_names(includes)
    declared = {k for k in units if status[k] and k[2] in run_errors}
    for k in declared:
        status[k] = False
    return print_table(args, units, families, status, tested, declared)


def print_table(args, units, families, status, tested, declared):
    def pct(a, b):
        return 100.0 * a / b if b else 100.0
    print(f"{'family':<12} {'present':>13} {'%':>7} {'named in a test':>16}")
    tot = [0, 0, 0]
    for fam in families:
        keys = [k for k in units if k[0] == fam]
        ok = sum(status[k] for k in keys)
        named = sum(1 for k in keys if status[k] and k[2] in tested)
        label = fam if fam != "multichip" else "multichip*"
        print(f"{label:<12} {ok:>5}/{len(keys):<7} {pct(ok, len(keys)):6.1f}% {named:>10}")
        if fam != "multichip":
            tot = [tot[0] + ok, tot[1] + len(keys), tot[2] + named]
    print(f"{'total':<12} {tot[0]:>5}/{tot[1]:<7} {pct(tot[0], tot[1]):6.1f}% {tot[2]:>10}")
    print("* multi-chip (fabric, sockets, ethernet, remote CB, UDM): not yet, not in the total")
    print(f"declared so that kernels build, every call a run error (not present): {len(declared)}")
    if args.missing:
        for k in sorted(units):
            if not status[k] and k[0] != "multichip":
                what = "declared, a run error" if k in declared else "missing"
                print(f"  {what} {k[0]}: {k[1] + '::' if k[1] else ''}{k[2]}")
    if pct(tot[0], tot[1]) + 1e-9 < args.threshold:
        print(f"FAIL upstream coverage {pct(tot[0], tot[1]):.1f}% < {args.threshold:.1f}%")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
