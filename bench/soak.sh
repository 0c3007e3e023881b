#!/usr/bin/env bash
# Soak test (not in CI): N seconds of mixed load on `prosgrow serve` — the
# agentic benchmark at concurrency 4 plus a stream of bad requests and
# abandoned streams — then a report: crashes (the server must still be up),
# responses by kind, and the server's RSS over time (it should stay flat).
#
# usage: bench/soak.sh [SECONDS=600] [-- extra serve flags]
# Needs build/prosgrow (./scripts/demo.sh or ./scripts/test.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-600}
shift || true
[ "${1:-}" = "--" ] && shift
BIN=build/prosgrow
PORT=${SOAK_PORT:-18533}
OUT=${SOAK_OUT:-out/soak}
URL="http://127.0.0.1:$PORT"
mkdir -p "$OUT"

"$BIN" serve --port "$PORT" --policy optimized --kv-device-mem 32MiB --kv-host-mem 128MiB \
  --max-body-bytes 1MiB "$@" >"$OUT/serve.log" 2>&1 &
server=$!
cleanup() { kill "$server" 2>/dev/null || true; kill "${pids[@]}" 2>/dev/null || true; }
pids=()
trap cleanup EXIT
for _ in $(seq 1 600); do curl -fsS "$URL/health" >/dev/null 2>&1 && break; sleep 0.5; done

end=$(( $(date +%s) + DURATION ))

# 1. Good load: the agentic workload.
"$BIN" bench --url "$URL" --workload agentic --concurrency 4 --duration "$DURATION" --seed 7 \
  --no-progress --label soak --out "$OUT/bench" >"$OUT/bench.log" 2>&1 &
pids+=($!)

# 2. Bad requests and abandoned streams, one kind after another.
big=$(head -c 2000000 /dev/zero | tr '\0' 'a')
bad_loop() {
  local i=0
  while [ "$(date +%s)" -lt "$end" ]; do
    i=$((i + 1))
    {
      code() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@" || echo 000; }
      echo "malformed_json $(code -d '{"messages": [' "$URL/v1/chat/completions")"
      echo "wrong_type $(code -d '{"messages": "hi"}' "$URL/v1/chat/completions")"
      echo "negative_max_tokens $(code -d '{"prompt": "hi", "max_tokens": -5}' "$URL/v1/completions")"
      echo "bad_temperature $(code -d '{"prompt": "hi", "temperature": -1}' "$URL/v1/completions")"
      echo "n_gt_1 $(code -d '{"prompt": "hi", "n": 3}' "$URL/v1/completions")"
      echo "token_out_of_vocab $(code -d '{"prompt": [999999999], "max_tokens": 2}' "$URL/v1/completions")"
      echo "empty_messages $(code -d '{"messages": []}' "$URL/v1/chat/completions")"
      echo "bad_role $(code -d '{"messages": [{"role": "wizard", "content": "x"}]}' "$URL/v1/chat/completions")"
      echo "unknown_route $(code "$URL/v1/nothing")"
      echo "oversized_body $(printf '{"prompt": "%s"}' "$big" | code --data-binary @- "$URL/v1/completions")"
      # An abandoned stream: the client hangs up after 0.3 s.
      curl -s -o /dev/null --max-time 0.3 -d '{"prompt": "tell me a long story", "max_tokens": 400, "stream": true}' \
        "$URL/v1/completions" || true
      echo "abandoned_stream done"
    } >>"$OUT/bad.txt"
    sleep 1
  done
}
bad_loop &
pids+=($!)

# 3. RSS every 10 s.
: >"$OUT/rss.txt"
while [ "$(date +%s)" -lt "$end" ]; do
  if ! kill -0 "$server" 2>/dev/null; then break; fi
  echo "$(date +%s) $(awk '/VmRSS/ {print $2}' "/proc/$server/status")" >>"$OUT/rss.txt"
  sleep 10
done
wait "${pids[@]}" 2>/dev/null || true

crashes=0
kill -0 "$server" 2>/dev/null || crashes=1
health=$(curl -s -o /dev/null -w '%{http_code}' "$URL/health" || echo 000)
echo "== soak: ${DURATION}s"
echo "crashes: $crashes (health after: $health)"
echo "responses to bad requests, by kind and status:"
sort "$OUT/bad.txt" | uniq -c | sort -k2
echo "RSS (KiB) over time:"
awk 'NR==1 {t0=$1} {printf "  +%4ds %8d\n", $1-t0, $2}' "$OUT/rss.txt"
awk 'NR==1 {a=$2} {b=$2} END {if (a) printf "RSS first %d KiB, last %d KiB, change %+.1f%%\n", a, b, 100*(b-a)/a}' "$OUT/rss.txt"
echo "benchmark under the same load:"
grep -E 'output tok/s, whole|completed / failed' "$OUT/bench.log" || tail -5 "$OUT/bench.log"
exit "$crashes"
