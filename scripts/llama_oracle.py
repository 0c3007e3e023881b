#!/usr/bin/env python3
"""Re-make the fixture oracle with a llama-server you built, and measure drift.

The fixture oracle (../shared/fixtures/expected) is one llama.cpp build's output.
This runs another llama-server binary the same way (2 threads, f16 KV, greedy,
ignore_eos, n_probs 10, add_special) on every fixture model and prompt, writes its
answers in the oracle's format to OUT/expected-<model>.json, and prints how far
they are from the fixture oracle: that is how far two llama.cpp builds disagree
on these models, the floor under any independent implementation's agreement.

Compare prosgrow against the files written here with
  PROSGROW_ORACLE_DIR=OUT build/src/model/model_tests --gtest_filter='Fixtures*'

usage: scripts/llama_oracle.py --llama-server PATH [--fixtures DIR] [--out DIR]
                               [--port N] [-- extra llama-server args]
"""
import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request


def post(port, path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)


def wait_healthy(port, proc):
    for _ in range(600):
        if proc.poll() is not None:
            sys.exit(f"llama_oracle: llama-server exited with {proc.returncode}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
            return
        except Exception:
            time.sleep(0.2)
    sys.exit("llama_oracle: llama-server did not become healthy")


def top(step):
    return {t["id"]: t["logprob"] for t in step["top_logprobs"]}


def drift(ref_case, new_case):
    """Over teacher-forced steps: worst top-10 |diff|, the first step's, and how
    many steps' argmax differs from the oracle's token."""
    worst = first = 0.0
    mismatches = 0
    for i, (a, b) in enumerate(zip(ref_case["steps"], new_case["steps"])):
        mine = top(b)
        d = max((abs(mine[k] - v) for k, v in top(a).items() if k in mine), default=0.0)
        if i == 0:
            first = d
        worst = max(worst, d)
        mismatches += a["id"] != b["id"]
    return worst, first, mismatches


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-server", required=True)
    ap.add_argument("--fixtures", default=os.path.join(here, "..", "..", "shared", "fixtures"))
    ap.add_argument("--out", default="llama-oracle")
    ap.add_argument("--port", type=int, default=18490)
    ap.add_argument("extra", nargs="*")
    args = ap.parse_args()
    exp_dir = os.path.join(args.fixtures, "expected")
    if not os.path.isdir(exp_dir):
        sys.exit(f"llama_oracle: no fixture oracle at {exp_dir}")
    os.makedirs(args.out, exist_ok=True)
    names = sorted(f[len("expected-"):-len(".json")] for f in os.listdir(exp_dir) if f.startswith("expected-"))
    print(f"{'model':26} {'worst diff':>10} {'first step':>10} {'argmax != oracle':>16}")
    for name in names:
        ref = json.load(open(os.path.join(exp_dir, f"expected-{name}.json")))
        model = os.path.join(args.fixtures, "models", f"{name}.gguf")
        log = open(os.path.join(args.out, f"{name}.log"), "w")
        proc = subprocess.Popen([args.llama_server, "-m", model, "--port", str(args.port), "-t", "2",
                                 "-c", "4096", "-np", "1"] + args.extra, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_healthy(args.port, proc)
            out = {k: v for k, v in ref.items() if k != "cases"}
            out["oracle"] = f"{args.llama_server} {' '.join(args.extra)}".strip()
            out["cases"] = []
            worst = first = 0.0
            mismatches = n_steps = 0
            for c in ref["cases"]:
                # Teacher forcing, as model_oracle_test does: position i is
                # scored after the oracle's own first i tokens. The prompt is a
                # token array (BOS already in it); cache_prompt keeps the prefix
                # in llama-server's KV, so each step evaluates only the new token.
                steps = []
                for i in range(len(c["tokens"])):
                    r = post(args.port, "/completion", {
                        "prompt": c["prompt_tokens"] + c["tokens"][:i], "n_predict": 1, "temperature": 0,
                        "ignore_eos": True, "n_probs": 10, "cache_prompt": True})
                    s = r["completion_probabilities"][0]
                    steps.append({"id": s["id"], "logprob": s["logprob"],
                                  "top_logprobs": [{"id": t["id"], "logprob": t["logprob"]} for t in s["top_logprobs"]]})
                case = {"name": c["name"], "prompt": c["prompt"], "prompt_tokens": c["prompt_tokens"],
                        "tokens": c["tokens"], "steps": steps}
                out["cases"].append(case)
                w, f, m = drift(c, case)
                worst, first, mismatches = max(worst, w), max(first, f), mismatches + m
                n_steps += len(steps)
            with open(os.path.join(args.out, f"expected-{name}.json"), "w") as fh:
                json.dump(out, fh)
            print(f"{name:26} {worst:10.4f} {first:10.4f} {mismatches:8d} of {n_steps}")
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
