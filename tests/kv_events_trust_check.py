#!/usr/bin/env python3
"""Issue 23: KV events leak nothing by default. Against a real `prosgrow serve
--api-key KEY --kv-events ... --kv-events-replay ...` (hashes only, the
default with a key):

  hashes  GET /kv-events needs the key; it says token_ids false; every
          BlockStored event, live and replayed, has block hashes and no token
          ids.
  curve   (the server also has --kv-events-curve-secret-file) a subscriber and
          a replay client that know the public key get the batches; a plain
          subscriber and a plain replay client, connected all along, get none.
          Each negative is read only after the keyed subscriber holds every
          batch the plain one could have had.

usage: kv_events_trust_check.py BASE_URL KEY hashes|curve [SERVER_PUBLIC_KEY]
"""
import json
import sys
import time
import urllib.error
import urllib.request

import msgpack
import zmq


def http(base, path, key=None, body=None):
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def curve_client(sock, server_key):
    pub, sec = zmq.curve_keypair()
    sock.curve_serverkey = server_key.encode()
    sock.curve_publickey = pub
    sock.curve_secretkey = sec


def replay(ctx, endpoint, server_key, timeout_ms):
    """[(seq, payload)] from seq 0; None when nothing answers in time."""
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, timeout_ms)
    if server_key:
        curve_client(sock, server_key)
    sock.connect(endpoint)
    sock.send_multipart([b"", (0).to_bytes(8, "big")])
    out = []
    try:
        while True:
            _, seq_b, payload = sock.recv_multipart()
            seq = int.from_bytes(seq_b, "big", signed=True)
            if seq == -1:
                return out
            out.append((seq, payload))
    except zmq.Again:
        return None
    finally:
        sock.close()


def stored_events(payloads):
    for payload in payloads:
        for e in msgpack.unpackb(payload, raw=False)[1]:
            if e[0] == "BlockStored":
                yield e


def main():
    base, key, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    server_key = sys.argv[4] if len(sys.argv) > 4 else ""
    status, _ = http(base, "/kv-events")
    assert status == 401, f"/kv-events without the key answered {status}"
    status, body = http(base, "/kv-events", key)
    assert status == 200, (status, body)
    info = json.loads(body)
    assert info["token_ids"] is False, info
    if mode == "curve":
        assert info.get("curve_public_key") == server_key, info
    ctx = zmq.Context()
    keyed = ctx.socket(zmq.SUB)
    keyed.setsockopt(zmq.SUBSCRIBE, b"")
    if mode == "curve":
        curve_client(keyed, server_key)
    keyed.connect(info["endpoint"])
    plain = ctx.socket(zmq.SUB)
    plain.setsockopt(zmq.SUBSCRIBE, b"")
    plain.connect(info["endpoint"])

    block = info["block_size"]
    prompts = [[300 + 37 * j + i for i in range(3 * block)] for j in range(6)]
    # Send until the keyed subscriber has live batches (a SUB joins a PUB
    # asynchronously: what is published before the join is not delivered).
    live = []
    keyed.setsockopt(zmq.RCVTIMEO, 2000)
    deadline = time.monotonic() + 120
    j = 0
    while not live and time.monotonic() < deadline:
        p = [5000 + 11 * j + i for i in range(2 * block)]
        j += 1
        status, body = http(base, "/v1/completions", key, {"prompt": p, "max_tokens": 1, "temperature": 0})
        assert status == 200, (status, body)
        try:
            live.append(keyed.recv_multipart()[2])
        except zmq.Again:
            pass
    assert live, "the subscriber that knows the key received no batch"
    for p in prompts:
        status, body = http(base, "/v1/completions", key, {"prompt": p, "max_tokens": 1, "temperature": 0})
        assert status == 200, (status, body)
    batches = replay(ctx, info["replay_endpoint"], server_key if mode == "curve" else "", 10000)
    assert batches, "replay with the key answered nothing"
    last_seq = batches[-1][0]
    # The keyed subscriber reads live batches up to the last replayed one.
    keyed.setsockopt(zmq.RCVTIMEO, 10000)
    while True:
        try:
            _, seq_b, payload = keyed.recv_multipart()
        except zmq.Again:
            raise AssertionError("the keyed subscriber stopped short of the replayed batches")
        live.append(payload)
        if int.from_bytes(seq_b, "big") >= last_seq:
            break

    stored = list(stored_events([p for _, p in batches])) + list(stored_events(live))
    assert len(stored) >= len(prompts), f"only {len(stored)} BlockStored events"
    for e in stored:
        hashes, tokens = e[1], e[3]
        assert hashes and tokens == [], f"BlockStored carries token ids: {e}"

    # Everything the keyed side holds is published: what did the plain one get?
    plain.setsockopt(zmq.RCVTIMEO, 0)
    try:
        got = plain.recv_multipart()
    except zmq.Again:
        got = None
    if mode == "curve":
        assert got is None, "a subscriber without the CURVE key received a batch"
        assert replay(ctx, info["replay_endpoint"], "", 2000) is None, "replay answered a client without the key"
    print(f"kv_events_trust_check {mode}: ok: {len(stored)} BlockStored events, none with token ids"
          + ("; the plain subscriber and replay client got nothing" if mode == "curve" else ""))


if __name__ == "__main__":
    main()
