#!/usr/bin/env bash
# Checks every C++ source under src, apps, tests, bench and fuzz against
# .clang-format (clang-format 14, Debian 12). Exit 1 and the offending files
# when any differs. --fix rewrites them in place instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -- 'src/*' 'apps/*' 'tests/*' 'bench/*' 'fuzz/*' |
  grep -E '\.(cc|h|cu|cuh|cpp|hpp)$')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: ${#bad[@]} file(s) differ from .clang-format (scripts/check_format.sh --fix):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
