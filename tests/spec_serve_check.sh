#!/usr/bin/env bash
# Issue 15: with --spec-synthetic-acceptance-length the server says its output
# is not the model's own, in /v1/models, in every response (header and
# usage.speculative) and in its log; without it, none of that appears.
#
# usage: spec_serve_check.sh PROSGROW_BIN
set -uo pipefail
# shellcheck source=SCRIPTDIR/serve_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/serve_lib.sh" || exit 2
bin=$1
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
"$bin" make-model --shape tiny --type f16 -o "$work/tiny.gguf" >/dev/null 2>&1 || fail "make-model"
start() {
  serve_lib_serve "$work/serve.log" "$bin" serve -m "$work/tiny.gguf" --port 0 --threads 2 "$@" ||
    fail "serve did not become healthy"
  pid=$SERVE_LIB_PID port=$SERVE_LIB_PORT
}
body='{"prompt":[100,101,102,103,104,105,106,107],"max_tokens":24,"temperature":0,"ignore_eos":true}'

start --spec ngram --spec-draft-max 4 --spec-synthetic-acceptance-length 3
models=$(curl -sf "http://127.0.0.1:$port/v1/models") || fail "/v1/models"
grep -q '"synthetic_acceptance":true' <<<"$models" || fail "/v1/models does not say synthetic: $models"
curl -sf -D "$work/h" -o "$work/r" -H 'Content-Type: application/json' -d "$body" \
  "http://127.0.0.1:$port/v1/completions" || fail "completion"
grep -qi '^X-Prosgrow-Synthetic-Acceptance: .*not the model' "$work/h" || fail "no synthetic header: $(cat "$work/h")"
python3 - "$work/r" <<'PY' || fail "usage.speculative: $(cat "$work/r")"
import json, sys
u = json.load(open(sys.argv[1]))["usage"]["speculative"]
assert u["synthetic_acceptance"] is True and u["steps"] > 0 and u["drafted_tokens"] > 0, u
PY
grep -qi "synthetic" "$work/serve.log" || fail "the log does not say synthetic"
serve_lib_stop "$pid"

start
models=$(curl -sf "http://127.0.0.1:$port/v1/models") || fail "/v1/models"
grep -q '"synthetic_acceptance":false' <<<"$models" || fail "/v1/models without spec: $models"
curl -sf -D "$work/h" -o "$work/r" -H 'Content-Type: application/json' -d "$body" \
  "http://127.0.0.1:$port/v1/completions" || fail "completion"
grep -qi '^X-Prosgrow-Synthetic-Acceptance' "$work/h" && fail "synthetic header without the flag"
grep -q '"speculative"' "$work/r" && fail "usage.speculative without speculation"
echo "spec_serve_check: ok"
