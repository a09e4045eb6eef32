#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# (Sourced, not run.) Picks a guest kernel version out of several (ci/vm/fetch-kernel, ci/rxe-run).

# kver_select [SELECTOR]: reads kernel versions (as in vmlinuz-VERSION), one a line, prints the
# one SELECTOR names; fails when none matches.
#   (none)   the newest 6.x, else the newest of all (7.x rxe is ~3x slower under TCG)
#   VERSION  exactly that one (6.12.57+deb13-amd64)
#   PREFIX   the newest whose version is PREFIX followed by '.', '-' or '+': 6.12 is the newest
#            6.12.*, and 6.1 never matches 6.12.*
kver_select() {
	sort -V | awk -v sel="${1:-}" '
		sel == "" { if ($0 ~ /^6\./) six = $0; any = $0; next }
		$0 == sel { exact = $0; next }
		index($0, sel) == 1 && substr($0, length(sel) + 1, 1) ~ /[.+-]/ { pre = $0 }
		END {
			if (sel == "") pick = (six != "" ? six : any)
			else pick = (exact != "" ? exact : pre)
			if (pick == "") exit 1
			print pick
		}'
}
