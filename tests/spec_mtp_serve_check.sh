#!/usr/bin/env bash
# Issue 48, the MTP drafter on a real server: `serve --spec mtp` on the
# tiny-glm-dsa fixture (one NextN block) answers a greedy completion with
# exactly the text and log-probs of a server without speculation, reports
# the drafts in usage.speculative and on /metrics (drafter="mtp"), serves a
# sampled request, and a model without a NextN block makes `serve --spec mtp`
# exit non-zero with one line.
#
# usage: spec_mtp_serve_check.sh PROSGROW_BIN SHARED_DIR   (exit 77: no ../shared)
set -uo pipefail
# shellcheck source=SCRIPTDIR/serve_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/serve_lib.sh" || exit 2
bin=$1
model=$2/fixtures/models/tiny-glm-dsa-spm.gguf
[[ -f $model ]] || { echo "SKIP: needs ../shared/fixtures (absent)"; exit 77; }
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
start() {
  serve_lib_serve "$work/serve.log" "$bin" serve -m "$model" --port 0 --threads 2 "$@" ||
    fail "serve did not become healthy"
  pid=$SERVE_LIB_PID port=$SERVE_LIB_PORT
}
stop() { serve_lib_stop "$pid"; }
greedy='{"prompt":[100,101,102,103,104,105,106,107],"max_tokens":40,"temperature":0,"ignore_eos":true,"logprobs":1}'
sampled='{"prompt":[100,101,102,103],"max_tokens":24,"temperature":1,"top_k":8,"seed":5,"ignore_eos":true}'
complete() { curl -sf -o "$1" -H 'Content-Type: application/json' -d "$2" "http://127.0.0.1:$port/v1/completions"; }

start
complete "$work/plain.json" "$greedy" || fail "completion without speculation"
stop

start --spec mtp --spec-draft-max 4 --spec-policy always
complete "$work/mtp.json" "$greedy" || fail "completion with --spec mtp"
python3 - "$work/plain.json" "$work/mtp.json" <<'PY' || fail "mtp: $(cat "$work/mtp.json")"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["choices"][0]["text"] == b["choices"][0]["text"], (a["choices"][0]["text"], b["choices"][0]["text"])
assert a["choices"][0]["logprobs"] == b["choices"][0]["logprobs"]
u = b["usage"]["speculative"]
assert u["drafted_tokens"] > 0 and u["synthetic_acceptance"] is False, u
PY
complete "$work/sampled.json" "$sampled" || fail "sampled completion with --spec mtp"
grep -q '"completion_tokens":24' "$work/sampled.json" || fail "sampled: $(cat "$work/sampled.json")"
metrics=$(curl -sf "http://127.0.0.1:$port/metrics") || fail "/metrics"
grep -q 'prosgrow_spec_draft_tokens_total{drafter="mtp"} [1-9]' <<<"$metrics" || fail "no mtp counters"
grep -q 'MTP drafter' "$work/serve.log" || fail "the log does not show the MTP drafter"
stop

"$bin" make-model --shape tiny --type f16 -o "$work/plain.gguf" >/dev/null 2>&1 || fail "make-model"
port=$(serve_lib_free_port)
"$bin" serve -m "$work/plain.gguf" --port "$port" --spec mtp >"$work/out" 2>"$work/err" &&
  fail "serve started with --spec mtp on a model without a NextN block"
# One error line (after serve's version banner), naming the file.
[[ $(grep -c '^prosgrow serve:' "$work/err") -eq 1 ]] || fail "error: $(cat "$work/err")"
grep -q -- "^prosgrow serve: --spec mtp: $work/plain.gguf has no NextN" "$work/err" || fail "error: $(cat "$work/err")"
echo "spec_mtp_serve_check: ok"
