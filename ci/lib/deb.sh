#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# (Sourced, not run.) Debian packages fetched without installing them (ci/vm/fetch-kernel,
# ci/vm/fetch-tools): `apt-get download` needs no root and writes nothing to dpkg's database, so
# no maintainer script or dpkg trigger (update-initramfs, depmod) runs on this machine.

# deb_candidate PACKAGE: prints the version apt would install (empty without apt lists).
deb_candidate() {
	{ apt-cache show --no-all-versions "$1" 2>/dev/null || true; } | awk '/^Version:/ { print $2; exit }'
}

# deb_download PACKAGE DIR: downloads PACKAGE's candidate .deb into DIR, prints its path.
deb_download() {
	local sandbox=()
	# As root, apt would hand the download to its unprivileged _apt user, which cannot write DIR.
	[[ $EUID -ne 0 ]] || sandbox=(-o APT::Sandbox::User=root)
	(cd "$2" && apt-get download -q "${sandbox[@]}" "$1") >/dev/null || return 1
	compgen -G "$2/${1}_*.deb" | head -n 1
}
