# shellcheck shell=bash
# spec_serve_lib.sh: what the speculative-decoding serve checks share
# (spec_draft_serve_check.sh, spec_mtp_serve_check.sh): start and stop a
# server on one model, the greedy and sampled completions they send, and the
# checks of a speculative server's answers. Source it after serve_lib.sh:
#
#   # shellcheck source=SCRIPTDIR/spec_serve_lib.sh
#   source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/spec_serve_lib.sh" || exit 2
#
# The check sets `bin` (the prosgrow binary), `work` (its temporary
# directory) and a `fail MESSAGE` function that exits non-zero.
#
# Functions:
#   spec_start MODEL [ARGS...]
#       `serve -m MODEL --port 0 --threads 2 ARGS`, log in $work/serve.log;
#       sets pid and port (fails the check if it does not become healthy).
#   spec_stop
#       stops the server spec_start started.
#   spec_complete OUT BODY
#       POSTs BODY to /v1/completions, the answer into OUT.
#   spec_expect_same PLAIN GOT [all-accepted]
#       GOT (a speculative server's answer to $spec_greedy) has the text and
#       log-probs of PLAIN (one without speculation) and drafted tokens that
#       are not synthetic; with all-accepted, every draft was accepted.
#   spec_expect_sampled DRAFTER
#       a sampled completion ($spec_sampled) gives its 24 tokens, and
#       /metrics counts drafts under drafter="DRAFTER"; sets metrics.

# shellcheck disable=SC2034
spec_greedy='{"prompt":[100,101,102,103,104,105,106,107],"max_tokens":40,"temperature":0,"ignore_eos":true,"logprobs":1}'
spec_sampled='{"prompt":[100,101,102,103],"max_tokens":24,"temperature":1,"top_k":8,"seed":5,"ignore_eos":true}'

# shellcheck disable=SC2154  # bin, work: set by the sourcing check
spec_start() {
  local model=$1
  shift
  serve_lib_serve "$work/serve.log" "$bin" serve -m "$model" --port 0 --threads 2 "$@" ||
    fail "serve did not become healthy"
  pid=$SERVE_LIB_PID port=$SERVE_LIB_PORT
}

spec_stop() { serve_lib_stop "$pid"; }

spec_complete() {
  curl -sf -o "$1" -H 'Content-Type: application/json' -d "$2" "http://127.0.0.1:$port/v1/completions"
}

spec_expect_same() {
  python3 - "$1" "$2" "${3:-}" <<'PY' || fail "$(basename "$2" .json): $(cat "$2")"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["choices"][0]["text"] == b["choices"][0]["text"], (a["choices"][0]["text"], b["choices"][0]["text"])
assert a["choices"][0]["logprobs"] == b["choices"][0]["logprobs"]
u = b["usage"]["speculative"]
assert u["drafted_tokens"] > 0 and u["synthetic_acceptance"] is False, u
if sys.argv[3] == "all-accepted":
    assert u["accepted_tokens"] == u["drafted_tokens"], u
PY
}

spec_expect_sampled() {
  spec_complete "$work/sampled.json" "$spec_sampled" || fail "sampled completion with drafter $1"
  grep -q '"completion_tokens":24' "$work/sampled.json" || fail "sampled: $(cat "$work/sampled.json")"
  metrics=$(curl -sf "http://127.0.0.1:$port/metrics") || fail "/metrics"
  grep -q "prosgrow_spec_draft_tokens_total{drafter=\"$1\"} [1-9]" <<<"$metrics" || fail "no $1 counters"
}
