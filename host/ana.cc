// SPDX-License-Identifier: BSD-3-Clause
#include "host/ana.h"

#include <cstdio>
#include <cstring>
#include <set>

namespace nvmf::host {

std::string ana_state_text(uint8_t state) {
  if (std::string_view name = proto::ana_state_name(state); !name.empty()) {
    return std::string(name);
  }
  char text[16];
  std::snprintf(text, sizeof(text), "state %02Xh", state);
  return text;
}

const AnaGroup* AnaLog::group_of_nsid(uint32_t nsid) const {
  for (const AnaGroup& g : groups) {
    for (uint32_t n : g.nsids) {
      if (n == nsid) return &g;
    }
  }
  return nullptr;
}

Result<AnaLog> decode_ana_log(std::span<const uint8_t> bytes, uint32_t anagrpmax) {
  constexpr size_t kHeader = 16, kDescriptor = 32;
  if (bytes.size() < kHeader) return Status::io("ANA log shorter than its 16-byte header");
  AnaLog log;
  std::memcpy(&log.change_count, bytes.data(), 8);
  uint16_t ngrps;
  std::memcpy(&ngrps, bytes.data() + 8, 2);
  if (ngrps > anagrpmax) {
    return Status::io("ANA log: " + std::to_string(ngrps) + " groups, above ANAGRPMAX " +
                      std::to_string(anagrpmax));
  }
  std::set<uint32_t> grpids, nsids;
  size_t at = kHeader;
  for (uint16_t i = 0; i < ngrps; ++i) {
    const std::string where = "ANA log descriptor " + std::to_string(i);
    if (bytes.size() - at < kDescriptor) return Status::io(where + ": past the end of the log");
    AnaGroup g;
    uint32_t nnsids;
    std::memcpy(&g.grpid, bytes.data() + at, 4);
    std::memcpy(&nnsids, bytes.data() + at + 4, 4);
    std::memcpy(&g.change_count, bytes.data() + at + 8, 8);
    g.state = bytes[at + 16];
    at += kDescriptor;
    if (g.grpid == 0 || g.grpid > anagrpmax) {
      return Status::io(where + ": group ID " + std::to_string(g.grpid) + " not in 1.." +
                        std::to_string(anagrpmax));
    }
    if (!grpids.insert(g.grpid).second) {
      return Status::io(where + ": group " + std::to_string(g.grpid) + " listed twice");
    }
    if (proto::ana_state_name(g.state).empty()) {
      return Status::io(where + ": group " + std::to_string(g.grpid) + " in " +
                        ana_state_text(g.state));
    }
    if (nnsids > (bytes.size() - at) / 4) {
      return Status::io(where + ": " + std::to_string(nnsids) + " NSIDs past the end of the log");
    }
    g.nsids.resize(nnsids);
    if (nnsids > 0) std::memcpy(g.nsids.data(), bytes.data() + at, size_t{nnsids} * 4);
    at += size_t{nnsids} * 4;
    for (uint32_t n : g.nsids) {
      if (n == 0 || !nsids.insert(n).second) {
        return Status::io(where + ": NSID " + std::to_string(n) +
                          (n == 0 ? "" : " listed in two groups"));
      }
    }
    log.groups.push_back(std::move(g));
  }
  return log;
}

uint64_t ana_log_bytes(const proto::IdentifyController& id) {
  const uint32_t namespaces = id.mnan != 0 ? id.mnan : id.nn;
  return 16 + uint64_t{id.nanagrpid} * 32 + uint64_t{namespaces} * 4;
}

}  // namespace nvmf::host
