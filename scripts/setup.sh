#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian packages nvmf-rdma uses (no recommended packages), says how much first; idempotent.
#
# Usage: scripts/setup.sh [--no-vm] [--vm] [--bench] [--list]
#   Build, test and RDMA user-space packages are always installed. QEMU and a kernel for the
#   soft-RoCE guest of ci/rxe-run are set up only when the running kernel has no rdma_rxe
#   module, or with --vm; --no-vm never. The guest's kernel is Debian's linux-image package
#   unpacked into ~/.cache/nvmf-rdma/kernels (ci/vm/fetch-kernel; also Debian 13's 6.12 for
#   NVMF_RXE_KERNEL=6.12, the default staying this machine's suite's), its busybox-static and the
#   interop suite's dmsetup into ~/.cache/nvmf-rdma/tools (ci/vm/fetch-tools): installing those
#   packages would run update-initramfs, so nothing touches this machine's /boot or /lib/modules.
#   --bench adds gnuplot for ci/bench-compare.sh's plot. --list prints every package this script
#   may install (all groups), one a line, and exits.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

want_vm=auto
want_bench=0
list_only=0
for arg in "$@"; do
  case "$arg" in
    --vm) want_vm=yes ;;
    --no-vm) want_vm=no ;;
    --bench) want_bench=1 ;;
    --list) list_only=1 ;;
    -h | --help)
      sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "setup.sh: unknown option '$arg' (try --help)" >&2
      exit 2
      ;;
  esac
done

# Build and unit tests: Bazel (Debian's bootstrap build, with the Java rules its WORKSPACE
# points at), GoogleTest's sources (built by Bazel), CLI11, nlohmann_json; ci/check-format.sh
# runs clang-format and shellcheck; the report scripts are python3; liburing for the target's
# file and block-device backend (io_uring); OpenSSL 3's libcrypto and zlib for DH-HMAC-CHAP
# (HMAC, SHA-2, finite-field DH; the CRC-32 of a secret).
build_pkgs=(bazel-bootstrap bazel-rules-java googletest libcli11-dev nlohmann-json3-dev
  liburing-dev libssl-dev zlib1g-dev clang-format shellcheck python3)
# The fuzzers (ci/fuzz.sh, bazel --config=fuzz): clang 14 and its compiler-rt (libFuzzer, ASan,
# UBSan runtimes: -fsanitize=fuzzer comes from libclang-rt-14-dev).
build_pkgs+=(clang libclang-rt-14-dev)
# rdma-core user space: the verbs and rdma_cm libraries with the rxe provider; ibv_devices,
# rping and perftest for scripts/rxe-smoke.sh and ci/bench-compare.sh; iproute2's `rdma`
# and kmod's modprobe to create the rxe devices.
rdma_pkgs=(libibverbs-dev librdmacm-dev ibverbs-providers ibverbs-utils rdmacm-utils perftest
  iproute2 kmod)
# The Linux kernel's NVMe-oF peers for the interop suite (ci/interop): nvme-cli, fio.
rdma_pkgs+=(nvme-cli fio)
# The soft-RoCE guest: QEMU, and cpio for its initramfs (ci/vm/mkinitramfs).
vm_pkgs=(qemu-system-x86 cpio)
bench_pkgs=(gnuplot-nox)
# No package listed here may carry a dpkg trigger of update-initramfs or an initramfs-tools hook
# (on a bootable Debian, installing it rebuilds /boot/initrd.img-*), nor pull one in:
# busybox-static (the initramfs's busybox; it also Conflicts with busybox) and dmsetup (dm-flakey
# in ci/interop/file-backend.sh; libdevmapper1.02.1 Depends on it) are unpacked into the cache by
# ci/vm/fetch-tools instead, at the end. //ci:setup_packages_test checks these lists.
if [ $list_only -eq 1 ]; then
  printf '%s\n' "${build_pkgs[@]}" "${rdma_pkgs[@]}" "${vm_pkgs[@]}" "${bench_pkgs[@]}"
  exit 0
fi

kernel_has_rxe() {
  [ -d /sys/module/rdma_rxe ] && return 0
  modprobe -n rdma_rxe >/dev/null 2>&1
}

need_vm=0
case "$want_vm" in
  yes) need_vm=1 ;;
  no) ;;
  auto)
    if kernel_has_rxe; then
      echo "setup.sh: the running kernel $(uname -r) has rdma_rxe; no VM packages needed"
    else
      echo "setup.sh: the running kernel $(uname -r) has no rdma_rxe; soft-RoCE will run in a QEMU guest"
      need_vm=1
    fi
    ;;
esac
pkgs=("${build_pkgs[@]}" "${rdma_pkgs[@]}")
[ $need_vm -eq 0 ] || pkgs+=("${vm_pkgs[@]}")
[ $want_bench -eq 0 ] || pkgs+=("${bench_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  sudo=(sudo)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup.sh: all ${#pkgs[@]} packages already installed"
else
  if [ ${#sudo[@]} -gt 0 ] && ! command -v sudo >/dev/null; then
    echo "setup.sh: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt_opts=(-y -q --no-install-recommends)
  "${sudo[@]}" apt-get update -q >/dev/null
  # apt's own plan, before anything is installed (a simulation): how many packages, how big.
  mapfile -t plan < <(apt-get install -s "${apt_opts[@]}" "${missing[@]}" | awk '/^Inst / { print $2 }')
  size=$(apt-cache show --no-all-versions "${plan[@]}" 2>/dev/null | awk '
    /^Installed-Size:/ { inst += $2 } /^Size:/ { dl += $2 }
    END { printf "%d MB to download, %d MB installed", dl / 1048576 + 0.5, inst / 1024 + 0.5 }')
  echo "setup.sh: ${#missing[@]} requested package(s) missing: ${missing[*]}"
  echo "setup.sh: installing ${#plan[@]} package(s) with their dependencies, no recommended packages: $size"
  "${sudo[@]}" apt-get install "${apt_opts[@]}" "${missing[@]}"
  echo "setup.sh: packages done"
fi

# The guest's kernel, busybox-static and dmsetup (dmsetup also where the interop suite runs on
# this machine's own rxe): unpacked into the user's cache, not installed, no root needed.
tools=(dmsetup)
if [ $need_vm -eq 1 ]; then
  "$here/../ci/vm/fetch-kernel"
  # Debian 13's kernel too (6.12: NVMe in-band authentication, ublk), for NVMF_RXE_KERNEL=6.12;
  # the default guest stays the one above. Through fetch-kernel's private apt configuration
  # (the machine's sources are not changed); a failure leaves only that kernel out.
  "$here/../ci/vm/fetch-kernel" --suite trixie ||
    echo "setup.sh: warning: no Debian 13 (trixie) guest kernel; NVMF_RXE_KERNEL=6.12 will not boot" >&2
  tools+=(busybox)
fi
"$here/../ci/vm/fetch-tools" "${tools[@]}"
