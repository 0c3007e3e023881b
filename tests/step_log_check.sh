#!/usr/bin/env bash
# The debug step log (PROSGROW_LOG=debug: one "step at T s took D s, ..." line
# per forward step, Engine::RunForward) read back by scripts/step_spans.py
# against a real `prosgrow bench` run: every completed request is matched to
# the steps that prefilled its uncached tokens, and no request's span (its
# first step to the step of its first token) is longer than its TTFT.
#
# usage: step_log_check.sh PROSGROW_BIN SOURCE_DIR
set -uo pipefail
# shellcheck source=SCRIPTDIR/serve_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/serve_lib.sh" || exit 2
bin=$1 src=$2
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
serve_lib_tail_on_failure "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin" make-model --shape tiny --vocab builtin --type q8_0 --seed 3 --out "$work/tiny.gguf" >"$work/make-model.log" 2>&1 ||
  fail "make-model"
PROSGROW_LOG=debug serve_lib_serve "$work/serve.log" "$bin" serve -m "$work/tiny.gguf" --port 0 --threads 2 \
  --policy optimized --kv-device-mem 384KiB --kv-host-mem 4MiB || exit 2
"$bin" bench --url "$SERVE_LIB_URL" --workload agentic --concurrency 3 --max-requests 24 --warmup 0 --seed 7 \
  --ctx-max 1024 --turns 6 --tool-gap-s 0.05 --out-median 16 --no-progress --out "$work/run" >"$work/bench.log" 2>&1 ||
  fail "bench: $(tail -5 "$work/bench.log")"
serve_lib_stop "$SERVE_LIB_PID" || fail "serve exited before it was stopped"

grep -qE '^\[debug\] step at [0-9.]+ s took [0-9.]+ s, [0-9]+ tokens: ' "$work/serve.log" || fail "no step lines"
out=$(python3 "$src/scripts/step_spans.py" "$work/serve.log" "$work/run" 100) || fail "step_spans: $out"
completed=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['completed'])" "$work/run/run.json")
grep -q "^$completed of $completed requests matched" <<<"$out" || fail "not every request matched: $out"
# Columns: TTFT, new, cached, span, steps, shared, before. A span is inside its request's TTFT.
awk 'NR > 2 && $1 ~ /^[0-9.]+$/ && $4 > $1 + 0.001 { bad = 1; print "span longer than TTFT: " $0 } END { exit bad }' \
  <<<"$out" || fail "$out"

# A log without step lines is refused in one line, non-zero.
err=$(python3 "$src/scripts/step_spans.py" "$work/make-model.log" "$work/run" 2>&1); rc=$?
[[ $rc -ne 0 && $(wc -l <<<"$err") -eq 1 ]] || fail "a log without steps: rc $rc: $err"
echo "step_log_check: ok ($completed requests)"
