#!/usr/bin/env bash
# The remote KV tier's figure (docs/kv-cache.md "Remote tier"): a prompt that
# replica A computed is sent, extended by 16 tokens, to replica B (a fresh
# process, same Redis) and to replica C (no Redis). Prints each pair's wall
# time for one output token, B's tokens from tier "remote", and whether B and
# C answered the same.
#
# usage: scripts/kv_remote_figure.sh [MODEL] [PROMPT_TOKENS]
#   MODEL: default ../shared/fixtures/models/small-llama-spm-q8_0.gguf
#   PROMPT_TOKENS: default 2000. Needs build/prosgrow and redis-server.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/prosgrow
MODEL=${1:-../shared/fixtures/models/small-llama-spm-q8_0.gguf}
N=${2:-2000}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 1 600); do curl -fsS "$1/health" >/dev/null 2>&1 && return 0; sleep 0.2; done; echo "$1 never came up"; exit 1; }

rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
pids+=($!)
ports=()
for name in a b c; do
  port=$(free_port)
  remote=(--kv-remote "redis://127.0.0.1:$rport")
  [[ $name == c ]] && remote=()
  "$BIN" serve -m "$MODEL" --host 127.0.0.1 --port "$port" --threads 2 "${remote[@]}" >"$work/$name.log" 2>&1 &
  pids+=($!)
  ports+=("$port")
done
for p in "${ports[@]}"; do wait_up "http://127.0.0.1:$p"; done

python3 - "$N" "${ports[@]}" <<'EOF'
import json, statistics, sys, time, urllib.request
n, a, b, c = int(sys.argv[1]), *sys.argv[2:5]
def post(port, prompt):
    body = json.dumps({"prompt": prompt, "max_tokens": 1, "temperature": 0}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=body,
                                 headers={"Content-Type": "application/json"})
    t = time.time()
    j = json.loads(urllib.request.urlopen(req, timeout=600).read())
    return time.time() - t, j["usage"]["prompt_tokens_details"], j["choices"][0]["text"]
rows = []
for seed in range(1, 6):
    p = [300 + (seed * 7919 + i * 131) % 30000 for i in range(n)]
    post(a, p)       # A computes the prompt and writes its blocks behind
    time.sleep(1.0)  # A's writes land
    q = p + [400 + (seed * 31 + i) % 20000 for i in range(16)]
    tb, db, xb = post(b, q)  # B: blocks from Redis
    tc, dc, xc = post(c, q)  # C: recomputes
    rows.append((tb, tc, db["cached_tokens_by_tier"]["remote"], xb == xc))
    print(f"B (Redis) {tb:.3f} s   C (recompute) {tc:.3f} s   B remote tokens {rows[-1][2]}   same output {xb == xc}")
print(f"median of 5: B {statistics.median(r[0] for r in rows):.3f} s, C {statistics.median(r[1] for r in rows):.3f} s "
      f"for a {n + 16}-token prompt")
EOF
