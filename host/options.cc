// SPDX-License-Identifier: BSD-3-Clause
// HostOptions helpers; see options.h.
#include "host/options.h"

#include <cstring>
#include <random>

#include "common/id_text.h"

namespace nvmf::host {

HostId random_host_id() {
  std::random_device rd;
  HostId id{};
  for (size_t i = 0; i < id.size(); i += 4) {
    uint32_t r = rd();
    std::memcpy(&id[i], &r, 4);
  }
  id[6] = static_cast<uint8_t>((id[6] & 0x0F) | 0x40);  // RFC 4122 §4.4: version 4
  id[8] = static_cast<uint8_t>((id[8] & 0x3F) | 0x80);  // variant 10b
  return id;
}

std::string uuid_string(const HostId& id) { return uuid_text(id); }

std::string default_hostnqn(const HostId& id) {
  return "nqn.2014-08.org.nvmexpress:uuid:" + uuid_string(id);
}

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
