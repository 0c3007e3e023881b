#!/usr/bin/env python3
"""Issue 23: `prosgrow route` places by prefix on block hashes alone. Two
replicas with --api-keys-file (tenants a and b), so their KV events carry no
token ids; the router matches each prompt on the hashes the replicas' own
/tokenize gives for the caller's tenant.

  * a's prompt P goes to some replica R; once the router's index holds P's
    blocks for R, a's P + more goes to R each time, and the router predicts
    the cached tokens;
  * b's P + more is predicted nothing (b's blocks have other names).

usage: route_hashes_check.py ROUTER_URL KEY_A KEY_B
"""
import json
import sys
import time
import urllib.request


def post(base, path, key, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer " + key})
    with urllib.request.urlopen(req, timeout=120) as r:
        return r.headers.get("X-Prosgrow-Replica"), json.loads(r.read().decode())


def metrics(base):
    with urllib.request.urlopen(base + "/metrics", timeout=30) as r:
        return r.read().decode()


def sample(text, name, labels=""):
    for line in text.splitlines():
        if line.startswith(name + labels + " "):
            return float(line.split()[-1])
    return 0.0


def wait_until(pred, what, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def main():
    base, key_a, key_b = sys.argv[1], sys.argv[2], sys.argv[3]
    p = [400 + 13 * i % 2500 for i in range(64)]  # 4 blocks of 16
    home, _ = post(base, "/v1/completions", key_a, {"prompt": p, "max_tokens": 1, "temperature": 0})
    assert home, "no X-Prosgrow-Replica header"
    label = '{replica="%s",medium="GPU"}' % home
    wait_until(lambda: sample(metrics(base), "prosgrow_route_index_blocks", label) >= 3, "the router to index P")
    for n in range(4):
        before = sample(metrics(base), "prosgrow_route_predicted_cached_tokens_total")
        where, _ = post(base, "/v1/completions", key_a,
                        {"prompt": p + [900 + n] * 8, "max_tokens": 1, "temperature": 0})
        assert where == home, f"a's P + more went to {where}, P is cached on {home}"
        after = sample(metrics(base), "prosgrow_route_predicted_cached_tokens_total")
        assert after - before >= 48, f"predicted {after - before} cached tokens for P + more"
    before = sample(metrics(base), "prosgrow_route_predicted_cached_tokens_total")
    post(base, "/v1/completions", key_b, {"prompt": p + [901] * 8, "max_tokens": 1, "temperature": 0})
    after = sample(metrics(base), "prosgrow_route_predicted_cached_tokens_total")
    assert after == before, f"b's prompt was predicted {after - before} cached tokens of a's"
    print("route_hashes_check: ok: placed by block hashes alone; b matched nothing of a's")


if __name__ == "__main__":
    main()
