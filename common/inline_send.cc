// SPDX-License-Identifier: BSD-3-Clause
// Names for SendMode; the decision itself is constexpr in inline_send.h.
#include "common/inline_send.h"

namespace nvmf {

std::string_view send_mode_name(SendMode mode) {
  switch (mode) {
    case SendMode::kInline:
      return "inline";
    case SendMode::kByReference:
      return "by-reference";
  }
  return "unknown";
}

}  // namespace nvmf
