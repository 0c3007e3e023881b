#!/usr/bin/env python3
"""TTFT by kind of turn, from `prosgrow bench` run folders (their run.json).

    scripts/ttft_tail.py RUN_DIR [RUN_DIR ...]

RUN_DIR is a folder holding run.json (`bench --out DIR`), or one holding
optimized/run.json (scripts/agentic_vs_llamaserver.sh's OUT). Per run, over
the completed requests past warm-up: the TTFT median and p90; the same for
cold first turns (turn 0), warm turns with fewer than 150 uncached prompt
tokens, 150-256, and more than 256; the inter-token latency median and p99;
and what the slowest tenth of the requests is made of. Percentiles
interpolate linearly between the sorted values, as `bench` computes them.
"""
import json
import os
import sys


def load(path):
    for candidate in (os.path.join(path, "run.json"), os.path.join(path, "optimized", "run.json")):
        if os.path.exists(candidate):
            with open(candidate) as f:
                return candidate, json.load(f)
    sys.exit(f"ttft_tail: no run.json in {path}")


def pct(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    pos = q * (len(values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def kind(req):
    new = req["prompt_tokens"] - req["cached_tokens"]
    if req["turn"] == 0:
        return "cold"
    if new < 150:
        return "warm<150"
    return "warm150-256" if new <= 256 else "warm>256"


def report(path):
    name, run = load(path)
    reqs = [r for r in run["requests"] if r["ok"] and not r.get("warmup") and r["ttft_s"] is not None]
    if not reqs:
        print(f"{name}: no completed requests")
        return
    ttft = [r["ttft_s"] for r in reqs]
    itl = [v for r in reqs for v in r["itl_s"]]
    print(f"{name}: {len(reqs)} requests, TTFT p50 {pct(ttft, .5):.3f} s p90 {pct(ttft, .9):.3f} s, "
          f"ITL p50 {pct(itl, .5) * 1000:.1f} ms p99 {pct(itl, .99) * 1000:.1f} ms")
    kinds = ["cold", "warm<150", "warm150-256", "warm>256"]
    for k in kinds:
        t = [r["ttft_s"] for r in reqs if kind(r) == k]
        print(f"  {k:12s} {len(t):5d} requests  TTFT p50 {pct(t, .5):.3f} s  p90 {pct(t, .9):.3f} s")
    slowest = sorted(reqs, key=lambda r: -r["ttft_s"])[: max(1, len(reqs) // 10)]
    made_of = ", ".join(f"{k} {sum(1 for r in slowest if kind(r) == k)}" for k in kinds)
    print(f"  slowest tenth ({len(slowest)}): {made_of}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    for path in sys.argv[1:]:
        report(path)


if __name__ == "__main__":
    main()
