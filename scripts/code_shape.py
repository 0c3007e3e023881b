#!/usr/bin/env python3
"""The size rules of the production code (docs/architecture.md, "Code shape").

    scripts/code_shape.py [--max-function N] [--max-file N] ROOT

Production code is every C++ / CUDA source under ROOT/src and ROOT/apps but
tests (*_test.cc, *_test.cu) and the test-support library (src/testing).
Checks, and prints every offender:
  - no production function is longer than --max-function lines (default 80),
    counted from the line of its name to its closing brace as universal-ctags
    (Debian's universal-ctags) reports them; lambdas count inside their
    function, not on their own;
  - no production file is longer than --max-file lines (default 500);
  - no production file outside src/metrics writes a Prometheus `# TYPE` line
    (the metrics registry renders the exposition format).
Exit 0 when all hold, 1 when one does not, 77 (CTest: skipped) without ctags.
"""
import argparse
import os
import shutil
import subprocess
import sys

EXTS = (".cc", ".h", ".cu", ".cuh")


def production_files(root):
    out = []
    for top in ("src", "apps"):
        for d, _, names in os.walk(os.path.join(root, top)):
            rel_d = os.path.relpath(d, root)
            if rel_d == os.path.join("src", "testing") or rel_d.startswith(os.path.join("src", "testing") + os.sep):
                continue
            for n in names:
                if n.endswith(EXTS) and not n.endswith(("_test.cc", "_test.cu")):
                    out.append(os.path.join(rel_d, n))
    return sorted(out)


def long_functions(root, files, limit):
    cmd = ["ctags", "-x", "--_xformat=%F|%n|%e|%N", "--fields=+ne", "--kinds-C++=f", "--languages=C++",
           "--map-C++=+.cu", "--map-C++=+.cuh", "-L", "-"]
    res = subprocess.run(cmd, cwd=root, input="\n".join(files), capture_output=True, text=True, check=True)
    out = []
    for line in res.stdout.splitlines():
        path, start, end, name = line.split("|", 3)
        if name.startswith("__anon") or not end:
            continue  # a lambda: part of the function around it
        n = int(end) - int(start) + 1
        if n > limit:
            out.append(f"{path}:{start}: function {name} is {n} lines (limit {limit})")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root")
    ap.add_argument("--max-function", type=int, default=80)
    ap.add_argument("--max-file", type=int, default=500)
    args = ap.parse_args()
    if not shutil.which("ctags"):
        print("code_shape: no ctags (apt-get install universal-ctags): skipped")
        return 77
    files = production_files(args.root)
    problems = long_functions(args.root, files, args.max_function)
    metrics_dir = os.path.join("src", "metrics") + os.sep
    for f in files:
        with open(os.path.join(args.root, f), encoding="utf-8", errors="replace") as fh:
            lines = fh.readlines()
        if len(lines) > args.max_file:
            problems.append(f"{f}: {len(lines)} lines (limit {args.max_file})")
        if not f.startswith(metrics_dir) and any("# TYPE" in ln for ln in lines):
            problems.append(f"{f}: writes '# TYPE' outside the metrics registry (src/metrics)")
    for p in problems:
        print(p)
    print(f"code_shape: {len(files)} production files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
