// SPDX-License-Identifier: BSD-3-Clause
// IdleWatch and the stall WARN's text.
#include "target/stall_report.h"

#include <algorithm>

namespace nvmf::target {
namespace {

constexpr auto kMaxWarnGap = std::chrono::seconds(60);

const char* qp_state_name(int state) {
  switch (state) {
    case 0:
      return "RESET";
    case 1:
      return "INIT";
    case 2:
      return "RTR";
    case 3:
      return "RTS";
    case 4:
      return "SQD";
    case 5:
      return "SQE";
    case 6:
      return "ERR";
    default:
      return "?";
  }
}

// "RDMA READ of 65536 bytes", "RDMA WRITE of 4096 bytes and response SEND", "response SEND".
std::string transfer_work(const StallSnapshot& s) {
  const std::string bytes = std::to_string(s.oldest_transfer_bytes) + " bytes";
  switch (s.oldest_transfer_state) {
    case RequestState::kTransferringFromHost:
      return "RDMA READ of " + bytes;
    case RequestState::kTransferringToHost:
      return "RDMA WRITE of " + bytes + " and response SEND";
    default:
      return "response SEND";
  }
}

std::string hex_cid(uint16_t cid) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x0000";
  for (int i = 0; i < 4; ++i) out[5 - i] = kDigits[(cid >> (4 * i)) & 0xf];
  return out;
}

int64_t ms_of(IdleWatch::Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// "states ...; receives ...; ...; QP ...": what both stall WARNs show after their first words.
std::string describe_resources(const StallSnapshot& s);

}  // namespace

bool is_transfer_state(RequestState s) {
  return s == RequestState::kTransferringFromHost || s == RequestState::kTransferringToHost ||
         s == RequestState::kCompleting;
}

IdleWatch::Verdict IdleWatch::observe(uint64_t events, uint32_t outstanding,
                                      Clock::time_point now) {
  if (!enabled()) return Verdict::kQuiet;
  if (!seen_ || events != last_events_ || outstanding == 0) {
    const bool resumed = warned_;
    if (resumed) stalled_for_ = now - last_change_;
    seen_ = true;
    last_events_ = events;
    last_change_ = now;
    idle_ = Clock::duration::zero();
    warned_ = false;
    next_warn_ = threshold_;
    return resumed ? Verdict::kResumed : Verdict::kQuiet;
  }
  idle_ = now - last_change_;
  if (idle_ < next_warn_) return Verdict::kQuiet;
  if (!warned_) ++stalls_;
  warned_ = true;
  next_warn_ += std::min<Clock::duration>(next_warn_, kMaxWarnGap);
  return Verdict::kStalled;
}

IdleWatch::Clock::duration IdleWatch::check_interval() const {
  return std::max<Clock::duration>(threshold_ / 4, std::chrono::milliseconds(10));
}

std::string describe_qp(const StallSnapshot& s) {
  if (!s.qp_queried) return "QP not queried";
  auto n = [](uint64_t v) { return std::to_string(v); };
  std::string out = "QP " + std::string(qp_state_name(s.qp_state)) + " timeout " + n(s.timeout);
  if (s.timeout > 0) {
    // 4.096 us x 2^timeout (IBTA local ACK timeout), in ms.
    const uint64_t us = (uint64_t{4096} << s.timeout) / 1000;
    out += " (" + n(us / 1000) + " ms)";
  }
  out += " retry_cnt " + n(s.retry_cnt) + " rnr_retry " + n(s.rnr_retry) + " min_rnr_timer " +
         n(s.min_rnr_timer) + " max_rd_atomic " + n(s.max_rd_atomic) + " max_dest_rd_atomic " +
         n(s.max_dest_rd_atomic);
  return out;
}

std::string describe_stall(const StallSnapshot& s, IdleWatch::Clock::duration idle) {
  std::string out = std::to_string(s.outstanding) + " commands outstanding, idle for " +
                    std::to_string(ms_of(idle)) + " ms: " + describe_resources(s);
  if (s.has_oldest_transfer) {
    out += "; oldest transfer: cid " + hex_cid(s.oldest_transfer_cid) + " in " +
           std::string(request_state_name(s.oldest_transfer_state)) + " for " +
           std::to_string(ms_of(s.oldest_transfer_age)) + " ms (" + transfer_work(s) + ")";
  }
  return out;
}

std::string describe_transfer_stall(const StallSnapshot& s) {
  if (!s.has_oldest_transfer) return describe_stall(s, IdleWatch::Clock::duration::zero());
  return "cid " + hex_cid(s.oldest_transfer_cid) + " in " +
         std::string(request_state_name(s.oldest_transfer_state)) + " for " +
         std::to_string(ms_of(s.oldest_transfer_age)) + " ms: its " + transfer_work(s) +
         " has no work completion yet (" + std::to_string(s.transfers) +
         " requests in transfer states); " + std::to_string(s.outstanding) +
         " commands outstanding: " + describe_resources(s);
}

namespace {

std::string describe_resources(const StallSnapshot& s) {
  auto n = [](uint64_t v) { return std::to_string(v); };
  std::string out = "states";
  for (size_t i = 0; i < s.states.size(); ++i) {
    const auto state = static_cast<RequestState>(i);
    if (state == RequestState::kDone || s.states[i] == 0) continue;
    out += " " + std::string(request_state_name(state)) + "=" + n(s.states[i]);
  }
  if (s.srq) {
    out += "; SRQ receives posted " + n(s.receives_posted) + " of " + n(s.receive_depth) +
           ", capsules held " + n(s.capsules_held) + " of " + n(s.capsule_limit);
  } else {
    out += "; receives posted " + n(s.receives_posted) + " of " + n(s.receive_depth);
  }
  out += ", capsules waiting for a slot " + n(s.capsules_waiting_for_slot);
  out += "; send queue " + n(s.send_queue_in_use) + " of " + n(s.send_queue_depth) + " (" +
         n(s.responses_waiting) + " responses waiting)";
  out += "; RDMA READs in flight " + n(s.reads_in_flight) + " of " + n(s.read_depth) + " (" +
         n(s.reads_waiting) + " waiting)";
  out += "; backend operations " + n(s.backend_in_flight);
  if (s.shared_pool) {
    out += "; shared buffers " + n(s.pool_free) + " free of " + n(s.pool_chunks) + " (" +
           n(s.pool_waiting) + " waiting)";
  }
  out += s.cq_armed ? "; CQ armed" : "; CQ not armed";
  if (s.qp_queried) out += "; " + describe_qp(s);
  return out;
}

}  // namespace

}  // namespace nvmf::target
