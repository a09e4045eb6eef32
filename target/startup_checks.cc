// SPDX-License-Identifier: BSD-3-Clause
// nvmf-target's start-up checks from its options: registered-memory lower bound, open-admission
// notice.
#include "target/startup_checks.h"

#include <algorithm>

#include "common/in_capsule.h"
#include "target/shared_cq.h"

namespace nvmf::target {
namespace {

// A new queue's entries before its Connect says more: the admin queue's (target/port.h).
constexpr uint64_t kFirstQueueEntries = 32;
constexpr uint64_t kCqeBytes = 16;

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// In-capsule pages of a receive: the ports' largest in-capsule size, counted up to one page.
uint64_t in_capsule_pages(const TargetOptions& o) {
  bool any = false;
  for (const PortOptions& p : port_list(o)) any = any || p.inline_data_size != 0;
  return any ? 1 : 0;
}

}  // namespace

uint64_t target_memlock_bytes(const TargetOptions& o, uint32_t groups, uint32_t page_size) {
  const uint64_t page = std::max<uint32_t>(page_size, 1);
  const PollGroupShares shares = poll_group_shares(o, groups);
  const uint64_t transfer = uint64_t{4096} << o.mdts;
  uint64_t bytes = 0;
  // Data buffers.
  bytes += o.num_shared_buffers > 0 ? uint64_t{shares.shared_buffers} * transfer
                                    : kFirstQueueEntries * transfer;
  // Receives: with an SRQ, every group's (each group opens the device and makes its SRQ when
  // the ports start listening), else the first queue's own (SQEs, and in-capsule pages for all
  // but receive 0, whose pages are in the Connect buffer below).
  const uint64_t pages = in_capsule_pages(o);
  uint64_t receives =
      kFirstQueueEntries * kSqeBytes + (kFirstQueueEntries - 1) * pages * page + pages * page;
  if (o.srq) {
    const uint64_t depth =
        std::min<uint64_t>(shares.srq_depth, max_srq_depth_for_cq(kSharedCqEntries));
    receives =
        std::max<uint64_t>(groups, 1) * (round_up(depth * kSqeBytes, page) + depth * pages * page);
  }
  bytes += receives;
  // The Connect data page and the response (CQE) buffers.
  bytes += page + kFirstQueueEntries * kCqeBytes;
  return bytes;
}

std::string any_host_notice(const TargetOptions& o) {
  std::string nqns;
  if (o.subsystems.empty()) {
    nqns = o.subnqn;
  } else {
    for (const SubsystemOptions& s : o.subsystems) {
      if (!s.allow_any_host) return "";
      nqns += (nqns.empty() ? "" : ", ") + s.nqn;
    }
  }
  return "any host may connect to " + nqns +
         ": the command line admits every host NQN; to restrict it, use --config FILE with the "
         "subsystem's allowed_hosts and attr allow_any_host 0";
}

}  // namespace nvmf::target
