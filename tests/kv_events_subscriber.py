#!/usr/bin/env python3
"""An independent KV-event subscriber, written only from vLLM's published
event format (vllm/distributed/kv_events.py and its kv_events_subscriber
example), not from prosgrow's code: msgspec structs encoded array-like with
the class name as tag; a PUB message is [topic, seq (8 bytes big-endian),
payload]; a replay request to the ROUTER is the start seq as 8 bytes, answered
by [seq, payload] frames and an end marker seq -1.

It drives a real `prosgrow serve --kv-events ... --kv-events-replay ...`
with token-id prompts (so every block's tokens are known), decodes every
event, rebuilds the prefix index per medium, and checks it against what the
requests stored and against the server's own block counts on /metrics.

usage: kv_events_subscriber.py BASE_URL
"""
import json
import sys
import time
import urllib.request

import msgpack
import zmq


def http(base, path, body=None):
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return r.read().decode()


def replay_all(ctx, endpoint):
    """Every batch the publisher buffered, from seq 0, via the replay socket."""
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.RCVTIMEO, 5000)
    sock.connect(endpoint)
    sock.send_multipart([b"", (0).to_bytes(8, "big")])
    out = []
    while True:
        frames = sock.recv_multipart()
        _, seq_b, payload = frames  # empty delimiter, seq, payload
        seq = int.from_bytes(seq_b, "big", signed=True)
        if seq == -1:
            break
        out.append((seq, payload))
    sock.close()
    return out


class Index:
    """Which block hashes each medium holds, and every block's tokens/parent."""

    def __init__(self):
        self.media = {}
        self.blocks = {}  # hash -> (parent, tokens)
        self.counts = {"BlockStored": 0, "BlockRemoved": 0, "AllBlocksCleared": 0}

    def apply(self, event):
        tag = event[0]
        self.counts[tag] += 1
        if tag == "BlockStored":
            hashes, parent, tokens, block_size, _lora, medium = event[1:7]
            assert len(tokens) == len(hashes) * block_size, event
            for i, h in enumerate(hashes):
                self.blocks[h] = (parent if i == 0 else hashes[i - 1], tokens[i * block_size:(i + 1) * block_size])
                self.media.setdefault(medium, set()).add(h)
        elif tag == "BlockRemoved":
            hashes, medium = event[1:3]
            for h in hashes:
                assert h in self.media.get(medium, set()), f"removed {h} never stored in {medium}"
                self.media[medium].discard(h)
        elif tag == "AllBlocksCleared":
            self.media.clear()
        else:
            raise AssertionError(f"unknown event {tag}")

    def chain_tokens(self, h):
        out = []
        while h is not None:
            parent, tokens = self.blocks[h]
            out = tokens + out
            h = parent
        return out


def metric(text, name, tier):
    for line in text.splitlines():
        if line.startswith(f'{name}{{tier="{tier}"}}'):
            return int(float(line.split()[-1]))
    raise AssertionError(f"{name} tier={tier} not on /metrics")


def main():
    base = sys.argv[1]
    info = json.loads(http(base, "/kv-events"))
    assert info["format"] == "vllm", info
    host = base.split("//")[1].rsplit(":", 1)[0]
    for key in ("endpoint", "replay_endpoint"):  # a wildcard bind is reached at the server's host
        info[key] = info[key].replace("*", host)
    block = info["block_size"]
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(info["endpoint"])
    time.sleep(0.5)  # let the subscription reach the publisher

    a = [100 + i for i in range(4 * block)]
    b = a[:2 * block] + [3000 + i for i in range(2 * block)]
    prompts = [a, b] + [[5000 + 97 * j + i for i in range(3 * block)] for j in range(12)]
    for p in prompts:
        http(base, "/v1/completions", {"prompt": p, "max_tokens": 2, "temperature": 0})
    time.sleep(1.0)

    live = []
    sub.setsockopt(zmq.RCVTIMEO, 500)
    while True:
        try:
            topic, seq_b, payload = sub.recv_multipart()
            assert topic.decode() == info["topic"], topic
        except zmq.Again:
            break
        live.append((int.from_bytes(seq_b, "big"), payload))
    assert live, "the live subscriber received no batch"
    seqs = [s for s, _ in live]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"gap in live sequence numbers: {seqs}"

    batches = replay_all(ctx, info["replay_endpoint"])
    assert [s for s, _ in batches] == list(range(len(batches))), "replay is not 0..n-1"
    replayed = dict(batches)
    for s, payload in live:
        assert replayed[s] == payload, f"live batch {s} differs from its replay"

    index = Index()
    for _, payload in batches:
        batch = msgpack.unpackb(payload, raw=False)
        ts, events = batch[0], batch[1]
        assert ts > 1.6e9, ts
        for e in events:
            index.apply(e)
    assert msgpack.unpackb(batches[0][1], raw=False)[1][0] == ["AllBlocksCleared"]

    # Every prompt's full blocks were stored as one chain from the root,
    # and b shares a's first two blocks (the same hashes) then diverges.
    by_tokens = {}
    for h, (_, tokens) in index.blocks.items():
        by_tokens.setdefault(tuple(index.chain_tokens(h)), h)
    for p in prompts:
        full = len(p) // block * block
        assert tuple(p[:full]) in by_tokens, f"no chain for prompt starting {p[:4]}"
    ha2 = by_tokens[tuple(a[:2 * block])]
    hb3 = by_tokens[tuple(b[:3 * block])]
    assert index.blocks[hb3][0] == ha2, "b's third block does not hang off a's second"

    metrics = http(base, "/metrics")
    for tier, medium in (("device", "GPU"), ("host", "CPU")):
        want = metric(metrics, "prosgrow_kv_cached_blocks", tier)
        got = len(index.media.get(medium, set()))
        assert got == want, f"{medium}: events say {got} blocks, /metrics says {want}"
    print(f"kv_events_subscriber: ok: {len(batches)} batches, events {index.counts}, "
          f"media { {m: len(s) for m, s in index.media.items()} }")


if __name__ == "__main__":
    main()
