// SPDX-License-Identifier: BSD-3-Clause
// usage_error.
#include "common/cli_usage.h"

#include <cstdio>

namespace nvmf {

int usage_error(std::string_view prog, std::string_view message, std::string_view usage) {
  std::fprintf(stderr, "%.*s: %.*s\nusage: %.*s\n", static_cast<int>(prog.size()), prog.data(),
               static_cast<int>(message.size()), message.data(), static_cast<int>(usage.size()),
               usage.data());
  return kExitUsage;
}

}  // namespace nvmf
