#!/usr/bin/env bash
# The main job: our target and our host over soft-RoCE write a real file, read it back,
# compare, and report what was negotiated.
#
# Usage: scripts/loopback.sh [--json FILE] [--input FILE] [--inline-data-size N] [--lba-size N]
#   --json FILE              also write the report as JSON to FILE
#   --input FILE             the file to write (default: the built nvmf-host binary, a few MiB)
#   --inline-data-size N     the target's in-capsule data size (nvmet meaning; default -1 = page)
#   --lba-size N             namespace LBA size, 512 (default) or 4096
# Sets up everything on a fresh Debian 12 machine (scripts/setup.sh), builds with Bazel, and runs
# under ci/rxe-run (the kernel's rdma_rxe directly, or a QEMU guest). Exits 0 only when the bytes
# read back are identical to the bytes written.
set -euo pipefail

json_out=
input=
inline_data_size=-1
lba_size=512
while [ $# -gt 0 ]; do
  case "$1" in
    --json) json_out=${2:?--json needs a file}; shift 2 ;;
    --input) input=${2:?--input needs a file}; shift 2 ;;
    --inline-data-size) inline_data_size=${2:?--inline-data-size needs a number}; shift 2 ;;
    --lba-size) lba_size=${2:?--lba-size needs 512 or 4096}; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "loopback.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done

# Paths the user gives are relative to where they ran us, not to the repository.
if [ -n "$input" ]; then
  [ -f "$input" ] || { echo "loopback.sh: --input: no such file: $input" >&2; exit 2; }
  input=$(realpath "$input")
fi
if [ -n "$json_out" ]; then
  json_dir=$(dirname "$json_out")
  [ -d "$json_dir" ] && [ -w "$json_dir" ] ||
    { echo "loopback.sh: --json: directory $json_dir does not exist or is not writable" >&2; exit 2; }
  json_out=$(realpath "$json_out")
fi
cd "$(dirname "$0")/.."

scripts/setup.sh
echo "loopback.sh: building nvmf-target and nvmf-host"
bazel build //host:nvmf-host //target:nvmf-target
bin=$(bazel info bazel-bin 2>/dev/null)
# Default input: a real file built from this repository, the nvmf-host binary itself.
[ -n "$input" ] || input=$(realpath "$bin/host/nvmf-host")

results=$(mktemp -d /tmp/nvmf-loopback.XXXXXX)
echo "loopback.sh: results in $results"
rc=0
ci/rxe-run --results "$results" --timeout 600 \
  ci/loopback-guest.sh "$bin" "$input" "$inline_data_size" "$lba_size" || rc=$?

report=$results/report.json
if [ ! -s "$report" ]; then
  echo "loopback.sh: no report was produced (exit $rc); logs:" >&2
  for f in "$results"/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }; done
  exit 1
fi
python3 ci/loopback-report.py "$report"
[ -z "$json_out" ] || cp "$report" "$json_out"
verified=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data_verified"])' "$report")
[ "$verified" = "True" ] && [ "$rc" -eq 0 ]
