// SPDX-License-Identifier: BSD-3-Clause
// Identify data checks and decoding; see identify.h.
#include "host/identify.h"

#include <cstring>

namespace nvmf::host {

Status validate_identify_controller(const proto::IdentifyController& id) {
  if (id.ioccsz < 4) {
    return Status::invalid_argument("Identify Controller: IOCCSZ " + std::to_string(id.ioccsz) +
                                    " is below 4 (a capsule must hold the 64-byte SQE)");
  }
  if (id.iorcsz < 1) {
    return Status::invalid_argument("Identify Controller: IORCSZ " + std::to_string(id.iorcsz) +
                                    " is below 1 (a response must hold the 16-byte CQE)");
  }
  if (id.kas == 0) {
    return Status::invalid_argument(
        "Identify Controller: KAS is 0 (no keep-alive granularity), refused like Linux");
  }
  return ok_status();
}

Result<NamespaceInfo> decode_namespace(uint32_t nsid, const proto::IdentifyNamespace& ns) {
  unsigned index = ns.flbas & proto::kFlbasFormatMask;
  if (ns.nlbaf >= 16) index |= ((ns.flbas >> 5) & 0x3u) << 4;
  if (index > ns.nlbaf) {
    return Status::invalid_argument("Identify Namespace " + std::to_string(nsid) +
                                    ": FLBAS format " + std::to_string(index) + " beyond NLBAF " +
                                    std::to_string(ns.nlbaf));
  }
  const proto::LbaFormat& f = ns.lbaf[index];
  if (f.lbads < 9 || f.lbads > 20) {
    return Status::invalid_argument("Identify Namespace " + std::to_string(nsid) + ": LBADS " +
                                    std::to_string(f.lbads) + " out of range 9..20");
  }
  if (f.ms != 0 && (ns.flbas & 0x10) != 0) {
    return Status::invalid_argument("Identify Namespace " + std::to_string(nsid) +
                                    ": interleaved metadata is not supported");
  }
  NamespaceInfo info;
  info.nsid = nsid;
  info.nsze = ns.nsze;
  info.ncap = ns.ncap;
  info.lba_size = 1u << f.lbads;
  info.metadata_size = f.ms;
  info.nmic = ns.nmic;
  info.anagrpid = ns.anagrpid;
  return info;
}

std::vector<uint32_t> decode_nsid_list(std::span<const uint8_t> list) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i + 4 <= list.size(); i += 4) {
    uint32_t nsid;
    std::memcpy(&nsid, list.data() + i, 4);
    if (nsid == 0) break;
    out.push_back(nsid);
  }
  return out;
}

Result<uint32_t> first_active_nsid(std::span<const uint8_t> list) {
  uint32_t nsid = 0;
  if (list.size() >= 4) std::memcpy(&nsid, list.data(), 4);  // the list ends at the first 0
  if (nsid != 0) return nsid;
  return Status::not_found("Active Namespace ID list is empty: the subsystem has no namespace");
}

std::string trim_ascii(const char* field, size_t len) {
  while (len > 0 && (field[len - 1] == ' ' || field[len - 1] == '\0')) --len;
  return std::string(field, len);
}

}  // namespace nvmf::host
