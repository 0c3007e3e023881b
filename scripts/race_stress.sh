#!/usr/bin/env bash
# Runs the checks that once raced (issue 23: the router's placement and
# failover, doctor's held-port check, the remote tier's write-behind and
# lookup deadline) N times each under `stress --cpu 2` (Debian's stress), and
# prints how many runs of each passed. A benchmark-style check, not part of
# the README test command: its load is the point.
#
# usage: scripts/race_stress.sh [BUILD_DIR] [N]   (defaults: build 20)
#        RACE_CHECKS='doctor_cli ...' picks the checks (ctest -R patterns).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
n=${2:-20}
command -v stress >/dev/null || { echo "race_stress: stress is not installed (apt-get install stress)" >&2; exit 2; }
checks=(route_two_replicas doctor_cli 'e2e_tests\.KvRemote\.')
[[ -n ${RACE_CHECKS:-} ]] && read -r -a checks <<<"$RACE_CHECKS"
stress --cpu 2 >/dev/null 2>&1 &
load=$!
trap 'kill $load 2>/dev/null' EXIT
rc=0
for check in "${checks[@]}"; do
  pass=0
  for ((i = 1; i <= n; i++)); do
    if ctest --test-dir "$build" -R "^${check}" --timeout 600 >/dev/null 2>&1; then
      pass=$((pass + 1))
    else
      echo "  $check: run $i failed (ctest --test-dir $build -R '^${check}' --output-on-failure)"
    fi
  done
  echo "$check: $pass of $n runs passed under stress --cpu 2"
  [[ $pass -eq $n ]] || rc=1
done
exit "$rc"
