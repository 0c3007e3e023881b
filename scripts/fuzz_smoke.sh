#!/usr/bin/env bash
# The short fuzzing pass of the test suite (scripts/test.sh runs it last):
#   1. builds only the libFuzzer targets, with clang, ASan + UBSan, in their
#      own build dir (build-fuzz-smoke);
#   2. replays the seed corpora (fuzz/corpus/gguf, request, safetensors,
#      hf_config, tokenizer_json; regression-* inputs included): each input
#      must pass;
#   3. fuzzes the request path for FUZZ_SECONDS (default 60) from its seeds,
#      then the safetensors, config.json and tokenizer.json readers for
#      HF_FUZZ_SECONDS (default 10) each.
# Any crash, sanitizer report, leak, timeout or OOM fails the script; the
# failing input is left in $BUILD_DIR/fuzz-artifacts/.
#
#   scripts/fuzz_smoke.sh
#
# Env: BUILD_DIR (default build-fuzz-smoke), FUZZ_SECONDS (default 60; 0 =
# replay only), FUZZ_SEED (default 1: the test suite's pass is reproducible —
# the same mutations in the same order on every run; 0 = a random seed, for
# hunting, see docs/fuzzing.md), JOBS (default nproc), CC/CXX (default
# clang/clang++).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-fuzz-smoke}"
seconds="${FUZZ_SECONDS:-60}"
seed="${FUZZ_SEED:-1}"
export CC="${CC:-clang}" CXX="${CXX:-clang++}"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only -fsanitize=fuzzer-no-link" \
  -DPROSGROW_FUZZ=ON -DPROSGROW_SANITIZE=ON >/dev/null
ninja -C "$build" -j"${JOBS:-$(nproc)}" gguf_reader_fuzz request_path_fuzz safetensors_fuzz hf_config_fuzz \
  tokenizer_json_fuzz

artifacts="$build/fuzz-artifacts"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$artifacts" "$work/request"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

replay() {  # replay TARGET CORPUS_DIR
  local n
  n=$(find "$2" -type f | wc -l)
  echo "fuzz smoke: replaying $n inputs of $2 through $1"
  find "$2" -type f -print0 | xargs -0 "$build/fuzz/$1" -rss_limit_mb=2048 -timeout=30 \
    -artifact_prefix="$artifacts/" >"$work/$1.replay.log" 2>&1 ||
    { tail -n 60 "$work/$1.replay.log"; echo "fuzz smoke: $1 failed on a seed input" >&2; exit 1; }
}
replay gguf_reader_fuzz "$root/fuzz/corpus/gguf"
replay request_path_fuzz "$root/fuzz/corpus/request"
replay safetensors_fuzz "$root/fuzz/corpus/safetensors"
replay hf_config_fuzz "$root/fuzz/corpus/hf_config"
replay tokenizer_json_fuzz "$root/fuzz/corpus/tokenizer_json"

if [ "$seconds" -gt 0 ]; then
  echo "fuzz smoke: fuzzing request_path_fuzz for ${seconds}s from seed $seed"
  (cd "$work" && "$build/fuzz/request_path_fuzz" "$work/request" "$root/fuzz/corpus/request" \
    -dict="$root/fuzz/request.dict" -max_len=8192 -max_total_time="$seconds" -seed="$seed" -rss_limit_mb=2048 \
    -timeout=10 -artifact_prefix="$artifacts/" -print_final_stats=1 >"$work/fuzz.log" 2>&1) ||
    { tail -n 80 "$work/fuzz.log"; echo "fuzz smoke: request_path_fuzz found a failure (input in $artifacts)" >&2; exit 1; }
  grep -E '^#[0-9]+[[:space:]]+DONE|stat::(number_of_executed_units|average_exec_per_sec)' "$work/fuzz.log" || true
fi
# The Hugging Face readers: a shorter run each from their seeds.
hf_seconds="${HF_FUZZ_SECONDS:-10}"
if [ "$seconds" -gt 0 ] && [ "$hf_seconds" -gt 0 ]; then
  for t in safetensors_fuzz:safetensors hf_config_fuzz:hf_config tokenizer_json_fuzz:tokenizer_json; do
    target="${t%%:*}" corpus="${t#*:}"
    mkdir -p "$work/$corpus"
    echo "fuzz smoke: fuzzing $target for ${hf_seconds}s from seed $seed"
    (cd "$work" && "$build/fuzz/$target" "$work/$corpus" "$root/fuzz/corpus/$corpus" -max_len=4096 \
      -max_total_time="$hf_seconds" -seed="$seed" -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$artifacts/" \
      >"$work/$target.log" 2>&1) ||
      { tail -n 80 "$work/$target.log"; echo "fuzz smoke: $target found a failure (input in $artifacts)" >&2; exit 1; }
  done
fi
echo "fuzz smoke: ok"
