#!/usr/bin/env bash
# The CI bench run of issue 5: `prosgrow bench` against a real local
# `prosgrow serve` on a tiny synthetic model, then the bench's summary checked
# against the server's own Prometheus counters (a fresh server, no warm-up, so
# every token the server counted was a token the bench measured):
#   completed requests       = prosgrow_requests_finished_total
#   Σ prompt tokens          = prosgrow_prompt_tokens_total
#   Σ output tokens          = prosgrow_completion_tokens_total
#   Σ cached tokens per tier = prosgrow_cached_prompt_tokens_total{tier=...}
#   cache reuse              = Σ cached / Σ prompt, reported from `usage`
# and then, against a baseline server, that every request's greedy output is
# identical to the optimized server's (bench compare's output hashes).
# The device tier is sized below the workload so the host tier is used too.
# Needs no ../shared: the model comes from `make-model --vocab builtin`.
#
# usage: bench_serve_check.sh PROSGROW_BIN WORKDIR [MAKE_MODEL_ARGS]
#   MAKE_MODEL_ARGS: the model's make-model flags (default: a tiny qwen2,
#   "--shape tiny --arch qwen2"), e.g. "--shape tiny-moe --arch qwen3moe".
# Exit: 0 pass, 1 a figure differs, 2 usage or setup error.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../../tests/serve_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/serve_lib.sh" || exit 2

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 PROSGROW_BIN WORKDIR [MAKE_MODEL_ARGS]" >&2
  exit 2
fi
bin=$1 work=$2
read -r -a model_args <<<"${3:---shape tiny --arch qwen2}"
rm -rf "$work"
mkdir -p "$work"

"$bin" make-model "${model_args[@]}" --vocab builtin --type q8_0 --seed 3 --out "$work/tiny.gguf" \
  >"$work/make-model.log" 2>&1 || { echo "make-model failed; see $work/make-model.log" >&2; exit 2; }

# On failure, show what the server and the bench said (the work dir is
# recreated by the next run).
serve_lib_tail_on_failure "$work"

# serve NAME ARGS...: starts a server on a port it picks itself (--port 0,
# read back from its log, so no other process can take it first) and waits
# until /health answers.
serve() {
  serve_lib_serve "$work/serve-$1.log" "$bin" serve -m "$work/tiny.gguf" --port 0 --threads 2 "${@:2}" || exit 2
  server=$SERVE_LIB_PID port=$SERVE_LIB_PORT
}

bench() {  # bench NAME: the same seeded workload, 30 requests, into $work/run-NAME
  "$bin" bench --url "http://127.0.0.1:$port" --workload agentic --concurrency 3 --max-requests 30 \
    --warmup 0 --seed 7 --ctx-max 1024 --turns 6 --tool-gap-s 0.05 --out-median 16 \
    --no-progress --label "$1" --out "$work/run-$1" >"$work/bench-$1.log" 2>&1 ||
    { echo "bench ($1) failed; see $work/bench-$1.log" >&2; cat "$work/bench-$1.log" >&2; exit 1; }
}

serve optimized --policy optimized --kv-device-mem 384KiB --kv-host-mem 4MiB
bench optimized
curl -fsS "http://127.0.0.1:$port/metrics" >"$work/metrics.txt"

python3 - "$work/run-optimized/run.json" "$work/metrics.txt" <<'EOF'
import json, re, sys
run = json.load(open(sys.argv[1]))
metrics = {}
for line in open(sys.argv[2]):
    m = re.match(r'^([a-z_]+)(\{[^}]*\})?\s+(\S+)$', line.strip())
    if m:
        metrics[m.group(1) + (m.group(2) or "")] = float(m.group(3))
s, reqs = run["summary"], run["requests"]
cached = {t: sum(r["cached_by_tier"][t] for r in reqs) for t in ("device", "host", "disk")}
checks = [
    ("completed requests", s["completed"], metrics["prosgrow_requests_finished_total"]),
    ("failed requests", s["failed"], 0),
    ("requests in the run", len(reqs), 30),
    ("prompt tokens", s["prompt_tokens"], metrics["prosgrow_prompt_tokens_total"]),
    ("output tokens", s["output_tokens"], metrics["prosgrow_completion_tokens_total"]),
    ("cached tokens (all)", sum(r["cached_tokens"] for r in reqs),
     metrics["prosgrow_prompt_tokens_cached_total"]),
]
for t in ("device", "host", "disk"):
    checks.append((f"cached tokens ({t})", cached[t],
                   metrics[f'prosgrow_cached_prompt_tokens_total{{tier="{t}"}}']))
bad = 0
for name, bench, server in checks:
    ok = bench == server
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name}: bench {bench:g}, server {server:g}")
reuse = s.get("cache_reuse")
expect = sum(r["cached_tokens"] for r in reqs) / s["prompt_tokens"]
if reuse is None or abs(reuse - expect) > 1e-9 or s.get("cache_reuse_source") != "usage":
    print(f"FAIL cache reuse {reuse} from {s.get('cache_reuse_source')}, expected {expect} from usage")
    bad += 1
if cached["device"] == 0 or cached["host"] == 0:
    print(f"FAIL the run did not exercise both tiers: {cached}")
    bad += 1
sys.exit(1 if bad else 0)
EOF

# The same workload against a baseline server (device tier only, no host
# tier): greedy outputs must be identical request for request.
serve_lib_stop "$server"
serve baseline --policy baseline --kv-device-mem 384KiB
bench baseline
"$bin" bench compare "$work/run-baseline/run.json" "$work/run-optimized/run.json" --out "$work/compare.md" >/dev/null
# (with 3 sessions in flight, which 30 requests go out can differ by one or two)
if ! grep -Eq "identical outputs: (2[5-9]|30) / \1 matched requests \(100.0%\)" "$work/compare.md"; then
  echo "outputs differ between baseline and optimized:" >&2
  grep "identical outputs" "$work/compare.md" >&2
  exit 1
fi
echo "bench serve check passed: the bench's summary equals the server's counters; outputs identical across policies"
