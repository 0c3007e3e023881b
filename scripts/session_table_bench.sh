#!/usr/bin/env bash
# Bounded session state (issue 23): a real `prosgrow serve` on the tiny
# synthetic model with fair share on, and scripts/session_table_bench.py
# sending N distinct session ids. Prints RSS and the eviction probe before and
# after (docs/performance.md, "Session table").
#
# usage: session_table_bench.sh BUILD_DIR [SESSIONS] [extra serve flags...]
set -euo pipefail
build=$1
sessions=${2:-100000}
shift $(( $# >= 2 ? 2 : 1 ))
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../tests/serve_lib.sh
source "$here/../tests/serve_lib.sh" || exit 2
work=$(mktemp -d)
serve_lib_remove_at_exit "$work"
"$build/prosgrow" make-model --shape tiny --vocab builtin --type q8_0 -o "$work/tiny.gguf" >/dev/null
serve_lib_serve "$work/serve.log" "$build/prosgrow" serve -m "$work/tiny.gguf" --port 0 --threads 2 \
  --policy optimized --kv-device-mem 256KiB --kv-host-mem 1MiB --kv-fair-share --http-threads 32 "$@"
python3 "$here/session_table_bench.py" --url "$SERVE_LIB_URL" --pid "$SERVE_LIB_PID" --sessions "$sessions"
