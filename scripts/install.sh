#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds nvmf-target and nvmf-host optimised and installs them into PREFIX/bin.
#
# Usage: scripts/install.sh [PREFIX]
#   PREFIX: where to install (default /usr/local); the binaries go to PREFIX/bin, created when
#   missing. Builds `bazel build -c opt //target:nvmf-target //host:nvmf-host` (.bazelrc links
#   our libraries into each binary statically, --dynamic_mode=off, so they need only the
#   system's libraries: rdma-core's libibverbs and librdmacm, liburing) and copies them with
#   `install -m 0755`, printing each path installed. Root is needed only when PREFIX/bin is not
#   yours to write. Both binaries refuse to start when RLIMIT_MEMLOCK is below what they register
#   (raise it with `ulimit -l unlimited`, or LimitMEMLOCK=infinity in a systemd unit).
#   Bad arguments exit 2 before anything is built; a failed build or copy exits 1.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # prog and usage: read by ci/lib/args.sh
prog=install.sh usage="scripts/install.sh [PREFIX] (default /usr/local; --help)"
# shellcheck source=/dev/null # ci/lib/args.sh is shellchecked on its own
. "$here/../ci/lib/args.sh"

prefix=
given=0
for arg in "$@"; do
  case "$arg" in
    -h | --help)
      sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    -*) usage_error "unknown option '$arg' (try --help)" ;;
    *)
      [ "$given" = 0 ] || usage_error "unexpected argument '$arg' (it takes one PREFIX)"
      prefix=$arg
      given=1
      ;;
  esac
done
[ "$given" = 0 ] && prefix=/usr/local
[ -n "$prefix" ] || usage_error "PREFIX is empty"
if [ -e "$prefix" ] && ! [ -d "$prefix" ]; then usage_error "PREFIX $prefix is not a directory"; fi
case $prefix in /*) ;; *) prefix=$PWD/$prefix ;; esac
prefix=${prefix%/}
dest=$prefix/bin

# Writable before a build of minutes: the nearest existing directory of PREFIX/bin.
probe=$dest
while ! [ -e "$probe" ]; do probe=$(dirname "$probe"); done
if ! [ -d "$probe" ] || ! [ -w "$probe" ]; then
  echo "install.sh: cannot write $probe (for $dest): run as root, or give a PREFIX you can write" >&2
  exit 1
fi

cd "$here/.."
# --symlink_prefix=/: no bazel-bin symlink of the optimised build, so that bazel-bin keeps
# pointing at the default build the test scripts run from.
bazel build -c opt --symlink_prefix=/ //target:nvmf-target //host:nvmf-host
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
install -d "$dest"
for b in target/nvmf-target host/nvmf-host; do
  install -m 0755 "$bin/$b" "$dest/${b#*/}"
  echo "install.sh: installed $dest/${b#*/}"
done
