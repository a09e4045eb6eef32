// SPDX-License-Identifier: BSD-3-Clause
// wr_kind_name.
#include "common/verbs/work_request_id.h"

namespace nvmf::verbs {

const char* wr_kind_name(WrKind kind) {
  switch (kind) {
    case WrKind::kRecv:
      return "recv";
    case WrKind::kRead:
      return "read";
    case WrKind::kSend:
      return "send";
    case WrKind::kWrite:
      return "write";
  }
  return "unknown";
}

}  // namespace nvmf::verbs
