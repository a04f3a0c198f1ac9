#!/usr/bin/env python3
"""Regenerates the list of tt-metal's kernel-API functions from a checkout.

Reads the kernel-side headers of a tt-metal checkout (the public API under
tt_metal/hw/inc/api, the address generators that api/dataflow/dataflow_api.h
includes, Metal 2.0's device headers under tt_metal/hw/inc/experimental, and
the fabric headers under tt_metal/fabric/hw/inc) and writes one line per
function declared at namespace or class scope: family, header, scope, name,
number of parameters and number without a default. Only names and arities
are kept, nothing else of the headers.

The scanner is lexical: it drops comments, string literals and preprocessor
lines, follows braces to know the scope, and takes a function to be a name
followed by a parenthesised parameter list before `{` or `;`. Constructors,
destructors, operators, names that start with an underscore and functions in
`detail`/`internal`/`impl` namespaces are not kernel API and are left out, as
are the compute sentinel's internals (api/compute/sentinel).

Usage: regen_api.py --tt-metal DIR --commit SHA [-o FILE]
"""
import argparse
import os
import re
import sys

# (directory or file relative to tt_metal/, family rule)
SOURCES = [
    "hw/inc/api",
    "hw/inc/internal/dataflow/dataflow_api_addrgen.h",
    "hw/inc/experimental",
    "fabric/hw/inc",
]
SKIP_DIRS = {"hw/inc/api/compute/sentinel"}
MULTICHIP = re.compile(r"(^fabric/|socket|remote_circular_buffer|eth_|ethernet|erisc|/udm/|mesh_)")
PRIVATE_NS = re.compile(r"(^|::)(detail|internal|impl|\w*_impl|\w*_detail)(::|$)")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "static_assert", "decltype", "alignas",
            "alignof", "catch", "defined", "noexcept", "requires", "constexpr", "throw"}


def family_of(rel):
    """The coverage family of a header path relative to tt_metal/."""
    if MULTICHIP.search(rel):
        return "multichip"
    if rel.startswith("hw/inc/experimental/"):
        return "metal2"
    if rel.startswith("hw/inc/api/compute/eltwise_unary/"):
        return "sfpu_unary"
    if rel.startswith("hw/inc/api/compute/"):
        return "compute"
    if rel.startswith("hw/inc/api/debug/"):
        return "debug"
    if rel.startswith("hw/inc/api/tensor/"):
        return "tensor"
    if rel.startswith("hw/inc/api/numeric/"):
        return "numeric"
    return "dataflow"


def strip_source(src):
    """Comments, literals and preprocessor lines blanked, newlines kept."""
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), src, flags=re.S)
    src = re.sub(r"//[^\n]*", "", src)
    lines, continued = [], False
    for line in src.split("\n"):
        s = line.strip()
        if continued or s.startswith("#"):
            continued = s.endswith("\\")
            lines.append("")
        else:
            lines.append(line)
    src = "\n".join(lines)
    src = re.sub(r'R"(\w*)\(.*?\)\1"', '""', src, flags=re.S)
    src = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', src)
    return re.sub(r"'(?:\\.|[^'\\\n])*'", "''", src)


def split_top(text, sep=","):
    depth, parts, cur = 0, [], []
    for ch in text:
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return [] if parts == ["void"] else parts


def last_paren_group(h):
    """(open, close) of the last top-level parenthesised group of h."""
    depth, close = 0, None
    for j in range(len(h) - 1, -1, -1):
        if h[j] == ")":
            if depth == 0:
                close = j
            depth += 1
        elif h[j] == "(":
            depth -= 1
            if depth == 0 and close is not None:
                return j, close
    return None, None


def template_params(h):
    """The parameter names of h's last template parameter list that have no default."""
    lists = []
    for m in re.finditer(r"\btemplate\s*<", h):
        depth, j = 0, m.end() - 1
        while j < len(h):
            depth += {"<": 1, ">": -1}.get(h[j], 0)
            if depth == 0:
                break
            j += 1
        lists.append(h[m.end(): j])
    if not lists:
        return []
    names = []
    for p in split_top(lists[-1]):
        if "=" in p:
            continue
        m = re.search(r"(\w+)\s*$", p.replace("...", " "))
        if m:
            names.append(m.group(1))
    return names


def drop_templates(h):
    """h without its template parameter lists and attributes."""
    h = re.sub(r"\[\[.*?\]\]", " ", h)
    while True:
        m = re.search(r"\btemplate\s*<", h)
        if not m:
            return h.strip()
        depth, j = 0, m.end() - 1
        while j < len(h):
            depth += {"<": 1, ">": -1}.get(h[j], 0)
            if depth == 0:
                break
            j += 1
        h = h[: m.start()] + " " + h[j + 1:]


def classify(head, declaration):
    """('ns', name), ('class', name), ('func', (name, params, required)) or ('other', '')."""
    full = " ".join(head.split())
    h = drop_templates(full)
    m = re.match(r"^(?:inline\s+)?namespace\s*([\w:]*)\s*$", h)
    if m:
        return "ns", m.group(1)
    if re.match(r'^extern\s*""$', h):
        return "ns", ""
    m = re.search(r'(?:^|[\s>])(class|struct|union)\s+(?:\[\[[^\]]*\]\]\s*)?(\w+)\s*(?:final\s*)?(?::[^(){};]*)?$', h)
    if m:
        return "class", m.group(2)
    if re.search(r"\benum\b", h) or "=" in h.split("(")[0]:
        return "other", ""
    if not re.search(r"\)\s*(?:const|noexcept(?:\([^)]*\))?|override|final|&&?|->[^;{]*|\s)*$", h):
        return "other", ""
    if re.search(r"\)\s*(?:noexcept\s*)?:\s*[\w:]+\s*[({]", h):
        return "other", ""  # a constructor with an initializer list
    open_, close = last_paren_group(h)
    if open_ is None:
        return "other", ""
    before = h[:open_].rstrip()
    m = re.search(r"(~?[A-Za-z_]\w*)$", before)
    if not m or m.group(1) in KEYWORDS or re.search(r"\boperator\b[^()]*$", before):
        return "other", ""
    rest = before[: m.start()].strip()
    if not rest or rest.endswith(("::", ".", "->")) or re.search(r"[=+\-*/,(]$", rest):
        return "other", ""  # a call, a constructor or an expression, not a declaration
    if declaration and re.search(r"=\s*(?:0|default|delete)?\s*$", h[close + 1:]):
        return "other", ""
    params = split_top(h[open_ + 1: close])
    required = sum(1 for p in params if "=" not in p and p != "...")
    param_text = h[open_ + 1: close]
    explicit = any(not re.search(r"\b" + t + r"\b", param_text) for t in template_params(full))
    return "func", (m.group(1), len(params), required, explicit)


def scan(text):
    """Yields (scope, name, params, required) for every function at namespace or class scope."""
    src = strip_source(text)
    stack, start, access = [], 0, [True]
    for i, c in enumerate(src):
        if c not in "{};:":
            continue
        at_scope = all(k in ("ns", "class") for k, _ in stack)
        if c == ":":
            label = src[start:i].strip()
            if stack and stack[-1][0] == "class" and label in ("public", "private", "protected"):
                access[-1] = label == "public"
                start = i + 1
            continue
        if c == "}":
            if stack:
                stack.pop()
                access.pop()
            start = i + 1
            continue
        kind, what = classify(src[start:i], declaration=(c == ";"))
        if kind == "func" and at_scope and access[-1]:
            name, params, required, explicit = what
            classes = [n for k, n in stack if k == "class"]
            if not name.startswith("_") and (not classes or name != classes[-1]) and not name.startswith("~"):
                scope = "::".join(n for _, n in stack if n)
                if not PRIVATE_NS.search(scope):
                    yield scope, name, params, required, explicit
        if c == "{":
            stack.append((kind, what if kind != "func" else ""))
            # a class's members are private until a label says otherwise
            access.append(not (kind == "class" and re.search(r"\bclass\s+" + re.escape(what) + r"\b",
                                                              " ".join(src[start:i].split()))))
        start = i + 1


def headers(root):
    for src in SOURCES:
        path = os.path.join(root, "tt_metal", src)
        if os.path.isfile(path):
            yield src
            continue
        for dirpath, dirnames, files in os.walk(path):
            rel_dir = os.path.relpath(dirpath, os.path.join(root, "tt_metal"))
            dirnames[:] = sorted(d for d in dirnames if os.path.join(rel_dir, d) not in SKIP_DIRS)
            for f in sorted(files):
                if f.endswith((".h", ".hpp")):
                    yield os.path.join(rel_dir, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tt-metal", required=True, help="a tt-metal checkout")
    ap.add_argument("--commit", required=True, help="the checkout's commit, recorded in the list")
    ap.add_argument("-o", "--output", help="the list to write (default: stdout)")
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.tt_metal, "tt_metal", "hw", "inc", "api")):
        print(f"regen_api: {args.tt_metal} has no tt_metal/hw/inc/api: not a tt-metal checkout", file=sys.stderr)
        return 2
    rows = set()
    for rel in headers(args.tt_metal):
        with open(os.path.join(args.tt_metal, "tt_metal", rel), encoding="utf-8", errors="replace") as f:
            for scope, name, params, required, explicit in scan(f.read()):
                rows.add((family_of(rel), rel, scope, name, params, required, "explicit" if explicit else "-"))
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    with out:
        out.write(f"# tt-metal kernel-API functions at {args.commit}, written by regen_api.py.\n")
        out.write("# Columns (tab-separated): family, header (under tt_metal/), scope, name, parameters, "
                  "parameters without a default, 'explicit' when a call must name template arguments.\n")
        for row in sorted(rows):
            out.write("\t".join(str(x) for x in row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
