#!/usr/bin/env python3
"""`prosgrow route` against real replicas: cache-aware placement, session
affinity, streaming relay, and failover when a replica dies (between
requests, and in the middle of a stream).

usage: route_check.py ROUTER_URL REPLICA_PID_FILE [--redis]
(--redis: the replicas share a Redis KV tier; the moved session's next turn
must find its context there, tier "remote".)
"""
import json
import os
import signal
import sys
import time
import urllib.request


def post(base, path, body, headers=None):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=300) as r:
        return r.headers.get("X-Prosgrow-Replica"), r.read().decode()


def chat(base, session, messages, stream=False):
    body = {"messages": messages, "max_tokens": 4, "temperature": 0, "stream": stream}
    replica, text = post(base, "/v1/chat/completions", body, {"X-Session-Id": session})
    return replica, (text if stream else json.loads(text))


def chat_body(base, session, body):
    replica, text = post(base, "/v1/chat/completions", body, {"X-Session-Id": session})
    return replica, json.loads(text)


def wait_until(pred, what, timeout_s=120):
    """Polls pred every 50 ms until it holds; fails naming `what` after
    timeout_s (a bound on a condition, not a timing claim)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def index_blocks(base, replica):
    """Blocks the router's index holds for `replica` (all media), from its /metrics."""
    metrics = urllib.request.urlopen(base + "/metrics", timeout=30).read().decode()
    prefix = f'prosgrow_route_index_blocks{{replica="{replica}",'
    return sum(float(l.rsplit(" ", 1)[1]) for l in metrics.splitlines() if l.startswith(prefix))


def main():
    base, pids = sys.argv[1], json.load(open(sys.argv[2]))
    system = {"role": "system", "content": " ".join(f"rule {i}: keep the context." for i in range(60))}
    m1 = [system, {"role": "user", "content": "first question"}]
    r1, a1 = chat(base, "s1", m1)
    # The replica's events (the first turn's blocks) reach the router's index.
    wait_until(lambda: index_blocks(base, r1) > 0, f"the router to index {r1}'s blocks")
    m2 = m1 + [{"role": "assistant", "content": a1["choices"][0]["message"]["content"]},
               {"role": "user", "content": "second question"}]
    r2, a2 = chat(base, "s1", m2)
    assert r1 == r2, f"session moved: {r1} -> {r2}"
    cached = a2["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached > 0, f"second turn not cached: {a2['usage']}"

    # Another session with the same long system prompt under another id: the
    # cache-aware router sends it where that prefix is cached.
    r3, a3 = chat(base, "s2", [system, {"role": "user", "content": "another question"}])
    assert r3 == r1, f"shared prefix not followed: {r3} vs {r1}"
    assert a3["usage"]["prompt_tokens_details"]["cached_tokens"] > 0, a3["usage"]

    # A different context goes to the idle replica.
    r4, _ = chat(base, "s3", [{"role": "user", "content": "something else entirely " * 20}])
    assert r4 != r1, "a new context did not spread to the other replica"

    # Streaming is relayed as it comes.
    _, sse = chat(base, "s1", m2, stream=True)
    assert sse.rstrip().endswith("data: [DONE]"), sse[-200:]

    # Kill s1's replica in the middle of a stream: the router sends the
    # request to the other replica and continues the client's stream where
    # it broke, so the client gets one unbroken answer, the same text a
    # replica gives in one piece.
    # (A prompt of its own, so the other replica learns nothing of s1's
    # context from it: with --redis, s1's next turn must find it in Redis.)
    # The kill comes as soon as the first text arrives; max_tokens is most of
    # the context (4096), so the replica cannot have finished by then.
    other = [{"role": "user", "content": "Count the stars in the sky, one by one. " * 20}]
    long_req = {"messages": other, "max_tokens": 3200, "temperature": 0, "ignore_eos": True, "stream": True}
    req = urllib.request.Request(base + "/v1/chat/completions", data=json.dumps(long_req).encode(),
                                 headers={"Content-Type": "application/json", "X-Session-Id": "s1"})
    text, events = "", []
    with urllib.request.urlopen(req, timeout=300) as r:
        assert r.headers.get("X-Prosgrow-Replica") == r1, "the long stream did not start on s1's replica"
        killed = False
        for line in r:
            line = line.decode().strip()
            if not line.startswith("data: "):
                continue
            events.append(line[6:])
            if line[6:] == "[DONE]":
                break
            chunk = json.loads(line[6:])
            assert "error" not in chunk, chunk
            delta = chunk["choices"][0]["delta"] if chunk["choices"] else {}
            text += delta.get("content") or ""
            if text and not killed:
                os.kill(pids[r1], signal.SIGKILL)
                killed = True
    assert events and events[-1] == "[DONE]", events[-3:]
    metrics = urllib.request.urlopen(base + "/metrics", timeout=30).read().decode()
    resumed = [l for l in metrics.splitlines() if l.startswith("prosgrow_route_resumed_streams_total")]
    assert resumed == ["prosgrow_route_resumed_streams_total 1"], resumed
    _, whole = chat_body(base, "s1", dict(long_req, stream=False))
    assert text == whole["choices"][0]["message"]["content"], "the spliced stream differs from the answer"
    print(f"route_check: stream resumed on the other replica after its own died mid-stream ({len(text)} chars)")

    # s1's next turn goes to the surviving replica and succeeds.
    r5, a5 = chat(base, "s1", m2 + [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "third"}])
    assert r5 != r1 and a5["choices"][0]["finish_reason"] in ("stop", "length"), (r5, a5)
    if "--redis" in sys.argv[3:]:
        details = a5["usage"]["prompt_tokens_details"]
        remote = details["cached_tokens_by_tier"]["remote"]
        assert remote > 0 and details["cached_tokens"] >= remote, f"moved turn not served from Redis: {details}"
        print(f"route_check: the moved turn read {remote} cached tokens from tier remote")
    print(f"route_check: ok: s1 on {r1}, cached {cached} tokens on turn 2; failover to {r5}")


if __name__ == "__main__":
    main()
