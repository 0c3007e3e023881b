#!/usr/bin/env bash
# Issue 15, the draft model on a real server: `serve --spec draft
# --spec-draft-model FILE` answers greedy completions with exactly the text of
# a server without speculation (the model as its own draft, and another
# seed's model), reports the draft model's work in usage.speculative and
# /metrics (drafter="draft"), serves sampled requests, and refuses a draft
# it cannot load with one line and a non-zero exit.
#
# usage: spec_draft_serve_check.sh PROSGROW_BIN
set -uo pipefail
# shellcheck source=SCRIPTDIR/serve_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/serve_lib.sh" || exit 2
bin=$1
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
"$bin" make-model --shape tiny --type f16 -o "$work/target.gguf" >/dev/null 2>&1 || fail "make-model"
"$bin" make-model --shape tiny --type f16 --seed 3 -o "$work/other.gguf" >/dev/null 2>&1 || fail "make-model"
start() {
  serve_lib_serve "$work/serve.log" "$bin" serve -m "$work/target.gguf" --port 0 --threads 2 "$@" ||
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

for draft in target other; do
  start --spec draft,ngram --spec-draft-max 4 --spec-draft-model "$work/$draft.gguf"
  complete "$work/$draft.json" "$greedy" || fail "completion with the $draft draft"
  python3 - "$work/plain.json" "$work/$draft.json" "$draft" <<'PY' || fail "$draft draft: $(cat "$work/$draft.json")"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["choices"][0]["text"] == b["choices"][0]["text"], (a["choices"][0]["text"], b["choices"][0]["text"])
assert a["choices"][0]["logprobs"] == b["choices"][0]["logprobs"]
u = b["usage"]["speculative"]
assert u["drafted_tokens"] > 0 and u["synthetic_acceptance"] is False, u
if sys.argv[3] == "target":
    assert u["accepted_tokens"] == u["drafted_tokens"], u
PY
  complete "$work/sampled.json" "$sampled" || fail "sampled completion with the $draft draft"
  grep -q '"completion_tokens":24' "$work/sampled.json" || fail "sampled: $(cat "$work/sampled.json")"
  metrics=$(curl -sf "http://127.0.0.1:$port/metrics") || fail "/metrics"
  grep -q 'prosgrow_spec_draft_tokens_total{drafter="draft"} [1-9]' <<<"$metrics" || fail "no draft counters"
  grep -q '^prosgrow_spec_draft_model_no_room_total 0' <<<"$metrics" || fail "no_room metric"
  grep -q 'draft model .*device KV split' "$work/serve.log" || fail "the log does not show the KV split"
  stop
done

port=$(serve_lib_free_port)
"$bin" serve -m "$work/target.gguf" --port "$port" --spec draft --spec-draft-model "$work/missing.gguf" \
  >"$work/out" 2>"$work/err" && fail "serve started with a missing draft model"
grep -q "spec-draft-model $work/missing.gguf" "$work/err" || fail "error: $(cat "$work/err")"
echo "spec_draft_serve_check: ok"
