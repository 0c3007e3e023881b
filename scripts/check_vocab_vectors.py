#!/usr/bin/env python3
"""Dev-time check of prosgrow's tokenizer against llama.cpp's vocab test vectors.

llama.cpp keeps, for many tokenizers, a vocab-only GGUF (ggml-vocab-NAME.gguf)
with test strings (.inp, separated by lines reading __ggml_vocab_test__) and
the token ids Hugging Face's tokenizer gives them (.out, one line per string,
no special tokens). This script runs `prosgrow tokenize --no-special` on every
string and reports, per vocab, its tokenizer.ggml.model / .pre and how many
strings match exactly (or the one-line error if prosgrow refuses the vocab).

Sources (any mix):
  DIR                  a directory holding ggml-vocab-*.gguf with .inp/.out
                       (e.g. ../shared/fixtures/vocab)
  --llama-cpp-git GIT  a bare llama.cpp git directory: its models/ggml-vocab-*
                       files are extracted to a fresh directory under /tmp
                       (never into the source tree) and removed afterwards

Usage:
  scripts/check_vocab_vectors.py --prosgrow build/prosgrow ../shared/fixtures/vocab
  scripts/check_vocab_vectors.py --llama-cpp-git /work/.mirror/owner+llama.cpp/...git

Prints a Markdown table; exits 1 if any string mismatches, 0 otherwise.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile

SEP = "\n__ggml_vocab_test__\n"


def gguf_strings(path, wanted):
    """Reads the string metadata values named in `wanted` from a GGUF header."""
    out = {}
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            return out
        version, = struct.unpack("<I", f.read(4))
        if version < 2:
            return out
        _n_tensors, n_kv = struct.unpack("<QQ", f.read(16))
        fixed = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

        def read_str():
            n, = struct.unpack("<Q", f.read(8))
            return f.read(n)

        def skip(vtype):
            if vtype in fixed:
                f.seek(fixed[vtype], 1)
            elif vtype == 8:
                n, = struct.unpack("<Q", f.read(8))
                f.seek(n, 1)
            elif vtype == 9:
                etype, n = struct.unpack("<IQ", f.read(12))
                if etype in fixed:
                    f.seek(fixed[etype] * n, 1)
                else:
                    for _ in range(n):
                        skip(etype)
            else:
                raise ValueError(f"unknown GGUF value type {vtype}")

        for _ in range(n_kv):
            key = read_str().decode("utf-8", "replace")
            vtype, = struct.unpack("<I", f.read(4))
            if key in wanted and vtype == 8:
                out[key] = read_str().decode("utf-8", "replace")
            else:
                skip(vtype)
    return out


def split_inputs(text):
    parts = text.split(SEP)
    if parts and parts[-1] == "":
        parts.pop()
    return parts


def check_vocab(prosgrow, gguf):
    with open(gguf + ".inp", encoding="utf-8", newline="") as f:
        inputs = split_inputs(f.read())
    with open(gguf + ".out", encoding="utf-8") as f:
        outputs = [[int(x) for x in line.split()] for line in f.read().split("\n")]
    passed = failed = skipped = 0
    first_failure = None
    refused = None
    for i, text in enumerate(inputs):
        expected = outputs[i] if i < len(outputs) else None
        if text == "" or "\0" in text:
            skipped += 1  # the CLI takes the text as one non-empty argv string
            continue
        r = subprocess.run([prosgrow, "tokenize", "-m", gguf, "--no-special", "--prompt=" + text],
                           capture_output=True, text=True)
        if r.returncode != 0:
            refused = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
            break
        got = [int(x) for x in r.stdout.strip().strip("[]").split(",") if x.strip()]
        if got == expected:
            passed += 1
        else:
            failed += 1
            if first_failure is None:
                first_failure = f"{text[:40]!r}: got {got[:12]} expected {(expected or [])[:12]}"
    return passed, failed, skipped, refused, first_failure


def vocab_files(directory):
    for name in sorted(os.listdir(directory)):
        if name.startswith("ggml-vocab-") and name.endswith(".gguf"):
            path = os.path.join(directory, name)
            if os.path.exists(path + ".inp") and os.path.exists(path + ".out"):
                yield path


def extract_llama_cpp(git_dir):
    tmp = tempfile.mkdtemp(prefix="vocab-vectors-", dir="/tmp")
    names = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "--name-only", "HEAD", "models/"],
                           capture_output=True, text=True, check=True).stdout.split()
    for path in names:
        base = os.path.basename(path)
        if not base.startswith("ggml-vocab-"):
            continue
        # A snapshot may lack large blobs (vocab GGUFs of several MiB): skip those.
        blob = subprocess.run(["git", "--git-dir", git_dir, "show", "HEAD:" + path], capture_output=True)
        if blob.returncode != 0:
            print(f"{base}: not in this snapshot, skipped", file=sys.stderr)
            continue
        with open(os.path.join(tmp, base), "wb") as f:
            f.write(blob.stdout)
    return tmp


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*", help="directories with ggml-vocab-*.gguf and .inp/.out")
    ap.add_argument("--prosgrow", default="build/prosgrow", help="the prosgrow binary")
    ap.add_argument("--llama-cpp-git", help="bare llama.cpp git dir to take models/ggml-vocab-* from")
    args = ap.parse_args()
    if not os.access(args.prosgrow, os.X_OK):
        sys.exit(f"check_vocab_vectors: no prosgrow binary at {args.prosgrow} (build it or pass --prosgrow)")
    dirs = list(args.dirs)
    tmp = None
    if args.llama_cpp_git:
        tmp = extract_llama_cpp(args.llama_cpp_git)
        dirs.append(tmp)
    if not dirs:
        sys.exit("check_vocab_vectors: give a vocab directory or --llama-cpp-git")
    any_failed = False
    try:
        print("| vocab | tokenizer.ggml.model | tokenizer.ggml.pre | result | strings passed | skipped |")
        print("|---|---|---|---|---|---|")
        for d in dirs:
            for gguf in vocab_files(d):
                meta = gguf_strings(gguf, {"tokenizer.ggml.model", "tokenizer.ggml.pre"})
                passed, failed, skipped, refused, first = check_vocab(args.prosgrow, gguf)
                name = os.path.basename(gguf)[len("ggml-vocab-"):-len(".gguf")]
                if refused:
                    result = "refused: " + refused.replace("|", "\\|")
                elif failed:
                    any_failed = True
                    result = f"FAIL ({failed}; first {first})".replace("|", "\\|")
                else:
                    result = "pass"
                print(f"| {name} | {meta.get('tokenizer.ggml.model', '?')} | "
                      f"{meta.get('tokenizer.ggml.pre', '(none)')} | {result} | "
                      f"{passed}/{passed + failed} | {skipped} |")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if any_failed else 0


if __name__ == "__main__":
    sys.exit(main())
