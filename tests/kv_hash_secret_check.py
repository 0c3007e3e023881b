#!/usr/bin/env python3
"""Issue 50: block hashes keyed with a fleet secret. Against real `prosgrow
serve` replicas and a real redis-server (kv_hash_secret_check.sh starts them):

  A  --kv-hash-secret-file S, the Redis tier, a write-through disk tier, and
     KV events (hashes only: A has an API key) with a replay socket
  B  the same secret and the same Redis, nothing cached
  C  no secret and no tiers beyond RAM: the hash anyone can compute, since a
     serve without the secret runs the documented unkeyed hash (its /tokenize
     names a prompt's blocks under the caller's tenant)

A serves a prompt. Then every hash A let out -- the BlockStored hashes of
its event stream (replayed from sequence 0), the hashes in the Redis key
names, and the hashes in its disk file names -- is compared with the
prompt's block hashes recomputed without the secret (C's /tokenize): none may
match, so a subscriber without the secret cannot tell that the prompt was
cached. With the secret (A's own /tokenize, which is what `prosgrow route`
matches on) all of them match. B, sharing the secret, reads the whole
prompt from Redis.

usage: kv_hash_secret_check.py A_URL B_URL C_URL KEY A_REPLAY_ENDPOINT REDIS_PORT A_DISK_DIR
"""
import json
import pathlib
import subprocess
import sys
import time
import urllib.request

import msgpack
import zmq

BLOCK = 16


def http(base, path, key, body=None):
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer " + key})
    with urllib.request.urlopen(req, timeout=120) as r:
        return r.read().decode()


def metric(base, key, series):
    for line in http(base, "/metrics", key).splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return -1.0


def wait_until(what, cond, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def event_hash(hex_hash):
    """The event form of a full 64-hex-digit block hash: its first 63 bits."""
    return int(hex_hash[:16], 16) >> 1


def replay_hashes(endpoint):
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 10000)
    sock.connect(endpoint)
    sock.send_multipart([b"", (0).to_bytes(8, "big")])
    out = set()
    while True:
        _, seq_b, payload = sock.recv_multipart()
        if int.from_bytes(seq_b, "big", signed=True) == -1:
            break
        for e in msgpack.unpackb(payload, raw=False)[1]:
            if e[0] == "BlockStored":
                assert e[3] == [], f"BlockStored carries token ids: {e}"
                out.update(e[1])
    sock.close()
    ctx.term()
    return out


def main():
    a, b, c, key, replay, redis_port, disk_dir = sys.argv[1:8]
    prompt = [300 + (17 * 7919 + i * 131) % 2700 for i in range(100)]  # 6 full blocks of 16
    body = {"prompt": prompt, "max_tokens": 8, "temperature": 0}
    first = json.loads(http(a, "/v1/completions", key, body))
    # A stores the 6 blocks in Redis and (write-through) on disk.
    wait_until("A's Redis writes", lambda: metric(a, key, "prosgrow_kv_remote_writes_total") >= 6
               and metric(a, key, "prosgrow_kv_remote_write_queue") == 0)
    files = lambda: sorted(pathlib.Path(disk_dir).rglob("*.kvb"))
    wait_until("A's disk files", lambda: len(files()) >= 6)

    keyed = json.loads(http(a, "/tokenize", key, {"prompt": prompt}))["block_hashes"]
    unkeyed = json.loads(http(c, "/tokenize", key, {"prompt": prompt}))["block_hashes"]
    assert len(keyed) == 6 and len(unkeyed) == 6, (keyed, unkeyed)
    assert not set(keyed) & set(unkeyed), "the secret changed no hash"

    events = replay_hashes(replay)
    keys = subprocess.run(["redis-cli", "-p", redis_port, "--scan", "--pattern", "pgkv:*"], check=True,
                          capture_output=True, text=True).stdout.split()
    redis = {event_hash(k.rsplit(":", 1)[1]) for k in keys}
    disk = {event_hash(f.stem) for f in files()}
    for name, seen in (("KV events", events), ("Redis key names", redis), ("disk file names", disk)):
        assert len(seen) >= 6, f"{name}: only {len(seen)} hashes"
        found = set(unkeyed) & seen
        assert not found, f"{name}: the hash without the secret finds the prompt's blocks {sorted(found)}"
        missing = set(keyed) - seen
        assert not missing, f"{name}: with the secret, blocks {sorted(missing)} are not found"
        print(f"{name}: {len(seen)} hashes; with the secret all 6 blocks match, without it none")

    # B, with the same secret, shares A's blocks through Redis.
    second = json.loads(http(b, "/v1/completions", key, body))
    tiers = second["usage"]["prompt_tokens_details"]["cached_tokens_by_tier"]
    assert tiers["remote"] == 96, second["usage"]
    assert second["choices"][0]["text"] == first["choices"][0]["text"], (first, second)
    print("replica B (same secret): 96 prompt tokens read from Redis, the same completion")


if __name__ == "__main__":
    main()
