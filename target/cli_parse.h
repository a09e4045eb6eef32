// SPDX-License-Identifier: BSD-3-Clause
// Parsing helpers for the nvmf-target command line (kept out of main.cc so they are testable).
#ifndef NVMF_TARGET_CLI_PARSE_H_
#define NVMF_TARGET_CLI_PARSE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "target/auth.h"

namespace nvmf::target {

// Parses a byte count: decimal digits with an optional binary suffix k, m, g or t (any case,
// optionally followed by "b" or "ib": "64m", "1G", "4KiB", "512"). `option` names the option in
// errors: kInvalidArgument "--size: '12x' is not a byte count (e.g. 4096, 64m, 1g)", or
// "... overflows 64 bits".
Result<uint64_t> parse_size(std::string_view text, std::string_view option);

// The CLI mode's DH-HMAC-CHAP options into `keys`: each of `host_keys` (--dhchap-key) and
// `ctrl_keys` (--dhchap-ctrl-key) is "HOSTNQN=DHHC-1:hh:...:"; `hash` (--dhchap-hash,
// "hmac(sha256)" or "sha256" ...) and `dhgroup` (--dhchap-dhgroup, "null", "ffdhe2048" ...),
// when not empty, apply to every host of `host_keys` (not to keys `keys` had already, from a
// config file). A controller key needs a host key for the same
// host. kInvalidArgument naming the option and the host, never the secret.
Status apply_dhchap_options(const std::vector<std::string>& host_keys,
                            const std::vector<std::string>& ctrl_keys, const std::string& hash,
                            const std::string& dhgroup, HostKeys& keys);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_CLI_PARSE_H_
