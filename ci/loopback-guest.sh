#!/usr/bin/env bash
# The soft-RoCE half of scripts/loopback.sh: runs under ci/rxe-run, starts nvmf-target, writes
# the input through nvmf-host, reads it back, compares and writes report.json to NVMF_RESULTS_DIR.
# Usage: ci/loopback-guest.sh BAZEL_BIN INPUT INLINE_DATA_SIZE LBA_SIZE
set -uo pipefail
bin=$1
input=$2
inline_data_size=$3
lba_size=$4
out=${NVMF_RESULTS_DIR:?run this under ci/rxe-run}
nqn=nqn.2024-01.io.nvmf-rdma:loopback
work=$(mktemp -d)
size=$(stat -c %s "$input")
# The namespace: a real file, the input rounded up to MiB plus one MiB.
ns_size=$(((size / 1048576 + 2) * 1048576))

"$bin/target/nvmf-target" -a "$NVMF_TARGET_ADDR" -n "$nqn" --file "$work/namespace.img" \
  --size "$ns_size" --lba-size "$lba_size" --inline-data-size "$inline_data_size" \
  --json "$out/target.json" >"$out/target.log" 2>&1 &
target_pid=$!
for _ in $(seq 1 300); do
  grep -q 'listening on' "$out/target.log" 2>/dev/null && break
  kill -0 "$target_pid" 2>/dev/null || break
  sleep 0.1
done
if ! grep -q 'listening on' "$out/target.log"; then
  echo "loopback: nvmf-target did not start:" >&2
  cat "$out/target.log" >&2
  exit 1
fi

host=("$bin/host/nvmf-host")
common=(-a "$NVMF_TARGET_ADDR" -w "$NVMF_HOST_ADDR" -n "$nqn")
rc=0
timeout 120 "${host[@]}" identify "${common[@]}" --json >"$out/identify.json" 2>"$out/identify.log" || rc=1
timeout 300 "${host[@]}" write "${common[@]}" --input "$input" --offset 0 \
  --json "$out/write.json" 2>"$out/write.log" || rc=1
# A second, small write: the input's first 4 KiB again (same bytes, same place), which goes
# in-capsule whenever the target takes 4 KiB of in-capsule data, so the report shows both paths.
head -c 4096 "$input" >"$work/head"
timeout 120 "${host[@]}" write "${common[@]}" --input "$work/head" --offset 0 \
  --json "$out/write-small.json" 2>"$out/write-small.log" || rc=1
timeout 300 "${host[@]}" read "${common[@]}" --output "$work/readback" --offset 0 \
  --length "$size" --json "$out/read.json" 2>"$out/read.log" || rc=1
for f in identify write write-small read; do sed "s/^/$f: /" "$out/$f.log" >&2; done

kill -TERM "$target_pid"
wait "$target_pid" || rc=1

sha_in=$(sha256sum <"$input" | cut -d' ' -f1)
sha_out=$(sha256sum <"$work/readback" 2>/dev/null | cut -d' ' -f1)
python3 - "$out" "$input" "$size" "$sha_in" "$sha_out" <<'PY'
import json, os, sys
out, path, size, sha_in, sha_out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
def number(v):
    """Identify fields may come as hex strings ("0x100005"); the report keeps integers."""
    return int(v, 0) if isinstance(v, str) else v
def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}
identify, target, write, read = (load(n) for n in
                                 ("identify.json", "target.json", "write.json", "read.json"))
neg = identify.get("negotiation", {})
report = {
    "input": path,
    "input_bytes": size,
    "negotiated": {
        "ioccsz": number(neg.get("ioccsz")),
        "icdoff": number(neg.get("icdoff")),
        "sgls": number(neg.get("sgls")),
        # The target's effective size (its own report); IOCCSZ * 16 - 64 only rounds it down.
        "in_capsule_data_size": target.get("in_capsule_data_size", neg.get("in_capsule_data_size")),
        "in_capsule_enabled": neg.get("in_capsule_enabled"),
        "max_inline_data": neg.get("min_granted_max_inline_data"),
    },
    "writes": {
        "in_capsule": target.get("writes", {}).get("in_capsule"),
        "rdma_read": target.get("writes", {}).get("rdma_read"),
    },
    "bytes_written": write.get("bytes"),
    "bytes_read": read.get("bytes"),
    "sha256_written": sha_in,
    "sha256_read": sha_out,
    "data_verified": bool(sha_out) and sha_in == sha_out and read.get("bytes") == size,
    "host": {"identify": identify, "write": write, "read": read},
    "target": target,
}
with open(os.path.join(out, "report.json"), "w") as f:
    json.dump(report, f, indent=2)
PY
[ "$sha_in" = "$sha_out" ] || rc=1
exit $rc
