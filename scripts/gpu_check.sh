#!/usr/bin/env bash
# The device check (issue 22, item 6): one run on a GPU host (the H200 one;
# no network, not Debian, ~15 minutes of device time), finishing in under 8
# minutes, every result in one folder.
#
#   GPU_CHECK_OUT=results/h200 scripts/gpu_check.sh       # on the GPU host
#   GPU_CHECK_DRY=1 GPU_CHECK_OUT=/tmp/gc scripts/gpu_check.sh   # here: everything but the GPU steps
#
# Variables:
#   GPU_CHECK_OUT      results folder (default gpu_check_out); one file per step,
#                      summary.txt lists each step's verdict and seconds
#   GPU_CHECK_BIN      folder with prebuilt gpu_tests, gpu_copy_bench, prosgrow
#                      (built here by nvcc: `cmake -DPROSGROW_GPU=cuda`; default: build
#                      them into build-gpu-check, which needs CMake, ninja, nvcc and the
#                      Debian libraries' equivalents on the host)
#   GPU_CHECK_DRY=1    no GPU: the binaries are the emulated build's (build-emu, or
#                      GPU_CHECK_BIN), the models tiny, the runs short (the emulator
#                      takes seconds per step); checks the script, not the device
#
# Steps: build (or bring) the CUDA binaries; op tests on the GPU (gpu_tests,
# JSON report); a dense and an MoE model with `prosgrow make-model`; greedy
# tokens with --device cuda against --device cpu; bench-model pp512/tg128 on
# both devices (and pp512 with --device-prefill bf16: cuBLAS); an FP8 directory
# (make-model --hf-dtype fp8) greedy against the CPU and pp512 with
# --device-prefill fp8 (cuBLASLt); pinned 3 MB block copies H2D, D2H and both at once
# (gpu_copy_bench); a short baseline-vs-optimized `prosgrow bench`.
# A step that cannot run (e.g. --device cuda before the device executor
# exists) is recorded as "unavailable" with the one-line reason, never faked.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${GPU_CHECK_OUT:-gpu_check_out}
DRY=${GPU_CHECK_DRY:-0}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
JOBS=$(nproc)
deadline=$((SECONDS + 8 * 60))
# The sizes: the GPU host's, or the dry run's (tiny models, a few tokens).
if [[ $DRY == 1 ]]; then
  DENSE_SHAPE=tiny GEN_TOKENS=4 PP=8 TG=2 BENCH_S=20 deadline=$((SECONDS + 30 * 60))
else
  DENSE_SHAPE=0.5b GEN_TOKENS=32 PP=512 TG=128 BENCH_S=60
fi

# step NAME CMD...: runs CMD with its output in $OUT/NAME.log and records
# ok / FAIL / unavailable (rc 3) and the seconds taken. Skips once the
# 8-minute budget is spent.
step() {
  local name=$1
  shift
  if ((SECONDS >= deadline)); then
    echo "$name: skipped (8-minute budget spent)" | tee -a "$SUMMARY"
    return 0
  fi
  local t0=$SECONDS rc
  "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  local verdict=ok
  ((rc == 3)) && verdict="unavailable: $(tail -n 1 "$OUT/$name.log")"
  ((rc != 0 && rc != 3)) && verdict="FAIL (rc $rc)"
  echo "$name: $verdict ($((SECONDS - t0)) s)" | tee -a "$SUMMARY"
}

if [[ -n ${GPU_CHECK_BIN:-} ]]; then
  BIN=$GPU_CHECK_BIN
  build() { ls -lL "$BIN/gpu_tests" "$BIN/gpu_copy_bench" "$BIN/prosgrow"; }
elif [[ $DRY == 1 ]]; then
  BIN=build-emu
  build() {
    cmake -S . -B "$BIN" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROSGROW_GPU=emulated >/dev/null &&
      ninja -C "$BIN" -j"$JOBS" gpu_tests gpu_copy_bench prosgrow
  }
else
  BIN=build-gpu-check
  build() {
    cmake -S . -B "$BIN" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROSGROW_GPU=cuda >/dev/null &&
      ninja -C "$BIN" -j"$JOBS" gpu_tests gpu_copy_bench prosgrow
  }
fi
find_bin() {  # gpu_tests lives in src/gpu of a build tree, flat in GPU_CHECK_BIN
  if [[ -x $BIN/$1 ]]; then echo "$BIN/$1"; else echo "$BIN/src/gpu/$1"; fi
}

# Runs prosgrow with --device cuda (stdout as is, stderr to the step's log);
# exit 3 (unavailable) when the binary refuses the device, so the summary
# tells "not built yet" from "broken".
on_device() {
  local err rc
  err=$(mktemp) || return 2
  "$BIN/prosgrow" "$@" 2>"$err"
  rc=$?
  cat "$err" >&2
  if ((rc != 0)) && grep -q "no device executor" "$err"; then rc=3; fi
  rm -f "$err"
  return $rc
}

greedy() {  # greedy tokens, GPU against CPU, on one model
  local model=$1 cpu gpu rc
  cpu=$("$BIN/prosgrow" generate -m "$model" -p "The capital of France is" -n "$GEN_TOKENS" --temp 0 --device cpu \
    2>/dev/null) || return 1
  echo "cpu: $cpu"
  gpu=$(on_device generate -m "$model" -p "The capital of France is" -n "$GEN_TOKENS" --temp 0 --device cuda)
  rc=$?
  echo "gpu: $gpu"
  ((rc != 0)) && return $rc
  if [[ $cpu != "$gpu" ]]; then
    echo "greedy tokens differ"
    return 1
  fi
  echo "greedy tokens agree"
}

bench_model() {  # pp/tg on both devices (pp512/tg128 on the GPU host); pp again with the bf16 GEMMs
  local model=$1
  "$BIN/prosgrow" bench-model -m "$model" -p "$PP" -n "$TG" -r 2 --tests pp,tg --json --device cpu || return 1
  on_device bench-model -m "$model" -p "$PP" -n "$TG" -r 2 --tests pp,tg --json --device cuda || return $?
  on_device bench-model -m "$model" -p "$PP" -r 2 --tests pp --json --device cuda --device-prefill bf16
}

# baseline vs optimized for BENCH_S s each, the device tier in GPU memory
# (optimized: also its default host tier, 4x the device's, in pinned memory;
# baseline refuses a host tier)
short_bench() {
  on_device generate -m "$OUT/dense.gguf" -p "hi" -n 1 --temp 0 --device cuda || return $?
  local policy port pid
  for policy in baseline optimized; do
    port=$((18600 + RANDOM % 1000))
    "$BIN/prosgrow" serve -m "$OUT/dense.gguf" --device cuda --policy "$policy" --kv-device-mem 256MiB \
      --port "$port" >"$OUT/serve_$policy.log" 2>&1 &
    pid=$!
    for _ in $(seq 120); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.5; done
    "$BIN/prosgrow" bench --url "http://127.0.0.1:$port" --workload agentic --concurrency 4 --duration "$BENCH_S" \
      --seed 1 --ctx-max 4096 --warmup 0 --label "$policy" --out "$OUT/bench_$policy"
    kill "$pid"
    wait "$pid"
  done
  "$BIN/prosgrow" bench compare "$OUT/bench_baseline/run.json" "$OUT/bench_optimized/run.json"
}

step build build
step op_tests "$(find_bin gpu_tests)" --gtest_output="json:$OUT/op_tests.json"
step make_dense "$BIN/prosgrow" make-model --shape "$DENSE_SHAPE" --type q8_0 --seed 1 -o "$OUT/dense.gguf"
step make_moe "$BIN/prosgrow" make-model --shape tiny-moe --arch qwen3moe --type q8_0 --seed 2 -o "$OUT/moe.gguf"
step make_fp8 "$BIN/prosgrow" make-model --shape "$DENSE_SHAPE" --type bf16 --seed 3 -o "$OUT/fp8src.gguf" \
  --hf-dir "$OUT/fp8" --hf-dtype fp8
step greedy_dense greedy "$OUT/dense.gguf"
step greedy_moe greedy "$OUT/moe.gguf"
step greedy_fp8 greedy "$OUT/fp8"
step bench_fp8 on_device bench-model -m "$OUT/fp8" -p "$PP" -r 2 --tests pp --json --device cuda --device-prefill fp8
step bench_model bench_model "$OUT/dense.gguf"
step copy_3mb "$(find_bin gpu_copy_bench)" --block-bytes $((3 << 20)) --blocks 64 --reps 5
step short_bench short_bench
rm -rf "$OUT/dense.gguf" "$OUT/moe.gguf" "$OUT/fp8src.gguf" "$OUT/fp8"
echo "gpu_check: results in $OUT (summary.txt)"
