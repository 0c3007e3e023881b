#!/usr/bin/env bash
# Issue 22 ("Emulated end to end"): `prosgrow serve --device cuda` runs the
# forward pass on the device executor (built -DPROSGROW_GPU=emulated: the GPU
# kernels on the CPU emulator, the KV device tier in emulated device memory)
# and answers the fixture models' prompts with the same greedy tokens as
# `serve --device cpu`; each token's logprob within LOGPROB_TOL of the CPU's
# (the arithmetics differ: the CPU rounds activations before its products;
# the device rounds F32 matrices to BF16). Measured: 5.6e-3 (tiny-llama-gpt2),
# 5.3e-3 (tiny-qwen3-spm, tiny-qwen3moe-gpt2), 0.011 (tiny-glm4moe-spm: F32
# router weights).
# DEVICE_PREFILL=bf16 runs the device with --device-prefill bf16 (the
# prefill's dense products as bf16 GEMMs: the 40-token prompt takes that path)
# and checks that the serve log names its arithmetic (+bf16gemm).
#
# DEVICE_PREFILL=fp8 likewise (+fp8gemm). EXPECT_LOG / REJECT_LOG, when set,
# are extended regexes the device run's serve log must / must not match.
# CPU_ATTN, when set, is the CPU run's --attn (precise: f32 activations, the
# device's arithmetic). SERVE_FLAGS, when set, go to both runs (word-split).
#
# usage: device_serve_check.sh PROSGROW_BIN MODELS_DIR [MODEL...] (a MODEL may be a directory)
# Exit 77 (Skipped) when the fixture models are absent.
set -uo pipefail
# shellcheck source=SCRIPTDIR/serve_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/serve_lib.sh" || exit 2
bin=$1 models=$2
shift 2
names=("$@")
((${#names[@]})) || names=(tiny-llama-gpt2.gguf tiny-qwen3-spm.gguf)
for n in "${names[@]}"; do
  [[ -e "$models/$n" ]] || { echo "SKIP: needs ../shared/fixtures/models/$n (absent)"; exit 77; }
done
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
LOGPROB_TOL=${LOGPROB_TOL:-0.01}
DEVICE_PREFILL=${DEVICE_PREFILL:-f32}
# The emulator runs each kernel thread as a fiber: a step of a 50k-vocabulary
# model takes seconds, so the prompts are short and the answers 4 tokens.
prompts=('{"prompt":"The capital of France is","max_tokens":4,"temperature":0,"ignore_eos":true,"logprobs":1}'
         '{"prompt":[11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29],"max_tokens":3,"temperature":0,"ignore_eos":true,"logprobs":1}'
         "{\"prompt\":[$(seq -s, 100 139)],\"max_tokens\":2,\"temperature\":0,\"ignore_eos\":true,\"logprobs\":1}")

answers() {  # MODEL DEVICE OUT: serve, ask every prompt (twice: the second time from the prefix cache), stop
  local model=$1 device=$2 out=$3 i=0 extra=()
  read -ra extra <<<"${SERVE_FLAGS:-}"
  [[ $device == cuda ]] && extra+=(--device-prefill "$DEVICE_PREFILL")
  [[ $device == cpu && -n ${CPU_ATTN:-} ]] && extra+=(--attn "$CPU_ATTN")
  serve_lib_serve "$work/serve-$device.log" "$bin" serve -m "$model" --port 0 --threads 2 --device "$device" \
    "${extra[@]}" --kv-device-mem 16MiB --ctx-size 256 || fail "serve --device $device did not become healthy"
  : >"$out"
  for p in "${prompts[@]}" "${prompts[@]}"; do
    curl -sf -H 'Content-Type: application/json' -d "$p" "$SERVE_LIB_URL/v1/completions" >"$work/r" ||
      fail "--device $device: completion $i failed: $(cat "$work/r")"
    cat "$work/r" >>"$out" && echo >>"$out"
    i=$((i + 1))
  done
  serve_lib_stop "$SERVE_LIB_PID" || fail "serve --device $device exited on its own"
}

for n in "${names[@]}"; do
  answers "$models/$n" cpu "$work/cpu.jsonl"
  answers "$models/$n" cuda "$work/cuda.jsonl"
  grep -q 'device executor: .*arithmetic cuda' "$work/serve-cuda.log" ||
    fail "$n: serve --device cuda did not run the device executor: $(tail -5 "$work/serve-cuda.log")"
  if [[ $DEVICE_PREFILL != f32 ]]; then
    grep -q "arithmetic cuda[-a-z0-9]*+${DEVICE_PREFILL}gemm" "$work/serve-cuda.log" ||
      fail "$n: --device-prefill $DEVICE_PREFILL did not reach the device executor: $(tail -5 "$work/serve-cuda.log")"
  fi
  if [[ -n ${EXPECT_LOG:-} ]]; then
    grep -Eq "$EXPECT_LOG" "$work/serve-cuda.log" || fail "$n: the serve log does not match '$EXPECT_LOG'"
  fi
  if [[ -n ${REJECT_LOG:-} ]] && grep -E "$REJECT_LOG" "$work/serve-cuda.log"; then
    fail "$n: the serve log matches '$REJECT_LOG'"
  fi
  python3 - "$work/cpu.jsonl" "$work/cuda.jsonl" "$LOGPROB_TOL" "$n" <<'PY' || fail "$n: the device's answers differ"
import json, sys
cpu = [json.loads(l) for l in open(sys.argv[1])]
dev = [json.loads(l) for l in open(sys.argv[2])]
tol, name = float(sys.argv[3]), sys.argv[4]
worst = 0.0
for i, (a, b) in enumerate(zip(cpu, dev, strict=True)):
    ca, cb = a["choices"][0], b["choices"][0]
    ta, tb = ca["logprobs"]["tokens"], cb["logprobs"]["tokens"]
    assert ta == tb and ca["text"] == cb["text"], f"prompt {i}: cpu {ta!r} device {tb!r}"
    for x, y in zip(ca["logprobs"]["token_logprobs"], cb["logprobs"]["token_logprobs"]):
        worst = max(worst, abs(x - y))
    assert worst <= tol, f"prompt {i}: logprob differs by {worst} > {tol}"
print(f"{name}: {len(cpu)} answers, same greedy tokens; max |logprob cpu - device| = {worst:.2e}")
PY
done
echo "device_serve_check: ok"
