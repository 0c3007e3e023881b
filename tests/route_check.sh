#!/usr/bin/env bash
# Issue 16: `prosgrow route` in front of two real replicas publishing KV
# events: cache-aware placement, affinity, streaming, failover.
#
# usage: route_check.sh PROSGROW_BIN [--redis]
# With --redis the replicas share a remote KV tier in a redis-server started
# here (exit 77 when it is not installed), and the failed-over session's next
# turn must read its context from it (tier "remote").
set -uo pipefail
bin=$1
redis_mode=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() {
  for _ in $(seq 1 300); do curl -sf "$1/health" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "FAIL: $1 never became healthy"; return 1
}
"$bin" make-model --shape tiny --type f16 -o "$work/tiny.gguf" >/dev/null 2>&1 || { echo "FAIL: make-model"; exit 1; }
remote_args=()
if [[ $redis_mode == --redis ]]; then
  command -v redis-server >/dev/null || { echo "SKIP: redis-server not installed"; exit 77; }
  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  remote_args=(--kv-remote "redis://127.0.0.1:$redis_port")
fi
echo "{" >"$work/pids.json"
urls=()
for i in 0 1; do
  port=$(free_port) ev=$(free_port) rp=$(free_port)
  "$bin" serve -m "$work/tiny.gguf" --port "$port" --threads 1 --kv-events "tcp://*:$ev" \
    --kv-events-replay "tcp://*:$rp" "${remote_args[@]}" >"$work/replica$i.log" 2>&1 &
  pids+=($!)
  urls+=("http://127.0.0.1:$port")
  [[ $i -gt 0 ]] && echo "," >>"$work/pids.json"
  echo "\"http://127.0.0.1:$port\": $!" >>"$work/pids.json"
done
echo "}" >>"$work/pids.json"
for u in "${urls[@]}"; do wait_up "$u" || exit 1; done
rport=$(free_port)
"$bin" route --port "$rport" --replica "${urls[0]}" --replica "${urls[1]}" >"$work/route.log" 2>&1 &
pids+=($!)
wait_up "http://127.0.0.1:$rport" || { cat "$work/route.log"; exit 1; }
sleep 1  # the router subscribes to both replicas' events
python3 "$here/route_check.py" "http://127.0.0.1:$rport" "$work/pids.json" $redis_mode || {
  tail -n 5 "$work/route.log" "$work"/replica*.log; exit 1; }
