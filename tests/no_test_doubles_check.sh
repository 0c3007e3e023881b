#!/usr/bin/env bash
# Test doubles never ship: `nm -C` over the prosgrow binary and every static
# library it links, failing on any symbol that names a fake, a mock or the
# test-support namespace (pg::testing, src/testing).
#
# usage: no_test_doubles_check.sh --expect-clean FILE...   (the shipped files)
#        no_test_doubles_check.sh --expect-found FILE...   (self-check on pg_testing:
#                                                           the pattern must match there)
# Exit: 0 as expected, 1 otherwise, 2 usage error.
set -euo pipefail
mode=${1:-}
shift || true
if [[ "$mode" != --expect-clean && "$mode" != --expect-found ]] || [[ $# -eq 0 ]]; then
  echo "usage: $0 --expect-clean|--expect-found FILE..." >&2
  exit 2
fi
pattern='(^|[^A-Za-z0-9])(Fake|Mock)[A-Z][A-Za-z0-9_]*|pg::testing::|pg::bench::MockOpenAiServer|(^|[^A-Za-z])(fake|mock)_[a-z_]+\.cc'
found=0
for f in "$@"; do
  [[ -f "$f" ]] || { echo "missing: $f" >&2; exit 2; }
  hits=$(nm -C "$f" 2>/dev/null | grep -E "$pattern" | head -5 || true)
  if [[ -n "$hits" ]]; then
    found=1
    if [[ "$mode" == --expect-clean ]]; then
      echo "test double in $f:" >&2
      echo "$hits" >&2
    fi
  fi
done
if [[ "$mode" == --expect-clean ]]; then
  [[ $found -eq 0 ]] && echo "no test doubles in $# files"
  exit $found
fi
if [[ $found -eq 0 ]]; then
  echo "the pattern found nothing in $*: the check would not see a test double" >&2
  exit 1
fi
echo "the pattern finds the test doubles in $*"
