#!/usr/bin/env python3
"""Failover in a `prosgrow bench` run through `prosgrow route` (issue 16).

usage: failover_report.py RUN_JSON KILLED_REPLICA_URL KILL_UNIX_TIME

Reads the run's request records (each carries `served_by`, the replica the
router relayed it to: where the stream started) and prints:
  - requests that failed (after the router's retry), with their errors;
  - the sessions that were on the killed replica and went on elsewhere, and
    for each its first turn served by another replica: the prompt tokens, the
    cached tokens, and those read from the remote (Redis) tier. That turn is
    the one in flight at the kill when there was one (the router continued its
    stream on another replica, whose usage the client got), else the next.
Exits 1 when a request failed or a moved session's first turn found nothing
in the remote tier, so a script can use it as a check.
"""
import json
import sys


def main():
    run = json.load(open(sys.argv[1]))
    killed = sys.argv[2].rstrip("/")
    kill_s = float(sys.argv[3]) - run["config"]["started_unix_s"]  # seconds into the run
    reqs = [r for r in run["requests"] if not r.get("warmup")]
    failed = [r for r in reqs if not r.get("ok")]
    by_session = {}
    for r in sorted(reqs, key=lambda r: (r["session"], r["turn"])):
        by_session.setdefault(r["session"], []).append(r)

    moved = []
    for session, turns in by_session.items():
        on_killed = False
        for r in turns:
            where = r.get("served_by", "").rstrip("/")
            if where == killed and r["send_s"] + r["e2e_s"] > kill_s and r.get("ok"):
                moved.append((session, r, "resumed"))  # in flight at the kill
                break
            if where == killed:
                on_killed = True
            elif on_killed and where and r.get("ok"):
                moved.append((session, r, "next turn"))
                break

    print(f"failover: {len(reqs)} requests, {len(failed)} failed after the router's retry")
    for r in failed[:10]:
        print(f"  failed: {r['session']} turn {r['turn']}: HTTP {r.get('http_status')} {r.get('error', '')}")
    print(f"failover: {len(moved)} sessions moved off {killed}; their first turn served by another replica:")
    print("  | session | turn | how | prompt tokens | cached | from remote tier |")
    print("  |---|---|---|---|---|---|")
    remote_hits = 0
    for session, r, how in moved:
        remote = r.get("cached_by_tier", {}).get("remote", -1)
        remote_hits += remote > 0
        print(f"  | {session} | {r['turn']} | {how} | {r.get('prompt_tokens')} | "
              f"{r.get('cached_tokens')} | {remote} |")
    print(f"failover: {remote_hits} of {len(moved)} moved sessions read their context from the remote tier")
    return 0 if not failed and moved and remote_hits == len(moved) else 1


if __name__ == "__main__":
    sys.exit(main())
