#!/usr/bin/env bash
# Issue 49: `-m DIR`, a Hugging Face model directory, on the real binary.
#   - make-model --hf-dir writes the GGUF's weights as config.json + sharded
#     safetensors; bench-model -m DIR runs on it;
#   - a directory with a truncated shard, a missing shard or an unknown
#     model_type: serve, doctor, generate and bench-model refuse it in one line
#     naming the file, before serving anything;
#   - serve -m DIR answers a real client (curl) with the same greedy text as
#     serve -m GGUF (the directory's tokenizer.json, which make-model wrote from
#     the GGUF's vocabulary, read by LoadTokenizerJson);
#   - an FP8 directory (make-model --hf-dtype fp8) answers as the GGUF holding
#     its dequantized values (--hf-dequant-gguf);
#   - generation_config.json's sampling is the default of a request that does
#     not set the field (top_k 1 makes a sampled request greedy), and a request
#     that sets it wins, on the OpenAI and Anthropic APIs; an out-of-range value
#     is refused in one line naming the file and the field.
#
# usage: hf_dir_check.sh PROSGROW_BIN
set -uo pipefail
# shellcheck source=SCRIPTDIR/serve_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/serve_lib.sh" || exit 2
bin=$1
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin" make-model --shape tiny --type bf16 --arch qwen3 -o "$work/m.gguf" --hf-dir "$work/hf" --hf-shards 2 \
  >/dev/null 2>&1 || fail "make-model --hf-dir"
for f in config.json model.safetensors.index.json model-00001-of-00002.safetensors \
  model-00002-of-00002.safetensors generation_config.json tokenizer_config.json tokenizer.json; do
  [[ -s $work/hf/$f ]] || fail "make-model --hf-dir wrote no $f"
done

out=$("$bin" bench-model -m "$work/hf" -t 2 -r 1 -p 8 -n 4 --json 2>&1) || fail "bench-model -m DIR: $out"
grep -q '"arch": "qwen3"' <<<"$out" || fail "bench-model -m DIR output: $out"

# Bad directories: one line naming the file, non-zero exit, for every command.
cp -r "$work/hf" "$work/trunc"
shard="$work/trunc/model-00002-of-00002.safetensors"
head -c 4000 "$shard" >"$work/cut" && mv "$work/cut" "$shard"
cp -r "$work/hf" "$work/noshard"
rm "$work/noshard/model-00001-of-00002.safetensors"
cp -r "$work/hf" "$work/arch"
sed -i 's/"model_type": "qwen3"/"model_type": "mamba"/' "$work/arch/config.json"
check_refused() {  # check_refused DIR WANT CMD...
  local dir=$1 want=$2 err rc
  shift 2
  err=$("$bin" "$@" -m "$dir" 2>&1); rc=$?
  [[ $rc -ne 0 ]] || fail "$* -m $dir exited 0"
  grep -qF -- "$want" <<<"$err" || fail "$* -m $dir: no '$want' in: $err"
  grep -F -- "$want" <<<"$err" | grep -q "$dir" || fail "$* -m $dir: the error does not name the file: $err"
}
for cmd in "serve --port 0" "generate -p hi -n 1" "bench-model -r 1 -p 8 -n 2" "doctor --port 0"; do
  # shellcheck disable=SC2086
  check_refused "$work/trunc" "model-00002-of-00002.safetensors: header" $cmd
  # shellcheck disable=SC2086
  check_refused "$work/noshard" "model-00001-of-00002.safetensors: missing shard" $cmd
  # shellcheck disable=SC2086
  check_refused "$work/arch" "config.json: model_type 'mamba' is not supported" $cmd
done

# serve -m DIR vs serve -m GGUF: the same greedy text through the OpenAI API.
ask() {  # ask URL MODEL [SAMPLING] -> the completion's text (SAMPLING: JSON members, default greedy)
  curl -sS --max-time 120 "$1/v1/chat/completions" -H 'Content-Type: application/json' \
    -d '{"model": "'"$2"'", "messages": [{"role": "user", "content": "Name three colours."}], "max_tokens": 24,
         '"${3:-\"temperature\": 0}"'}' |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["choices"][0]["message"]["content"])'
}
serve_lib_serve "$work/gguf.log" "$bin" serve -m "$work/m.gguf" --port 0 --threads 2 || fail "serve -m GGUF"
want=$(ask "$SERVE_LIB_URL" m) || fail "chat completion from the GGUF"
serve_lib_stop "$SERVE_LIB_PID" || true
serve_lib_serve "$work/hf.log" "$bin" serve -m "$work/hf/" --port 0 --threads 2 || fail "serve -m DIR"
# Served under the directory's name (a trailing '/' ignored).
curl -sS "$SERVE_LIB_URL/v1/models" | grep -q '"id": *"hf"' || fail "/v1/models does not list 'hf'"
got=$(ask "$SERVE_LIB_URL" hf) || fail "chat completion from the directory"
[[ -n $want && $got == "$want" ]] || fail "serve -m DIR said '$got', serve -m GGUF '$want'"
echo "PASS: serve -m DIR answers as the GGUF does"

# FP8: the directory and the GGUF of its dequantized values answer alike.
"$bin" make-model --shape tiny --type bf16 --arch qwen3 --seed 5 -o "$work/f.gguf" --hf-dir "$work/fp8" \
  --hf-dtype fp8 --hf-dequant-gguf "$work/deq.gguf" >/dev/null 2>&1 || fail "make-model --hf-dtype fp8"
grep -q '"quant_method": "fp8"' "$work/fp8/config.json" || fail "the FP8 config.json has no quant_method fp8"
head -c 65536 "$work/fp8/model.safetensors" | grep -q 'q_proj.weight_scale_inv' || fail "no weight_scale_inv tensors"
serve_lib_stop "$SERVE_LIB_PID" || true
serve_lib_serve "$work/deq.log" "$bin" serve -m "$work/deq.gguf" --port 0 --threads 2 || fail "serve -m DEQ.gguf"
want=$(ask "$SERVE_LIB_URL" deq) || fail "chat completion from the dequantized GGUF"
serve_lib_stop "$SERVE_LIB_PID" || true
# generation_config.json: top_k 1 (greedy whatever the temperature), temperature 1.
python3 - "$work/fp8/generation_config.json" <<'PY' || fail "editing generation_config.json"
import json, sys
g = json.load(open(sys.argv[1])); g.update({"top_k": 1, "temperature": 1.0})
json.dump(g, open(sys.argv[1], "w"))
PY
serve_lib_serve "$work/fp8.log" "$bin" serve -m "$work/fp8" --port 0 --threads 2 || fail "serve -m FP8 DIR"
got=$(ask "$SERVE_LIB_URL" fp8) || fail "chat completion from the FP8 directory"
[[ -n $want && $got == "$want" ]] || fail "serve -m FP8 DIR said '$got', serve -m DEQ.gguf '$want'"
echo "PASS: serve -m FP8 DIR answers as the GGUF of its dequantized values"
sampled=$(ask "$SERVE_LIB_URL" fp8 '"seed": 7') || fail "a request without sampling fields"
[[ $sampled == "$got" ]] || fail "generation_config.json top_k 1 not applied: '$sampled', greedy '$got'"
own=$(ask "$SERVE_LIB_URL" fp8 '"seed": 7, "top_k": 0') || fail "a request with top_k 0"
[[ -n $own && $own != "$got" ]] || fail "the request's top_k 0 did not override generation_config.json: '$own'"
messages() {  # messages URL SAMPLING -> the Anthropic reply's text
  curl -sS --max-time 120 "$1/v1/messages" -H 'Content-Type: application/json' -H 'anthropic-version: 2023-06-01' \
    -d '{"model": "fp8", "max_tokens": 24, "messages": [{"role": "user", "content": "Name three colours."}], '"$2"'}' |
    python3 -c 'import json, sys; print("".join(b.get("text", "") for b in json.load(sys.stdin)["content"]))'
}
greedy=$(messages "$SERVE_LIB_URL" '"temperature": 0') || fail "/v1/messages greedy"
dflt=$(messages "$SERVE_LIB_URL" '"temperature": 1') || fail "/v1/messages without top_k"
[[ -n $greedy && $dflt == "$greedy" ]] || fail "/v1/messages: generation_config.json top_k 1 not applied: '$dflt' vs '$greedy'"
serve_lib_stop "$SERVE_LIB_PID" || true
echo "PASS: generation_config.json's sampling is each request's default; the request's own fields win"
cp -r "$work/fp8" "$work/badgen"
echo '{"top_p": 1.5}' >"$work/badgen/generation_config.json"
check_refused "$work/badgen" "generation_config.json: top_p 1.5 is outside (0, 1]" serve --port 0
echo "PASS: a bad generation_config.json is refused in one line"
