#!/usr/bin/env python3
"""Include-graph check: no #include arrow runs back up a declared layer order.

Builds the graph of `#include "PREFIX/..."` lines between the files under one
source folder and fails (exit 1) on every arrow from a lower layer to a
higher one, and on include cycles between headers.

Layers are given lowest first, each a comma-separated list of patterns
relative to the folder: `index/` (a sub-folder), `kv_layout.h` (one file),
`kv_cache_manager*` (a glob), `*` (every file no other layer names). A file
takes the first layer that names it, in the order given. Arrows inside one
layer are allowed; tests (*_test.cc) are left out unless --tests is given,
because a test may use its whole module.

`--apart` names sibling groups (same pattern syntax, comma-separated) whose
files never include one another, whatever their layers: `--apart
'openai/,anthropic/'` fails on any arrow from openai/ into anthropic/ or back.

Example (the CTest `kv_include_graph`):
  scripts/include_graph.py src/kv --prefix kv/ \
      --layer 'kv_layout.h,kv_cache_config.h' --layer index/ --layer accounting/ \
      --layer policy/ --layer media/ --layer movement/ --layer '*'
and with siblings (the CTest `server_include_graph`):
  scripts/include_graph.py src/server --prefix server/ --layer http/ --layer core/ \
      --layer 'openai/,anthropic/,responses/' --layer '*' --apart 'openai/,anthropic/,responses/'
Prints the graph's size and every violation; exit 0 when there is none.
"""
import argparse
import fnmatch
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def source_files(root, with_tests):
    out = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            if not n.endswith((".h", ".cc")):
                continue
            if n.endswith("_test.cc") and not with_tests:
                continue
            out.append(os.path.relpath(os.path.join(dirpath, n), root).replace(os.sep, "/"))
    return sorted(out)


def matches(rel, pattern):
    if pattern.endswith("/"):
        return rel.startswith(pattern)
    return fnmatch.fnmatchcase(rel, pattern)


def layer_of(rel, layers):
    for i, patterns in enumerate(layers):
        if any(p != "*" and matches(rel, p) for p in patterns):
            return i
    for i, patterns in enumerate(layers):
        if "*" in patterns:
            return i
    return None


def group_of(rel, groups):
    for i, pattern in enumerate(groups):
        if matches(rel, pattern):
            return i
    return None


def find_cycles(graph):
    """Include cycles between headers (each reported once, as a path)."""
    state, stack, cycles = {}, [], []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if not m.endswith(".h"):
                continue
            if state.get(m) == 1:
                cycles.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n.endswith(".h") and n not in state:
            visit(n)
    return cycles


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", help="source folder, e.g. src/kv")
    ap.add_argument("--prefix", required=True, help='include prefix that names the folder, e.g. "kv/"')
    ap.add_argument("--layer", action="append", required=True, help="patterns of one layer, lowest layer first")
    ap.add_argument("--apart", action="append", default=[],
                    help="sibling patterns whose files never include one another")
    ap.add_argument("--tests", action="store_true", help="check *_test.cc files too")
    args = ap.parse_args()

    layers = [[p.strip() for p in spec.split(",") if p.strip()] for spec in args.layer]
    apart = [[p.strip() for p in spec.split(",") if p.strip()] for spec in args.apart]
    files = source_files(args.root, args.tests)
    if not files:
        print(f"include_graph: no sources under {args.root}", file=sys.stderr)
        return 2
    present = set(source_files(args.root, True))
    graph, problems, arrows = {}, [], 0
    for rel in files:
        src_layer = layer_of(rel, layers)
        if src_layer is None:
            problems.append(f"{rel}: in no layer (add it, or a '*' layer)")
            continue
        with open(os.path.join(args.root, rel), encoding="utf-8") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            if not inc.startswith(args.prefix):
                continue
            target = inc[len(args.prefix):]
            if target not in present:
                problems.append(f"{rel}: includes \"{inc}\", which is not a file under {args.root}")
                continue
            graph.setdefault(rel, set()).add(target)
            arrows += 1
            dst_layer = layer_of(target, layers)
            if dst_layer is not None and dst_layer > src_layer:
                problems.append(f"{rel} (layer {src_layer}) -> {target} (layer {dst_layer}): arrow runs back up")
            for groups in apart:
                a, b = group_of(rel, groups), group_of(target, groups)
                if a is not None and b is not None and a != b:
                    problems.append(f"{rel} -> {target}: {groups[a]} and {groups[b]} are kept apart")
    for cycle in find_cycles(graph):
        problems.append("include cycle: " + " -> ".join(cycle))
    print(f"include_graph {args.root}: {len(files)} files, {arrows} arrows, {len(layers)} layers")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
