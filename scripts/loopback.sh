#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job: our target and our host over soft-RoCE write a real file, read it back,
# compare, and report what was negotiated.
#
# Usage: scripts/loopback.sh [--json FILE] [--data FILE | --data-size BYTES]
#                            [--inline-data-size N] [--lba-size N]
#   --json FILE              also write the report as JSON to FILE
#   --data FILE              the file to write (default: a generated file, see --data-size)
#   --data-size BYTES        size of the generated file (default 3146728 = 3 MiB + 1000: the
#                            tail ends inside an LBA, so the host's padding of the last LBA runs)
#   --inline-data-size N     the target's in-capsule data size (nvmet meaning; default -1 = page)
#   --lba-size N             namespace LBA size, 512 (default) or 4096
# Sets up everything on a fresh Debian 12 machine (scripts/setup.sh), builds with Bazel, and runs
# under ci/rxe-run (the kernel's rdma_rxe directly, or a QEMU guest). Exits 0 only when the bytes
# read back are identical to the bytes written. Arguments are checked before anything else.
set -euo pipefail

# shellcheck disable=SC2034 # prog and usage: read by ci/lib/args.sh
prog=loopback.sh usage="scripts/loopback.sh [--json FILE] [--data FILE | --data-size BYTES] [--inline-data-size N] [--lba-size 512|4096] (--help)"
# shellcheck source=/dev/null # ci/lib/args.sh is shellchecked on its own
. "$(dirname "$0")/../ci/lib/args.sh"
json_out=
input=
input_size=3146728
input_size_set=
inline_data_size=-1
lba_size=512
while [ $# -gt 0 ]; do
  opt=$1
  case "$opt" in
    --json | --data | --data-size | --input | --input-size | --inline-data-size | --lba-size)
      if [ $# -lt 2 ] || [ -z "$2" ]; then usage_error "$opt needs a value"; fi
      val=$2
      shift 2
      ;;
    --*=*)
      val=${opt#*=}
      opt=${opt%%=*}
      [ -n "$val" ] || usage_error "$opt needs a value"
      shift
      ;;
    -h | --help)
      sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *) usage_error "unknown option '$opt'" ;;
  esac
  case "$opt" in
    --json) json_out=$val ;;
    # --input and --input-size: the older spellings (nvmf-host's write said --input too).
    --data | --input) input=$val ;;
    --data-size | --input-size) input_size=$val input_size_set=1 ;;
    --inline-data-size) inline_data_size=$val ;;
    --lba-size) lba_size=$val ;;
    *) usage_error "unknown option '$opt'" ;;
  esac
done
case "$lba_size" in 512 | 4096) ;; *) usage_error "--lba-size must be 512 or 4096, not '$lba_size'" ;; esac
[[ $inline_data_size =~ ^(-1|[0-9]+)$ ]] ||
  usage_error "--inline-data-size must be -1 (one page), 0 (off) or a byte count, not '$inline_data_size'"
if ! [[ $input_size =~ ^[1-9][0-9]{0,9}$ ]] || [ "$input_size" -gt 1073741824 ]; then
  usage_error "--data-size must be a byte count from 1 to 1073741824, not '$input_size'"
fi
[ -z "$input" ] || [ -z "$input_size_set" ] || usage_error "--data and --data-size exclude each other"

# Paths the user gives are relative to where they ran us, not to the repository.
if [ -n "$input" ]; then
  if ! [ -f "$input" ] || ! [ -r "$input" ]; then usage_error "--data: no such readable file: $input"; fi
  [ -s "$input" ] || usage_error "--data: $input is empty"
  input=$(realpath "$input")
fi
if [ -n "$json_out" ]; then
  json_dir=$(dirname "$json_out")
  if ! [ -d "$json_dir" ] || ! [ -w "$json_dir" ]; then
    usage_error "--json: directory $json_dir does not exist or is not writable"
  fi
  json_out=$(realpath "$json_out")
fi
cd "$(dirname "$0")/.."

scripts/setup.sh
echo "loopback.sh: building nvmf-target and nvmf-host"
bazel build //host:nvmf-host //target:nvmf-target
bin=$(bazel info bazel-bin 2>/dev/null)

results=$(mktemp -d /tmp/nvmf-loopback.XXXXXX)
echo "loopback.sh: results in $results"
generated=0
if [ -z "$input" ]; then
  # Random bytes: a file of zeros could hide a read that returns nothing.
  input=$results/input.bin
  head -c "$input_size" /dev/urandom >"$input"
  generated=1
  echo "loopback.sh: input: a generated file of $input_size random bytes ($input)"
fi
rc=0
ci/rxe-run --results "$results" --timeout 600 \
  ci/loopback-guest.sh "$bin" "$input" "$inline_data_size" "$lba_size" "$generated" || rc=$?

report=$results/report.json
if [ ! -s "$report" ]; then
  echo "loopback.sh: no report was produced (exit $rc); logs:" >&2
  for f in "$results"/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }; done
  exit 1
fi
checked=0
python3 ci/loopback-report.py "$report" || checked=$?
[ -z "$json_out" ] || cp "$report" "$json_out"
verified=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data_verified"])' "$report")
[ "$verified" = "True" ] && [ "$rc" -eq 0 ] && [ "$checked" -eq 0 ]
