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
# shellcheck source=SCRIPTDIR/serve_lib.sh
source "$here/serve_lib.sh" || exit 2
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
"$bin" make-model --shape tiny --type f16 -o "$work/tiny.gguf" >/dev/null 2>&1 || { echo "FAIL: make-model"; exit 1; }
remote_args=()
if [[ $redis_mode == --redis ]]; then
  command -v redis-server >/dev/null || { echo "SKIP: redis-server not installed"; exit 77; }
  redis_port=$(serve_lib_free_port)
  serve_lib_start "$work/redis.log" redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work"
  for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  remote_args=(--kv-remote "redis://127.0.0.1:$redis_port")
fi
replica_pids=()
for i in 0 1; do
  ev=$(serve_lib_free_port) rp=$(serve_lib_free_port)
  serve_lib_start "$work/replica$i.log" "$bin" serve -m "$work/tiny.gguf" --port 0 --threads 1 \
    --kv-events "tcp://*:$ev" --kv-events-replay "tcp://*:$rp" "${remote_args[@]}"
  replica_pids+=("$SERVE_LIB_PID")
done
echo "{" >"$work/pids.json"
urls=()
for i in 0 1; do
  serve_lib_wait_health "${replica_pids[$i]}" "$work/replica$i.log" ||
    { echo "FAIL: replica $i never became healthy"; exit 1; }
  urls+=("$SERVE_LIB_URL")
  [[ $i -gt 0 ]] && echo "," >>"$work/pids.json"
  echo "\"$SERVE_LIB_URL\": ${replica_pids[$i]}" >>"$work/pids.json"
done
echo "}" >>"$work/pids.json"
rport=$(serve_lib_free_port)
serve_lib_start "$work/route.log" "$bin" route --port "$rport" --replica "${urls[0]}" --replica "${urls[1]}"
serve_lib_wait_health "$SERVE_LIB_PID" "$work/route.log" "http://127.0.0.1:$rport" ||
  { echo "FAIL: the router never became healthy"; exit 1; }
python3 "$here/route_check.py" "http://127.0.0.1:$rport" "$work/pids.json" $redis_mode || exit 1
