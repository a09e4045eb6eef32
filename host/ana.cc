// SPDX-License-Identifier: BSD-3-Clause
#include "host/ana.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <set>

#include "common/nvme_status.h"
#include "host/discover.h"
#include "host/io_plan.h"
#include "host/log_reads.h"

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

namespace {

constexpr uint64_t kWindow = 4096;  // CommandChannel::run moves at most 4096 bytes

// Appends windows of the log to `log` until it holds `upto` bytes.
Status fetch_ana_log(CommandChannel& ch, uint64_t most, uint64_t upto, std::vector<uint8_t>& log) {
  if (upto > most) {
    return Status::io("ANA log: " + std::to_string(upto) + " bytes needed, above the " +
                      std::to_string(most) + " that Identify Controller allows");
  }
  while (log.size() < upto) {
    const uint64_t offset = log.size();
    const auto n = static_cast<uint32_t>(std::min(kWindow, most - offset) & ~uint64_t{3});
    log.resize(offset + n);
    const std::string what = "Get Log Page 0Ch at offset " + std::to_string(offset);
    Result<proto::Cqe> cqe = ch.run(get_log_page_sqe(proto::kLogAna, n, offset), {},
                                    std::span<uint8_t>(log.data() + offset, n), false);
    if (!cqe.ok()) return std::move(cqe).status().annotate(what);
    NVMF_RETURN_IF_ERROR(cqe_status(*cqe, what));
  }
  return ok_status();
}

}  // namespace

Result<AnaLog> read_ana_log(CommandChannel& ch, const proto::IdentifyController& id) {
  const uint64_t most = ana_log_bytes(id) & ~uint64_t{3};
  Status last = ok_status();
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<uint8_t> log;
    NVMF_RETURN_IF_ERROR(fetch_ana_log(ch, most, sizeof(proto::AnaLogHeader), log));
    proto::AnaLogHeader h;
    std::memcpy(&h, log.data(), sizeof(h));
    uint64_t at = sizeof(h);
    for (uint16_t i = 0; i < h.ngrps; ++i) {
      NVMF_RETURN_IF_ERROR(fetch_ana_log(ch, most, at + sizeof(proto::AnaGroupDescriptor), log));
      uint32_t nnsids;
      std::memcpy(&nnsids, log.data() + at + offsetof(proto::AnaGroupDescriptor, nnsids), 4);
      at += sizeof(proto::AnaGroupDescriptor) + uint64_t{nnsids} * 4;
      NVMF_RETURN_IF_ERROR(fetch_ana_log(ch, most, at, log));
    }
    if (log.size() > kWindow) {
      // Several windows: they are one log only if the change count did not move meanwhile.
      std::vector<uint8_t> again;
      NVMF_RETURN_IF_ERROR(fetch_ana_log(ch, most, sizeof(proto::AnaLogHeader), again));
      if (std::memcmp(again.data(), log.data(), 8) != 0) {
        last = Status::io("ANA log: the change count moved while it was read, 3 times");
        continue;
      }
    }
    return decode_ana_log(std::span<const uint8_t>(log.data(), at), id.anagrpmax);
  }
  return last;
}

}  // namespace nvmf::host
