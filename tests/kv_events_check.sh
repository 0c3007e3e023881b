#!/usr/bin/env bash
# Issue 16, KV events checked independently: a real `prosgrow serve` with
# --kv-events, and tests/kv_events_subscriber.py (python3-zmq, python3-msgpack;
# written from vLLM's event format only) decoding every event and rebuilding
# the prefix index. Skips (exit 77) without those Python modules.
#
# usage: kv_events_check.sh PROSGROW_BIN
set -uo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
PY=python3; [[ -x /usr/bin/python3 ]] && PY=/usr/bin/python3  # Debian's, where python3-zmq lives
"$PY" -c "import zmq, msgpack" 2>/dev/null || { echo "skip: python3-zmq / python3-msgpack missing"; exit 77; }
work=$(mktemp -d)
pid=
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
"$bin" make-model --shape tiny --type f16 -o "$work/tiny.gguf" >/dev/null 2>&1 || { echo "FAIL: make-model"; exit 1; }
port=$(free_port) ev=$(free_port) rp=$(free_port)
# A device tier of 8 blocks, so the later prompts push earlier blocks to host.
"$bin" serve -m "$work/tiny.gguf" --port "$port" --threads 2 --kv-page-tokens 16 --kv-device-mem 80KiB \
  --kv-host-mem 4MiB --kv-events "tcp://*:$ev" --kv-events-replay "tcp://*:$rp" --kv-events-topic "kv@replica0@tiny" \
  >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { echo "FAIL: serve exited"; cat "$work/serve.log"; exit 1; }
  sleep 0.1
done
"$PY" "$here/kv_events_subscriber.py" "http://127.0.0.1:$port" || { tail -20 "$work/serve.log"; exit 1; }
