#!/usr/bin/env bash
# POST /tokenize against a real `prosgrow serve` (tests/tokenize_check.py).
# usage: tokenize_check.sh PROSGROW_BIN
set -uo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pid=
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
"$bin" make-model --shape tiny --type f16 -o "$work/tiny.gguf" >/dev/null 2>&1 || { echo "FAIL: make-model"; exit 1; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve -m "$work/tiny.gguf" --port "$port" --threads 2 --api-key k >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
python3 "$here/tokenize_check.py" "http://127.0.0.1:$port" || { tail -20 "$work/serve.log"; exit 1; }
