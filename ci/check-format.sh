#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fails when clang-format (per .clang-format) would change any tracked C++ file, or when any
# shell script of ci/, scripts/ and .ci/ has a shellcheck finding.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' 2>/dev/null || find . -name '*.cc' -o -name '*.h')
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: clang-format would change: ${bad[*]}" >&2
  echo "check-format: run: clang-format -i ${bad[*]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} C++ files clean"

# Shell scripts: by their #! line (several have no .sh suffix: ci/rxe-run, ci/vm/init, .ci/run).
scripts=()
while IFS= read -r f; do
  [ -f "$f" ] || continue
  head -n 1 "$f" | grep -qE '^#!.*[/ ](ba)?sh( |$)' && scripts+=("$f")
done < <(git ls-files ci scripts .ci 2>/dev/null || find ci scripts .ci -type f)
command -v shellcheck >/dev/null || {
  echo "check-format: shellcheck is missing (run scripts/setup.sh)" >&2
  exit 1
}
[ ${#scripts[@]} -gt 0 ] || {
  echo "check-format: no shell scripts found under ci/ scripts/ .ci/" >&2
  exit 1
}
if ! shellcheck "${scripts[@]}"; then
  echo "check-format: shellcheck findings above (in ${#scripts[@]} scripts)" >&2
  exit 1
fi
echo "check-format: ${#scripts[@]} shell scripts shellcheck clean"
