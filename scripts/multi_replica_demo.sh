#!/usr/bin/env bash
# Scale-out demo (issue 16): three `prosgrow serve` replicas publishing KV
# events, `prosgrow route` in front, the agentic workload through the router;
# once with the cache-aware policy, once round-robin (the baseline), same seed.
# Prints the two runs side by side (cache reuse, % of ideal, TTFT, tok/s).
#
# Assumes a built build/prosgrow (scripts/demo.sh builds it). Knobs:
#   MR_DURATION (s per policy, 120), MR_CONCURRENCY (6), MR_MODEL (default
#   synthetic model), MR_DEVICE_MEM (16MiB per replica), MR_OUT (out/multi-replica)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/prosgrow
DURATION=${MR_DURATION:-120}
CONCURRENCY=${MR_CONCURRENCY:-6}
DEVICE_MEM=${MR_DEVICE_MEM:-16MiB}
OUT=${MR_OUT:-out/multi-replica}
MODEL_ARGS=()
[[ -n ${MR_MODEL:-} ]] && MODEL_ARGS=(-m "$MR_MODEL")
mkdir -p "$OUT"
pids=()
stop_all() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; pids=(); }
trap stop_all EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() {
  for _ in $(seq 1 600); do curl -fsS "$1/health" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "$1 never came up"; exit 1
}

run() {
  local policy=$1 urls=() replica_args=()
  for i in 0 1 2; do
    local port ev rp
    port=$(free_port) ev=$(free_port) rp=$(free_port)
    "$BIN" serve "${MODEL_ARGS[@]}" --port "$port" --threads 1 --kv-device-mem "$DEVICE_MEM" \
      --kv-events "tcp://*:$ev" --kv-events-replay "tcp://*:$rp" >"$OUT/replica$i-$policy.log" 2>&1 &
    pids+=($!)
    urls+=("http://127.0.0.1:$port")
    replica_args+=(--replica "http://127.0.0.1:$port")
  done
  for u in "${urls[@]}"; do wait_up "$u"; done
  local rport
  rport=$(free_port)
  "$BIN" route --port "$rport" --policy "$policy" "${replica_args[@]}" >"$OUT/route-$policy.log" 2>&1 &
  pids+=($!)
  wait_up "http://127.0.0.1:$rport"
  sleep 1
  echo "== route --policy $policy: agentic workload, concurrency $CONCURRENCY, ${DURATION}s, 3 replicas"
  "$BIN" bench --url "http://127.0.0.1:$rport" --workload agentic --concurrency "$CONCURRENCY" \
    --duration "$DURATION" --seed 1 --ctx-max 4096 --turns 16 --tool-gap-s 1 --out-median 32 --no-progress \
    --label "$policy" --out "$OUT/$policy"
  curl -fsS "http://127.0.0.1:$rport/metrics" | grep '^prosgrow_route_replica_requests_total' || true
  stop_all
}

run round-robin
run cache
echo
echo "== round-robin vs cache-aware routing (ratios cache/round-robin)"
"$BIN" bench compare "$OUT/round-robin/run.json" "$OUT/cache/run.json" --out "$OUT/table.md"
echo "Table: $OUT/table.md"
