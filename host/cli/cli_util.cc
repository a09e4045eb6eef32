// SPDX-License-Identifier: BSD-3-Clause
// nvmf-host CLI helpers; see cli_util.h.
#include "host/cli/cli_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <utility>

#include "common/verbs/address.h"
#include "common/wire_text.h"

namespace nvmf::host {
namespace {

constexpr size_t kMaxNqnBytes = 223;        // Base 2.0 §4.5
constexpr uint64_t kMaxLbaBytes = 1 << 20;  // LBADS <= 20 (decode_namespace in identify.cc)

Status bad_size(std::string_view what, std::string_view text, std::string_view why) {
  return Status::invalid_argument(std::string(what) + " '" + std::string(text) + "' " +
                                  std::string(why));
}

// Multiplier of a suffix: "" 1, k/K/KiB 2^10, m/M/MiB 2^20, g/G/GiB 2^30; 0 when unknown.
uint64_t suffix_multiplier(std::string_view s) {
  if (s.empty()) return 1;
  char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  std::string_view rest = s.substr(1);
  if (!rest.empty() && rest != "iB" && rest != "ib") return 0;
  switch (c) {
    case 'k':
      return 1ull << 10;
    case 'm':
      return 1ull << 20;
    case 'g':
      return 1ull << 30;
    default:
      return 0;
  }
}

}  // namespace

Result<uint64_t> parse_size(std::string_view text, std::string_view what) {
  if (text.empty()) return bad_size(what, text, "is empty");
  if (text[0] == '-') return bad_size(what, text, "is negative");
  int base = 10;
  std::string_view digits = text;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    digits = text.substr(2);
  }
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (ec == std::errc::result_out_of_range) return bad_size(what, text, "is too large");
  if (ec != std::errc() || end == digits.data()) return bad_size(what, text, "is not a number");
  std::string_view suffix(end, static_cast<size_t>(digits.data() + digits.size() - end));
  uint64_t mult = base == 16 ? (suffix.empty() ? 1 : 0) : suffix_multiplier(suffix);
  if (mult == 0) {
    return bad_size(what, text, "has an unknown suffix (use k, M, G or none)");
  }
  if (value > UINT64_MAX / mult) return bad_size(what, text, "is too large");
  return value * mult;
}

Status check_lba_aligned(uint64_t offset, uint32_t lba_size, std::string_view what) {
  if (lba_size != 0 && offset % lba_size == 0) return ok_status();
  return Status::invalid_argument(std::string(what) + " " + std::to_string(offset) +
                                  " is not a multiple of the LBA size " + std::to_string(lba_size));
}

namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

std::string host_usage(std::string_view subcommand) {
  static constexpr std::pair<std::string_view, std::string_view> kSynopses[] = {
      {"identify", "-a ADDR -n NQN [OPTIONS] identify [--json [FILE]]"},
      {"write",
       "-a ADDR -n NQN [OPTIONS] write -d FILE [-o OFFSET] [--segments N] [--json [FILE]]"},
      {"read", "-a ADDR -n NQN [OPTIONS] read -d FILE -l LENGTH [-o OFFSET] [--json [FILE]]"},
      {"bench",
       "-a ADDR -n NQN [OPTIONS] bench [--rw MODE] [--bs SIZE[,SIZE...]] [--iodepth N] "
       "[--numjobs N] [--runtime SECONDS] [--verify] [--json [FILE]]"},
      {"discover", "-a ADDR [OPTIONS] discover [--json [FILE]]"},
      {"conform",
       "-a ADDR -n NQN [OPTIONS] conform [--cases IDS] [--json [FILE]], or conform --list"},
      {"ublk", "-a ADDR -n NQN [OPTIONS] ublk [--dev-id N] [--max-io-size BYTES] [--json [FILE]]"},
      {"gen-dhchap-key", "gen-dhchap-key [-s HEX] [-l 32|48|64] [-m 0-3] [-n HOSTNQN]"},
  };
  for (const auto& [name, synopsis] : kSynopses) {
    if (name == subcommand) {
      return "nvmf-host " + std::string(synopsis) + " (try nvmf-host " + std::string(name) +
             " --help)";
    }
  }
  return "nvmf-host -a ADDR [-n NQN] [OPTIONS] identify|write|read|bench|discover|conform|ublk "
         "[SUBCOMMAND OPTIONS], or nvmf-host gen-dhchap-key (try nvmf-host --help)";
}

int host_usage_error(std::string_view subcommand, std::string_view message) {
  std::string text(message);
  if (!subcommand.empty()) text = std::string(subcommand) + ": " + text;
  return usage_error("nvmf-host", text, host_usage(subcommand));
}

Status split_path_lists(HostOptions& o) {
  const std::vector<std::string> addrs = split_commas(o.traddr);
  const std::vector<std::string> svcs = split_commas(o.trsvcid);
  if (addrs.size() > 1 && svcs.size() > 1 && addrs.size() != svcs.size()) {
    return Status::invalid_argument("--traddr lists " + std::to_string(addrs.size()) +
                                    " addresses and --trsvcid " + std::to_string(svcs.size()) +
                                    " services: give equal counts, or one of either");
  }
  const size_t n = std::max(addrs.size(), svcs.size());
  if (n > kMaxPaths) {
    return Status::invalid_argument(std::to_string(n) + " paths: at most " +
                                    std::to_string(kMaxPaths));
  }
  std::vector<TransportPath> paths;
  for (size_t i = 0; i < n; ++i) {
    TransportPath p{addrs[addrs.size() == 1 ? 0 : i], svcs[svcs.size() == 1 ? 0 : i]};
    // An empty -a (missing: the caller names it after every bad value) leaves every path's
    // address empty; its --trsvcid list is still split and checked.
    if ((p.traddr.empty() && !o.traddr.empty()) || p.trsvcid.empty()) {
      return Status::invalid_argument("path " + std::to_string(i + 1) +
                                      ": empty --traddr or --trsvcid in a comma-separated list");
    }
    for (const TransportPath& q : paths) {
      if (q == p) {
        return Status::invalid_argument("path " + p.traddr + ":" + p.trsvcid + " is given twice");
      }
    }
    paths.push_back(std::move(p));
  }
  o.traddr = paths[0].traddr;
  o.trsvcid = paths[0].trsvcid;
  o.failover_paths.assign(paths.begin() + 1, paths.end());
  return ok_status();
}

Status check_connection_options(const HostOptions& o) {
  for (const TransportPath& p : transport_paths(o)) {
    auto port = verbs::parse_port(p.trsvcid);
    if (!port.ok()) return Status::invalid_argument("--trsvcid: " + port.status().message());
    if (*port == 0) return Status::invalid_argument("--trsvcid: port 0 cannot be connected to");
    if (p.traddr.empty()) continue;  // -a missing: the caller names it after every bad value
    if (auto a = verbs::SocketAddress::parse(p.traddr, *port); !a.ok()) {
      return Status::invalid_argument("--traddr: " + a.status().message());
    }
  }
  if (!o.host_traddr.empty()) {
    if (auto a = verbs::SocketAddress::parse(o.host_traddr, uint16_t{0}); !a.ok()) {
      return Status::invalid_argument("--host-traddr: " + a.status().message());
    }
  }
  if (o.subnqn.size() > kMaxNqnBytes) {  // empty is left to the caller: discover needs none
    return Status::invalid_argument("--nqn must be at most " + std::to_string(kMaxNqnBytes) +
                                    " bytes, got " + std::to_string(o.subnqn.size()));
  }
  if (o.hostnqn.size() > kMaxNqnBytes) {
    return Status::invalid_argument("--hostnqn must be at most " + std::to_string(kMaxNqnBytes) +
                                    " bytes, got " + std::to_string(o.hostnqn.size()));
  }
  return ok_status();
}

Status check_byte_range(uint64_t offset, uint64_t length, std::string_view what) {
  constexpr uint64_t kSlack = kMaxLbaBytes - 1;  // rounding the end up to a whole LBA
  if (offset > UINT64_MAX - kSlack || length > UINT64_MAX - kSlack - offset) {
    return Status::invalid_argument(std::string(what) + " (" + std::to_string(offset) + " + " +
                                    std::to_string(length) + ") overflows 64 bits");
  }
  return ok_status();
}

Status check_fits_namespace(uint64_t offset, uint64_t length, uint32_t lba_size, uint64_t nsze,
                            std::string_view what) {
  const uint64_t end = offset + (length + lba_size - 1) / lba_size * lba_size;
  const uint64_t ns_bytes = nsze > UINT64_MAX / lba_size ? UINT64_MAX : nsze * lba_size;
  if (end <= ns_bytes) return ok_status();
  return Status::invalid_argument(std::string(what) + " ends at byte " + std::to_string(end) +
                                  ", past the namespace end at byte " + std::to_string(ns_bytes) +
                                  " (" + std::to_string(nsze) + " LBAs of " +
                                  std::to_string(lba_size) + " bytes); nothing was written");
}

Result<uint64_t> regular_file_size(int fd, std::string_view path, std::string_view option) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::from_errno("fstat", errno, path);
  if (S_ISDIR(st.st_mode)) {
    return Status::invalid_argument(std::string(option) + " " + std::string(path) +
                                    " is a directory, not a file");
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::invalid_argument(std::string(option) + " " + std::string(path) +
                                    " is not a regular file");
  }
  return static_cast<uint64_t>(st.st_size);
}

Status check_writable(const std::string& path, std::string_view option) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::from_errno(std::string(option) + " " + path, errno, "open");
  ::close(fd);
  return ok_status();
}

uint64_t cli_buffer_bytes(uint64_t total, uint32_t lba_size, uint64_t cap) {
  uint64_t capped = cap - cap % lba_size;
  if (capped < lba_size) capped = lba_size;
  uint64_t bytes = total < capped ? round_up_to_lba(total, lba_size) : capped;
  return bytes < lba_size ? lba_size : bytes;
}

std::string hex_string(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

nlohmann::json negotiation_json(const Negotiation& n) {
  nlohmann::json queues = nlohmann::json::array();
  for (const QueueInlineSend& q : n.queues) {
    queues.push_back({{"qid", q.qid},
                      {"requested_max_inline_data", q.requested},
                      {"granted_max_inline_data", q.granted},
                      {"inline_fallback", q.fallback},
                      {"usable_max_inline_data", q.usable},
                      {"capsules_inline", q.capsules_inline},
                      {"capsules_by_reference", q.capsules_by_reference},
                      {"capsules_with_in_capsule_data", q.capsules_with_in_capsule_data},
                      {"ack_timeout", q.ack_timeout}});
  }
  return {{"cntlid", n.cntlid},
          {"ioccsz", n.ioccsz},
          {"iorcsz", n.iorcsz},
          {"icdoff", n.icdoff},
          {"sgls", hex_string(n.sgls)},
          {"msdbd", n.msdbd},
          {"in_capsule_data_size", n.in_capsule_data_size},
          {"in_capsule_enabled", n.in_capsule_enabled},
          {"in_capsule_why_off", n.in_capsule_why_off},
          {"max_in_capsule_segments", n.max_in_capsule_segments},
          {"mdts_bytes", n.mdts_bytes},
          {"max_command_bytes", n.max_command_bytes},
          {"io_queue_size", n.io_queue_size},
          {"num_io_queues", n.num_io_queues},
          {"queues", queues},
          {"min_granted_max_inline_data", n.min_granted_max_inline_data}};
}

nlohmann::json stats_json(const HostStats& s) {
  return {{"writes_in_capsule", s.writes_in_capsule},
          {"writes_keyed", s.writes_keyed},
          {"bytes_in_capsule", s.bytes_in_capsule},
          {"bytes_keyed", s.bytes_keyed},
          {"reads", s.reads},
          {"bytes_read", s.bytes_read},
          {"flushes", s.flushes},
          {"capsules_inline", s.capsules_inline},
          {"capsules_by_reference", s.capsules_by_reference},
          {"capsules_with_in_capsule_data", s.capsules_with_in_capsule_data},
          {"keep_alives", s.keep_alives},
          {"keep_alive_failures", s.keep_alive_failures}};
}

nlohmann::json paths_json(const HostOptions& o) {
  nlohmann::json out = nlohmann::json::array();
  for (const TransportPath& p : transport_paths(o)) out.push_back(p.traddr + ":" + p.trsvcid);
  return out;
}

nlohmann::json multipath_json(IoPolicy policy, const std::vector<PathStats>& paths) {
  nlohmann::json list = nlohmann::json::array();
  for (const PathStats& p : paths) {
    list.push_back({{"path", p.path},
                    {"ana_state", p.ana_state},
                    {"live", p.live},
                    {"writes", p.writes},
                    {"reads", p.reads},
                    {"flushes", p.flushes},
                    {"bytes_written", p.bytes_written},
                    {"bytes_read", p.bytes_read},
                    {"ana_errors", p.ana_errors},
                    {"path_errors", p.path_errors},
                    {"reconnects", p.reconnects}});
  }
  return {{"iopolicy", iopolicy_name(policy)}, {"paths", list}};
}

nlohmann::json recovery_json(ControllerState state, const RecoveryStats& r, const HostOptions& o) {
  return {{"state", controller_state_name(state)},
          {"reconnect_delay", o.reconnect_delay_s},
          {"ctrl_loss_tmo", o.ctrl_loss_tmo_s},
          {"fast_io_fail_tmo", o.fast_io_fail_tmo_s},
          {"losses", r.losses},
          {"reconnect_attempts", r.reconnect_attempts},
          {"reconnects", r.reconnects},
          {"retried_transfers", r.retried_transfers},
          {"path_errors", r.path_errors},
          {"longest_outage_ms", r.longest_outage_ms},
          {"failovers", r.failovers},
          {"resets", r.resets},
          {"path", r.path},
          {"paths", paths_json(o)},
          {"last_loss", r.last_loss}};
}

nlohmann::json identify_json(const proto::IdentifyController& id, const NamespaceInfo& ns,
                             const Negotiation& n) {
  nlohmann::json ctrl = {{"vid", hex_string(id.vid)},
                         {"sn", escape_wire_text(trim_ascii(id.sn, sizeof(id.sn)))},
                         {"mn", escape_wire_text(trim_ascii(id.mn, sizeof(id.mn)))},
                         {"fr", escape_wire_text(trim_ascii(id.fr, sizeof(id.fr)))},
                         {"cntlid", id.cntlid},
                         {"mdts", id.mdts},
                         {"cmic", hex_string(id.cmic)},
                         {"sgls", hex_string(id.sgls)},
                         {"ioccsz", id.ioccsz},
                         {"iorcsz", id.iorcsz},
                         {"icdoff", id.icdoff},
                         {"msdbd", id.msdbd},
                         {"kas", id.kas},
                         {"cntrltype", id.cntrltype},
                         {"nn", id.nn},
                         {"subnqn", escape_wire_text(trim_ascii(id.subnqn, sizeof(id.subnqn)))}};
  nlohmann::json nsj = {{"nsid", ns.nsid},
                        {"nsze", ns.nsze},
                        {"ncap", ns.ncap},
                        {"lba_size", ns.lba_size},
                        {"nmic", hex_string(ns.nmic)},
                        {"size_bytes", ns.nsze * ns.lba_size}};
  return {{"controller", ctrl}, {"namespace", nsj}, {"negotiation", negotiation_json(n)}};
}

Status parse_dhchap_secrets(std::string& host_secret, std::string& ctrl_secret,
                            DhchapSecrets& out) {
  auto parse = [](std::string& text, const char* option,
                  std::optional<dhchap::Secret>* dst) -> Status {
    if (text.empty()) return ok_status();
    auto s = dhchap::Secret::parse(text);
    dhchap::cleanse(text.data(), text.size());
    text.clear();
    if (!s.ok()) return s.status().annotate(option);
    *dst = std::move(*s);
    return ok_status();
  };
  const bool ctrl_only = host_secret.empty() && !ctrl_secret.empty();
  NVMF_RETURN_IF_ERROR(parse(host_secret, "-S,--dhchap-secret", &out.host));
  NVMF_RETURN_IF_ERROR(parse(ctrl_secret, "-C,--dhchap-ctrl-secret", &out.ctrl));
  if (ctrl_only) {
    return Status::invalid_argument("-C,--dhchap-ctrl-secret needs -S,--dhchap-secret");
  }
  return ok_status();
}

Result<std::string> gen_dhchap_key(const std::string& secret_hex, uint32_t key_length,
                                   uint32_t hmac, const std::string& nqn) {
  if (hmac > 3) return Status::invalid_argument("--hmac " + std::to_string(hmac) + ": 0 to 3");
  if (hmac > 0) {
    const uint32_t want =
        static_cast<uint32_t>(dhchap::hash_length(static_cast<dhchap::Hash>(hmac)));
    if (key_length == 0) key_length = want;
    if (key_length != want) {
      return Status::invalid_argument("--key-length " + std::to_string(key_length) +
                                      " does not match --hmac " + std::to_string(hmac) + " (" +
                                      std::to_string(want) + " bytes)");
    }
    if (nqn.empty()) return Status::invalid_argument("--hmac needs --nqn (the host NQN)");
  } else if (key_length == 0) {
    key_length = 32;
  }
  if (key_length != 32 && key_length != 48 && key_length != 64) {
    return Status::invalid_argument("--key-length " + std::to_string(key_length) +
                                    ": 32, 48 or 64");
  }
  dhchap::SecretBytes raw;
  if (!secret_hex.empty()) {
    if (secret_hex.size() != 2 * key_length) {
      return Status::invalid_argument("--secret must be " + std::to_string(2 * key_length) +
                                      " hexadecimal digits (--key-length bytes)");
    }
    for (size_t i = 0; i < secret_hex.size(); i += 2) {
      unsigned v = 0;
      auto [end, ec] = std::from_chars(secret_hex.data() + i, secret_hex.data() + i + 2, v, 16);
      if (ec != std::errc() || end != secret_hex.data() + i + 2) {
        return Status::invalid_argument("--secret is not hexadecimal");
      }
      raw.push_back(static_cast<uint8_t>(v));
    }
  } else {
    raw.resize(key_length);
    NVMF_RETURN_IF_ERROR(dhchap::random_bytes(raw));
  }
  NVMF_ASSIGN_OR_RETURN(dhchap::Secret s,
                        dhchap::Secret::from_key(raw, static_cast<uint8_t>(hmac)));
  if (hmac > 0) {
    NVMF_ASSIGN_OR_RETURN(dhchap::SecretBytes key, s.transformed(nqn));
    NVMF_ASSIGN_OR_RETURN(s, dhchap::Secret::from_key(key, static_cast<uint8_t>(hmac)));
  }
  return s.format();
}

}  // namespace nvmf::host
