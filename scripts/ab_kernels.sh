#!/usr/bin/env bash
# A/B of kernels_bench binaries (e.g. two builds' build/bench/kernels_bench),
# for a machine whose speed drifts between minutes: each round runs every
# binary once with the same arguments, the order reversed on even rounds, and
# the median and best GFLOP/s of each (binary, type, shape, tokens) are printed.
#
#   scripts/ab_kernels.sh [-r ROUNDS] BIN... -- KERNELS_BENCH_ARGS...
#
#   e.g. scripts/ab_kernels.sh -r 10 /tmp/old/kernels_bench build/bench/kernels_bench -- \
#          --threads 1 --types q4_kx8 --shapes 2048x512 --tokens 32,4,1 --seconds 0.2
set -euo pipefail

rounds=6
usage() { echo "usage: $0 [-r ROUNDS] BIN... -- KERNELS_BENCH_ARGS..." >&2; exit 2; }
while getopts "r:h" opt; do
  case $opt in
    r) rounds=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do bins+=("$1"); shift; done
[ $# -gt 0 ] || usage
shift
[ ${#bins[@]} -ge 1 ] || usage
for b in "${bins[@]}"; do [ -x "$b" ] || { echo "$0: '$b' is not an executable" >&2; exit 2; }; done

samples=$(mktemp)
trap 'rm -f "$samples"' EXIT
for r in $(seq 1 "$rounds"); do
  order=("${bins[@]}")
  if [ $((r % 2)) = 0 ]; then mapfile -t order < <(printf '%s\n' "${bins[@]}" | tac); fi
  for b in "${order[@]}"; do
    # Result rows: type shape tokens ms/call GFLOP/s GB/s GFLOP/cpu-s.
    "$b" "$@" | awk -v b="$b" 'NF == 7 && $3 ~ /^[0-9]+$/ { print b, $1, $2, $3, $5 }' >>"$samples"
  done
done
python3 - "$samples" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    b, ty, shape, tok, gflops = line.split()
    d[(ty, shape, int(tok), b)].append(float(gflops))
for (ty, shape, tok, b), v in sorted(d.items()):
    print(f"{ty:8s} {shape:12s} {tok:4d} tok  {b:40s} GFLOP/s median {statistics.median(v):7.1f}  best {max(v):7.1f}  n={len(v)}")
PY
