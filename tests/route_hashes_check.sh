#!/usr/bin/env bash
# Issue 23: `prosgrow route` in front of two replicas whose KV events carry
# hashes only (--api-keys-file: --kv-events-tokens defaults to off) still
# places requests by prefix (tests/route_hashes_check.py). The replicas key
# their block hashes with a fleet secret (--kv-hash-secret-file, issue 50): the
# router matches the hashes each replica's /tokenize names, so it needs none.
#
# usage: route_hashes_check.sh PROSGROW_BIN
set -uo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/serve_lib.sh
source "$here/serve_lib.sh" || exit 2
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
"$bin" make-model --shape tiny --type f16 -o "$work/tiny.gguf" >/dev/null 2>&1 || { echo "FAIL: make-model"; exit 1; }
printf 'a key-route-a-0001\nb key-route-b-0002\n' >"$work/keys.txt"
printf 'a-fleet-secret-of-32-bytes-long!\n' >"$work/fleet.secret"
pids=()
for i in 0 1; do
  ev=$(serve_lib_free_port) rp=$(serve_lib_free_port)
  serve_lib_start "$work/replica$i.log" "$bin" serve -m "$work/tiny.gguf" --port 0 --threads 1 \
    --api-keys-file "$work/keys.txt" --kv-page-tokens 16 --kv-hash-secret-file "$work/fleet.secret" \
    --kv-events "tcp://127.0.0.1:$ev" --kv-events-replay "tcp://127.0.0.1:$rp"
  pids+=("$SERVE_LIB_PID")
done
urls=()
for i in 0 1; do
  serve_lib_wait_health "${pids[$i]}" "$work/replica$i.log" || { echo "FAIL: replica $i never became healthy"; exit 1; }
  urls+=("$SERVE_LIB_URL")
done
rport=$(serve_lib_free_port)
serve_lib_start "$work/route.log" "$bin" route --port "$rport" --replica "${urls[0]}" --replica "${urls[1]}" \
  --api-key key-route-a-0001
serve_lib_wait_health "$SERVE_LIB_PID" "$work/route.log" "http://127.0.0.1:$rport" ||
  { echo "FAIL: the router never became healthy"; exit 1; }
python3 "$here/route_hashes_check.py" "http://127.0.0.1:$rport" key-route-a-0001 key-route-b-0002 || exit 1
