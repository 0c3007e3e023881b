#!/usr/bin/env bash
# Soak test: N seconds of mixed load on `prosgrow serve` — the agentic
# benchmark at concurrency 4 plus a stream of bad requests and abandoned
# streams — then a report and a verdict:
#   - no crash (the server is still up and /health answers 200),
#   - no failed good request (the benchmark's summary has failed = 0),
#   - every bad request answered with a 4xx (never a 5xx, a hang or a reset).
# Also printed: responses by kind, and the server's RSS over time (it should
# stay flat). CI runs a short one (CTest soak_short, label e2e).
#
# usage: bench/soak.sh [SECONDS=600] [-- extra serve flags]
#   SOAK_BIN    prosgrow binary (default build/prosgrow)
#   SOAK_MODEL  GGUF model (default: serve's built-in synthetic model)
#   SOAK_OUT    output directory (default out/soak)
# Exit: 0 all checks pass, 1 a check failed, 2 setup error.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-600}
shift || true
[ "${1:-}" = "--" ] && shift
BIN=${SOAK_BIN:-build/prosgrow}
OUT=${SOAK_OUT:-out/soak}
model_args=()
[ -n "${SOAK_MODEL:-}" ] && model_args=(-m "$SOAK_MODEL")
rm -rf "$OUT"
mkdir -p "$OUT"

# The server picks its own port (--port 0); it is read back from the log.
"$BIN" serve "${model_args[@]}" --port 0 --policy optimized --kv-device-mem 32MiB --kv-host-mem 128MiB \
  --max-body-bytes 1MiB "$@" >"$OUT/serve.log" 2>&1 &
server=$!
pids=()
cleanup() { kill "$server" 2>/dev/null || true; for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
port=""
for _ in $(seq 1 3000); do
  kill -0 "$server" 2>/dev/null || { echo "serve exited; see $OUT/serve.log" >&2; exit 2; }
  [ -n "$port" ] || port=$(sed -n 's#.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*#\1#p' "$OUT/serve.log" | head -1)
  if [ -n "$port" ] && curl -fsS -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null; then break; fi
  sleep 0.1
done
URL="http://127.0.0.1:$port"
curl -fsS -o /dev/null "$URL/health" || { echo "serve did not become healthy; see $OUT/serve.log" >&2; exit 2; }

end=$(( $(date +%s) + DURATION ))

# 1. Good load: the agentic workload.
"$BIN" bench --url "$URL" --workload agentic --concurrency 4 --duration "$DURATION" --seed 7 \
  --no-progress --label soak --out "$OUT/bench" >"$OUT/bench.log" 2>&1 &
bench_pid=$!

# 2. Bad requests and abandoned streams, one kind after another. Each line
# of bad.txt is "kind http_code" (000: no answer).
big=$(head -c 2000000 /dev/zero | tr '\0' 'a')
# The body that once crashed the server: 100,000 levels of brackets.
deep="{\"messages\": $(head -c 100000 /dev/zero | tr '\0' '[')$(head -c 100000 /dev/zero | tr '\0' ']')}"
many_headers=()
for h in $(seq 1 150); do many_headers+=(-H "X-Filler-$h: x"); done
bad_loop() {
  local i=0
  while [ "$(date +%s)" -lt "$end" ]; do
    i=$((i + 1))
    {
      code() { curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$@" || echo 000; }
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
      echo "deep_nesting $(printf '%s' "$deep" | code -H 'Content-Type: application/json' --data-binary @- \
        "$URL/v1/chat/completions")"
      echo "too_many_headers $(code "${many_headers[@]}" "$URL/v1/models")"
      echo "bad_logit_bias $(code -d '{"prompt": "hi", "logit_bias": {"abc": 5}}' "$URL/v1/completions")"
      echo "json_schema_unsupported $(code -d '{"messages": [{"role": "user", "content": "x"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "string", "pattern": "a+"}}}}' \
        "$URL/v1/chat/completions")"
    } >>"$OUT/bad.txt"
    # An abandoned stream: the client hangs up after 0.3 s.
    curl -s -o /dev/null --max-time 0.3 -d '{"prompt": "tell me a long story", "max_tokens": 400, "stream": true}' \
      "$URL/v1/completions" || true
    echo "abandoned_stream" >>"$OUT/abandoned.txt"
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
bench_rc=0
wait "$bench_pid" || bench_rc=$?
wait "${pids[@]}" 2>/dev/null || true

crashes=0
kill -0 "$server" 2>/dev/null || crashes=1
health=$(curl -s -o /dev/null -w '%{http_code}' "$URL/health" || echo 000)
[ "$health" = 200 ] || crashes=1
echo "== soak: ${DURATION}s"
echo "crashes: $crashes (health after: $health)"
echo "responses to bad requests, by kind and status:"
sort "$OUT/bad.txt" | uniq -c | sort -k2
echo "abandoned streams: $(wc -l <"$OUT/abandoned.txt" 2>/dev/null || echo 0)"
echo "RSS (KiB) over time:"
awk 'NR==1 {t0=$1} {printf "  +%4ds %8d\n", $1-t0, $2}' "$OUT/rss.txt"
awk 'NR==1 {a=$2} {b=$2} END {if (a) printf "RSS first %d KiB, last %d KiB, change %+.1f%%\n", a, b, 100*(b-a)/a}' "$OUT/rss.txt"
echo "benchmark under the same load:"
grep -E 'output tok/s, whole|completed / failed' "$OUT/bench.log" || tail -5 "$OUT/bench.log"

# The verdict.
fail=0
if [ "$crashes" -ne 0 ]; then echo "FAIL: the server crashed or is unhealthy"; fail=1; fi
if [ "$bench_rc" -ne 0 ]; then echo "FAIL: the benchmark exited with $bench_rc"; fail=1; fi
summary=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["completed"], s["failed"])' \
  "$OUT/bench/run.json" 2>/dev/null || echo "0 -1")
read -r completed failed <<<"$summary"
echo "good requests: $completed completed, $failed failed"
if [ "$failed" != 0 ] || [ "$completed" -lt 1 ]; then echo "FAIL: good requests failed (or none completed)"; fail=1; fi
n_bad=$(wc -l <"$OUT/bad.txt")
not_4xx=$(awk '$2 !~ /^4[0-9][0-9]$/' "$OUT/bad.txt" | wc -l)
echo "bad requests: $n_bad sent, $not_4xx not answered 4xx"
if [ "$n_bad" -lt 1 ] || [ "$not_4xx" -ne 0 ]; then
  echo "FAIL: bad requests not answered 4xx:"
  awk '$2 !~ /^4[0-9][0-9]$/' "$OUT/bad.txt" | sort | uniq -c
  fail=1
fi
[ "$fail" -eq 0 ] && echo "soak passed"
exit "$fail"
