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
# shellcheck source=SCRIPTDIR/serve_lib.sh
source "$here/serve_lib.sh" || exit 2
PY=python3; [[ -x /usr/bin/python3 ]] && PY=/usr/bin/python3  # Debian's, where python3-zmq lives
"$PY" -c "import zmq, msgpack" 2>/dev/null || { echo "SKIP: python3-zmq / python3-msgpack missing (scripts/setup.sh)"; exit 77; }
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
"$bin" make-model --shape tiny --type f16 -o "$work/tiny.gguf" >/dev/null 2>&1 || { echo "FAIL: make-model"; exit 1; }
ev=$(serve_lib_free_port) rp=$(serve_lib_free_port)
# A device tier of 8 blocks, so the later prompts push earlier blocks to host.
serve_lib_serve "$work/serve.log" "$bin" serve -m "$work/tiny.gguf" --port 0 --threads 2 --kv-page-tokens 16 \
  --kv-device-mem 80KiB --kv-host-mem 4MiB --kv-events "tcp://*:$ev" --kv-events-replay "tcp://*:$rp" \
  --kv-events-topic "kv@replica0@tiny" || { echo "FAIL: serve did not become healthy"; exit 1; }
"$PY" "$here/kv_events_subscriber.py" "$SERVE_LIB_URL" || exit 1
