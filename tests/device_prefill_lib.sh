# shellcheck shell=bash
# device_prefill_lib.sh: the `bench-model --device-prefill MODE` checks that
# device_bench_model_check.sh (bf16) and device_serve_fp8_check.sh (fp8)
# share. Source it, do not run it. Each function prints "ok: ..." on success,
# or says why on stderr and returns non-zero; the check decides with `|| fail`.
#
#   device_prefill_pp40 BIN MODEL MODE WORK
#       bench-model --device cuda --device-prefill MODE on a 40-token step, so
#       its products run as MODE GEMMs: the log names the +MODEgemm arithmetic
#       and the JSON report has pp40 at a positive rate.
#   device_prefill_refused_on_cpu BIN MODEL MODE WORK
#       --device-prefill MODE without --device cuda: a non-zero exit and one
#       line on stderr naming the flag and its value.
# WORK is a scratch directory (out and err are written there).

device_prefill_pp40() {
  local bin=$1 model=$2 mode=$3 work=$4
  if ! "$bin" bench-model -m "$model" -p 40 -r 1 --tests pp --threads 2 --json --device cuda \
    --device-prefill "$mode" >"$work/out" 2>"$work/err"; then
    echo "FAIL: bench-model --device cuda --device-prefill $mode: $(cat "$work/err")" >&2
    return 1
  fi
  if ! grep -q "+${mode}gemm" "$work/err"; then
    echo "FAIL: --device-prefill $mode did not reach the executor: $(cat "$work/err")" >&2
    return 1
  fi
  if ! python3 -c 'import json, sys; r = {x["test"]: x for x in json.load(open(sys.argv[1]))["results"]}
assert set(r) == {"pp40"} and r["pp40"]["tokens_per_s"] > 0, r' "$work/out"; then
    echo "FAIL: bench-model --device-prefill $mode: bad report: $(cat "$work/out")" >&2
    return 1
  fi
  echo "ok: bench-model --device cuda --device-prefill $mode pp40"
}

device_prefill_refused_on_cpu() {
  local bin=$1 model=$2 mode=$3 work=$4
  if "$bin" bench-model -m "$model" -p 8 -r 1 --tests pp --device-prefill "$mode" >"$work/out" 2>"$work/err"; then
    echo "FAIL: bench-model --device-prefill $mode on the CPU succeeded: $(cat "$work/out")" >&2
    return 1
  fi
  if [[ $(wc -l <"$work/err") -ne 1 ]] || ! grep -q -- "--device-prefill $mode" "$work/err"; then
    echo "FAIL: --device-prefill $mode --device cpu: not one line naming the flag: $(cat "$work/err")" >&2
    return 1
  fi
  echo "ok: --device-prefill $mode on the CPU refused: $(cat "$work/err")"
}
