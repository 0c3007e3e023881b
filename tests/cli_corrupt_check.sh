#!/usr/bin/env bash
# Issue 2, Done-when 4: every corrupt GGUF of the committed corpus makes
# `prosgrow generate` and `prosgrow tokenize` exit 2 with exactly one line on
# stderr. Labelled "unit", so scripts/test.sh also runs it on the ASan+UBSan
# build of the binary, where any sanitizer report aborts with another code.
#
# usage: cli_corrupt_check.sh PROSGROW_BIN CORPUS_DIR
set -uo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 PROSGROW_BIN CORPUS_DIR" >&2
  exit 2
fi
bin=$1 corpus=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
n=0 bad=0
for f in "$corpus"/*.gguf; do
  case "$(basename "$f")" in valid_*) continue ;; esac
  for cmd in "generate -p hi -n 1" "tokenize -p hi"; do
    # shellcheck disable=SC2086
    "$bin" $cmd -m "$f" >/dev/null 2>"$err"
    rc=$?
    lines=$(wc -l <"$err")
    if [[ $rc -ne 2 || $lines -ne 1 ]]; then
      echo "FAIL $(basename "$f") [$cmd]: exit $rc, $lines stderr lines:" >&2
      head -c 2000 "$err" >&2
      bad=$((bad + 1))
    fi
  done
  n=$((n + 1))
done
if [[ $n -lt 40 ]]; then
  echo "only $n corrupt files found in $corpus" >&2
  exit 1
fi
if [[ $bad -ne 0 ]]; then
  echo "$bad of $((2 * n)) runs failed" >&2
  exit 1
fi
echo "all $n corrupt files: exit 2 with one line, for generate and tokenize"
