#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# (Sourced, not run.) Argument errors of the scripts that take arguments (scripts/loopback.sh,
# ci/bench-compare.sh, ci/fuzz.sh, ci/bench/scale.sh, ci/bench/poll-groups.sh,
# ci/restart-figures.sh): they check every argument before anything else runs, and refuse with
# their own message and exit code 2.
# The script sets `prog` (its name in messages) and `usage` (its usage line) first.

# usage_error MESSAGE...: "PROG: MESSAGE" and "usage: USAGE" on stderr, then exit 2.
usage_error() {
  echo "${prog:?}: $*" >&2
  echo "usage: ${usage:?}" >&2
  exit 2
}

# value OPT ARGS...: prints the value that follows OPT (call it as `v=$(value "$@") || exit 2`
# with OPT first in "$@"); a missing or empty one is a usage_error naming OPT.
value() {
  if [ $# -lt 2 ] || [ -z "$2" ]; then usage_error "$1 needs a value"; fi
  printf '%s' "$2"
}
