#!/usr/bin/env python3
"""Attention at long context, timed through a running `prosgrow serve`.

Sends /v1/completions with a prompt of token ids (max_tokens 1, ignore_eos):
  cold:  N tokens, nothing cached (a fresh random prompt each run);
  hit:   the same N tokens + M more (the first N come from the prefix cache,
         so the step prefills M tokens on top of an N-token context).
Prints the wall time of each request; the server's own timing adds nothing.

  build/prosgrow serve --port 18600 --attn fast &
  python3 bench/attn_long_context.py --port 18600 --cold 3000 --extra 200 --repeat 3
"""
import argparse
import json
import random
import time
import urllib.request


def complete(port, tokens):
    body = json.dumps({"prompt": tokens, "max_tokens": 1, "ignore_eos": True, "temperature": 0}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", body,
                                 {"Content-Type": "application/json"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=600) as r:
        out = json.loads(r.read())
    return time.perf_counter() - t0, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=18600)
    ap.add_argument("--cold", type=int, default=3000)
    ap.add_argument("--extra", type=int, default=200)
    ap.add_argument("--short", type=int, default=512)
    ap.add_argument("--vocab", type=int, default=1000, help="token ids drawn from [10, vocab)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    complete(a.port, [rng.randrange(10, a.vocab) for _ in range(16)])  # warm-up
    for rep in range(a.repeat):
        short = [rng.randrange(10, a.vocab) for _ in range(a.short)]
        base = [rng.randrange(10, a.vocab) for _ in range(a.cold)]
        more = base + [rng.randrange(10, a.vocab) for _ in range(a.extra)]
        ts, _ = complete(a.port, short)
        tc, _ = complete(a.port, base)
        th, _ = complete(a.port, more)
        print(f"run {rep}: short {a.short} tok cold {ts:.3f} s | cold {a.cold} tok {tc:.3f} s | "
              f"hit {a.cold}+{a.extra} tok {th:.3f} s ({1000 * th / a.extra:.2f} ms/new token)")


if __name__ == "__main__":
    main()
