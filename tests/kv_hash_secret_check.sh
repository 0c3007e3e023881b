#!/usr/bin/env bash
# Issue 50: block hashes keyed with a fleet secret (tests/kv_hash_secret_check.py):
# what the KV events, the Redis key names and the disk file names of a replica
# with --kv-hash-secret-file say about a prompt, with and without the secret;
# a second replica with the same secret shares the blocks through Redis; then
# A restarted with the same secret reads its disk tier back, and a replica
# with another secret (PROSGROW_KV_HASH_SECRET) finds nothing in Redis. Skips
# (exit 77) without redis-server/redis-cli or python3-zmq/python3-msgpack.
#
# usage: kv_hash_secret_check.sh PROSGROW_BIN
set -uo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/serve_lib.sh
source "$here/serve_lib.sh" || exit 2
PY=python3; [[ -x /usr/bin/python3 ]] && PY=/usr/bin/python3
"$PY" -c "import zmq, msgpack" 2>/dev/null || { echo "SKIPPED: python3-zmq / python3-msgpack missing"; exit 77; }
command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
  { echo "SKIPPED: redis-server / redis-cli not installed"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
"$bin" make-model --shape tiny --type f16 -o "$work/tiny.gguf" >/dev/null 2>&1 || fail "make-model"
key=key-hash-secret-01
printf 'a-fleet-secret-of-32-bytes-long!\n' >"$work/fleet.secret"

rport=$(serve_lib_free_port)
serve_lib_start "$work/redis.log" redis-server --port "$rport" --bind 127.0.0.1 --save "" --appendonly no
redis_pid=$SERVE_LIB_PID
for _ in $(seq 100); do redis-cli -p "$rport" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
redis-cli -p "$rport" ping | grep -q PONG || fail "redis-server did not answer"
redis=redis://127.0.0.1:$rport

common=(-m "$work/tiny.gguf" --port 0 --threads 1 --api-key "$key" --kv-page-tokens 16)
remote=(--kv-remote "$redis" --kv-remote-ttl 600 --kv-remote-timeout-ms 5000)
ev=$(serve_lib_free_port) rp=$(serve_lib_free_port)
a_args=("${common[@]}" "${remote[@]}" --kv-hash-secret-file "$work/fleet.secret" --kv-disk-dir "$work/disk"
  --kv-disk-size 64MiB --kv-write-policy write-through --kv-events "tcp://127.0.0.1:$ev"
  --kv-events-replay "tcp://127.0.0.1:$rp")
serve_lib_serve "$work/a.log" "$bin" serve "${a_args[@]}" || fail "replica A"
a_pid=$SERVE_LIB_PID a=$SERVE_LIB_URL
serve_lib_serve "$work/b.log" "$bin" serve "${common[@]}" "${remote[@]}" --kv-hash-secret-file "$work/fleet.secret" ||
  fail "replica B"
b_pid=$SERVE_LIB_PID b=$SERVE_LIB_URL
serve_lib_serve "$work/c.log" "$bin" serve "${common[@]}" --kv-events "tcp://127.0.0.1:$(serve_lib_free_port)" ||
  fail "serve C (no secret)"
c_pid=$SERVE_LIB_PID c=$SERVE_LIB_URL
# Unkeyed hashes that leave the server: serve warns at start, in doctor's words.
grep -q "preflight \[warn\] block hashes: not keyed: the KV events carry" "$work/c.log" ||
  fail "serve without a secret did not warn: $(grep -i 'block hashes' "$work/c.log")"

"$PY" "$here/kv_hash_secret_check.py" "$a" "$b" "$c" "$key" "tcp://127.0.0.1:$rp" "$rport" "$work/disk" || exit 1

# The completion, cached-by-tier, of the 100-token prompt on server URL.
prompt=$("$PY" -c 'print([300 + (17 * 7919 + i * 131) % 2700 for i in range(100)])')
tiers() {
  curl -fsS -H "Authorization: Bearer $key" -H "Content-Type: application/json" \
    -d "{\"prompt\": $prompt, \"max_tokens\": 8, \"temperature\": 0}" "$1/v1/completions" |
    "$PY" -c 'import json, sys; print(json.load(sys.stdin)["usage"]["prompt_tokens_details"]["cached_tokens_by_tier"])'
}
# A restarted with the same secret reads its disk blocks back (they chain under the key).
serve_lib_stop "$a_pid" || fail "replica A died"
serve_lib_serve "$work/a2.log" "$bin" serve "${common[@]}" --kv-hash-secret-file "$work/fleet.secret" \
  --kv-disk-dir "$work/disk" --kv-disk-size 64MiB || fail "replica A restarted"
a2_pid=$SERVE_LIB_PID
got=$(tiers "$SERVE_LIB_URL") || fail "A restarted: completion"
[[ $got == *"'disk': 96"* ]] || fail "A restarted with the same secret did not read its 6 disk blocks: $got"
echo "replica A restarted with the same secret: $got"
# Another secret (from the environment) shares nothing.
serve_lib_serve "$work/d.log" env PROSGROW_KV_HASH_SECRET=another-fleet-secret-32-bytes!!! "$bin" serve \
  "${common[@]}" "${remote[@]}" || fail "replica D"
d_pid=$SERVE_LIB_PID
got=$(tiers "$SERVE_LIB_URL") || fail "D: completion"
[[ $got == *"'remote': 0"* ]] || fail "a replica with another secret read Redis blocks: $got"
echo "replica D (another secret): $got"
for p in "$a2_pid" "$b_pid" "$c_pid" "$d_pid"; do serve_lib_stop "$p" || fail "a replica exited early"; done
serve_lib_stop "$redis_pid" || true
echo "kv_hash_secret_check: ok"
