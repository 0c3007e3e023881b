#!/usr/bin/env bash
# Builds the GGUF reader fuzzer with clang (ASan + UBSan + libFuzzer) and runs
# it for SECONDS (default 600) on one core.
#
#   fuzz/run_gguf_fuzz.sh [SECONDS]
#
# Env: BUILD_DIR (default build-fuzz), CC/CXX (default clang/clang++).
# New inputs go to $BUILD_DIR/fuzz-corpus/gguf; fuzz/corpus/gguf (the seeds)
# is only read. A crash leaves crash-* in $BUILD_DIR and exits non-zero.
set -euo pipefail
seconds="${1:-600}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-fuzz}"
export CC="${CC:-clang}" CXX="${CXX:-clang++}"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPROSGROW_FUZZ=ON -DPROSGROW_SANITIZE=ON -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link >/dev/null
ninja -C "$build" -j"${JOBS:-1}" gguf_reader_fuzz make_gguf_corpus

work="$build/fuzz-corpus/gguf"
mkdir -p "$work"
# Refresh the seeds from the current code too (valid + corrupt variants).
"$build/fuzz/make_gguf_corpus" "$work"

cd "$build"
exec "$build/fuzz/gguf_reader_fuzz" "$work" "$root/fuzz/corpus/gguf" \
  -dict="$root/fuzz/gguf.dict" -max_total_time="$seconds" -max_len=4096 \
  -malloc_limit_mb=512 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
