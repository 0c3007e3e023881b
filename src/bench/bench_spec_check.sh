#!/usr/bin/env bash
# Issue 15: `prosgrow bench` reports speculative decoding. A real
# `prosgrow serve --spec suffix,ngram` on a tiny synthetic model; the same
# seeded agentic workload is run twice (greedy), so the second pass repeats
# every prompt and the suffix cache, which holds the first pass's prompts and
# outputs, drafts the outputs again. Checked:
#   - the second run's report (run.json and the printed table) carries
#     non-zero drafted and accepted tokens, per drafter and over its requests;
#   - its per-request usage.speculative totals equal the /metrics delta of
#     prosgrow_spec_{steps,draft_tokens,accepted_tokens}_total (no warmup);
#   - the acceptance rate and mean accepted length follow from the counts;
#   - both passes gave identical outputs (speculation is lossless under greedy);
#   - a server without --spec gives a report with no speculative part.
# Needs no ../shared.
#
# usage: bench_spec_check.sh PROSGROW_BIN WORKDIR
# Exit: 0 pass, 1 a check failed, 2 usage or setup error.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../../tests/serve_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/serve_lib.sh" || exit 2

if [[ $# -ne 2 ]]; then
  echo "usage: $0 PROSGROW_BIN WORKDIR" >&2
  exit 2
fi
bin=$1 work=$2
rm -rf "$work"
mkdir -p "$work"

"$bin" make-model --shape tiny --arch qwen2 --vocab builtin --type q8_0 --seed 5 --out "$work/tiny.gguf" \
  >"$work/make-model.log" 2>&1 || { echo "make-model failed; see $work/make-model.log" >&2; exit 2; }

serve_lib_tail_on_failure "$work"
serve() {  # serve NAME ARGS...: a server on a port it picks (--port 0), waited for
  serve_lib_serve "$work/serve-$1.log" "$bin" serve -m "$work/tiny.gguf" --port 0 --threads 2 "${@:2}" || exit 2
  server=$SERVE_LIB_PID port=$SERVE_LIB_PORT
}

bench() {  # bench NAME: one pass of the seeded workload (12 requests), into $work/run-NAME
  "$bin" bench --url "http://127.0.0.1:$port" --workload agentic --concurrency 2 --sessions 2 \
    --warmup 0 --seed 11 --ctx-max 512 --turns 6 --tool-gap-s 0 --out-median 16 \
    --no-progress --label "$1" --out "$work/run-$1" >"$work/bench-$1.log" 2>&1 ||
    { echo "bench ($1) failed; see $work/bench-$1.log" >&2; cat "$work/bench-$1.log" >&2; exit 1; }
}

# --spec-policy always: every proposed draft is verified, so every request
# reports usage.speculative (goodput may drop a request's drafts on this tiny model).
serve spec --spec suffix,ngram --spec-draft-max 4 --spec-policy always
bench first
curl -fsS "http://127.0.0.1:$port/metrics" >"$work/metrics-before.txt"
bench repeat
curl -fsS "http://127.0.0.1:$port/metrics" >"$work/metrics-after.txt"

python3 - "$work/run-repeat/run.json" "$work/metrics-before.txt" "$work/metrics-after.txt" \
  "$work/bench-repeat.log" <<'EOF'
import json, re, sys
run = json.load(open(sys.argv[1]))
def counters(path):
    out = {}
    for line in open(path):
        m = re.match(r'^(prosgrow_spec_\w+_total)\{drafter="(\w+)"\}\s+(\S+)$', line.strip())
        if m:
            out[(m.group(1), m.group(2))] = float(m.group(3))
    return out
before, after = counters(sys.argv[2]), counters(sys.argv[3])
delta = {k: v - before.get(k, 0) for k, v in after.items()}
def total(name):
    return sum(v for (n, _), v in delta.items() if n == name)
s = run["summary"]["speculative"]
bad = 0
def check(name, ok, detail):
    global bad
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
if s is None:
    print("FAIL summary.speculative is null"); sys.exit(1)
req = s["requests"]
per_req = [r.get("speculative") for r in run["requests"]]
check("every request reported usage.speculative", all(p and p["source"] == "usage" for p in per_req),
      f"{sum(1 for p in per_req if p)} / {len(per_req)}")
check("drafted > 0", req["drafted_tokens"] > 0, req["drafted_tokens"])
check("accepted > 0", req["accepted_tokens"] > 0, req["accepted_tokens"])
for key, metric in (("steps", "prosgrow_spec_steps_total"), ("drafted_tokens", "prosgrow_spec_draft_tokens_total"),
                    ("accepted_tokens", "prosgrow_spec_accepted_tokens_total")):
    check(f"{key}: requests = /metrics", req[key] == total(metric), f"bench {req[key]}, server {total(metric):g}")
    by = sum(d[key] for d in s["by_drafter"].values())
    check(f"{key}: sum over drafters = /metrics", by == total(metric), f"bench {by}, server {total(metric):g}")
check("suffix drafter accepted > 0", s["by_drafter"].get("suffix", {}).get("accepted_tokens", 0) > 0,
      s["by_drafter"].get("suffix"))
rate = req["accepted_tokens"] / req["drafted_tokens"] if req["drafted_tokens"] else None
length = 1 + req["accepted_tokens"] / req["steps"] if req["steps"] else None
check("acceptance rate", rate is not None and abs(req["acceptance_rate"] - rate) < 1e-12, req["acceptance_rate"])
check("mean accepted length", length is not None and abs(req["mean_accepted_length"] - length) < 1e-12,
      req["mean_accepted_length"])
check("not synthetic", s["synthetic_acceptance"] is False, s["synthetic_acceptance"])
log = open(sys.argv[4]).read()
check("printed report has the drafter table", "| drafter suffix (/metrics) |" in log and
      "speculative: draft acceptance rate" in log, "bench-repeat.log")
sys.exit(1 if bad else 0)
EOF

# Greedy: speculation (a cold suffix cache, then a warm one) changes no output.
"$bin" bench compare "$work/run-first/run.json" "$work/run-repeat/run.json" --out "$work/compare.md" >/dev/null
grep -Eq "identical outputs: ([0-9]+) / \1 matched requests \(100.0%\)" "$work/compare.md" ||
  { echo "FAIL outputs differ between the two passes:" >&2; grep "identical outputs" "$work/compare.md" >&2; exit 1; }

# Without --spec: no speculative part in the report.
serve_lib_stop "$server"
serve plain
bench plain
python3 - "$work/run-plain/run.json" <<'EOF' || { echo "FAIL a run without speculation reports it" >&2; exit 1; }
import json, sys
run = json.load(open(sys.argv[1]))
assert run["summary"]["speculative"] is None, run["summary"]["speculative"]
assert not any("speculative" in r for r in run["requests"])
EOF
echo "bench spec check passed: bench's speculative report equals the server's counters; outputs identical"
