#!/usr/bin/env bash
# Issue 22: `prosgrow bench-model --device cuda` runs its tests through the
# device executor (in the emulated build: the GPU kernels on the CPU
# emulator, its KV arena in emulated device memory): a short run (-p 8 -n 2)
# on a fixture model reports pp8 and tg2 at a positive rate; `--device cuda:N`
# past the machine's devices, or any --device cuda in a build without a GPU
# backend (MODE refused), fails with one line and a non-zero exit.
#
# usage: device_bench_model_check.sh PROSGROW_BIN MODELS_DIR device|refused
# Exit 77 (Skipped) when the fixture model is absent.
set -uo pipefail
# shellcheck source=SCRIPTDIR/device_prefill_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/device_prefill_lib.sh" || exit 2
bin=$1 models=$2 mode=$3
model=$models/tiny-llama-gpt2.gguf
[[ -f $model ]] || { echo "SKIP: needs ../shared/fixtures/models/tiny-llama-gpt2.gguf (absent)"; exit 77; }
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

refused() {  # DEVICE: bench-model must fail with exactly one line on stderr
  if "$bin" bench-model -m "$model" -p 8 -n 2 -r 1 --tests pp --device "$1" >"$work/out" 2>"$work/err"; then
    fail "bench-model --device $1 succeeded: $(cat "$work/out")"
  fi
  [[ $(wc -l <"$work/err") -eq 1 ]] || fail "bench-model --device $1: not one line: $(cat "$work/err")"
  grep -q -- "--device $1" "$work/err" || fail "bench-model --device $1: the line does not name the flag: $(cat "$work/err")"
  echo "ok: --device $1 refused: $(cat "$work/err")"
}

# --device-prefill bf16 without --device cuda: one line naming the flag, in every build.
device_prefill_refused_on_cpu "$bin" "$model" bf16 "$work" || exit 1
if [[ $mode == refused ]]; then
  refused cuda
  exit 0
fi
refused cuda:7
# pp40 with --device-prefill bf16: a 40-token step, so its dense products run as bf16 GEMMs.
device_prefill_pp40 "$bin" "$model" bf16 "$work" || exit 1
"$bin" bench-model -m "$model" -p 8 -n 2 -r 1 --tests pp,tg --threads 2 --json --device cuda >"$work/out" 2>"$work/err" ||
  fail "bench-model --device cuda: $(cat "$work/err")"
python3 - "$work/out" <<'PY' || fail "bench-model --device cuda: bad report: $(cat "$work/out")"
import json, sys
r = {x["test"]: x for x in json.load(open(sys.argv[1]))["results"]}
assert set(r) == {"pp8", "tg2"}, r
for name, x in r.items():
    assert x["tokens_per_s"] > 0, (name, x)
print("ok: bench-model --device cuda:", {k: round(v["tokens_per_s"], 2) for k, v in r.items()})
PY
