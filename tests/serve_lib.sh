# shellcheck shell=bash
# serve_lib.sh: what the shell checks that start a real `prosgrow serve` (or
# `prosgrow route`, or any other server) share: start it, wait for /health,
# stop it, and clean up when the check exits. Source it, do not run it; the
# path is taken from the sourcing script's own location, so any cwd works:
#
#   # shellcheck source=SCRIPTDIR/serve_lib.sh
#   source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/serve_lib.sh" || exit 2
#
# Sourcing it sets an EXIT trap (and INT/TERM traps that exit through it), so
# a check does not set its own EXIT trap. It changes no shell option: each
# check keeps its own `set -euo pipefail` or `set -uo pipefail`. No function
# exits the script: each returns non-zero on failure (after saying why on
# stderr), and the check decides with `|| fail ...` or `|| exit 2`, or lets
# `set -e` end it. A function that records state (serve_lib_start,
# serve_lib_serve, serve_lib_wait_health, serve_lib_stop,
# serve_lib_remove_at_exit, serve_lib_tail_on_failure) must run in the
# check's own shell, not in `$(...)`, or the record is lost.
#
# Functions:
#   serve_lib_free_port
#       prints a TCP port free on 127.0.0.1 at the time of the call (for
#       endpoints that cannot be given port 0; for HTTP prefer `--port 0`).
#   serve_lib_remove_at_exit PATH...
#       removes each PATH (a temporary directory or file) at exit:
#       `work=$(mktemp -d) || exit 2; serve_lib_remove_at_exit "$work"`.
#   serve_lib_start LOG CMD...
#       runs CMD in the background (a server, or a helper such as a Redis or
#       a port holder), stdout and stderr to LOG; sets SERVE_LIB_PID. The
#       process is stopped at exit, and LOG's tail is printed if the check
#       fails.
#   serve_lib_wait_health PID LOG [URL]
#       polls URL/health until it answers 2xx. Without URL, the URL comes from
#       the "listening on http://HOST:PORT" line of LOG (so `--port 0` works).
#       Sets SERVE_LIB_URL (http://127.0.0.1:PORT) and SERVE_LIB_PORT. Returns
#       1 with LOG's tail printed if PID exits first or nothing answers within
#       SERVE_LIB_HEALTH_TIMEOUT_S seconds (default 120).
#   serve_lib_serve LOG CMD...
#       serve_lib_start then serve_lib_wait_health (URL from the log): sets
#       SERVE_LIB_PID, SERVE_LIB_URL, SERVE_LIB_PORT.
#   serve_lib_wait_log PID LOG REGEX [TIMEOUT_S]
#       waits until a line of LOG matches REGEX (grep -E), e.g. a helper's
#       "listening" once its socket is bound. Returns 1 with LOG's tail
#       printed if PID exits first or no line matches within TIMEOUT_S
#       seconds (default SERVE_LIB_HEALTH_TIMEOUT_S, 120).
#   serve_lib_stop PID [TIMEOUT_S]
#       SIGTERM, waits up to TIMEOUT_S seconds (default 10), then SIGKILL, and
#       reaps it. Returns 1 if PID had already exited before the call (a
#       server that died on its own is a failure the check may care about).
#   serve_lib_tail_on_failure PATH...
#       if the check exits non-zero (other than 77, "skipped"), prints the
#       last lines of each PATH, or of each PATH/*.log for a directory.
#
# At exit: every tracked process gets SIGTERM (SIGKILL after 10 s), then, on
# failure, the tails of the server logs and of the paths named to
# serve_lib_tail_on_failure, then the paths given to serve_lib_remove_at_exit
# are removed. The check's exit status is kept.
#
# Thread-safety: none needed; one shell, one check. Needs bash 4.4+, curl,
# python3 (serve_lib_free_port only), Linux /proc.

# Set for the sourcing check (see above).
# shellcheck disable=SC2034
SERVE_LIB_PID="" SERVE_LIB_URL="" SERVE_LIB_PORT=""
_serve_lib_pids=()        # processes to stop at exit
_serve_lib_temp_paths=()  # paths to remove at exit
_serve_lib_tails=()       # files or directories whose tails are shown on failure

serve_lib_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

serve_lib_remove_at_exit() {
  _serve_lib_temp_paths+=("$@")
}

serve_lib_tail_on_failure() {
  _serve_lib_tails+=("$@")
}

# True while PID runs (an exited child not yet reaped is a zombie, which
# `kill -0` still reaches, so /proc's state decides).
_serve_lib_alive() {
  local stat state
  kill -0 "$1" 2>/dev/null || return 1
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  state=${stat##*) }
  state=${state%% *}
  [[ $state != Z && $state != X ]]
}

_serve_lib_untrack() {
  local p kept=()
  for p in "${_serve_lib_pids[@]}"; do
    [[ $p == "$1" ]] || kept+=("$p")
  done
  _serve_lib_pids=("${kept[@]}")
}

serve_lib_start() {
  local log=$1
  shift
  # Emptied here, not by the background job, so serve_lib_wait_health cannot
  # read an earlier server's "listening on" line from a reused LOG.
  : >"$log" || { echo "serve_lib: cannot write $log" >&2; return 1; }
  "$@" >>"$log" 2>&1 &
  SERVE_LIB_PID=$!
  _serve_lib_pids+=("$SERVE_LIB_PID")
  _serve_lib_tails+=("$log")
}

# Prints http://127.0.0.1:PORT from the first "listening on http://HOST:PORT"
# line of LOG, or nothing while there is none. Only whole lines count (`read`
# fails on a last line without its newline), so a port half written is not
# taken for another.
_serve_lib_url_from_log() {
  local line re='listening on http://[^ ]*:([0-9]+)'
  while IFS= read -r line; do
    if [[ $line =~ $re ]]; then
      echo "http://127.0.0.1:${BASH_REMATCH[1]}"
      break
    fi
  done 2>/dev/null <"$1"
  return 0
}

_serve_lib_show_log() {  # LOG WHY
  echo "serve_lib: $2; last lines of $1:" >&2
  tail -n 40 "$1" >&2 2>/dev/null || true
}

serve_lib_wait_health() {
  local pid=$1 log=$2 url=${3:-} rc=0
  local timeout_s=${SERVE_LIB_HEALTH_TIMEOUT_S:-120}
  local deadline=$((SECONDS + timeout_s))
  while ((SECONDS < deadline)); do
    if ! _serve_lib_alive "$pid"; then
      wait "$pid" 2>/dev/null || rc=$?
      _serve_lib_untrack "$pid"
      _serve_lib_show_log "$log" "process $pid exited (status $rc) before /health answered"
      return 1
    fi
    [[ -n $url ]] || url=$(_serve_lib_url_from_log "$log")
    if [[ -n $url ]] && curl -fsS -o /dev/null --max-time 5 "$url/health" 2>/dev/null; then
      SERVE_LIB_URL=$url SERVE_LIB_PORT=${url##*:}
      return 0
    fi
    sleep 0.1
  done
  _serve_lib_show_log "$log" \
    "${url:-the server (no 'listening on' line yet)}/health did not answer within ${timeout_s} s"
  return 1
}

serve_lib_wait_log() {
  local pid=$1 log=$2 re=$3 timeout_s=${4:-${SERVE_LIB_HEALTH_TIMEOUT_S:-120}}
  local deadline=$((SECONDS + timeout_s))
  while ((SECONDS < deadline)); do
    grep -qE -- "$re" "$log" 2>/dev/null && return 0
    if ! _serve_lib_alive "$pid"; then
      grep -qE -- "$re" "$log" 2>/dev/null && return 0
      _serve_lib_show_log "$log" "process $pid exited before its log said /$re/"
      return 1
    fi
    sleep 0.1
  done
  _serve_lib_show_log "$log" "no line of $log matched /$re/ within ${timeout_s} s"
  return 1
}

serve_lib_serve() {
  serve_lib_start "$@" || return 1
  serve_lib_wait_health "$SERVE_LIB_PID" "$1"
}

# Waits until PID has exited, up to TIMEOUT_S seconds; SIGKILL after that.
_serve_lib_reap() {
  local pid=$1 tries=$((${2:-10} * 10))
  while ((tries-- > 0)) && _serve_lib_alive "$pid"; do
    sleep 0.1
  done
  if _serve_lib_alive "$pid"; then
    echo "serve_lib: process $pid ignored SIGTERM for ${2:-10} s; sending SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  _serve_lib_untrack "$pid"
}

serve_lib_stop() {
  local pid=$1
  if ! _serve_lib_alive "$pid"; then
    wait "$pid" 2>/dev/null || true
    _serve_lib_untrack "$pid"
    echo "serve_lib: process $pid had already exited" >&2
    return 1
  fi
  kill -TERM "$pid" 2>/dev/null || true
  _serve_lib_reap "$pid" "${2:-10}"
}

_serve_lib_print_tails() {
  local path file
  local -A shown=()
  for path in "${_serve_lib_tails[@]}"; do
    if [[ -d $path ]]; then
      set -- "$path"/*.log
    else
      set -- "$path"
    fi
    for file in "$@"; do
      [[ -f $file && -z ${shown[$file]:-} ]] || continue
      shown[$file]=1
      echo "--- tail of $file" >&2
      tail -n 15 "$file" >&2
    done
  done
}

_serve_lib_on_exit() {
  local rc=$? pid
  set +e
  for pid in "${_serve_lib_pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null
  done
  for pid in "${_serve_lib_pids[@]}"; do
    _serve_lib_reap "$pid" 10
  done
  if [[ $rc -ne 0 && $rc -ne 77 ]]; then
    _serve_lib_print_tails
  fi
  if ((${#_serve_lib_temp_paths[@]})); then
    rm -rf "${_serve_lib_temp_paths[@]}"
  fi
  exit "$rc"
}

trap _serve_lib_on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
