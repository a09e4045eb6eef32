#!/usr/bin/env bash
# Installs every Debian package nvmf-rdma needs; idempotent, and says what it installs.
#
# Usage: scripts/setup.sh [--no-vm] [--vm]
#   Build, test and RDMA user-space packages are always installed. QEMU and Debian's
#   kernel (for the soft-RoCE guest of ci/rxe-run) are installed only when the running
#   kernel has no rdma_rxe module, or with --vm. --no-vm never installs them.
set -euo pipefail

want_vm=auto
for arg in "$@"; do
  case "$arg" in
    --vm) want_vm=yes ;;
    --no-vm) want_vm=no ;;
    -h | --help)
      sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "setup.sh: unknown option '$arg' (try --help)" >&2
      exit 2
      ;;
  esac
done

# Build and unit tests.
build_pkgs=(bazel-bootstrap bazel-rules-java libgtest-dev libgmock-dev googletest
  libcli11-dev nlohmann-json3-dev clang-format python3)
# The fuzzers (ci/fuzz.sh, bazel --config=fuzz): clang 14 and its compiler-rt (libFuzzer, ASan,
# UBSan runtimes: -fsanitize=fuzzer comes from libclang-rt-14-dev); installed without the
# packages they only recommend.
fuzz_pkgs=(clang libclang-rt-14-dev)
# rdma-core user space: verbs, rdma_cm, the rxe provider and the diagnostic tools.
rdma_pkgs=(libibverbs-dev librdmacm-dev rdma-core ibverbs-providers ibverbs-utils
  rdmacm-utils perftest iproute2 kmod)
# The Linux kernel's NVMe-oF peers for the interop suite (ci/interop): nvme-cli, fio.
rdma_pkgs+=(nvme-cli fio)
# ci/bench-compare.sh also plots (gnuplot).
rdma_pkgs+=(gnuplot-nox)
# The soft-RoCE guest: QEMU, Debian's kernel (has rdma_rxe), and the initramfs tools.
vm_pkgs=(qemu-system-x86 linux-image-amd64 busybox-static cpio zstd xz-utils)

kernel_has_rxe() {
  [ -d /sys/module/rdma_rxe ] && return 0
  modprobe -n rdma_rxe >/dev/null 2>&1
}

pkgs=("${build_pkgs[@]}" "${rdma_pkgs[@]}" "${fuzz_pkgs[@]}")
case "$want_vm" in
  yes) pkgs+=("${vm_pkgs[@]}") ;;
  no) ;;
  auto)
    if kernel_has_rxe; then
      echo "setup.sh: the running kernel $(uname -r) has rdma_rxe; no VM packages needed"
    else
      echo "setup.sh: the running kernel $(uname -r) has no rdma_rxe; soft-RoCE will run in a QEMU guest"
      pkgs+=("${vm_pkgs[@]}")
    fi
    ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup.sh: all ${#pkgs[@]} packages already installed"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || {
    echo "setup.sh: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  }
  sudo=(sudo)
fi

echo "setup.sh: installing ${#missing[@]} package(s): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
no_recommends=()
with_recommends=()
for p in "${missing[@]}"; do
  if printf '%s\n' "${fuzz_pkgs[@]}" | grep -qx "$p"; then no_recommends+=("$p"); else with_recommends+=("$p"); fi
done
if [ ${#with_recommends[@]} -gt 0 ]; then
  "${sudo[@]}" apt-get install -y -q "${with_recommends[@]}"
fi
if [ ${#no_recommends[@]} -gt 0 ]; then
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${no_recommends[@]}"
fi
echo "setup.sh: done"
