#!/usr/bin/env python3
"""Checks the emulator's forwarding headers (ctest emu_forwarding_headers).

The list cpp/emu/forwarding_headers.tsv is the one source of the headers that
mirror tt-metal's include paths; the build writes them into its generated
include directory (cmake/forwarding_headers.cmake). This test fails when

  - a path of the list has no generated header, or one that does not include
    exactly the header the list names;
  - the generated directory holds a header the list does not name;
  - a hand-written header in cpp/emu/include has a path of the list, or is
    itself only a forward (comments, #pragma once and one #include), which
    belongs in the list;
  - a header that the kernel-API coverage lists (tests/coverage/*.txt) name
    is in neither directory;
  - the generator accepts a malformed list, a path given twice, a path that
    is also a hand-written header or a forward to a missing header, or keeps
    a header that its list no longer names.

Usage: forwarding_headers_test.py --list L --source-include S --generated G
                                  --coverage C --cmake CMAKE --script SCRIPT
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')


def read_list(path):
    entries = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 2:
                raise SystemExit(f"{path}:{n}: want <path><TAB><header>, got {line!r}")
            entries[parts[0]] = parts[1]
    return entries


def files_under(root):
    out = set()
    for d, _, names in os.walk(root):
        for name in names:
            out.add(os.path.relpath(os.path.join(d, name), root))
    return out


def forward_target(path):
    """The header a file only forwards to, or None when it has code of its own."""
    target = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith("//") or s == "#pragma once":
                continue
            m = INCLUDE_RE.match(s)
            if not m or target is not None:
                return None
            target = m.group(1)
    return target


def coverage_headers(coverage_dir):
    headers = set()
    for name in sorted(os.listdir(coverage_dir)):
        if not name.endswith(".txt") or name == "thresholds.txt":
            continue
        with open(os.path.join(coverage_dir, name), encoding="utf-8") as f:
            for line in f:
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                headers.add(line.split(" | ")[3].strip())
    return headers


def check_tree(args):
    problems = []
    entries = read_list(args.list)
    generated = files_under(args.generated)
    hand_written = files_under(args.source_include)
    for path, target in sorted(entries.items()):
        full = os.path.join(args.generated, path)
        if path not in generated:
            problems.append(f"{path}: listed, but the build wrote no {full}")
        elif forward_target(full) != target:
            problems.append(f"{full}: does not only include \"{target}\" as the list says")
        if path in hand_written:
            problems.append(f"{path}: a hand-written header in {args.source_include} duplicates the generated one")
    for path in sorted(generated - set(entries)):
        problems.append(f"{os.path.join(args.generated, path)}: generated, but the list does not name it")
    for path in sorted(hand_written - set(entries)):
        target = forward_target(os.path.join(args.source_include, path))
        if target is not None:
            problems.append(f"{path}: a hand-written header that only includes \"{target}\"; list it in "
                            f"{args.list} instead")
    for header in sorted(coverage_headers(args.coverage)):
        if header not in entries and header not in hand_written:
            problems.append(f"{header}: named by the coverage lists, but neither generated nor hand-written")
    return problems, len(entries)


def run_generator(args, list_text, source, out):
    lst = os.path.join(os.path.dirname(out), "list.tsv")
    with open(lst, "w", encoding="utf-8") as f:
        f.write(list_text)
    cmd = [args.cmake, f"-DLIST={lst}", f"-DSOURCE_INCLUDE_DIR={source}", f"-DOUT_DIR={out}", "-P", args.script]
    return subprocess.run(cmd, capture_output=True, text=True)


def check_generator(args):
    """The generator refuses bad lists and keeps its output to the list."""
    problems = []
    with tempfile.TemporaryDirectory(prefix="zyx-fwd-") as tmp:
        source = os.path.join(tmp, "include")
        os.makedirs(os.path.join(source, "zyx_emu"))
        with open(os.path.join(source, "zyx_emu", "real.h"), "w") as f:
            f.write("#pragma once\n")
        with open(os.path.join(source, "own.h"), "w") as f:
            f.write("#pragma once\nint own;\n")
        out = os.path.join(tmp, "out")
        refused = {
            "a malformed line": "a.h zyx_emu/real.h\n",
            "a path given twice": "a.h\tzyx_emu/real.h\na.h\tzyx_emu/real.h\n",
            "a hand-written header's path": "own.h\tzyx_emu/real.h\n",
            "a forward to a missing header": "a.h\tzyx_emu/missing.h\n",
            "a path with ..": "../a.h\tzyx_emu/real.h\n",
        }
        for what, text in refused.items():
            p = run_generator(args, text, source, out)
            if p.returncode == 0:
                problems.append(f"generator: accepted {what}")
        p = run_generator(args, "# comment\n\nx/a.h\tzyx_emu/real.h\nb.h\tzyx_emu/real.h\n", source, out)
        if p.returncode != 0:
            problems.append(f"generator: refused a good list: {p.stderr.strip()}")
        elif files_under(out) != {"x/a.h", "b.h"} or forward_target(os.path.join(out, "x/a.h")) != "zyx_emu/real.h":
            problems.append(f"generator: wrote {sorted(files_under(out))} for x/a.h and b.h")
        p = run_generator(args, "b.h\tzyx_emu/real.h\n", source, out)
        if p.returncode != 0 or files_under(out) != {"b.h"}:
            problems.append(f"generator: kept {sorted(files_under(out))} after x/a.h left the list")
        shutil.rmtree(out, ignore_errors=True)
    return problems


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--list", "--source-include", "--generated", "--coverage", "--cmake", "--script"):
        ap.add_argument(opt, required=True)
    args = ap.parse_args()
    problems, n = check_tree(args)
    problems += check_generator(args)
    for p in problems:
        print("FAIL " + p)
    if problems:
        return 1
    print(f"PASS: {n} forwarding headers generated from {args.list}, none hand-written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
