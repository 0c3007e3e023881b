#!/usr/bin/env bash
# Builds the request-path fuzzer with clang (ASan + UBSan + libFuzzer) and
# runs it for SECONDS (default 600) on one core, at low priority.
#
#   fuzz/run_request_fuzz.sh [SECONDS]
#
# Env: BUILD_DIR (default build-fuzz), WORK (default /tmp/fuzz-request-work),
# CC/CXX (default clang/clang++). New inputs go to $WORK (outside the tree);
# fuzz/corpus/request (the seeds) is only read. A failure leaves crash-* /
# leak-* / timeout-* / oom-* in $BUILD_DIR/fuzz-artifacts and exits non-zero.
# To fold new inputs into the seeds, minimize first:
#   build-fuzz/fuzz/request_path_fuzz -merge=1 -max_len=8192 NEW_DIR fuzz/corpus/request $WORK
set -euo pipefail
seconds="${1:-600}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-fuzz}"
work="${WORK:-/tmp/fuzz-request-work}"
export CC="${CC:-clang}" CXX="${CXX:-clang++}"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPROSGROW_FUZZ=ON -DPROSGROW_SANITIZE=ON -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link >/dev/null
ninja -C "$build" -j"${JOBS:-1}" request_path_fuzz

mkdir -p "$work" "$build/fuzz-artifacts"
exec nice -n 10 "$build/fuzz/request_path_fuzz" "$work" "$root/fuzz/corpus/request" \
  -dict="$root/fuzz/request.dict" -max_len=8192 -max_total_time="$seconds" \
  -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$build/fuzz-artifacts/" -print_final_stats=1
