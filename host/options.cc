// SPDX-License-Identifier: BSD-3-Clause
// HostOptions helpers; see options.h.
#include "host/options.h"

namespace nvmf::host {

const char* poll_mode_name(PollMode mode) { return mode == PollMode::kBusy ? "busy" : "event"; }

const char* namespace_change_name(NamespaceChange::Kind kind) {
  switch (kind) {
    case NamespaceChange::Kind::kAdded:
      return "added";
    case NamespaceChange::Kind::kRemoved:
      return "removed";
    case NamespaceChange::Kind::kResized:
      return "resized";
    case NamespaceChange::Kind::kChanged:
      break;
  }
  return "changed";
}

std::vector<TransportPath> transport_paths(const HostOptions& options) {
  std::vector<TransportPath> out{{options.traddr, options.trsvcid}};
  out.insert(out.end(), options.failover_paths.begin(), options.failover_paths.end());
  return out;
}

}  // namespace nvmf::host
