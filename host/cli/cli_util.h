// SPDX-License-Identifier: BSD-3-Clause
// Helpers every nvmf-host subcommand shares (identify, write, read, bench, conform, ublk):
// size parsing, LBA alignment and padding, buffer sizing, usage errors and the JSON reports.
#ifndef NVMF_HOST_CLI_CLI_UTIL_H_
#define NVMF_HOST_CLI_CLI_UTIL_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/cli_usage.h"
#include "common/status.h"
#include "host/controller.h"
#include "host/multipath.h"

namespace nvmf::host {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;  // connection, protocol, I/O or file errors
// A bad command line exits kExitUsage (2, common/cli_usage.h), printed by host_usage_error().

// The synopsis of nvmf-host (`subcommand` empty or unknown) or of one of its subcommands: the
// second line of a usage error, e.g. "nvmf-host -a ADDR -n NQN [OPTIONS] read -d FILE -l LENGTH
// [-o OFFSET] [--json [FILE]] (try nvmf-host read --help)".
std::string host_usage(std::string_view subcommand);

// A bad nvmf-host command line (common/cli_usage.h): "nvmf-host: MESSAGE" (or "nvmf-host:
// SUBCOMMAND: MESSAGE"), then "usage: " host_usage(subcommand) on stderr; returns kExitUsage.
int host_usage_error(std::string_view subcommand, std::string_view message);

// Largest CLI transfer buffer: one registered buffer of min(file size, this) is reused.
inline constexpr uint64_t kMaxCliBufferBytes = 4ull << 20;

// Parses a byte count: decimal ("4096"), hex ("0x1000"), or decimal with a binary suffix
// k/K/KiB, m/M/MiB, g/G/GiB ("4k" = 4096). kInvalidArgument naming `what` and the text for
// empty, negative, malformed or overflowing values.
Result<uint64_t> parse_size(std::string_view text, std::string_view what);

// Ok when `offset` (bytes) is a multiple of `lba_size`; else kInvalidArgument "--offset 100 is
// not a multiple of the LBA size 512".
Status check_lba_aligned(uint64_t offset, uint32_t lba_size, std::string_view what);

// Checks the connection options as typed, before anything is opened, so a typo is named as the
// option it came from (kInvalidArgument, message starting with the option): --traddr and
// --host-traddr (when set, an empty --traddr is the caller's to report) numeric IPv4/IPv6
// addresses, --trsvcid a port 1..65535 (a host cannot connect to port 0), --nqn and --hostnqn at
// most 223 bytes (an empty --nqn is the caller's to judge: discover needs none) (Base 2.0 §4.5: an
// NQN is at most 223 bytes).
Status check_connection_options(const HostOptions& o);

// -S/--dhchap-secret and -C/--dhchap-ctrl-secret ("DHHC-1:hh:...:"; empty: not given) into
// `out`. kInvalidArgument naming the option, never the secret; a controller key without a host
// key is refused (nvme-cli's rule). The texts are wiped.
Status parse_dhchap_secrets(std::string& host_secret, std::string& ctrl_secret, DhchapSecrets& out);

// nvme-cli's gen-dhchap-key: a secret of `key_length` bytes (32, 48, 64; 0: 32, or the hash's
// length for `hmac` 1-3, which allows no other), random or from `secret_hex`; with `hmac` 1-3 the
// printed key is HMAC-SHA-256/384/512 keyed by it over `nqn` || "NVMe-over-Fabrics" (libnvme's
// nvme_gen_dhchap_key), so `nqn` is required then. Returns "DHHC-1:hh:<base64>:".
Result<std::string> gen_dhchap_key(const std::string& secret_hex, uint32_t key_length,
                                   uint32_t hmac, const std::string& nqn);
// Several paths to one subsystem, failover order (HostOptions::failover_paths): -a and -s may
// each be a comma-separated list. Equal lengths pair up (-a A,B -s 4420,4421); a single value
// goes with every value of the other list (-a A,B -s 4420; -a A -s 4420,4421). Leaves the first
// path in traddr/trsvcid and the others in failover_paths. kInvalidArgument: lists of
// different lengths (neither one value), an empty element, a path given twice, more than
// kMaxPaths paths. An empty traddr (-a not given) is not an error here: the paths get empty
// addresses and check_connection_options() still checks their ports.
Status split_path_lists(HostOptions& o);
inline constexpr size_t kMaxPaths = 8;

// Ok when bytes [offset, offset + length) rounded out to whole LBAs of any size the host
// accepts (up to 1 MiB) stay below 2^64; else kInvalidArgument naming `what` ("--offset +
// --length"). Without it a length near 2^64 rounds up to 0 and the transfer silently does nothing.
Status check_byte_range(uint64_t offset, uint64_t length, std::string_view what);

// Ok when bytes [offset, offset + length), rounded up to whole LBAs of `lba_size` bytes, end at
// or before the namespace end (`nsze` LBAs); else kInvalidArgument naming `what` and both ends in
// bytes. Used before a write so that nothing lands when the data cannot all fit (the target would
// answer LBA Out of Range only for the commands past the end, after the earlier ones landed).
// Call check_byte_range() first: this assumes the rounded end does not overflow.
Status check_fits_namespace(uint64_t offset, uint64_t length, uint32_t lba_size, uint64_t nsze,
                            std::string_view what);

// The size in bytes of the regular file open on `fd`. kInvalidArgument naming `option` and
// `path` when it is a directory or not a regular file (a FIFO or device has no size to write
// from); the fstat errno otherwise.
Result<uint64_t> regular_file_size(int fd, std::string_view path, std::string_view option);

// Ok when `path` can be opened for writing (created if missing, never truncated); else the
// open errno, naming `option` and `path`. Lets a report path fail before any I/O is done.
Status check_writable(const std::string& path, std::string_view option);

// `bytes` rounded up to whole LBAs.
constexpr uint64_t round_up_to_lba(uint64_t bytes, uint32_t lba_size) {
  return (bytes + lba_size - 1) / lba_size * lba_size;
}
// Zero bytes appended to make `bytes` whole LBAs.
constexpr uint64_t padding_bytes(uint64_t bytes, uint32_t lba_size) {
  return round_up_to_lba(bytes, lba_size) - bytes;
}

// Size of the CLI's reusable buffer for a transfer of `total` bytes (whole LBAs):
// min(total, `cap` rounded down to whole LBAs), at least one LBA.
uint64_t cli_buffer_bytes(uint64_t total, uint32_t lba_size, uint64_t cap = kMaxCliBufferBytes);

// JSON reports (for --json); the field names are the struct members' (units as documented in
// host/controller.h: bytes, counts). negotiation_json: what was negotiated (CNTLID, IOCCSZ in
// 16-byte units as Identify gives it, in-capsule size in bytes and why it is off, MDTS and
// max_command_bytes in bytes, and per queue the inline send sizes and capsule counts).
nlohmann::json negotiation_json(const Negotiation& n);
// The host's counters: writes in-capsule and keyed (commands and bytes), reads, flushes,
// capsules inline / by reference / with in-capsule data, Keep Alives sent and failed.
nlohmann::json stats_json(const HostStats& s);
// {"state": "live", "reconnect_delay", "ctrl_loss_tmo", "fast_io_fail_tmo" (s, nvme-cli's
// names), "losses", "reconnect_attempts", "reconnects", "retried_transfers", "path_errors",
// "longest_outage_ms", "last_loss"}.
nlohmann::json recovery_json(ControllerState state, const RecoveryStats& r, const HostOptions& o);
// {"iopolicy": "numa"|"round-robin", "paths": [{"path", "ana_state", "live", "writes", "reads",
// "flushes", "bytes_written", "bytes_read", "ana_errors", "path_errors", "reconnects"}]}: the
// per-path counters of a multipath write or read (host/multipath.h PathStats).
nlohmann::json multipath_json(IoPolicy policy, const std::vector<PathStats>& paths);
// {"controller": Identify Controller fields (strings escaped, escape_wire_text), "namespace":
// {"nsid", "nsze", "ncap" (LBAs), "lba_size", "nmic", "size_bytes"}, "negotiation": ...}.
nlohmann::json identify_json(const proto::IdentifyController& id, const NamespaceInfo& ns,
                             const Negotiation& n);

// "0x1234".
std::string hex_string(uint64_t value);

}  // namespace nvmf::host

#endif  // NVMF_HOST_CLI_CLI_UTIL_H_
