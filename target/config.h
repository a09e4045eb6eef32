// SPDX-License-Identifier: BSD-3-Clause
// Reads the JSON that nvmetcli saves (/etc/nvmet/config.json) into TargetOptions, so one file
// configures both the Linux kernel target (through configfs) and nvmf-target.
#ifndef NVMF_TARGET_CONFIG_H_
#define NVMF_TARGET_CONFIG_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "target/target_options.h"

namespace nvmf::target {

struct NvmetConfig {
  TargetOptions options;              // `base` with the port and the served subsystems applied
  std::vector<std::string> warnings;  // keys ignored because ignoring them is safe, one a line
};

// Applies an nvmetcli config to `base` (which keeps what the file does not say: LBA size,
// queue limits, MDTS). The shape, and what is done with each key:
//   {"hosts": [{"nqn", "dhchap": {"key", "ctrl_key", "hash", "dhgroup"}}],
//    "ports": [1..kMaxConfigPorts: {"portid" (distinct), "addr": {"trtype": "rdma", "adrfam":
//    "ipv4"|"ipv6",
//              "traddr", "trsvcid", "treq": "not specified"|"not required", "tsas"},
//              "param": {"inline_data_size", "max_queue_size", "pi_enable": "0"},
//              "referrals": [], "subsystems": [NQN...], "ana_groups"}],
//    "subsystems": [{"nqn", "attr": {"allow_any_host", "serial", "model", "firmware",
//              "version", "cntlid_min", "cntlid_max", "pi_enable": "0", "qid_max",
//              "ieee_oui"}, "allowed_hosts": [NQN...],
//              "namespaces": [{"nsid", "enable", "device": {"path", "nguid", "uuid"},
//              "buffered_io" (0: O_DIRECT, 1: page cache; absent: --direct-io decides),
//              "ana_grpid"}]}]}
// A namespace's device may have "ram_size" (bytes) instead of "path": a RAM namespace,
// nvmf-target's own key (save_config writes it). A subsystem without an enabled namespace is
// served without one (a warning), as nvmet does.
// Each port listens on its own address (two ports may share traddr with different trsvcid),
// with its own inline_data_size, and serves the subsystems it links: TargetOptions::ports, the
// first port also in the single-port fields. max_queue_size must be equal on every port.
// Only the subsystems some port links are served (as nvmet). Numbers may be JSON numbers or
// decimal strings (nvmetcli writes attributes as strings).
// Errors (kInvalidArgument) name the key path and the value: `ports[0].addr.trtype "tcp": only
// "rdma" is served`, `subsystems[0].attr.frobnicate: unknown key`. Keys whose effect we do not
// implement but whose absence changes nothing a host relies on (ANA groups, ieee_oui, other
// port params) become warnings naming the key. qid_max limits the subsystem's I/O queues per
// controller (at most --max-io-queues).
//
// Hostile input is an error naming the key, never an abort: a document nested
// deeper than kMaxJsonDepth levels (arrays or objects, under any key) is refused while parsing;
// a number beyond 64 bits, an unsigned one above INT64_MAX or one overflowing a double (1e999)
// is out of range, never wrapped; a value of the wrong type is named with its key; the text of
// values quoted in messages is cut at 64 bytes and made safe (common/wire_text.h).
Result<NvmetConfig> parse_nvmet_config(std::string_view json_text, const TargetOptions& base);
// Most ports a config may give (each is a listener of the one event loop).
inline constexpr size_t kMaxConfigPorts = 32;
// Deepest nesting accepted: nvmetcli's files are 5 levels deep.
inline constexpr size_t kMaxJsonDepth = 32;
// Largest file load_nvmet_config reads (bytes).
inline constexpr size_t kMaxConfigBytes = 16u << 20;
// Reads `path` (at most kMaxConfigBytes) and parses it; errors name the file.
Result<NvmetConfig> load_nvmet_config(const std::string& path, const TargetOptions& base);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_CONFIG_H_
