#!/usr/bin/env bash
# POST /tokenize against a real `prosgrow serve` (tests/tokenize_check.py).
# usage: tokenize_check.sh PROSGROW_BIN
set -uo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/serve_lib.sh
source "$here/serve_lib.sh" || exit 2
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
"$bin" make-model --shape tiny --type f16 -o "$work/tiny.gguf" >/dev/null 2>&1 || { echo "FAIL: make-model"; exit 1; }
serve_lib_serve "$work/serve.log" "$bin" serve -m "$work/tiny.gguf" --port 0 --threads 2 --api-key k || exit 1
python3 "$here/tokenize_check.py" "$SERVE_LIB_URL" || exit 1
