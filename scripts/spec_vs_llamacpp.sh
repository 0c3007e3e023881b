#!/usr/bin/env bash
# n-gram speculative decoding, prosgrow and llama.cpp side by side, on the same
# GGUF and the same prompt (issue 15; docs/speculative.md "Side by side with
# llama.cpp").
#
#   scripts/spec_vs_llamacpp.sh LLAMA_BUILD_DIR [MODEL]
#
# LLAMA_BUILD_DIR: a llama.cpp CMake build with `llama-server` built; the
# project does not depend on it. To make one:
#   cmake -S LLAMA_SRC -B LLAMA_BUILD_DIR -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_SERVER=ON
#   cmake --build LLAMA_BUILD_DIR --target llama-server -j2
# MODEL: a GGUF both engines load; default: the 0.5b-shape Q8_0 synthetic
# model, made once with `prosgrow make-model --shape 0.5b --type q8_0`.
#
# Five configurations, each a server with THREADS threads and one slot:
#   prosgrow  serve                                  (speculation off)
#   prosgrow  serve --spec ngram --spec-draft-max K  (prompt lookup, n = 4..1)
#   llama.cpp llama-server                           (speculation off)
#   llama.cpp llama-server --spec-type ngram-simple --spec-ngram-simple-size-n 4
#             --spec-ngram-simple-size-m K            (prompt lookup, n = 4)
#   llama.cpp the same with --spec-ngram-simple-size-n 1 (n = 1: prosgrow's
#             lookup falls back from n = 4 to n = 1; ngram-simple has one n)
# One engine's servers run at the same time (each idle while another is
# measured). After one warm-up request each, REQS rounds send each of them in
# turn the same streamed greedy /v1/completions (token-id prompt, N_GEN
# tokens, ignore_eos), the order alternating round by round, so "on / off" is
# the median of ratios of requests measured next to each other in time (the
# shared machine's load swings by 2x within minutes). The prompt repeats one
# block of BLOCK token ids REPEATS times, so its text repeats its context;
# whether the continuation does is the model's (random weights do not copy,
# but greedy decoding falls into cycles that prompt lookup drafts).
# Measured by the same client for all: decode tok/s = (tokens - 1) / (last
# chunk - first chunk); drafted / accepted from prosgrow's usage.speculative
# and llama.cpp's timings.draft_n(_accepted) (which has no step count).
# Under load use THREADS=1: llama.cpp's threads spin at barriers, and on an
# oversubscribed CPU two of them lose far more than one (llama-bench tg16 on
# the 0.5b model at load ~8: 15.1 t/s with -t 1, 5.2 with -t 2).
# llama.cpp has no synthetic-acceptance mode in this snapshot (no
# --spec-synthetic-acceptance-length; grep common/arg.cpp), so only the n-gram
# modes are compared.
#
# BAN: token ids both engines are told never to emit (logit_bias -100), by
# default the builtin vocabulary's 256 single-byte tokens and its 5 control
# tokens: a random-weight model emits lone bytes of multi-byte characters,
# and llama-server then ends the stream with "The model produced output that
# does not match the expected Content-only format" (its output parser wants
# whole UTF-8 characters). BAN= (empty) sends no bias.
# Environment: PROSGROW (default build/prosgrow), THREADS (2), K (4), N_GEN
# (128), REQS (6), BLOCK (48), REPEATS (4), BAN, OUT (raw results; default a
# temp dir).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 || $# -gt 2 || $1 == -h || $1 == --help ]]; then
  sed -n '6p' "$0" | sed 's/^# *//' >&2
  exit 2
fi
LLAMA_BUILD=$1
LLAMA_SERVER=$LLAMA_BUILD/bin/llama-server
PROSGROW=${PROSGROW:-build/prosgrow}
THREADS=${THREADS:-2} K=${K:-4} N_GEN=${N_GEN:-128} REQS=${REQS:-6}
BLOCK=${BLOCK:-48} REPEATS=${REPEATS:-4} BAN=${BAN-0-255,8187-8191}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
[[ -x $LLAMA_SERVER ]] || { echo "no llama-server in $LLAMA_BUILD/bin; build it (see the header of $0)" >&2; exit 2; }
[[ -x $PROSGROW ]] || { echo "no prosgrow binary at $PROSGROW" >&2; exit 2; }
MODEL=${2:-}
if [[ -z $MODEL ]]; then
  MODEL=${XDG_CACHE_HOME:-$HOME/.cache}/prosgrow/spec-0.5b-q8_0.gguf
  if [[ ! -f $MODEL ]]; then
    mkdir -p "$(dirname "$MODEL")"
    "$PROSGROW" make-model --shape 0.5b --type q8_0 -o "$MODEL" >"$OUT/make-model.log" 2>&1
  fi
fi

servers=()  # pids of the servers up now
targets=()  # NAME=PORT of the servers up now
stop_all() {
  local pid
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null || true; done
  servers=()
  targets=()
}
trap stop_all EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start() {  # start NAME CMD...: runs a server on a free port, waits for /health
  local name=$1; shift
  local port pid
  port=$(free_port)
  "$@" --port "$port" >"$OUT/serve-$name.log" 2>&1 &
  pid=$!
  servers+=("$pid")
  for _ in $(seq 1 1200); do
    if curl -fsS -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null; then
      targets+=("$name=$port")
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { echo "$name exited; log:" >&2; tail -20 "$OUT/serve-$name.log" >&2; exit 1; }
    sleep 0.25
  done
  echo "$name did not start" >&2
  exit 1
}

measure() {  # REQS interleaved rounds over `targets`; one JSON line per request
  python3 - "$REQS" "$N_GEN" "$BLOCK" "$REPEATS" "$BAN" "${targets[@]}" >>"$OUT/results.jsonl" <<'PY'
import http.client, json, random, sys, time
reqs, n_gen, block, repeats = map(int, sys.argv[1:5])
ban = [int(t) for part in sys.argv[5].split(",") if part for t in
       ([part] if "-" not in part else range(int(part.split("-")[0]), int(part.split("-")[1]) + 1))]
targets = [t.split("=") for t in sys.argv[6:]]
rng = random.Random(15)
unit = [rng.randrange(1000, 7000) for _ in range(block)]
prompt = unit * repeats

def one(name, port, rnd):
    body = {"prompt": prompt, "max_tokens": n_gen, "temperature": 0, "ignore_eos": True, "stream": True,
            "stream_options": {"include_usage": True}}
    if ban:
        body["logit_bias"] = {str(t): -100 for t in ban}
    c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=600)
    t0 = time.monotonic()
    c.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    assert r.status == 200, (name, r.status, r.read()[:300])
    first = last = None
    chunks = 0
    usage, timings, line = {}, {}, ""
    for raw in r:
        line = raw.decode(errors="replace").strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        ev = json.loads(line[6:])
        now = time.monotonic()
        ch = ev.get("choices") or []
        if ch and ch[0].get("text"):
            chunks += 1
            first = first if first is not None else now
            last = now
        usage = ev.get("usage") or usage
        timings = ev.get("timings") or timings
    tokens = usage.get("completion_tokens") or timings.get("predicted_n") or chunks
    assert tokens == n_gen, f"{name}: {tokens} of {n_gen} tokens (last event: {line[:200]})"
    spec = usage.get("speculative") or {}
    return {"engine": name, "round": rnd, "tokens": tokens, "ttft_s": first - t0,
            "decode_s": last - first, "decode_tok_s": (tokens - 1) / (last - first),
            "drafted": spec.get("drafted_tokens", timings.get("draft_n", 0)),
            "accepted": spec.get("accepted_tokens", timings.get("draft_n_accepted", 0)),
            "steps": spec.get("steps"), "server_tok_s": timings.get("predicted_per_second")}

for name, port in targets:  # warm-up: pages the weights in, fills the prompt cache
    one(name, port, -1)
for rnd in range(reqs):
    for name, port in (targets if rnd % 2 == 0 else targets[::-1]):
        print(json.dumps(one(name, port, rnd)), flush=True)
PY
}

: >"$OUT/results.jsonl"
PG=("$PROSGROW" serve -m "$MODEL" --threads "$THREADS" --max-seqs 1 --kv-device-mem 256MiB)
LL=("$LLAMA_SERVER" -m "$MODEL" -t "$THREADS" -tb "$THREADS" -np 1 -c 4096 --no-webui --host 127.0.0.1)
NGRAM_SIMPLE=(--spec-type ngram-simple --spec-ngram-simple-size-m "$K")
start prosgrow "${PG[@]}"
start prosgrow+ngram "${PG[@]}" --spec ngram --spec-draft-max "$K"
measure
stop_all
start llama.cpp "${LL[@]}"
start llama.cpp+ngram-simple "${LL[@]}" "${NGRAM_SIMPLE[@]}" --spec-ngram-simple-size-n 4
start llama.cpp+ngram-simple-n1 "${LL[@]}" "${NGRAM_SIMPLE[@]}" --spec-ngram-simple-size-n 1
measure
stop_all

python3 - "$OUT/results.jsonl" "$MODEL" "$THREADS" "$K" "$N_GEN" "$REQS" "$BLOCK" "$REPEATS" <<'PY'
import json, statistics, sys, os
path, model, threads, k, n_gen, reqs, block, repeats = sys.argv[1:]
rows = [json.loads(l) for l in open(path)]
print(f"model {os.path.basename(model)}, {threads} threads, K = {k}, {n_gen} tokens greedy, prompt = "
      f"{block} ids x {repeats}, {reqs} interleaved requests per configuration")
print()
print("| engine | decode tok/s (median) | on / off (median of paired rounds, range) | drafted | accepted "
      "| acceptance rate | mean accepted length |")
print("|---|---|---|---|---|---|---|")
by = {}
for r in rows:
    by.setdefault(r["engine"], {})[r["round"]] = r
for name in ("prosgrow", "prosgrow+ngram", "llama.cpp", "llama.cpp+ngram-simple", "llama.cpp+ngram-simple-n1"):
    if name not in by:
        continue
    rs = list(by[name].values())
    med = statistics.median(r["decode_tok_s"] for r in rs)
    ratio = ""
    base = by.get(name.split("+")[0])
    if "+" in name and base:
        pairs = [by[name][i]["decode_tok_s"] / base[i]["decode_tok_s"] for i in by[name] if i in base]
        ratio = f"{statistics.median(pairs):.2f}x ({min(pairs):.2f}-{max(pairs):.2f})"
    d = sum(r["drafted"] or 0 for r in rs)
    a = sum(r["accepted"] or 0 for r in rs)
    steps = [r["steps"] for r in rs]
    length = f"{1 + a / sum(steps):.2f}" if all(s for s in steps) and sum(steps) else "n/a"
    rate = f"{a / d:.3f}" if d else "n/a"
    print(f"| {name} | {med:.2f} | {ratio} | {d} | {a} | {rate} | {length} |")
print()
print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end")
PY
echo "raw: $OUT/results.jsonl"
