#!/usr/bin/env python3
"""One heavy session and three light ones against a real `prosgrow serve`:
how much of the light sessions' reusable context survives the heavy one, with
--kv-fair-share off and on (docs/kv-cache.md, "Quotas and fair share").

Each round the three light sessions take one turn each (their conversation
grows by 32 tokens), then the heavy session sends `--heavy-per-round` fresh
624-token prompts (new documents: nothing to reuse, all pressure). The device
and host tiers are sized so that under plain LRU the heavy prompts push the
light conversations out. Reported: light reuse = cached prompt tokens /
ideal reusable tokens (the full 16-token blocks of the session's previous
prompt, which is a prefix of the next one), over every light turn but the
first. Requests go one at a time to /v1/completions as token ids, with
`user` naming the session; standard library only.

  python3 scripts/kv_fair_share_bench.py --prosgrow build/prosgrow
"""
import argparse
import json
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

PAGE = 16


def post(base, body):
    req = urllib.request.Request(base + "/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())


def start_server(args, model, extra, log_path):
    log = open(log_path, "w")
    cmd = [args.prosgrow, "serve", "-m", model, "--host", "127.0.0.1", "--port", "0", "--threads",
           str(args.threads), "--policy", "optimized", "--kv-eviction", args.eviction, "--kv-device-mem",
           args.device_mem, "--kv-host-mem", args.host_mem, "--ctx-size", "1024"] + extra
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 180
    port = None
    while time.time() < deadline and port is None:
        time.sleep(0.2)
        if proc.poll() is not None:
            sys.exit("serve exited: " + open(log_path).read())
        m = re.search(r"listening on http://\S+:(\d+)", open(log_path).read())
        if m:
            port = int(m.group(1))
    if port is None:
        proc.kill()
        sys.exit("serve did not start: " + open(log_path).read())
    base = "http://127.0.0.1:%d" % port
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(base + "/health", timeout=5) as r:
                if r.status == 200:
                    return proc, base
        except Exception:
            time.sleep(0.2)
    proc.kill()
    sys.exit("serve never became healthy")


def run(args, model, fair, workdir):
    extra = ["--kv-fair-share"] if fair else []
    proc, base = start_server(args, model, extra, os.path.join(workdir, "serve-fair-%s.log" % ("on" if fair else "off")))
    rng = random.Random(args.seed)
    tok = lambda n: [rng.randrange(300, 3300) for _ in range(n)]
    light = [tok(64) for _ in range(3)]
    prev_len = [0, 0, 0]
    cached = ideal = 0
    requests = 0
    try:
        for rnd in range(args.rounds):
            for i in range(3):
                u = post(base, {"prompt": light[i], "max_tokens": 4, "temperature": 0, "ignore_eos": True,
                                "user": "light-%d" % i})
                requests += 1
                if rnd > 0:
                    cached += u["usage"]["prompt_tokens_details"]["cached_tokens"]
                    ideal += prev_len[i] // PAGE * PAGE
                prev_len[i] = len(light[i])
                light[i] = light[i] + tok(32)
            for _ in range(args.heavy_per_round):
                post(base, {"prompt": tok(624), "max_tokens": 4, "temperature": 0, "ignore_eos": True,
                            "user": "heavy"})
                requests += 1
        with urllib.request.urlopen(base + "/metrics", timeout=30) as r:
            metrics = r.read().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    ev = {t: re.search(r'prosgrow_kv_evictions_total\{tier="%s"\} (\d+)' % t, metrics).group(1) for t in ("device", "host")}
    return cached, ideal, requests, ev


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prosgrow", default="build/prosgrow")
    ap.add_argument("--model", default="", help="GGUF model (default: make the tiny synthetic one)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--heavy-per-round", type=int, default=4)
    ap.add_argument("--device-mem", default="192KiB", help="48 blocks of the tiny model")
    ap.add_argument("--host-mem", default="384KiB", help="96 blocks of the tiny model")
    ap.add_argument("--eviction", default="lru", choices=["lru", "cost"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="pg_fair_share_")
    model = args.model
    if not model:
        model = os.path.join(workdir, "tiny.gguf")
        subprocess.run([args.prosgrow, "make-model", "--shape", "tiny", "--vocab", "builtin", "--type", "q8_0",
                        "--out", model], check=True, stdout=subprocess.DEVNULL)
    print("eviction=%s device=%s host=%s rounds=%d heavy/round=%d" % (args.eviction, args.device_mem, args.host_mem,
                                                                     args.rounds, args.heavy_per_round))
    for fair in (False, True):
        t0 = time.time()
        cached, ideal, n, ev = run(args, model, fair, workdir)
        print("fair-share %-3s  light reuse %5d / %5d ideal tokens = %5.1f%%   (%d requests, %.1f s, evictions device %s host %s)"
              % ("on" if fair else "off", cached, ideal, 100.0 * cached / max(ideal, 1), n, time.time() - t0,
                 ev["device"], ev["host"]))


if __name__ == "__main__":
    main()
