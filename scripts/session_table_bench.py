#!/usr/bin/env python3
"""Bounded session state (issue 23): sends N distinct session ids (X-Session-Id)
to a real `prosgrow serve`, as fast as it takes them over C keep-alive
connections, and reports the server's resident memory before and after, and
the cost of fair-share eviction before and after (the median latency of a fixed
set of requests whose prompts force evictions, under --kv-fair-share).

Not a test: it prints figures (docs/performance.md, "Session table").

usage: session_table_bench.py --url http://127.0.0.1:PORT --pid PID [--sessions 100000] [--conns 8]
"""
import argparse
import http.client
import json
import statistics
import threading
import time
import urllib.parse


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def metric(conn, name):
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.split()[-1])
    return None


def post(conn, body, session=None):
    headers = {"Content-Type": "application/json"}
    if session is not None:
        headers["X-Session-Id"] = session
    conn.request("POST", "/v1/completions", json.dumps(body), headers)
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError(f"{r.status}: {data[:200]}")


def eviction_probe(host, port, rounds, seed):
    """Median seconds of requests with long, fresh prompts (each evicts blocks)."""
    conn = http.client.HTTPConnection(host, port, timeout=300)
    times = []
    for i in range(rounds):
        prompt = [300 + (seed * 7919 + i * 977 + j * 131) % 2700 for j in range(160)]
        t0 = time.perf_counter()
        post(conn, {"prompt": prompt, "max_tokens": 1, "temperature": 0}, session=f"probe-{seed}-{i % 4}")
        times.append(time.perf_counter() - t0)
    conn.close()
    return statistics.median(times)


def flood(host, port, n, conns, pid, checkpoints):
    """Sends n sessions; records (sent, RSS KiB) at each checkpoint count."""
    done = [0]
    lock = threading.Lock()
    marks = sorted(checkpoints)

    def worker(k):
        conn = http.client.HTTPConnection(host, port, timeout=300)
        for i in range(k, n, conns):
            post(conn, {"prompt": [400 + i % 2000, 7, 9], "max_tokens": 1, "temperature": 0}, session=f"s-{i:08d}")
            with lock:
                done[0] += 1
                while marks and done[0] >= marks[0]:
                    rss_at.append((marks.pop(0), rss_kib(pid)))
        conn.close()

    rss_at = []
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(conns)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done[0], time.perf_counter() - t0, rss_at


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--sessions", type=int, default=100000)
    ap.add_argument("--conns", type=int, default=8)
    ap.add_argument("--probe-rounds", type=int, default=40)
    a = ap.parse_args()
    u = urllib.parse.urlparse(a.url)
    host, port = u.hostname, u.port
    eviction_probe(host, port, 8, 99)  # warm up
    rss0 = rss_kib(a.pid)
    probe0 = eviction_probe(host, port, a.probe_rounds, 1)
    n, secs, rss_at = flood(host, port, a.sessions, a.conns, a.pid, [a.sessions * k // 10 for k in range(1, 11)])
    rss1 = rss_kib(a.pid)
    probe1 = eviction_probe(host, port, a.probe_rounds, 2)
    m = http.client.HTTPConnection(host, port, timeout=60)
    print(f"sessions sent            {n} in {secs:.1f} s ({n / secs:.0f}/s, {a.conns} connections)")
    print(f"resident memory          {rss0 / 1024:.1f} MiB before, {rss1 / 1024:.1f} MiB after "
          f"({(rss1 - rss0) / 1024:+.1f} MiB)")
    print(f"eviction probe (median)  {probe0 * 1000:.1f} ms before, {probe1 * 1000:.1f} ms after "
          f"({a.probe_rounds} requests of 160 fresh tokens each, --kv-fair-share)")
    print("resident memory by sessions sent: " + ", ".join(f"{k}: {v / 1024:.1f} MiB" for k, v in rss_at))
    sessions = metric(m, "prosgrow_kv_sessions")
    if sessions is not None:
        print(f"session names tracked    {sessions:.0f} (prosgrow_kv_sessions), "
              f"{metric(m, 'prosgrow_kv_sessions_forgotten_total'):.0f} forgotten")


if __name__ == "__main__":
    main()
