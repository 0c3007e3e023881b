#!/usr/bin/env bash
# Issue 23: KV events leak nothing by default (tests/kv_events_trust_check.py).
# A real `prosgrow serve --api-key` publishing on loopback: hashes only; then
# the same with --kv-events-curve-secret-file (ZMQ CURVE). Skips (exit 77)
# without python3-zmq / python3-msgpack or without CURVE in libzmq.
#
# usage: kv_events_trust_check.sh PROSGROW_BIN
set -uo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/serve_lib.sh
source "$here/serve_lib.sh" || exit 2
PY=python3; [[ -x /usr/bin/python3 ]] && PY=/usr/bin/python3
"$PY" -c "import zmq, msgpack" 2>/dev/null || { echo "skip: python3-zmq / python3-msgpack missing"; exit 77; }
"$PY" -c "import zmq, sys; sys.exit(0 if zmq.has('curve') else 1)" || { echo "skip: libzmq without CURVE"; exit 77; }
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
"$bin" make-model --shape tiny --type f16 -o "$work/tiny.gguf" >/dev/null 2>&1 || { echo "FAIL: make-model"; exit 1; }
key=key-events-check-01
for mode in hashes curve; do
  ev=$(serve_lib_free_port) rp=$(serve_lib_free_port)
  extra=()
  pub=""
  if [[ $mode == curve ]]; then
    "$PY" -c "import zmq; p, s = zmq.curve_keypair(); print(p.decode()); open('$work/curve.secret', 'w').write(s.decode())" \
      > "$work/curve.public" || exit 2
    pub=$(cat "$work/curve.public")
    extra=(--kv-events-curve-secret-file "$work/curve.secret")
  fi
  serve_lib_serve "$work/serve-$mode.log" "$bin" serve -m "$work/tiny.gguf" --port 0 --threads 2 --api-key "$key" \
    --kv-page-tokens 16 --kv-events "tcp://127.0.0.1:$ev" --kv-events-replay "tcp://127.0.0.1:$rp" "${extra[@]}" \
    || { echo "FAIL: serve ($mode) did not become healthy"; exit 1; }
  "$PY" "$here/kv_events_trust_check.py" "$SERVE_LIB_URL" "$key" "$mode" $pub || exit 1
  if [[ $mode == curve ]]; then
    grep -qF -- "CURVE on; subscribers need the public key $pub" "$work/serve-$mode.log" \
      || { echo "FAIL: serve did not log its CURVE public key"; exit 1; }
  fi
  serve_lib_stop "$SERVE_LIB_PID" || { echo "FAIL: serve ($mode) exited early"; exit 1; }
done
echo "kv_events_trust_check: ok"
