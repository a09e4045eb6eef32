// SPDX-License-Identifier: BSD-3-Clause
// Parsing helpers for the nvmf-target command line (kept out of main.cc so they are testable).
#ifndef NVMF_TARGET_CLI_PARSE_H_
#define NVMF_TARGET_CLI_PARSE_H_

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace nvmf::target {

// Parses a byte count: decimal digits with an optional binary suffix k, m, g or t (any case,
// optionally followed by "b" or "ib": "64m", "1G", "4KiB", "512"). `option` names the option in
// errors: kInvalidArgument "--size: '12x' is not a byte count (e.g. 4096, 64m, 1g)", or
// "... overflows 64 bits".
Result<uint64_t> parse_size(std::string_view text, std::string_view option);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_CLI_PARSE_H_
