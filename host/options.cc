// SPDX-License-Identifier: BSD-3-Clause
// HostOptions helpers; see options.h.
#include "host/options.h"

namespace nvmf::host {

const char* poll_mode_name(PollMode mode) { return mode == PollMode::kBusy ? "busy" : "event"; }

std::vector<TransportPath> transport_paths(const HostOptions& options) {
  std::vector<TransportPath> out{{options.traddr, options.trsvcid}};
  out.insert(out.end(), options.failover_paths.begin(), options.failover_paths.end());
  return out;
}

}  // namespace nvmf::host
