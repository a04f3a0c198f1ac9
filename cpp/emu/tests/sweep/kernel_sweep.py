#!/usr/bin/env python3
"""The kernel sweep: compiles every kernel a tt-metal checkout ships against
the emulator, syntax-only, and says why each one that does not build fails.

    make kernel-sweep TT_METAL=/path/to/tt-metal [SWEEP_DIRS=dir,dir] [SWEEP_JOBS=1]

Each kernel goes through zyx-emu-kernel-check (cpp/emu/tools), which runs the
emulator's kernel builder itself: its generated wrapper, flags and include
tree, with -fsyntax-only. The sweep adds only what a host program would give:
placeholder compile-time args (64 of value 1), every named arg the source
asks for (value 1; see named_args), every CB as bf16 32 x 32 tiles (2048-byte pages),
the defines that defines.tsv names for the kernel's path, and the kernel's
own tree as include roots (its directory for quoted includes, then the
checkout's root and ttnn/cpp after the emulator's headers, so a ttnn helper
header resolves but the emulator's kernel API always wins).

A failure is classified by the compiler's first error (classify()).
Nothing from the checkout is copied into the repository.
"""
import argparse
import collections
import fnmatch
import json
import os
import re
import subprocess
import sys
import time

# Where tt-metal keeps its kernels (the issue 26 measure): ttnn's operation
# kernels, the test kernels, tt_metal's own kernels and the programming
# examples.
DEFAULT_ROOTS = [
    "ttnn/cpp/ttnn/operations",
    "tests/tt_metal/tt_metal/test_kernels",
    "tt_metal/kernels",
    "tt_metal/programming_examples",
]

# tt-metal's kernel-side header trees: an upper-case name that occurs in
# none of them is one a program factory defines (-D), not an API name.
API_HEADER_ROOTS = ["tt_metal/hw", "tt_metal/api", "tt_metal/hostdevcommon", "tt_metal/include",
                    "tt_metal/tt-llk", "tt_metal/third_party/tt_llk", "ttnn/cpp/ttnn/kernel_lib",
                    "ttnn/cpp/ttnn/kernel"]

ENTRY = re.compile(r"\bvoid\s+(kernel_main|MAIN)\b|\bKERNEL_MAIN\b")
COMPUTE = re.compile(r"\bvoid\s+MAIN\b|namespace\s+NAMESPACE\b|#\s*include\s*[\"<](api/compute/|compute_kernel_api)")
# Any string names a named arg, as on tt-metal ("", "!@#$%^&*()").
NAMED_ARG = re.compile(r"get_named_compile_time_arg_val\s*\(\s*\"((?:[^\"\\\n]|\\.)*)\"")
# A named arg asked for by a non-literal (a name from an array of names):
# every identifier-like string literal of the source may be one.
NAMED_ARG_INDIRECT = re.compile(r"get_named_compile_time_arg_val\s*\(\s*[^\s\"]")
STRING_NAME = re.compile(r"\"([A-Za-z_]\w*)\"")
# Metal 2.0 names (docs/emulator.md, "Metal 2.0 bindings"): args::NAME and
# dfb::NAME, not inside another namespace's name.
METAL2_NAME = re.compile(r"(?<![\w:])(args|dfb)::(\w+)")
# Kernels that need several chips: ethernet, fabric, sockets, collectives.
MULTI_CHIP_PATH = re.compile(
    r"(^|/)(ccl|fabric|tt_fabric|erisc|eth|ethernet|sockets?|multihost|all_gather\w*|reduce_scatter\w*|"
    r"all_reduce\w*|all_to_all\w*|all_broadcast\w*|point_to_point|mesh_\w*|collective\w*)(/|$)|erisc|ethernet",
    re.I)
MULTI_CHIP_INCLUDE = re.compile(
    r"#\s*include\s*[\"<][^\">]*(fabric|ethernet|erisc|socket_api|/ccl/|ccl_)", re.I)

CATEGORIES = ["missing-header", "missing-name", "needs-define", "emulator-defect", "other"]

ERROR_LINE = re.compile(r"^(?P<file>[^:\n]*):(?P<line>\d+):(?:\d+:)?\s*(?P<kind>fatal error|error):\s*(?P<msg>.*)$",
                        re.M)
EMU_HEADER = re.compile(r"(^|/)(zyx_emu/|cpp/emu/include/|emu/include/)")

_NOT_MEMBER = re.compile(r"^'(?P<name>[^']+)' (is not a member of|has not been declared in) '(?P<scope>[^']+)'")
_UNDECLARED = re.compile(
    r"^'(?P<name>[^']+)' (was not declared in this scope|has not been declared|does not name a type|"
    r"is not a (namespace-name|template|type)|in namespace '(?P<scope>[^']+)' does not name a (template )?type)")
_NO_ARGS = re.compile(r"^there are no arguments to '(?P<name>[^']+)'")
_NOT_TEMPLATE = re.compile(r"^'(?P<name>[^']+)' is not a (member )?template")
_NO_MEMBER_NAMED = re.compile(r"^'(?P<scope>[^']+)' has no member named '(?P<name>[^']+)'")
_NO_MATCH = re.compile(r"^no matching function for call to '(?P<call>[^']+)'")
_HEADER = re.compile(r"^(?P<header>[^:]+): No such file or directory")
_NUMBERS = re.compile(r"\b\d+\b")


def first_error(diag):
    """The first error of a compiler's output: (file, kind, message), or None."""
    m = ERROR_LINE.search(diag)
    if not m:
        return None
    return m.group("file"), m.group("kind"), m.group("msg").strip()


def _is_define_name(name, api_names):
    """An upper-case macro-like name that tt-metal's kernel headers never
    mention: only a program factory's -D gives it."""
    base = name.split("::")[-1]
    if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", base) or len(base) < 2:
        return False
    return api_names is not None and base not in api_names


def classify(diag, api_names=None):
    """(category, blocker) for a failed build's diagnostics.

    api_names: the upper-case names tt-metal's kernel-side headers mention
    (None: unknown, then no name counts as a program-factory define).
    """
    # GCC quotes with U+2018/U+2019 under a UTF-8 locale.
    diag = diag.replace("\u2018", "'").replace("\u2019", "'")
    err = first_error(diag)
    if err is None:
        return "other", "no compiler error line"
    path, kind, msg = err
    m = _HEADER.match(msg)
    if kind == "fatal error" and m:
        return "missing-header", m.group("header").strip()
    if msg.startswith("#error"):
        return "needs-define", msg
    name = None
    for pat in (_NOT_MEMBER, _NO_MEMBER_NAMED):
        m = pat.match(msg)
        if m:
            name = m.group("scope") + "::" + m.group("name")
            break
    if name is None:
        for pat in (_UNDECLARED, _NO_ARGS, _NOT_TEMPLATE):
            m = pat.match(msg)
            if m:
                scope = m.groupdict().get("scope")
                name = (scope + "::" if scope else "") + m.group("name")
                break
    if name is not None:
        if _is_define_name(name, api_names):
            return "needs-define", name
        return "missing-name", name
    m = _NO_MATCH.match(msg)
    if m:
        fn = re.sub(r"[<(].*", "", m.group("call"))
        return "missing-name", fn + " (no matching form)"
    if EMU_HEADER.search(path):
        return "emulator-defect", _NUMBERS.sub("N", msg)
    return "other", _NUMBERS.sub("N", msg)


# tt-metal's tests that must fail to build: test_compilation_failures.cpp
# (tests/tt_metal/tt_metal/debug_tools/device_print) compiles each and
# expects its DEVICE_PRINT static_assert message. Each builds correctly when
# the emulator rejects it by the same rule: the function of its format check
# that rule calls (zyx_emu/debug.h). Path: (tt-metal's expected message, the
# emulator's diagnostic).
_DP_FAILURES = "tests/tt_metal/tt_metal/test_kernels/device_print/failures/"
EXPECTED_REJECTIONS = {
    _DP_FAILURES + "mixed_placeholders.cpp":
        ("Cannot mix indexed ({0}) and non-indexed ({}) placeholders in the same format string",
         "format_error_mixed_fields"),
    _DP_FAILURES + "invalid_placeholder_syntax.cpp":
        ("Invalid format string: unescaped '{' must be followed by '{', '}', or a digit",
         "format_error_placeholder_syntax"),
    _DP_FAILURES + "invalid_placeholder_index.cpp":
        ("Placeholder index exceeds number of arguments", "format_error_index"),
    _DP_FAILURES + "not_all_arguments_referenced.cpp":
        ("All arguments must be referenced when using indexed placeholders", "format_error_unreferenced"),
    _DP_FAILURES + "too_many_arguments.cpp":
        ("Number of {} placeholders must match number of arguments", "format_error_field_count"),
    _DP_FAILURES + "not_enough_arguments.cpp":
        ("Number of {} placeholders must match number of arguments", "format_error_field_count"),
}

# Kernels that do not build on tt-metal a8c5af0f either, so no emulator can
# build them: outside the count, as the kernels that need a define only
# their host sets. Path: the evidence (docs/emulator.md lists it too).
_TK = "tests/tt_metal/tt_metal/test_kernels/"
_ADDR_SEL = ("names experimental::CircularBuffer::AddrSel, which tt-metal's experimental/circular_buffer.h does "
             "not declare (its enum is AddrSelector; AddrSel is only a template parameter's name)")
_SPLIT = ("uses single_tile_size_bytes, which neither the kernel, tt-metal's kernel-side headers nor its program "
          "factory (split_program_factory.cpp: compile-time args, no defines) declares")
NOT_ON_TT_METAL = {
    _TK + "dataflow/reader_matmul_tile_layout_in0_receiver_in1_sender.cpp": _ADDR_SEL,
    _TK + "dataflow/reader_matmul_tile_layout_in0_sender_in1_receiver.cpp": _ADDR_SEL,
    _TK + "dataflow/reader_matmul_tile_layout_in0_sender_in1_sender.cpp": _ADDR_SEL,
    "ttnn/cpp/ttnn/operations/data_movement/split/device/kernels/dataflow/reader_tm_tile_layout_split_two_chunks.cpp":
        _SPLIT,
    "ttnn/cpp/ttnn/operations/data_movement/split/device/kernels/dataflow/writer_tm_tile_layout_split_two_chunks.cpp":
        _SPLIT,
    _TK + "dataflow/unit_tests/dram/direct_reader_binary.cpp":
        "declares const uint32_t cb_id twice in one scope (lines 10 and 11), unconditionally",
    _TK + "compute/matmul_large_block_generalized.cpp":
        "includes compute_kernel_api/tilize_untilize.h, which no file of tt-metal provides (and no host of "
        "tt-metal's builds the kernel)",
    # The 3T per-thread kernels: no host of tt-metal's builds them, and they
    # call LLK forms its llk_api does not declare.
    _TK + "compute/3T/matmul_large_block_zm/zm_3m_unpack.cpp":
        "calls llk_unpack_tilize_ and llk_unpack_untilize_<first_pass>, which tt-metal's llk_api does not declare "
        "(it has llk_unpack_tilize and llk_unpack_untilize_pass<first_pass>), llk_unpack_AB_matmul_init(0) (it "
        "takes operandA and operandB) and llk_unpack_A_init<NONE, false, false> (the third parameter is the "
        "scoped enum EltwiseBinaryReuseDestType)",
    _TK + "compute/3T/untilize_A_and_eltwise_binary/chlkc_unpack.cpp":
        "calls llk_unpack_untilize_<first_pass>, which tt-metal's llk_api does not declare (it has "
        "llk_unpack_untilize_pass<first_pass>), and llk_unpack_AB_init<NONE>() (it takes operandA and operandB)",
    _TK + "compute/3T/matmul_large_block_zm/zm_3m_math.cpp":
        "calls llk_math_matmul_init<MATH_FIDELITY>(0): tt-metal's takes operandA and operandB",
    _TK + "compute/3T/untilize_A_and_eltwise_binary/chlkc_math.cpp":
        "calls llk_math_eltwise_binary<ELWADD, NONE, DST_ACCUM_MODE, MATH_FIDELITY, false>: the fifth parameter "
        "is the scoped enum EltwiseBinaryReuseDestType, which false does not convert to",
}


def judge(rel, ok, diag, api_names=None):
    """A kernel's result from its build: {"ok", "category", "blocker"} and,
    for a kernel that does not build on tt-metal either, "excluded" (its
    evidence). A kernel tt-metal's tests expect to be rejected builds
    correctly ("ok") when the emulator rejects it by the same rule, and fails
    when the emulator builds it or rejects it for another reason."""
    r = {"ok": bool(ok)}
    expected = EXPECTED_REJECTIONS.get(rel)
    if ok is None:
        r["category"], r["blocker"] = "other", "compile timed out"
    elif expected:
        message, diagnostic = expected
        if ok:
            r["ok"] = False
            r["category"], r["blocker"] = "other", "builds, but tt-metal's test expects it rejected: " + message
        elif diagnostic in diag:
            r["ok"] = True
            r["expected_rejection"] = message
        else:
            r["category"], r["blocker"] = classify(diag, api_names)
    elif not ok:
        r["category"], r["blocker"] = classify(diag, api_names)
    if not r["ok"] and rel in NOT_ON_TT_METAL:
        r["excluded"] = NOT_ON_TT_METAL[rel]
    return r


# A failure inside tt-metal's fabric tree, or at an ethernet or fabric header:
# the kernel reaches fabric through a helper it includes (a ttnn header that
# includes tt_fabric_api.h), so it is multi-chip too.
MULTI_CHIP_ERROR = re.compile(r"(^|/)tt_metal/fabric/|^(internal/ethernet/|eth_l1_address_map|noc_overlay_parameters|"
                              r"tt-metalium/experimental/fabric/)")


def is_multi_chip(rel, source, diag=""):
    if MULTI_CHIP_PATH.search(rel) or MULTI_CHIP_INCLUDE.search(source):
        return True
    first = first_error(diag) if diag else None
    if not first:
        return False
    header = _HEADER.match(first[2])
    return bool(MULTI_CHIP_ERROR.search(first[0]) or (header and MULTI_CHIP_ERROR.search(header.group("header"))))


def processor_flag(rel, source):
    if COMPUTE.search(source) or "/compute/" in rel:
        return "--compute"
    base = os.path.basename(rel).lower()
    return "--ncrisc" if "reader" in base else "--brisc"


def group_of(rel):
    """The directory a kernel is counted under in the per-directory table."""
    parts = rel.split("/")
    if rel.startswith("ttnn/cpp/ttnn/operations/"):
        return "/".join(parts[:5]) if len(parts) > 6 else "/".join(parts[:4])
    if rel.startswith("tests/tt_metal/tt_metal/test_kernels/"):
        return "/".join(parts[:5]) if len(parts) > 5 else "/".join(parts[:4])
    if rel.startswith("tt_metal/programming_examples/"):
        return "tt_metal/programming_examples"
    return "/".join(parts[:2])


def load_defines(path):
    """defines.tsv: a path glob, a tab, NAME=VALUE words; # comments."""
    table = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].rstrip()
            if not line:
                continue
            if "\t" not in line:
                raise ValueError(f"{path}:{n}: want GLOB<TAB>NAME=VALUE ...")
            glob, words = line.split("\t", 1)
            defs = words.split()
            for d in defs:
                if "=" not in d or d.startswith("="):
                    raise ValueError(f"{path}:{n}: \"{d}\" is not NAME=VALUE")
            table.append((glob.strip(), defs))
    return table


def defines_for(rel, table):
    out = []
    for glob, defs in table:
        if fnmatch.fnmatch(rel, glob):
            out.extend(defs)
    return out


def load_args(path):
    """args.tsv: a path glob, a tab, INDEX=VALUE words (compile-time args the
    placeholder value does not fit); # comments."""
    table = load_defines(path)
    for glob, words in table:
        for w in words:
            i, v = w.split("=", 1)
            if not (i.isdigit() and v.isdigit()):
                raise ValueError(f"{path}: {glob}: \"{w}\" is not INDEX=VALUE")
    return table


def listed_kernels(path):
    """The kernels a --kernels file names: the failures of an earlier --json,
    or one path (relative to the checkout) a line."""
    with open(path) as f:
        if path.endswith(".json"):
            return {r["rel"] for r in json.load(f) if not r["ok"]}
        return {ln.strip() for ln in f if ln.strip() and not ln.startswith("#")}


def find_kernels(root, dirs):
    found = []
    for d in dirs:
        top = os.path.join(root, d)
        if not os.path.isdir(top):
            raise SystemExit(f"kernel-sweep: {top} is not a directory")
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for fn in sorted(filenames):
                if not fn.endswith(".cpp"):
                    continue
                full = os.path.join(dirpath, fn)
                rel = os.path.relpath(full, root)
                # tt-metal keeps kernels in directories named kernels/,
                # kernel/, test_kernels/ …, apart from host code.
                if not any("kernel" in p for p in rel.split("/")[:-1]):
                    continue
                with open(full, errors="replace") as f:
                    src = f.read()
                if ENTRY.search(src):
                    found.append((rel, src))
    return found


def api_name_index(root):
    names = set()
    word = re.compile(r"\b[A-Z_][A-Z0-9_]+\b")
    for d in API_HEADER_ROOTS:
        for dirpath, _, filenames in os.walk(os.path.join(root, d)):
            for fn in filenames:
                if fn.endswith((".h", ".hpp", ".inc")):
                    with open(os.path.join(dirpath, fn), errors="replace") as f:
                        names.update(word.findall(f.read()))
    return names


def named_args(src):
    """The named compile-time args a kernel asks for: the literal names, and
    where it names one through a variable, every identifier-like string
    literal of its source."""
    names = {re.sub(r"\\(.)", r"\1", n) for n in NAMED_ARG.findall(src)}
    if NAMED_ARG_INDIRECT.search(src):
        names |= set(STRING_NAME.findall(src))
    return sorted(names)


def metal2_names(src):
    """The Metal 2.0 names a kernel uses: its args:: and its dfb:: names,
    each sorted. The check builds it with the bindings block a Metal 2.0
    host generates: every args:: name a named compile arg of value 1 (as
    every placeholder), every dfb:: name a CB index of its own."""
    found = {"args": set(), "dfb": set()}
    for kind, name in METAL2_NAME.findall(src):
        found[kind].add(name)
    return sorted(found["args"]), sorted(found["dfb"])


def check_one(tool, root, rel, src, tables, nargs, timeout):
    table, args_table = tables
    arg_words = defines_for(rel, args_table)
    # A kernel whose factory passes more args than the placeholder count gets
    # placeholders up to the highest index its args.tsv line names.
    nargs = max([nargs] + [int(a.split("=", 1)[0]) + 1 for a in arg_words])
    cmd = [tool, processor_flag(rel, src), "--args", str(nargs), "--arg-value", "1", "--cb-page", "2048",
           "--cb-format", "5"]
    for a in arg_words:
        cmd += ["--arg", a]
    m2_args, m2_dfbs = metal2_names(src)
    for name in sorted(set(named_args(src)) | set(m2_args)):
        cmd += ["--named", name + "=1"]
    if m2_args or m2_dfbs:
        cmd += ["--metal2"]
    for index, name in enumerate(m2_dfbs):
        cmd += ["--dfb", f"{name}={index}"]
    for d in defines_for(rel, table):
        cmd += ["--define", d]
    for flag in ("-iquote", os.path.dirname(os.path.join(root, rel)), "-idirafter", root,
                 "-idirafter", os.path.join(root, "ttnn/cpp"), "-idirafter", os.path.join(root, "ttnn")):
        cmd += ["--flag", flag]
    # The checkout is the kernel's tree: a compute kernel whose includes
    # there refer to the TRISC builds is checked as its three builds.
    cmd += ["--tree", root, os.path.join(root, rel)]
    try:
        # The C locale: GCC quotes names with plain quotes, as classify reads them.
        env = dict(os.environ, LC_ALL="C", LANG="C")
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if p.returncode == 2:
        raise SystemExit(f"kernel-sweep: {' '.join(cmd)}: {p.stderr.strip()}")
    return p.returncode == 0, p.stdout


def report(results, top, out):
    # results: list of dicts rel, group, multi, ok, category, blocker
    def pct(a, b):
        return f"{100.0 * a / b:.1f} %" if b else "-"
    groups = collections.OrderedDict()
    for r in sorted(results, key=lambda r: r["group"]):
        groups.setdefault(r["group"], []).append(r)
    cols = ["build", "fail"] + CATEGORIES + ["multi-chip"]
    print(f"{'directory':58} {'kernels':>7} " + " ".join(f"{c[:8]:>8}" for c in cols), file=out)
    for g, rs in groups.items():
        counts = [sum(r["ok"] for r in rs), sum(not r["ok"] for r in rs)]
        counts += [sum(1 for r in rs if not r["ok"] and r["category"] == c) for c in CATEGORIES]
        counts.append(sum(r["multi"] for r in rs))
        print(f"{g[:58]:58} {len(rs):7d} " + " ".join(f"{c:8d}" for c in counts), file=out)
    n = len(results)
    ok = sum(r["ok"] for r in results)
    single = [r for r in results if not r["multi"]]
    s_ok = sum(r["ok"] for r in single)
    s_define = sum(1 for r in single if not r["ok"] and r["category"] == "needs-define" and not r.get("excluded"))
    s_excluded = sum(1 for r in single if not r["ok"] and r.get("excluded"))
    s_rejected = sum(1 for r in single if r.get("expected_rejection"))
    print(file=out)
    print(f"kernels: {n}, build: {ok} ({pct(ok, n)}), fail: {n - ok}", file=out)
    for c in CATEGORIES:
        print(f"  {c}: {sum(1 for r in results if not r['ok'] and r['category'] == c)}", file=out)
    multi = [r for r in results if r["multi"]]
    print(f"multi-chip (ethernet, fabric, sockets, collectives): {len(multi)}, "
          f"build: {sum(r['ok'] for r in multi)}", file=out)
    counted = len(single) - s_define - s_excluded
    print(f"single-chip: {len(single)}, build: {s_ok} ({pct(s_ok, len(single))}; {s_rejected} of them rejected "
          f"as tt-metal's tests expect); without the {s_define} that need a program-factory define and the "
          f"{s_excluded} that do not build on tt-metal either: {s_ok} of {counted} ({pct(s_ok, counted)})", file=out)
    blockers = collections.Counter((r["category"], r["blocker"]) for r in single
                                   if not r["ok"] and not r.get("excluded"))
    print(f"\ntop blockers of single-chip kernels (kernels each one stops first):", file=out)
    for (cat, b), k in blockers.most_common(top):
        print(f"  {k:5d}  {cat:16} {b[:110]}", file=out)


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tt-metal", required=True, help="a tt-metal checkout (outside this repository)")
    ap.add_argument("--tool", required=True, help="the zyx-emu-kernel-check executable")
    ap.add_argument("--dirs", default="", help="comma-separated subdirectories of the checkout to sweep "
                                               "(default: " + ",".join(DEFAULT_ROOTS) + ")")
    ap.add_argument("--defines", default=os.path.join(here, "defines.tsv"))
    ap.add_argument("--args-table", default=os.path.join(here, "args.tsv"),
                    help="compile-time args that differ from the placeholder, per kernel path")
    ap.add_argument("--kernels", help="sweep only these kernels: a file of paths (one a line, relative to "
                                      "the checkout) or an earlier --json, whose failures it takes")
    ap.add_argument("--jobs", type=int, default=1, help="compilers at once (default 1)")
    ap.add_argument("--args", type=int, default=64, help="placeholder compile-time args (default 64)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per kernel")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--sample", type=int, default=1,
                    help="sweep every Nth kernel of the sorted list (default 1: all), for a quick, "
                         "representative measure")
    ap.add_argument("--json", help="write every kernel's result here")
    ap.add_argument("--log", help="write each failure's first error lines here")
    a = ap.parse_args(argv)
    root = os.path.abspath(a.tt_metal)
    if not os.path.isdir(os.path.join(root, "tt_metal")):
        raise SystemExit(f"kernel-sweep: {root} has no tt_metal directory: not a tt-metal checkout")
    if not os.access(a.tool, os.X_OK):
        raise SystemExit(f"kernel-sweep: {a.tool} is not executable (make runtime builds it)")
    if a.jobs < 1:
        raise SystemExit("kernel-sweep: --jobs must be at least 1")
    tables = (load_defines(a.defines), load_args(a.args_table))
    dirs = [d.strip().strip("/") for d in a.dirs.split(",") if d.strip()] or DEFAULT_ROOTS
    if a.sample < 1:
        raise SystemExit("kernel-sweep: --sample must be at least 1")
    kernels = find_kernels(root, dirs)
    if a.kernels:
        wanted = listed_kernels(a.kernels)
        kernels = [k for k in kernels if k[0] in wanted]
    kernels = kernels[::a.sample]
    api_names = api_name_index(root)
    print(f"kernel-sweep: {len(kernels)} kernels under {', '.join(dirs)} of {root}", file=sys.stderr)
    from concurrent.futures import ThreadPoolExecutor
    results = []
    log = open(a.log, "w") if a.log else None
    start = time.time()
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futs = [(rel, src, pool.submit(check_one, a.tool, root, rel, src, tables, a.args, a.timeout))
                for rel, src in kernels]
        for i, (rel, src, fut) in enumerate(futs, 1):
            ok, diag = fut.result()
            r = {"rel": rel, "group": group_of(rel),
                 "multi": is_multi_chip(rel, src, diag if ok is False else "")}
            r.update(judge(rel, ok, diag, api_names))
            results.append(r)
            if log:
                status = ("ok (rejected, as tt-metal's test expects)" if r.get("expected_rejection")
                          else "ok" if r["ok"] else f"FAIL {r['category']}: {r['blocker']}")
                if r.get("excluded"):
                    status += " (does not build on tt-metal either: not counted)"
                log.write(f"{rel}: {status}\n")
                if ok is not None and not ok and diag != "timeout":
                    errs = [ln for ln in diag.splitlines() if "error" in ln][:3]
                    log.writelines("    " + ln[:300] + "\n" for ln in errs)
                log.flush()
            if i % 50 == 0:
                print(f"kernel-sweep: {i}/{len(futs)} in {time.time() - start:.0f} s", file=sys.stderr)
    if log:
        log.close()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    report(results, a.top, sys.stdout)


if __name__ == "__main__":
    main()
