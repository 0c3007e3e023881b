#!/usr/bin/env bash
# Scale-out demo (issue 16): redis-server and three `prosgrow serve` replicas
# on loopback, the replicas publishing KV events and sharing Redis as their
# remote KV tier, `prosgrow route` in front, the agentic workload through the
# router; once with the cache-aware policy, once round-robin (the baseline),
# same seed, each with a fresh Redis. Halfway through each run one replica is
# killed (SIGKILL): the router retries its requests elsewhere and its sessions
# continue on the other replicas, finding their context in Redis. Prints the
# two runs side by side (cache reuse, % of ideal, TTFT, tok/s) and, per run,
# the failover: failed requests, and for each moved session its first turn
# on the new replica (cached tokens, those from tier "remote").
#
# Assumes a built build/prosgrow (scripts/demo.sh builds it) and redis-server
# (scripts/setup.sh installs it). Knobs:
#   MR_DURATION (s per policy, 120), MR_CONCURRENCY (6), MR_MODEL (default
#   synthetic model), MR_DEVICE_MEM (16MiB per replica), MR_OUT (out/multi-replica),
#   MR_REDIS (1; 0 = no remote tier), MR_KILL (1; 0 = no replica killed)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/prosgrow
DURATION=${MR_DURATION:-120}
CONCURRENCY=${MR_CONCURRENCY:-6}
DEVICE_MEM=${MR_DEVICE_MEM:-16MiB}
OUT=${MR_OUT:-out/multi-replica}
USE_REDIS=${MR_REDIS:-1}
KILL=${MR_KILL:-1}
failover_bad=0
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

start_redis() {  # start_redis LOG -> sets remote_args
  remote_args=()
  [[ $USE_REDIS == 1 ]] || return 0
  command -v redis-server >/dev/null || { echo "redis-server not found: apt-get install redis-server, or MR_REDIS=0"; exit 1; }
  local rport
  rport=$(free_port)
  redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$OUT" >"$1" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
  remote_args=(--kv-remote "redis://127.0.0.1:$rport")
}

run() {
  local policy=$1 urls=() replica_args=() replica_pids=() remote_args=()
  start_redis "$OUT/redis-$policy.log"
  for i in 0 1 2; do
    local port ev rp
    port=$(free_port) ev=$(free_port) rp=$(free_port)
    "$BIN" serve "${MODEL_ARGS[@]}" --port "$port" --threads 1 --kv-device-mem "$DEVICE_MEM" \
      --kv-events "tcp://*:$ev" --kv-events-replay "tcp://*:$rp" "${remote_args[@]}" \
      >"$OUT/replica$i-$policy.log" 2>&1 &
    pids+=($!)
    replica_pids+=($!)
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
  echo "== route --policy $policy: agentic workload, concurrency $CONCURRENCY, ${DURATION}s, 3 replicas" \
    "$([[ $USE_REDIS == 1 ]] && echo "+ redis")"
  local killer=
  if [[ $KILL == 1 ]]; then
    (sleep $((DURATION / 2)); kill -9 "${replica_pids[1]}" 2>/dev/null && date +%s.%N >"$OUT/kill-$policy.txt" &&
      echo "== killed replica 1 (${urls[1]}) at +$((DURATION / 2))s") &
    killer=$!
  fi
  "$BIN" bench --url "http://127.0.0.1:$rport" --workload agentic --concurrency "$CONCURRENCY" \
    --duration "$DURATION" --seed 1 --ctx-max 4096 --turns 16 --tool-gap-s 1 --out-median 32 --no-progress \
    --label "$policy" --out "$OUT/$policy"
  [[ -n $killer ]] && wait "$killer"
  curl -fsS "http://127.0.0.1:$rport/metrics" | grep '^prosgrow_route_replica_requests_total' || true
  if [[ $KILL == 1 ]]; then
    python3 scripts/failover_report.py "$OUT/$policy/run.json" "${urls[1]}" "$(cat "$OUT/kill-$policy.txt")" \
      >"$OUT/failover-$policy.txt" || failover_bad=1
    cat "$OUT/failover-$policy.txt"
  fi
  stop_all
}

run round-robin
run cache
echo
echo "== round-robin vs cache-aware routing (ratios cache/round-robin)"
"$BIN" bench compare "$OUT/round-robin/run.json" "$OUT/cache/run.json" --out "$OUT/table.md"
echo "Table: $OUT/table.md"
if [[ $failover_bad == 1 ]]; then
  echo "failover: a request failed, or a moved session found no context in the remote tier (see $OUT/failover-*.txt)"
  exit 1
fi
