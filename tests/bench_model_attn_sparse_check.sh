#!/usr/bin/env bash
# bench-model --attn-sparse on a DSA model (the tiny-glm-dsa fixture): both
# modes run a prefill past the indexer's top-k and a decode and print their
# rows, and a value outside {sparse, dense-masked} exits non-zero with one line.
#
# usage: bench_model_attn_sparse_check.sh PROSGROW_BIN SHARED_DIR   (exit 77: no ../shared)
set -uo pipefail
bin=$1
model=$2/fixtures/models/tiny-glm-dsa-spm.gguf
[[ -f $model ]] || { echo "SKIP: needs ../shared/fixtures (absent)"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
for mode in sparse dense-masked; do
  out=$("$bin" bench-model -m "$model" -t 1 -r 1 -p 40 -n 4 --tests pp,tg --attn-sparse "$mode" --json 2>/dev/null) ||
    fail "--attn-sparse $mode exited non-zero"
  tests=$(python3 -c 'import json,sys; print(" ".join(r["test"] for r in json.loads(sys.stdin.read())["results"]))' <<<"$out") ||
    fail "--attn-sparse $mode: not JSON: $out"
  [[ $tests == "pp40 tg4" ]] || fail "--attn-sparse $mode: rows '$tests'"
done
if err=$("$bin" bench-model -m "$model" --attn-sparse dense 2>&1); then fail "--attn-sparse dense was accepted"; fi
[[ $(grep -c . <<<"$err") -eq 1 ]] || fail "error is not one line: $err"
grep -q -- "--attn-sparse" <<<"$err" || fail "error does not name the flag: $err"
echo "bench_model_attn_sparse_check: ok"
