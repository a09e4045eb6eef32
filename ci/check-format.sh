#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fails when clang-format (per .clang-format) would change any tracked C++ file, when a host
# program (host/main.cc, host/cli, host/bench, ublk, examples) includes an internal host header, when any
# shell script of ci/, scripts/ and .ci/ has a shellcheck finding, or when a tracked file speaks
# of the project's history instead of the code (see words_re below).
#
# Usage: ci/check-format.sh [--words-only]
#   --words-only: only the wording check (no clang-format, no shellcheck); ci/check_words_test.sh.
set -euo pipefail
words_only=0
case "${1-}" in
  "") ;;
  --words-only) words_only=1 ;;
  *)
    echo "check-format.sh: unknown argument '$1'" >&2
    echo "usage: ci/check-format.sh [--words-only]" >&2
    exit 2
    ;;
esac
cd "$(dirname "$0")/.."

# Wording: code, comments, test names and scripts say what the code does and why (citing the
# spec section or the kernel/SPDK behaviour it mirrors), never the history of its making: no
# tracker or work-session numbers, lettered test machines, people, or merge narratives.
# words_scope: git pathspecs of the tracked files searched (binary files are skipped). Markdown
# is in scope: the docs follow the same rule.
words_scope=(. ':(exclude)third_party')
# words_re: an extended regex; every line it matches is a finding, printed PATH:LINE:TEXT.
words_re='\b([Ss]ession [0-9]+|[Ii]ssues? #?[0-9]+|[Mm]achines? [A-H]\b|on [A-H]\b|[Ee]ngineers?\b'
words_re+='|[Bb]reak-?it\b|[Bb]reakers?\b|[Hh]elper sessions?\b|[Ss]top [0-9]+\b|\(owner: '
words_re+='|(the|a|after|before) merge\b|merge (conflict|commit|request)s?\b)'
# words_allow: extended regexes of legitimate findings, each matched against PATH:LINE:TEXT
# (none so far: "NVMe session", "issue a command" and "helper" functions do not match words_re).
words_allow=()

check_words() {
  local hits a rc=0
  # grep exits 1 for no match, 2 or more when it failed (a bad pattern or pathspec): a failed
  # search must not read as a clean tree.
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    hits=$(git grep -nIE -e "$words_re" -- "${words_scope[@]}") || rc=$?
  else
    hits=$(grep -rnIE --exclude-dir=.git --exclude-dir=third_party --exclude-dir='bazel-*' \
      -e "$words_re" .) || rc=$?
    # shellcheck disable=SC2001 # a prefix on every line, not one substitution
    hits=$(sed 's|^\./||' <<<"$hits")
  fi
  if [ "$rc" -gt 1 ]; then
    echo "check-format: the wording search failed (grep exit $rc)" >&2
    return 1
  fi
  for a in "${words_allow[@]}"; do
    hits=$(grep -vE -e "$a" <<<"$hits" || true)
  done
  if [ -n "$hits" ]; then
    printf '%s\n' "$hits"
    echo "check-format: $(wc -l <<<"$hits") lines above speak of the project's history, not" \
      "the code: say what the code does and why (ci/check-format.sh words_re, words_allow)" >&2
    return 1
  fi
  echo "check-format: wording clean (${words_scope[*]})"
}

if [ "$words_only" = 1 ]; then
  check_words
  exit
fi

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

# The host library's programs and examples (nvmf-host's main.cc included) include only its
# public headers (host_lib's hdrs in host/BUILD) and their own folders' headers; the library's internal ones are for its tests and
# the raw-capsule layer (host/raw, host/conform, ci/, fuzz/).
public=$(sed -n '/name = "host_lib"/,/^)/p' host/BUILD | sed -n '/hdrs = \[/,/\]/p' |
  grep -oE '"[a-z_]+\.h"' | sed 's|^"|"host/|')
[ -n "$public" ] || {
  echo "check-format: no hdrs found for host_lib in host/BUILD" >&2
  exit 1
}
rc=0
includes=$(git grep -nE '#include "host/[a-z_]+\.h"' -- host/main.cc host/cli host/bench ublk \
  examples) || rc=$?
if [ "$rc" -gt 1 ]; then
  echo "check-format: the include search failed (git grep exit $rc)" >&2
  exit 1
fi
layer_bad=$(grep -vF -f <(printf '%s\n' "$public") <<<"$includes" || true)
if [ -n "$layer_bad" ]; then
  printf '%s\n' "$layer_bad"
  echo "check-format: the lines above include an internal host header; programs use the" \
    "library's public headers (host_lib's hdrs)" >&2
  exit 1
fi
echo "check-format: host programs include only host_lib's public headers"

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

check_words
