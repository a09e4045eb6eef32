#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Tests ci/check-format.sh's wording check (--words-only) in a throwaway git repository: it
# passes on tracked files that only describe the code (and ignores third_party/ and untracked
# files), and fails on a planted work-session comment, naming its file and line.
set -euo pipefail
script=${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-nvmf_rdma}/ci/check-format.sh
[ -f "$script" ] || script=$(dirname "$0")/check-format.sh
repo=$(mktemp -d -p "${TEST_TMPDIR:-/tmp}")
trap 'rm -rf "$repo"' EXIT
mkdir -p "$repo/ci" "$repo/src" "$repo/third_party/lib"
cp "$script" "$repo/ci/check-format.sh"
chmod +x "$repo/ci/check-format.sh"
git -C "$repo" init -q
# The planted words are put together at run time, so this file passes the check itself.
planted="sess""ion 3"
cat >"$repo/src/queue.cc" <<'CC'
// SPDX-License-Identifier: BSD-3-Clause
// Posts the response before the next receive (NVMe over Fabrics 1.1, 7.3.2), as nvmet-rdma does.
int post_response() { return 0; }
CC
printf '// %s: vendored text is not ours to reword\n' "$planted" >"$repo/third_party/lib/x.cc"
printf '// %s: not tracked\n' "$planted" >"$repo/src/untracked.cc"
git -C "$repo" add ci src/queue.cc third_party

fail=0
check() { # check NAME WANT_RC WANT_TEXT: runs the check in $repo
  local out rc=0
  out=$(cd "$repo" && ci/check-format.sh --words-only 2>&1) || rc=$?
  echo "--- $1: rc $rc"
  echo "$out"
  if [ "$rc" != "$2" ]; then
    echo "FAIL: $1: exit $rc, want $2"
    fail=1
  fi
  if ! grep -qF -- "$3" <<<"$out"; then
    echo "FAIL: $1: no '$3' in the output"
    fail=1
  fi
}

check clean 0 "wording clean"

printf '// %s: found while testing the queue\nint x;\n' "$planted" >"$repo/src/planted.cc"
sed -i "2i // ${planted}: the history of this line" "$repo/src/queue.cc"
git -C "$repo" add src/planted.cc
check planted 1 "src/planted.cc:1:// ${planted}:"
check planted_in_tracked 1 "src/queue.cc:2:// ${planted}:"
out=$(cd "$repo" && { ci/check-format.sh --words-only 2>&1 || true; })
if grep -qE 'third_party|untracked' <<<"$out"; then
  echo "FAIL: third_party/ or an untracked file was searched"
  fail=1
fi

# Legitimate wording stays clean: an NVMe session, issuing commands, helper functions.
git -C "$repo" rm -q --cached src/planted.cc
sed -i 2d "$repo/src/queue.cc"
printf '// The host may issue commands in its session; helpers in common/.\n' >>"$repo/src/queue.cc"
check legitimate 0 "wording clean"

# A finding that is legitimate after all passes once words_allow names it.
printf '// The host may issue %s commands at once.\n' 4 >>"$repo/src/queue.cc"
check not_allowed 1 "src/queue.cc:5:// The host may issue"
# (The entry's own line must not match words_re: hence [4].)
sed -i "s|^words_allow=()|words_allow=('^src/queue[.]cc:[0-9]+:.*issue [4] commands')|" \
  "$repo/ci/check-format.sh"
grep -qF "words_allow=('^src/" "$repo/ci/check-format.sh" || {
  echo "FAIL: no words_allow=() line in $script"
  fail=1
}
check allowed 0 "wording clean"

[ "$fail" = 0 ] && echo PASS
exit "$fail"
