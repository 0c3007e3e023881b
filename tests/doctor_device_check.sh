#!/usr/bin/env bash
# Issue 22 item 5: `prosgrow doctor` in a build with the device executor runs a
# tiny model on each GPU against the CPU: one "gpu N vs cpu" line per device,
# ok with the normalised error and equal greedy tokens (emulated build: the
# emulator's one device).
#
# usage: doctor_device_check.sh PROSGROW_BIN
set -uo pipefail
bin=$1
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$bin" make-model --shape tiny --type f16 -o "$work/tiny.gguf" >/dev/null 2>&1 || fail "make-model"
mkdir -p "$work/tmp"  # doctor's own temp dir: its tiny model must be gone from it afterwards
out=$(TMPDIR="$work/tmp" "$bin" doctor -m "$work/tiny.gguf" --port 0 2>&1) || fail "doctor exited $?: $out"
grep -qE '^\[ ok \] gpu: 1 GPU \(backends: cpu, [a-z]+' <<<"$out" || fail "no gpu line naming one device: $out"
line=$(grep -E '^\[ ok \] gpu 0 vs cpu: tiny qwen3 Q8_0 model, 2 steps, 12 logit rows: normalised error [0-9.e+-]+, greedy tokens equal \(arithmetic cuda' <<<"$out") ||
  fail "no ok 'gpu 0 vs cpu' line: $out"
[[ $(grep -c 'vs cpu' <<<"$out") -eq 1 ]] || fail "not one device line: $out"
left=$(find "$work/tmp" -name 'prosgrow-doctor-*.gguf*')
[[ -z $left ]] || fail "doctor left its tiny model behind: $left"
echo "ok: $line"
