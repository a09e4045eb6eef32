#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# (Sourced, not run.) Debian packages fetched without installing them (ci/vm/fetch-kernel,
# ci/vm/fetch-tools): `apt-get download` needs no root and writes nothing to dpkg's database, so
# no maintainer script or dpkg trigger (update-initramfs, depmod) runs on this machine.

# Options for every apt-get and apt-cache call below: empty for the machine's own apt
# configuration; deb_private_apt points them at a private one.
deb_apt_opts=()

# deb_candidate PACKAGE: prints the version apt would install (empty without apt lists).
deb_candidate() {
	{ apt-cache "${deb_apt_opts[@]}" show --no-all-versions "$1" 2>/dev/null || true; } |
		awk '/^Version:/ { print $2; exit }'
}

# deb_depends PACKAGE: prints the names of the candidate's Depends, one a line (empty without
# apt lists).
deb_depends() {
	{ apt-cache "${deb_apt_opts[@]}" depends --important "$1" 2>/dev/null || true; } |
		awk '$1 == "Depends:" { print $2 }'
}

# deb_download PACKAGE DIR: downloads PACKAGE's candidate .deb into DIR, prints its path.
deb_download() {
	local sandbox=()
	# As root, apt would hand the download to its unprivileged _apt user, which cannot write DIR.
	[[ $EUID -ne 0 ]] || sandbox=(-o APT::Sandbox::User=root)
	(cd "$2" && apt-get "${deb_apt_opts[@]}" download -q "${sandbox[@]}" "$1") >/dev/null || return 1
	compgen -G "$2/${1}_*.deb" | head -n 1
}

# deb_sources: the machine's enabled binary (`deb`) apt sources, one a line: URI SUITE [SIGNED-BY].
# Reads the files apt reads: Dir::Etc::SourceList and Dir::Etc::SourceParts/*.list in the
# one-line format, SourceParts/*.sources in the deb822 format. SIGNED-BY is given only where it
# names keyring files (an inline key block is left out: apt's trusted keyrings then apply).
deb_sources() {
	local list=/etc/apt/sources.list parts=/etc/apt/sources.list.d f
	eval "$(apt-config shell list Dir::Etc::SourceList/f parts Dir::Etc::SourceParts/d 2>/dev/null)"
	for f in "$list" "${parts%/}"/*.list; do
		[[ -r $f ]] || continue
		awk '{ sub(/#.*/, "") }
			$1 != "deb" { next }
			{
				i = 2; sb = ""
				if ($2 ~ /^\[/) { # [ option=value ... ]
					opts = ""
					for (; i <= NF; i++) { opts = opts " " $i; if ($i ~ /\]$/) { i++; break } }
					gsub(/[][]/, " ", opts)
					n = split(opts, o, " ")
					for (k = 1; k <= n; k++) if (o[k] ~ /^signed-by=\//) sb = substr(o[k], 11)
				}
				if (i + 1 <= NF) print $i, $(i + 1), sb
			}' "$f"
	done
	for f in "${parts%/}"/*.sources; do
		[[ -r $f ]] || continue
		awk 'function flush(  nu, ns, a, b, u, s) {
				if (types ~ /(^|[ \t])deb([ \t]|$)/ && tolower(enabled) != "no") {
					nu = split(uris, u, /[ \t]+/)
					ns = split(suites, s, /[ \t]+/)
					for (a = 1; a <= nu; a++) for (b = 1; b <= ns; b++) print u[a], s[b], sb
				}
				types = uris = suites = sb = enabled = ""
			}
			/^#/ { next }
			/^[ \t]*$/ { flush(); next }
			/^[ \t]/ { next } # a continued field: only Signed-By (an inline key) has them
			{
				c = index($0, ":")
				field = tolower(substr($0, 1, c - 1))
				val = substr($0, c + 1)
				gsub(/^[ \t]+|[ \t]+$/, "", val)
				if (field == "types") types = val
				else if (field == "uris") uris = val
				else if (field == "suites") suites = val
				else if (field == "enabled") enabled = val
				else if (field == "signed-by" && val ~ /^\//) { sb = val; gsub(/[ \t]+/, ",", sb) }
			}
			END { flush() }' "$f"
	done
}

# deb_private_apt SUITE DIR: points deb_apt_opts at a private apt configuration in DIR for the
# Debian suite SUITE and updates its package lists. Its sources are the machine's entries for the
# machine's own suite (VERSION_CODENAME of /etc/os-release) and that suite's -updates and
# -security, with SUITE in their place: same mirrors, same Signed-By keyrings, component main.
# Its sources list, lists, cache and (empty) dpkg status live in DIR, and the machine's update
# hooks do not run, so nothing of the machine's apt state changes; the machine's apt.conf.d
# (proxies, for one) still applies. Fails, with apt's messages on stderr, when the machine has
# no such entry or the update fails (offline, or a Release file that does not verify).
deb_private_apt() {
	local suite=$1 dir=$2 codename uri s sb line out
	# shellcheck source=/dev/null
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[[ -n $codename ]] || {
		echo "deb_private_apt: /etc/os-release names no VERSION_CODENAME" >&2
		return 1
	}
	mkdir -p "$dir"/{lists/partial,cache/archives/partial,sources.list.d,preferences.d}
	: >"$dir/status"
	out=$(while read -r uri s sb; do
		case $s in
		"$codename") s=$suite ;;
		"$codename"-updates) s=$suite-updates ;;
		"$codename"-security) s=$suite-security ;;
		*) continue ;;
		esac
		echo "deb [${sb:+signed-by=$sb}] $uri $s main"
	done < <(deb_sources) | sed 's/\[\] //' | sort -u)
	if [[ -z $out ]]; then
		echo "deb_private_apt: no apt source of this machine is for its suite $codename" >&2
		return 1
	fi
	printf '%s\n' "$out" >"$dir/sources.list"
	{
		for line in "SourceList sources.list" "SourceParts sources.list.d" \
			"Preferences preferences" "PreferencesParts preferences.d"; do
			echo "Dir::Etc::${line% *} \"$dir/${line#* }\";"
		done
		echo "Dir::State::Lists \"$dir/lists\";"
		echo "Dir::State::status \"$dir/status\";"
		echo "Dir::Cache \"$dir/cache\";"
		echo 'Acquire::Languages "none";'
		# As root, apt hands downloads to its _apt user, which cannot write DIR.
		[[ $EUID -ne 0 ]] || echo 'APT::Sandbox::User "root";'
		echo '#clear APT::Update::Pre-Invoke;'
		echo '#clear APT::Update::Post-Invoke;'
		echo '#clear APT::Update::Post-Invoke-Success;'
		echo '#clear Acquire::IndexTargets::deb::DEP-11;'
	} >"$dir/apt.conf"
	deb_apt_opts=(-c "$dir/apt.conf")
	apt-get "${deb_apt_opts[@]}" update -q >"$dir/update.log" 2>&1 || {
		grep -E '^(E|W):' "$dir/update.log" >&2 || tail -n 5 "$dir/update.log" >&2
		return 1
	}
	# apt-get update reports a Release file that does not verify as a warning, and leaves that
	# suite's old lists (or none) in place.
	if grep -qE '^W: .*(NO_PUBKEY|not signed|EXPKEYSIG|BADSIG|is not valid|could not be verified)' "$dir/update.log"; then
		grep -E '^(E|W):' "$dir/update.log" >&2
		return 1
	fi
}
