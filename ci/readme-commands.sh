#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs the README's export-a-disk commands as written, under ci/rxe-run, and mounts the disk.
#
# Usage: ci/rxe-run ci/readme-commands.sh [README] (default README.md; ci/run-rxe-tests.sh runs
#   it as ReadmeCommands.ExportADisk)
#   (env: NVMF_TARGET_ADDR, NVMF_HOST_ADDR from ci/rxe-run; NVMF_BIN_DIR = bazel-bin, default
#    <repo>/bazel-bin; logs under $NVMF_RESULTS_DIR/readme-commands when set)
# Takes the lines of the ```sh block between <!-- export-a-disk:begin --> and
# <!-- export-a-disk:end --> (fails when the markers or the block are missing), replaces
# 10.0.0.1 with $NVMF_TARGET_ADDR, 10.0.0.2 with $NVMF_HOST_ADDR, /var/lib/nvmf/ with a temp
# directory, each `--config FILE` with a copy of FILE (from the repository) given the same
# replacements, and the command nvmf-target with the built binary; then runs the lines in order
# (a line ending in & in the background; nvmf-target's is waited for until it listens). After
# `nvme list` it also checks that the subsystem's namespace is listed, makes an ext4 file system
# on it, mounts it, writes a file, unmounts, mounts again (caches dropped), reads the file back
# and compares, and unmounts. At the end the target must stop on SIGTERM with exit 0.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=/dev/null # ci/lib/*.sh are shellchecked on their own
. "$repo/ci/lib/target.sh"
readme=${1:-$repo/README.md}
: "${NVMF_TARGET_ADDR:?run this under ci/rxe-run}" "${NVMF_HOST_ADDR:?run this under ci/rxe-run}"
bin=${NVMF_BIN_DIR:-$repo/bazel-bin}
target_bin=$bin/target/nvmf-target
begin='<!-- export-a-disk:begin -->'
end='<!-- export-a-disk:end -->'

say() { echo "readme-commands: $*"; }
die() {
  say "FAIL: $*"
  exit 1
}

[ -r "$readme" ] || die "cannot read $readme"
[ -x "$target_bin" ] || die "$target_bin is missing (bazel build //target:nvmf-target)"
n_begin=$(grep -cxF "$begin" "$readme")
n_end=$(grep -cxF "$end" "$readme")
[ "$n_begin" -eq 1 ] || die "$readme has $n_begin lines '$begin' (want exactly 1)"
[ "$n_end" -eq 1 ] || die "$readme has $n_end lines '$end' (want exactly 1)"
# The marked region, then the lines of its ```sh fence.
region=$(awk -v b="$begin" -v e="$end" '$0 == b { f = 1; next } $0 == e { f = 0; exit } f' "$readme")
[ -n "$region" ] || die "no lines between '$begin' and '$end' (is the end marker before the begin?)"
block=$(printf '%s\n' "$region" | awk '
  /^```(sh|bash|console|shell)?[ \t]*$/ && !inside && !done { inside = 1; next }
  /^```[ \t]*$/ && inside { inside = 0; done = 1; next }
  inside { print }
  END { if (inside) exit 3; if (!done) exit 2 }')
case $? in
  0) ;;
  2) die "no \`\`\`sh block between '$begin' and '$end'" ;;
  *) die "the \`\`\`sh block between '$begin' and '$end' is not closed" ;;
esac
grep -qvE '^[[:space:]]*(#|$)' <<<"$block" || die "the block between the markers has no commands"

tmp=$(mktemp -d /tmp/readme-commands.XXXXXX)
out=${NVMF_RESULTS_DIR:+$NVMF_RESULTS_DIR/readme-commands}
out=${out:-$tmp/logs}
mkdir -p "$out" "$tmp/var-lib-nvmf" "$tmp/mnt"
target_pid=
nqn=
connected=0
mounted=0
disk_checked=0

cleanup() {
  [ "$mounted" -eq 0 ] || umount "$tmp/mnt" 2>/dev/null
  [ "$connected" -eq 0 ] || [ -z "$nqn" ] || nvme disconnect -n "$nqn" >/dev/null 2>&1
  if [ -n "$target_pid" ]; then
    kill -TERM "$target_pid" 2>/dev/null
    wait "$target_pid" 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# The same replacements for the block's lines and for the configs they name.
substitute() {
  sed -E -e "s/(^|[^0-9.])10\.0\.0\.1([^0-9]|$)/\1$NVMF_TARGET_ADDR\2/g" \
    -e "s/(^|[^0-9.])10\.0\.0\.2([^0-9]|$)/\1$NVMF_HOST_ADDR\2/g" \
    -e "s#/var/lib/nvmf/#$tmp/var-lib-nvmf/#g"
}

# The lines as they will run.
commands=()
n_config=0
while IFS= read -r line; do
  line=$(printf '%s\n' "$line" | substitute)
  # --config FILE: a copy of the repository's FILE with the same replacements.
  if [[ $line =~ --config[[:space:]]+([^[:space:]\&\;]+) ]]; then
    src=${BASH_REMATCH[1]}
    [ -r "$repo/$src" ] || [ -r "$src" ] || die "the block's --config $src is not in the repository"
    [ -r "$repo/$src" ] && src_path=$repo/$src || src_path=$src
    n_config=$((n_config + 1))
    copy=$tmp/config-$n_config.json
    substitute <"$src_path" >"$copy"
    line=${line/"--config $src"/"--config $copy"}
  fi
  # The command word nvmf-target (not a path ending in it): the built binary.
  line=$(printf '%s\n' "$line" | sed -E "s#(^|[;&|][[:space:]]*|^sudo[[:space:]]+)nvmf-target([[:space:]]|$)#\1$target_bin\2#")
  commands+=("$line")
done <<<"$block"

say "README: $readme; $((${#commands[@]})) lines; target $NVMF_TARGET_ADDR, host $NVMF_HOST_ADDR; logs in $out"

# ns_block SYSFS-ENTRY: the namespace's block device (nvmeXnY, or with native multipath the head
# nvmeSnN of the hidden path nvmeScCnN), as ci/interop/run.sh finds it.
ns_block() {
  local name
  name=$(basename "$1")
  [ -b "/dev/$name" ] && { echo "/dev/$name"; return 0; }
  name=$(echo "$name" | sed -E 's/^(nvme[0-9]+)c[0-9]+(n[0-9]+)$/\1\2/')
  [ -b "/dev/$name" ] && { echo "/dev/$name"; return 0; }
  return 1
}

# wait_ns NQN: prints /dev/nvmeXnY of the rdma controller of NQN once it exists (30 s).
wait_ns() {
  local c n
  for _ in $(seq 1 300); do
    for c in /sys/class/nvme/nvme*; do
      [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$1" ] || continue
      [ "$(cat "$c/transport" 2>/dev/null)" = rdma ] || continue
      for n in "$c"/nvme*n*; do
        [ -e "$n" ] && ns_block "$n" && return 0
      done
    done
    sleep 0.1
  done
  return 1
}

# After `nvme list`: the namespace is listed, takes an ext4 file system, and a file written on it
# reads back the same after a remount.
check_disk() {
  local list_out=$1 dev
  [ -n "$nqn" ] || die "no \`nvme connect ... -n NQN\` line before \`nvme list\`"
  dev=$(wait_ns "$nqn") || die "no namespace block device of $nqn after nvme connect"
  if ! grep -qw "$dev" "$list_out"; then
    # The kernel scans namespaces after nvme connect returns: the first listing may be early.
    say "note: $dev was not in the first nvme list output; listing again"
    nvme list >"$list_out" 2>&1
    cat "$list_out"
    grep -qw "$dev" "$list_out" || die "nvme list does not show $dev of $nqn"
  fi
  say "nvme list shows $dev ($nqn)"
  mkfs.ext4 -q -F "$dev" >"$out/mkfs.log" 2>&1 || {
    cat "$out/mkfs.log"
    die "mkfs.ext4 $dev failed"
  }
  mount "$dev" "$tmp/mnt" || die "mount $dev failed"
  mounted=1
  head -c 4M /dev/urandom >"$tmp/mnt/hello.bin" || die "writing a file on $dev failed"
  echo "hello from the README's export-a-disk commands" >"$tmp/mnt/hello.txt"
  local sum
  sum=$(cat "$tmp/mnt/hello.bin" "$tmp/mnt/hello.txt" | sha256sum | cut -d' ' -f1)
  sync
  umount "$tmp/mnt" || die "umount $dev failed"
  mounted=0
  echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
  mount "$dev" "$tmp/mnt" || die "mounting $dev again failed"
  mounted=1
  local again
  again=$(cat "$tmp/mnt/hello.bin" "$tmp/mnt/hello.txt" | sha256sum | cut -d' ' -f1)
  [ "$sum" = "$again" ] || die "the file read back from $dev differs (sha256 $again, wrote $sum)"
  umount "$tmp/mnt" || die "umount $dev failed"
  mounted=0
  disk_checked=1
  say "ext4 on $dev: mounted, wrote 4 MiB + a line, remounted, read back the same (sha256 ${sum:0:16}...), unmounted"
}

i=0
for line in "${commands[@]}"; do
  i=$((i + 1))
  if [[ $line =~ ^[[:space:]]*(#|$) ]]; then
    echo "$line"
    continue
  fi
  echo "+ $line"
  if [[ $line =~ \&[[:space:]]*$ ]]; then
    # In the background, in this shell (its pid is kept); its output to a log.
    log=$out/line-$i.log
    : >"$log"
    eval "$line" >"$log" 2>&1
    pid=$!
    if [[ $line == *"$target_bin"* ]]; then
      target_pid=$pid
      if ! wait_listening "$log" "$target_pid" 60; then
        tail -n 20 "$log" | sed 's/^/  | /'
        die "nvmf-target did not start listening (line $i)"
      fi
      grep 'listening on' "$log" | sed 's/^/  | /'
    fi
    continue
  fi
  log=$out/line-$i.log
  rc=0
  timeout -k 5 120 bash -c "$line" >"$log" 2>&1 || rc=$?
  sed 's/^/  | /' "$log"
  [ "$rc" -eq 0 ] || die "line $i exited $rc: $line"
  if [[ $line =~ ^[[:space:]]*nvme[[:space:]]+connect[[:space:]] ]]; then
    connected=1
    [[ $line =~ (-n|--nqn)[[:space:]=]+([^[:space:]]+) ]] && nqn=${BASH_REMATCH[2]}
  elif [[ $line =~ ^[[:space:]]*nvme[[:space:]]+disconnect[[:space:]] ]]; then
    connected=0
    grep -q 'disconnected 1 controller' "$log" || die "nvme disconnect disconnected no controller"
  elif [[ $line =~ ^[[:space:]]*nvme[[:space:]]+list[[:space:]]*$ ]]; then
    check_disk "$log"
  fi
done

[ -n "$target_pid" ] || die "the block started no nvmf-target"
[ "$disk_checked" -eq 1 ] || die "the block has no \`nvme list\` line after nvme connect: the disk was not checked"
[ "$connected" -eq 0 ] || die "the block ends with the host still connected (no nvme disconnect)"
kill -TERM "$target_pid"
trc=0
wait "$target_pid" || trc=$?
target_pid=
[ "$trc" -eq 0 ] || die "nvmf-target exited $trc on SIGTERM"
say "nvmf-target stopped on SIGTERM (exit 0)"
# Which address the kernel host's queues came from (nvmf-target logs each accepted queue as
# "ADDR:PORT qid N: accepted"): informational, the README's commands give no -w.
peers=$(grep -hoE '[0-9a-f.:]+:[0-9]+ qid [0-9]+: accepted' "$out"/line-*.log 2>/dev/null |
  sed -E 's/:[0-9]+ qid.*//' | sort -u | tr '\n' ' ')
say "the Linux host's queues came from: ${peers:-(none in the target log)}"
say "PASS"
