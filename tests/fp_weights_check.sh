#!/usr/bin/env bash
# Issue 49: GGUF models whose matrices are NVFP4 (ggml type 40) or
# FP8_E4M3 (prosgrow's own type) load and generate, dense and MoE (expert
# stacks), at every ISA level the host runs: `prosgrow make-model --type
# nvfp4|fp8_e4m3` writes them, `prosgrow generate` greedily decodes 12
# tokens, and the tokens are the same with 1 and 2 threads.
#
# usage: fp_weights_check.sh PROSGROW_BIN
set -uo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 PROSGROW_BIN" >&2
  exit 2
fi
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bad=0 runs=0
isas="scalar avx2"
grep -q avx512vnni /proc/cpuinfo && isas="$isas avx512"
tokens_of() { python3 -c 'import json,sys; j=json.load(sys.stdin); print(" ".join(map(str, j["tokens"])))'; }
for type in nvfp4 fp8_e4m3; do
  for model in "tiny qwen2" "tiny-moe qwen3moe"; do
    read -r shape arch <<<"$model"
    f="$dir/$type-$shape.gguf"
    if ! "$bin" make-model --shape "$shape" --arch "$arch" --type "$type" --seed 7 -o "$f" >/dev/null; then
      echo "FAIL make-model $type $shape" >&2
      bad=$((bad + 1))
      continue
    fi
    for isa in $isas; do
      one=$(PROSGROW_ISA=$isa "$bin" generate -m "$f" -p "The quick brown fox" -n 12 --temp 0 --ignore-eos --json \
        --threads 1 2>"$dir/err" | tokens_of)
      two=$(PROSGROW_ISA=$isa "$bin" generate -m "$f" -p "The quick brown fox" -n 12 --temp 0 --ignore-eos --json \
        --threads 2 2>>"$dir/err" | tokens_of)
      runs=$((runs + 1))
      if [[ $(wc -w <<<"$one") -ne 12 || "$one" != "$two" ]]; then
        echo "FAIL $type $shape $isa: [$one] vs [$two]" >&2
        head -c 2000 "$dir/err" >&2
        bad=$((bad + 1))
      fi
    done
  done
done
if [[ $bad -ne 0 ]]; then
  echo "$bad failures" >&2
  exit 1
fi
echo "NVFP4 and FP8_E4M3, dense and MoE: $runs runs of 12 greedy tokens, same with 1 and 2 threads"
