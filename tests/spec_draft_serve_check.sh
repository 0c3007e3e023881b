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
# shellcheck source=SCRIPTDIR/spec_serve_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/spec_serve_lib.sh" || exit 2
bin=$1
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
"$bin" make-model --shape tiny --type f16 -o "$work/target.gguf" >/dev/null 2>&1 || fail "make-model"
"$bin" make-model --shape tiny --type f16 --seed 3 -o "$work/other.gguf" >/dev/null 2>&1 || fail "make-model"
spec_start "$work/target.gguf"
spec_complete "$work/plain.json" "$spec_greedy" || fail "completion without speculation"
spec_stop

for draft in target other; do
  spec_start "$work/target.gguf" --spec draft,ngram --spec-draft-max 4 --spec-draft-model "$work/$draft.gguf"
  spec_complete "$work/$draft.json" "$spec_greedy" || fail "completion with the $draft draft"
  if [[ $draft == target ]]; then
    spec_expect_same "$work/plain.json" "$work/$draft.json" all-accepted
  else
    spec_expect_same "$work/plain.json" "$work/$draft.json"
  fi
  spec_expect_sampled draft
  grep -q '^prosgrow_spec_draft_model_no_room_total 0' <<<"$metrics" || fail "no_room metric"
  grep -q 'draft model .*device KV split' "$work/serve.log" || fail "the log does not show the KV split"
  spec_stop
done

port=$(serve_lib_free_port)
"$bin" serve -m "$work/target.gguf" --port "$port" --spec draft --spec-draft-model "$work/missing.gguf" \
  >"$work/out" 2>"$work/err" && fail "serve started with a missing draft model"
grep -q "spec-draft-model $work/missing.gguf" "$work/err" || fail "error: $(cat "$work/err")"
echo "spec_draft_serve_check: ok"
