#!/usr/bin/env bash
# The agentic multi-turn workload on one GGUF file: prosgrow serve (optimized
# policy) against llama.cpp's llama-server, with the same KV cells on both.
#
#   scripts/agentic_vs_llamaserver.sh [-d SECONDS] [-c CONCURRENCY] [-m KV_DEVICE_MEM] [-t THREADS] [-s TIME_SCALE] MODEL
#
# Workload: the kv-cache-tester Claude Code traces ($TRACES, default
# ../shared/data/traces/kv-cache-tester), replayed as docs/benchmarks.md's
# "kv-cache-tester traces" section does (x0.1 length, x0.05 time, sessions cut
# at 4,000 tokens; -s sets the time scale: 0 drops the think times, so every
# session sends its next request as soon as the last is answered), CONCURRENCY sessions in flight (default 4) for SECONDS
# (default 180) per server, seed 1, no warm-up.
# prosgrow: `serve --policy optimized --kv-device-mem KV_DEVICE_MEM` (default
# 64MiB) with a 256 MiB host tier and a 2 GiB disk tier. Its device tier's
# capacity in tokens is read from its /metrics (prosgrow_kv_capacity_blocks of
# the device tier x 16-token pages); llama-server then gets that many cells:
# `-np CONCURRENCY -c CELLS` (its host-RAM prompt cache at its default), so
# both hold the same number of tokens of KV in the memory they compute from.
# Both servers use THREADS compute threads (default 2). Prints the
# `prosgrow bench compare` table (llama-server first, ratios x/llama-server).
#
# Environment: LLAMA_SERVER (default /work/llamacpp/build/bin/llama-server),
# LLAMA_SERVER_ARGS (more llama-server flags, e.g. --no-jinja),
# PROSGROW (default build/prosgrow), OUT (run folders; default a temp dir);
# PROSGROW_LOG=debug puts prosgrow's step log in OUT/prosgrow.log for
# scripts/step_spans.py OUT/prosgrow.log OUT.
set -euo pipefail
cd "$(dirname "$0")/.."

DUR=180 CONC=4 MEM=64MiB THREADS=2 TSCALE=0.05
usage() {
  sed -n '5p' "$0" | sed 's/^# *//' >&2
  exit 2
}
while getopts "d:c:m:t:s:h" opt; do
  case "$opt" in
    d) DUR=$OPTARG ;;
    c) CONC=$OPTARG ;;
    m) MEM=$OPTARG ;;
    t) THREADS=$OPTARG ;;
    s) TSCALE=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
MODEL=$1
LLAMA_SERVER=${LLAMA_SERVER:-/work/llamacpp/build/bin/llama-server}
PROSGROW=${PROSGROW:-build/prosgrow}
TRACES=${TRACES:-../shared/data/traces/kv-cache-tester}
OUT=${OUT:-$(mktemp -d /tmp/agentic_vs_llamaserver.XXXXXX)}
PORT_PG=18561 PORT_LC=18562
for bin in "$LLAMA_SERVER" "$PROSGROW"; do
  [ -x "$bin" ] || { echo "agentic_vs_llamaserver: $bin is not an executable (set LLAMA_SERVER / PROSGROW)" >&2; exit 2; }
done
[ -r "$MODEL" ] || { echo "agentic_vs_llamaserver: cannot read model $MODEL" >&2; exit 2; }
[ -d "$TRACES" ] || { echo "agentic_vs_llamaserver: no trace folder $TRACES (set TRACES)" >&2; exit 2; }
mkdir -p "$OUT"
echo "runs and server logs: $OUT" >&2

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

wait_ready() {  # url
  for _ in $(seq 1 600); do
    curl -sf "$1" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "agentic_vs_llamaserver: $1 never answered" >&2
  exit 1
}

run_bench() {  # port label
  "$PROSGROW" bench --url "http://127.0.0.1:$1" --concurrency "$CONC" --duration "$DUR" --seed 1 --warmup 0 \
    --workload "trace:kv-cache-tester:$TRACES" --length-scale 0.1 --time-scale "$TSCALE" --max-context 4000 \
    --label "$2" --out "$OUT/$2" >"$OUT/$2.bench.log" 2>&1
}

# prosgrow first: its device tier decides the cell count.
"$PROSGROW" serve -m "$MODEL" --port "$PORT_PG" --threads "$THREADS" --policy optimized --kv-device-mem "$MEM" \
  --kv-host-mem 256MiB --kv-disk-dir "$OUT/kv-disk" --kv-disk-size 2GiB >"$OUT/prosgrow.log" 2>&1 &
pids+=($!)
wait_ready "http://127.0.0.1:$PORT_PG/health"
blocks=$(curl -sf "http://127.0.0.1:$PORT_PG/metrics" |
  sed -n 's/^prosgrow_kv_capacity_blocks{[^}]*tier="device"[^}]*} \([0-9.e+]*\)$/\1/p' | head -1)
[ -n "$blocks" ] || { echo "agentic_vs_llamaserver: no device capacity in prosgrow's /metrics" >&2; exit 1; }
CELLS=$(python3 -c "print(int(float('$blocks')) * 16)")
echo "device tier: $blocks blocks = $CELLS tokens; llama-server gets -np $CONC -c $CELLS" >&2
run_bench "$PORT_PG" optimized
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true; pids=()

"$LLAMA_SERVER" -m "$MODEL" --host 127.0.0.1 --port "$PORT_LC" -t "$THREADS" -np "$CONC" -c "$CELLS" \
  ${LLAMA_SERVER_ARGS:-} >"$OUT/llama-server.log" 2>&1 &
pids+=($!)
wait_ready "http://127.0.0.1:$PORT_LC/health"
run_bench "$PORT_LC" llama-server

uptime
"$PROSGROW" bench compare "$OUT/llama-server/run.json" "$OUT/optimized/run.json"
