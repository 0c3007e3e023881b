#!/usr/bin/env bash
# A/B of prosgrow binaries on one model with bench-model, for a machine whose
# speed drifts between minutes (a shared VM): each round runs every binary once,
# the order reversed on even rounds, and the medians of all samples are printed
# per (binary, test).
#
#   scripts/ab_bench_model.sh [-r ROUNDS] [-t TESTS] [-d DEPTH] [-j THREADS] MODEL BIN...
#
#   -r  rounds (default 6)          -t  bench-model --tests (default tg,bd4)
#   -d  bench-model --depth (0)     -j  threads (default 2)
#
# Each run is `BIN bench-model -m MODEL -t THREADS -r 3 -n 128 -d DEPTH --tests TESTS --json`.
set -euo pipefail

rounds=6 tests=tg,bd4 depth=0 threads=2
usage() { echo "usage: $0 [-r ROUNDS] [-t TESTS] [-d DEPTH] [-j THREADS] MODEL BIN..." >&2; exit 2; }
while getopts "r:t:d:j:h" opt; do
  case $opt in
    r) rounds=$OPTARG ;;
    t) tests=$OPTARG ;;
    d) depth=$OPTARG ;;
    j) threads=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
model=$1
shift
[ -f "$model" ] || { echo "$0: no model file '$model'" >&2; exit 2; }
for b in "$@"; do [ -x "$b" ] || { echo "$0: '$b' is not an executable" >&2; exit 2; }; done

samples=$(mktemp)
trap 'rm -f "$samples"' EXIT
for r in $(seq 1 "$rounds"); do
  bins=("$@")
  if [ $((r % 2)) = 0 ]; then mapfile -t bins < <(printf '%s\n' "$@" | tac); fi
  for b in "${bins[@]}"; do
    "$b" bench-model -m "$model" -t "$threads" -r 3 -n 128 -d "$depth" --tests "$tests" --json 2>/dev/null |
      python3 -c '
import json, sys
for x in json.load(sys.stdin)["results"]:
    print(sys.argv[1], x["test"].replace(" ", ""), *x["samples"])' "$b" >>"$samples"
  done
done
python3 - "$samples" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split()
    d[(p[0], p[1])] += [float(x) for x in p[2:]]
for (b, t), v in sorted(d.items()):
    print(f"{b:32s} {t:16s} median {statistics.median(v):9.1f}  n={len(v)}")
PY
