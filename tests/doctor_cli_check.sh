#!/usr/bin/env bash
# Issue 16, `prosgrow doctor`: one line per check with its verdict, exit 0
# when ready; a failing check exits 1, and `prosgrow serve` with the same
# flags refuses to start with the same line on stderr.
#
# usage: doctor_cli_check.sh PROSGROW_BIN
set -uo pipefail
# shellcheck source=SCRIPTDIR/serve_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/serve_lib.sh" || exit 2
bin=$1
work=$(mktemp -d) || exit 2
serve_lib_remove_at_exit "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin" make-model --shape tiny --type f16 -o "$work/tiny.gguf" >/dev/null 2>&1 || fail "make-model"

out=$("$bin" doctor -m "$work/tiny.gguf" --port 0 2>&1); rc=$?
[[ $rc -eq 0 ]] || fail "doctor on a good setup exited $rc: $out"
for name in cpu model memory "kv cache" "disk tier" redis "kv events" "block hashes" "http port" gpu; do
  grep -qE "^\[ *(ok|warn|skip) *\] $name: " <<<"$out" || fail "no '$name' line in: $out"
done
grep -q "ready to serve" <<<"$out" || fail "no verdict line: $out"
# The gpu line names the compiled backends (one line, also without a GPU).
grep -qE '^\[ *(ok|skip) *\] gpu: .*backends: cpu' <<<"$out" || fail "gpu line without the backends: $out"
# --device: cpu runs; cuda is refused in one line (this build has no device executor), exit 2.
err=$("$bin" generate -m "$work/tiny.gguf" -p hi -n 1 --device cuda:0 2>&1); rc=$?
[[ $rc -eq 2 && $(wc -l <<<"$err") -eq 1 ]] && grep -q "no device executor" <<<"$err" ||
  fail "--device cuda:0 not a one-line refusal (rc $rc): $err"
"$bin" generate -m "$work/tiny.gguf" -p hi -n 1 --device cpu >/dev/null 2>&1 || fail "--device cpu failed"

# A disk-tier directory under a regular file cannot be created.
touch "$work/file"
out=$("$bin" doctor -m "$work/tiny.gguf" --port 0 --kv-disk-dir "$work/file/kv" 2>&1); rc=$?
[[ $rc -eq 1 ]] || fail "doctor with a broken disk tier exited $rc: $out"
line=$(grep '^\[FAIL\] disk tier: ' <<<"$out") || fail "no FAIL line: $out"
err=$(timeout 60 "$bin" serve -m "$work/tiny.gguf" --port 0 --kv-disk-dir "$work/file/kv" 2>&1 >/dev/null); rc=$?
[[ $rc -ne 0 && $rc -ne 124 ]] || fail "serve started (or hung) with a broken disk tier: rc $rc"
grep -qF "$line" <<<"$err" || fail "serve's refusal differs from doctor's line. doctor: $line serve: $err"

# A Redis that does not answer fails; so does an event endpoint already bound.
out=$("$bin" doctor -m "$work/tiny.gguf" --port 0 --kv-remote redis://127.0.0.1:1 2>&1); rc=$?
[[ $rc -eq 1 ]] && grep -q '^\[FAIL\] redis: ' <<<"$out" || fail "unreachable redis not a failure: $out"
# A KV-event endpoint already bound elsewhere: doctor fails, serve refuses with the same line.
ev=$(serve_lib_free_port)
# The holder says "listening" once its socket is bound, and holds it until stopped.
serve_lib_start "$work/holder.log" python3 -c "import signal,socket; s=socket.socket(); s.bind(('0.0.0.0',$ev)); s.listen(); print('listening', flush=True); signal.pause()"
holder=$SERVE_LIB_PID
serve_lib_wait_log "$holder" "$work/holder.log" '^listening' || fail "the port holder never bound port $ev"
out=$("$bin" doctor -m "$work/tiny.gguf" --port 0 --kv-events "tcp://*:$ev" 2>&1); rc=$?
line=$(grep '^\[FAIL\] kv events: ' <<<"$out") || fail "held event endpoint not a failure: $out"
err=$(timeout 300 "$bin" serve -m "$work/tiny.gguf" --port 0 --kv-events "tcp://*:$ev" 2>&1 >/dev/null); rc=$?
serve_lib_stop "$holder"
[[ $rc -ne 0 && $rc -ne 124 ]] || fail "serve started (or hung) with a held event endpoint: rc $rc"
grep -qF "$line" <<<"$err" || fail "serve's refusal differs from doctor's line. doctor: $line serve: $err"
# Block hashes: unkeyed hashes that reach disk file names are a warning that
# names the fix; with the fleet secret (file or environment) the line is ok.
out=$("$bin" doctor -m "$work/tiny.gguf" --port 0 --kv-disk-dir "$work/kv" --kv-disk-size 64MiB 2>&1)
grep -qE "^\[warn\] block hashes: not keyed: the disk tier's file names .*guessed prompt.*--kv-hash-secret-file" \
  <<<"$out" || fail "no warning for unkeyed block hashes on disk: $out"
printf 'a-fleet-secret-of-32-bytes-long!\n' >"$work/fleet.secret"
out=$("$bin" doctor -m "$work/tiny.gguf" --port 0 --kv-disk-dir "$work/kv" --kv-disk-size 64MiB \
  --kv-hash-secret-file "$work/fleet.secret" 2>&1)
grep -qE '^\[ ok \] block hashes: keyed with the fleet secret' <<<"$out" || fail "keyed hashes not ok: $out"
out=$(PROSGROW_KV_HASH_SECRET=a-fleet-secret-of-32-bytes-long! "$bin" doctor -m "$work/tiny.gguf" --port 0 2>&1)
grep -qE '^\[ ok \] block hashes: keyed' <<<"$out" || fail "PROSGROW_KV_HASH_SECRET not read: $out"
out=$(PROSGROW_KV_HASH_SECRET=short "$bin" doctor -m "$work/tiny.gguf" --port 0 2>&1); rc=$?
[[ $rc -ne 0 ]] && grep -q "PROSGROW_KV_HASH_SECRET: needs at least 16 bytes" <<<"$out" ||
  fail "a short PROSGROW_KV_HASH_SECRET was accepted (rc $rc): $out"
echo "doctor_cli_check: ok"
