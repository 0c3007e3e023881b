#!/usr/bin/env bash
# prosgrow bench-model against llama-bench on the same GGUF files, in one sitting.
#
#   scripts/bench_vs_llamacpp.sh [-t THREADS] [-r REPS] [-k ROUNDS] [-p N_PROMPT] [-n N_GEN] MODEL...
#
# Both tools run the same two tests with the same thread count:
#   ppP  one P-token prompt from an empty context (tokens/s)
#   tgN  N tokens decoded one at a time (tokens/s)
# llama-bench: `llama-bench -m MODEL -t T -p P -n N -r REPS -o json` (its other
# settings at their defaults); prosgrow: `prosgrow bench-model -m MODEL -t T -p P
# -n N -r REPS --tests pp,tg --json`. Each round runs both tools on every model,
# alternating which goes first, so that a change in machine load hits both. The
# table gives, per model and test, the median over all repetitions of all rounds
# and the ratio of the medians (> 1: prosgrow is faster), then the machine state.
#
# Environment: LLAMA_BENCH (default /work/llamacpp/build/bin/llama-bench),
# PROSGROW (default build/prosgrow), OUT (raw JSON per run; default a temp dir).
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS=2 REPS=3 ROUNDS=3 N_PROMPT=512 N_GEN=128
usage() {
  sed -n '4p' "$0" | sed 's/^# *//' >&2
  exit 2
}
while getopts "t:r:k:p:n:h" opt; do
  case "$opt" in
    t) THREADS=$OPTARG ;;
    r) REPS=$OPTARG ;;
    k) ROUNDS=$OPTARG ;;
    p) N_PROMPT=$OPTARG ;;
    n) N_GEN=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage

LLAMA_BENCH=${LLAMA_BENCH:-/work/llamacpp/build/bin/llama-bench}
PROSGROW=${PROSGROW:-build/prosgrow}
OUT=${OUT:-$(mktemp -d /tmp/bench_vs_llamacpp.XXXXXX)}
mkdir -p "$OUT"
for bin in "$LLAMA_BENCH" "$PROSGROW"; do
  [ -x "$bin" ] || { echo "bench_vs_llamacpp: $bin is not an executable (set LLAMA_BENCH / PROSGROW)" >&2; exit 2; }
done
for m in "$@"; do
  [ -r "$m" ] || { echo "bench_vs_llamacpp: cannot read model $m" >&2; exit 2; }
done

run_llama() {  # model out.json
  "$LLAMA_BENCH" -m "$1" -t "$THREADS" -p "$N_PROMPT" -n "$N_GEN" -r "$REPS" -o json >"$2" 2>"$2.log"
}
run_prosgrow() {  # model out.json
  "$PROSGROW" bench-model -m "$1" -t "$THREADS" -p "$N_PROMPT" -n "$N_GEN" -r "$REPS" --tests pp,tg --json \
    >"$2" 2>"$2.log"
}

echo "raw results: $OUT" >&2
for ((round = 1; round <= ROUNDS; ++round)); do
  i=0
  for m in "$@"; do
    i=$((i + 1))
    order=(llama prosgrow)
    if (((round + i) % 2 == 0)); then order=(prosgrow llama); fi
    for tool in "${order[@]}"; do
      echo "round $round/$ROUNDS: $tool on $(basename "$m") (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
      "run_$tool" "$m" "$OUT/$tool.$i.$round.json"
    done
  done
done

python3 - "$OUT" "$N_PROMPT" "$N_GEN" "$THREADS" "$@" <<'EOF'
import glob, json, os, statistics, sys

out, n_prompt, n_gen, threads, models = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]

def llama_samples(path):
    res = {}
    for r in json.load(open(path)):
        test = f"pp{r['n_prompt']}" if r["n_gen"] == 0 else f"tg{r['n_gen']}"
        res.setdefault(test, []).extend(r["samples_ts"])
    return res

def prosgrow_samples(path):
    return {r["test"]: list(r["samples"]) for r in json.load(open(path))["results"]}

print(f"| model | test | llama.cpp t/s (median) | prosgrow t/s (median) | prosgrow / llama.cpp | runs |")
print("|---|---|---|---|---|---|")
for i, m in enumerate(models, 1):
    for test in (f"pp{n_prompt}", f"tg{n_gen}"):
        vals = {"llama": [], "prosgrow": []}
        for tool, parse in (("llama", llama_samples), ("prosgrow", prosgrow_samples)):
            for f in sorted(glob.glob(os.path.join(out, f"{tool}.{i}.*.json"))):
                vals[tool].extend(parse(f).get(test, []))
        if not vals["llama"] or not vals["prosgrow"]:
            print(f"| {os.path.basename(m)} | {test} | missing | missing | - | - |")
            continue
        lm, pm = statistics.median(vals["llama"]), statistics.median(vals["prosgrow"])
        spread = lambda v: f"{min(v):.1f}-{max(v):.1f}"
        print(f"| {os.path.basename(m)} | {test} | {lm:.2f} ({spread(vals['llama'])}) | "
              f"{pm:.2f} ({spread(vals['prosgrow'])}) | **{pm / lm:.2f}x** | {len(vals['llama'])} / {len(vals['prosgrow'])} |")
EOF
echo
echo "threads $THREADS; $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
  "load average now $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ)"
echo "prosgrow $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src apps || echo '+dirty');" \
  "llama-bench: $LLAMA_BENCH (ggml $(jq -r '.[0].build_commit + " build " + (.[0].build_number|tostring)' \
    "$(ls "$OUT"/llama.*.json | head -1)" 2>/dev/null))"
