// SPDX-License-Identifier: BSD-3-Clause
// CompletionQueue: owns an ibv_cq (ibv_create_cq), with inline polling and event waits.
#ifndef NVMF_COMMON_VERBS_COMPLETION_QUEUE_H_
#define NVMF_COMMON_VERBS_COMPLETION_QUEUE_H_

#include <infiniband/verbs.h>

#include <span>

#include "common/status.h"
#include "common/verbs/completion_channel.h"

namespace nvmf::verbs {

// A completion queue, optionally attached to a CompletionChannel. Move-only.
// Destroy it after every QueuePair using it, and before its CompletionChannel.
class CompletionQueue {
 public:
  // ibv_create_cq(context, cqe, nullptr, channel, comp_vector). `channel` may be null (poll
  // only); when given it must outlive the CQ. The device may round `cqe` up (see cqe()).
  static Result<CompletionQueue> create(ibv_context* context, int cqe,
                                        CompletionChannel* channel = nullptr, int comp_vector = 0);

  ~CompletionQueue();
  CompletionQueue(CompletionQueue&& other) noexcept : cq_(other.cq_), channel_(other.channel_) {
    other.cq_ = nullptr;
  }
  CompletionQueue& operator=(CompletionQueue&& other) noexcept;
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  // Fast path: ibv_poll_cq into `wcs`. Returns the number of completions (0..wcs.size()), or a
  // negative value on a CQ error. No allocation, no syscall beyond the provider's poll.
  int poll(std::span<ibv_wc> wcs) {
    return ibv_poll_cq(cq_, static_cast<int>(wcs.size()), wcs.data());
  }

  // ibv_resize_cq: at least `cqe` entries (cqe() then says how many); completions already in the
  // CQ stay. Growing only: a CQ cannot shrink below what it holds.
  Status resize(int cqe);

  // ibv_req_notify_cq: arm the CQ so the next completion (or next solicited one) raises an
  // event on the channel.
  Status req_notify(bool solicited_only = false);

  // Waits up to `timeout_ms` (< 0: forever) for a completion event on the channel: poll() on
  // its fd, ibv_get_cq_event, ibv_ack_cq_events, then re-arms with req_notify(). Returns true
  // when an event arrived, false on timeout. The caller then drains with poll() until it
  // returns 0: completions that arrived before the re-arm raise no new event. Arm once with
  // req_notify() before the first wait. The channel must serve this CQ only (an event for
  // another CQ is acked and reported as kInternal). kInternal if created without a channel.
  Result<bool> wait_event(int timeout_ms);

  ibv_cq* get() const { return cq_; }
  // The actual number of entries (>= the requested cqe).
  int cqe() const { return cq_->cqe; }

 private:
  CompletionQueue(ibv_cq* cq, ibv_comp_channel* channel) : cq_(cq), channel_(channel) {}
  ibv_cq* cq_;
  ibv_comp_channel* channel_;  // Not owned; may be null.
};

}  // namespace nvmf::verbs

#endif  // NVMF_COMMON_VERBS_COMPLETION_QUEUE_H_
