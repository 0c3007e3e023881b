#!/usr/bin/env bash
# The CI mechanics check of issue 6: serve one fixture model with
# --policy baseline and with --policy optimized, run `prosgrow eval` against
# each (short and long prompts, greedy), and require 0 flips and a 100%
# identical-output rate. Accuracy is meaningless with random weights.
#
# usage: eval_fixture_check.sh PROSGROW_BIN MODEL.gguf DATASET.jsonl WORKDIR [LIMIT] [MAX_TOKENS]
# Exit: 0 pass, 1 mechanics differ (flips or non-identical outputs), 2 usage
# or setup error; a failing `prosgrow eval` step exits with its own code.
set -euo pipefail

if [[ $# -lt 4 ]]; then
  echo "usage: $0 PROSGROW_BIN MODEL.gguf DATASET.jsonl WORKDIR [LIMIT] [MAX_TOKENS]" >&2
  exit 2
fi
bin=$1 model=$2 dataset=$3 work=$4 limit=${5:-16} max_tokens=${6:-24}
mkdir -p "$work"

# shellcheck source=../../tests/serve_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../../tests/serve_lib.sh" || exit 2

# serve POLICY: starts a server on a port it picks itself (--port 0, read
# back from its log, so no other process can take it first); sets $port once
# /health answers.
serve() {
  local policy=$1
  serve_lib_serve "$work/serve-$policy.log" "$bin" serve -m "$model" --policy "$policy" --port 0 || exit 2
  port=$SERVE_LIB_PORT
}

serve baseline
base_port=$port
serve optimized
opt_port=$port
common=(--dataset "$dataset" --limit "$limit" --prompts both --max-tokens "$max_tokens" --concurrency 1)
"$bin" eval --url "http://127.0.0.1:$base_port" "${common[@]}" --out "$work/base"
"$bin" eval --url "http://127.0.0.1:$opt_port" "${common[@]}" --out "$work/opt"
"$bin" eval compare "$work/base/results.json" "$work/opt/results.json" --fail-on-flip --out "$work/compare.md"

for style in short long; do
  if ! grep -q "^## $style prompts" "$work/compare.md"; then
    echo "no $style prompts in the comparison" >&2
    exit 1
  fi
done
if [[ $(grep -c "identical outputs: 100.0%" "$work/compare.md") -ne 2 ]]; then
  echo "identical-output rate below 100%:" >&2
  grep "identical outputs" "$work/compare.md" >&2
  exit 1
fi
if [[ $(grep -c "flips right -> wrong: 0 \[none\]" "$work/compare.md") -ne 2 ||
      $(grep -c "flips wrong -> right: 0 \[none\]" "$work/compare.md") -ne 2 ]]; then
  echo "answers flipped:" >&2
  grep "flips" "$work/compare.md" >&2
  exit 1
fi
echo "eval fixture check passed: 0 flips, 100% identical outputs"
