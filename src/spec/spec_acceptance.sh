#!/bin/bash
# Measured drafter acceptance on a workload whose text repeats: `prosgrow
# serve --spec SPEC`, 8 prompts sharing one template, each sent twice
# (greedy, 64 tokens, ignore_eos), then the per-drafter counters of /metrics.
# Usage: spec_acceptance.sh PROSGROW MODEL [SPEC=suffix,ngram] [PORT=18093]
set -euo pipefail
BIN=$1
MODEL=$2
SPEC=${3:-suffix,ngram}
PORT=${4:-18093}
LOG=$(mktemp)
"$BIN" serve -m "$MODEL" --spec "$SPEC" --port "$PORT" --threads 2 >"$LOG" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; rm -f "$LOG"' EXIT
for _ in $(seq 100); do curl -sf "localhost:$PORT/health" >/dev/null && break; sleep 0.2; done
for rep in 1 2; do
  for i in $(seq 8); do
    curl -sf "localhost:$PORT/v1/completions" -H 'Content-Type: application/json' \
      -d "{\"prompt\": \"Request $i: summarise the report on item $i and list what changed since the last review of item $i.\", \"max_tokens\": 64, \"temperature\": 0, \"ignore_eos\": true}" >/dev/null
  done
done
curl -sf "localhost:$PORT/metrics" | grep -E '^prosgrow_spec_'
