#!/usr/bin/env bash
# Runs one GoogleTest binary for CTest (the CROSSCOMPILING_EMULATOR that
# prosgrow_gtest_cases sets, so gtest_discover_tests runs every case through
# it): its output passes through unchanged, and a run that exits 0 with its
# case skipped (GTEST_SKIP: "[  SKIPPED ] 1 test") exits 77, which CTest
# reports as Skipped (SKIP_RETURN_CODE). A case that failed keeps its
# non-zero status even if it also printed a skip, so a skip never hides a
# failure. Listing (--gtest_list_tests) passes through as well.
set -uo pipefail
log=$(mktemp) || exit 2
trap 'rm -f "$log"' EXIT
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [[ $rc -eq 0 ]] && grep -q '^\[  SKIPPED \] 1 test' "$log"; then
  exit 77
fi
exit "$rc"
