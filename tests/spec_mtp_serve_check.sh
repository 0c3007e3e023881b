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
# shellcheck source=SCRIPTDIR/spec_serve_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/spec_serve_lib.sh" || exit 2
bin=$1
model=$2/fixtures/models/tiny-glm-dsa-spm.gguf
[[ -f $model ]] || { echo "SKIP: needs ../shared/fixtures (absent)"; exit 77; }
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
spec_start "$model"
spec_complete "$work/plain.json" "$spec_greedy" || fail "completion without speculation"
spec_stop

spec_start "$model" --spec mtp --spec-draft-max 4 --spec-policy always
spec_complete "$work/mtp.json" "$spec_greedy" || fail "completion with --spec mtp"
spec_expect_same "$work/plain.json" "$work/mtp.json"
spec_expect_sampled mtp
grep -q 'MTP drafter' "$work/serve.log" || fail "the log does not show the MTP drafter"
spec_stop

"$bin" make-model --shape tiny --type f16 -o "$work/plain.gguf" >/dev/null 2>&1 || fail "make-model"
port=$(serve_lib_free_port)
"$bin" serve -m "$work/plain.gguf" --port "$port" --spec mtp >"$work/out" 2>"$work/err" &&
  fail "serve started with --spec mtp on a model without a NextN block"
# One error line (after serve's version banner), naming the file.
[[ $(grep -c '^prosgrow serve:' "$work/err") -eq 1 ]] || fail "error: $(cat "$work/err")"
grep -q -- "^prosgrow serve: --spec mtp: $work/plain.gguf has no NextN" "$work/err" || fail "error: $(cat "$work/err")"
echo "spec_mtp_serve_check: ok"
