#!/usr/bin/env bash
# Issue 14: the KV cache's what-if estimate against a measurement. Replays the
# kv-cache-tester traces (../shared/data/traces/kv-cache-tester) through the
# cache with bench/kv_whatif_bench: once with the base tiers, where the ghost
# index estimates the hit ratio with 1 GiB more host, and once with that
# 1 GiB added; fails when the two differ by more than 5 percentage points.
# The layout is Qwen2.5-1.5B's KV (28 KiB per token), the trace lengths are
# halved, and the base tiers (640 MiB device, 256 MiB host) are sized so that
# +1 GiB of host matters (measured: 3.5% -> 14.5% reuse). About a minute and
# 1.6 GiB of RAM.
#
# usage: scripts/whatif_check.sh [BUILD_DIR] [TRACE_DIR]
# Exit: 0 within the bar, 1 outside it, 2 setup error, 77 traces absent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
traces=${2:-$root/../shared/data/traces/kv-cache-tester}
bin=$build/bench/kv_whatif_bench
if [[ ! -d "$traces" ]]; then
  echo "SKIP: needs ../shared/data/traces/kv-cache-tester: $traces absent"
  exit 77
fi
if [[ ! -x "$bin" ]]; then
  echo "missing $bin: ninja -C $build kv_whatif_bench" >&2
  exit 2
fi
exec "$bin" --trace "$traces" --length-scale 0.5 --device-mem 640MiB --host-mem 256MiB --extra 1GiB \
  --concurrency 8 --eviction lru --max-pp 5
