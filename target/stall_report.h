// SPDX-License-Identifier: BSD-3-Clause
// IdleWatch (the stall report): notices a queue that has commands outstanding and has handled no
// completion for a while, so that the target can say so (a rate-limited WARN naming what each
// command waits for) instead of staying silent until the host's I/O timeout fires.
#ifndef NVMF_TARGET_STALL_REPORT_H_
#define NVMF_TARGET_STALL_REPORT_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "target/request_state.h"

namespace nvmf::target {

// One queue's watch. The event loop calls observe() now and then (at least every
// check_interval() while a queue has commands outstanding, also when it would sleep in epoll).
// Event-loop thread only; no allocation.
class IdleWatch {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Verdict {
    kQuiet,    // nothing to log
    kStalled,  // commands outstanding and no event for idle(): log a WARN
    kResumed,  // events again after a kStalled: log how long it lasted (stalled_for())
  };

  // `threshold`: idle time with commands outstanding before the first kStalled (0: never).
  // Later kStalled verdicts of the same stall come at 2x, 4x, 8x ... the threshold (at most
  // one a minute), so one stall costs a few lines, not one a second.
  explicit IdleWatch(Clock::duration threshold = std::chrono::seconds(1)) : threshold_(threshold) {}

  // `events`: a count the queue moves on every completion it handles (receive, READ, SEND,
  // backend operation); `outstanding`: commands that are not done (held AERs excluded).
  Verdict observe(uint64_t events, uint32_t outstanding, Clock::time_point now);

  // Since the last event (or since the queue had nothing outstanding), as of the last observe().
  Clock::duration idle() const { return idle_; }
  // How long the stall that kResumed closes lasted: from its last event to the observe() that
  // saw events again.
  Clock::duration stalled_for() const { return stalled_for_; }
  // Stalls reported (kStalled verdicts that opened a stall) since creation.
  uint64_t stalls() const { return stalls_; }
  bool enabled() const { return threshold_ > Clock::duration::zero(); }
  // How often the loop should call observe() while commands are outstanding: a quarter of the
  // threshold (at least 10 ms), so a stall is reported at most 25% late.
  Clock::duration check_interval() const;

 private:
  Clock::duration threshold_;
  uint64_t last_events_ = 0;
  bool seen_ = false;
  Clock::time_point last_change_{};
  Clock::duration next_warn_{};
  Clock::duration idle_{};
  Clock::duration stalled_for_{};
  bool warned_ = false;
  uint64_t stalls_ = 0;
};

// What one queue's stall WARN shows: the request states and every resource a request can wait
// for. Filled by RdmaQueue::stall_snapshot().
struct StallSnapshot {
  uint32_t outstanding = 0;
  std::array<uint64_t, kRequestStateCount> states{};  // requests in each state now
  uint32_t capsules_waiting_for_slot = 0;             // received, no free command slot yet
  // Without an SRQ: receive WRs posted on the QP now, of the receives it was created for.
  // With one (srq): the device's SRQ receives posted now, of its depth, and the capsules this
  // queue holds (received, response not yet sent), of what it may hold (hsqsize + 1).
  bool srq = false;
  uint32_t receives_posted = 0;
  uint32_t receive_depth = 0;
  uint32_t capsules_held = 0, capsule_limit = 0;
  uint32_t send_queue_in_use = 0, send_queue_depth = 0;
  uint32_t responses_waiting = 0;  // ready_to_complete FIFO (send-queue room)
  uint32_t reads_in_flight = 0, read_depth = 0;
  uint32_t reads_waiting = 0;  // waiting_for_read_credit FIFO
  uint32_t backend_in_flight = 0;
  bool shared_pool = false;
  uint32_t pool_free = 0, pool_chunks = 0, pool_waiting = 0;  // whole pool, all queues
  bool cq_armed = false;
  // ibv_query_qp of the QP: state, and the transport retry settings rdma_cm gave it
  // (timeout: 4.096 us x 2^timeout local ACK timeout; retry_cnt; rnr_retry, 7 = forever;
  // min_rnr_timer: IBTA encoding). queried = false when the query failed.
  bool qp_queried = false;
  int qp_state = 0;
  uint8_t timeout = 0, retry_cnt = 0, rnr_retry = 0, min_rnr_timer = 0;
  uint8_t max_rd_atomic = 0, max_dest_rd_atomic = 0;
  // The request longest in a transfer state (transferring_from_host: its RDMA READ posted;
  // transferring_to_host / completing: its RDMA WRITE and response SEND posted) whose work
  // completion has not been handled: a wait inside the transport (on rxe, retransmit rounds of
  // the local ACK timeout each). transfers: requests in those states now.
  uint32_t transfers = 0;
  bool has_oldest_transfer = false;
  RequestState oldest_transfer_state = RequestState::kDone;
  uint16_t oldest_transfer_cid = 0;
  uint32_t oldest_transfer_bytes = 0;  // the READ's or WRITE's length (0: a SEND alone)
  IdleWatch::Clock::duration oldest_transfer_age{};  // at least this long in its state
};

// True for the states in which a request has work posted on the QP and waits for its work
// completion: transferring_from_host, transferring_to_host, completing.
bool is_transfer_state(RequestState s);

// "K commands outstanding, idle for T ms: states transferring_from_host=16 ...; receives posted
// P of D (with an SRQ: SRQ receives posted P of D, capsules held H of L); capsules waiting for a
// slot W; send queue U of L (R responses waiting); RDMA READs in
// flight A of D (W waiting); backend operations B; shared buffers F free of C (W waiting); CQ
// armed; QP RTS timeout 14 (67 ms) retry_cnt 7 rnr_retry 7 min_rnr_timer 12".
std::string describe_stall(const StallSnapshot& s, IdleWatch::Clock::duration idle);

// A request waiting for its own work completion while the queue's other completions go on
// (which IdleWatch does not see): "cid 0x001a in transferring_from_host for 1250 ms: its RDMA
// READ of 65536 bytes has no work completion yet (3 requests in transfer states); 12 commands
// outstanding: states ...; <the rest of describe_stall>".
std::string describe_transfer_stall(const StallSnapshot& s);

// "QP RTS timeout 14 (67 ms) retry_cnt 7 rnr_retry 7 min_rnr_timer 12 max_rd_atomic 16
// max_dest_rd_atomic 128": the transport retry settings rdma_cm gave the QP (qp_* fields).
std::string describe_qp(const StallSnapshot& s);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_STALL_REPORT_H_
