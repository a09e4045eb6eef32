// SPDX-License-Identifier: BSD-3-Clause
// EventLoop, the poll group: shared CQs polled, completions dispatched to their queues, the
// shared buffers' and the SRQ's shares kept.
#include <pthread.h>
#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <utility>

#include "common/in_capsule.h"
#include "common/log.h"
#include "common/verbs/address.h"
#include "common/verbs/device.h"
#include "common/verbs/work_request_id.h"
#include "proto/nvme.h"
#include "proto/rdma_cm.h"
#include "target/cm_request.h"
#include "target/control_lock.h"
#include "target/event_loop.h"
#include "target/event_loop_internal.h"
#include "target/log_limiter.h"
#include "target/poll_group.h"
#include "target/port.h"

namespace nvmf::target {
using namespace event_loop_detail;  // NOLINT(build/namespaces)

int EventLoop::poll_queues() {
  int n = engine_ != nullptr ? engine_->reap() : 0;
  if (buffer_waiters_can_start()) {
    // One FIFO per pool, whatever queue a waiter came from (target/buffer_pool.h).
    for (auto& d : devices_) {
      if (d->pool != nullptr) n += static_cast<int>(d->pool->chunks().serve());
    }
  }
  for (auto& d : devices_) n += poll_device(*d, kBatchesPerRound);
  if (engine_ != nullptr) engine_->flush_submissions();
  return n;
}

int EventLoop::poll_device(DeviceContext& dev, int max_batches) {
  int n = 0;
  ibv_wc wcs[kPollBatch];
  for (auto& c : dev.cqs) {
    if (c->broken) continue;
    for (int batch = 0; max_batches < 0 || batch < max_batches; ++batch) {
      int got = c->cq.poll(wcs);
      if (got < 0) {
        shared_cq_failed(dev, *c);
        break;
      }
      for (int i = 0; i < got; ++i) dispatch(dev, wcs[i]);
      n += got;
      flush_touched(dev);
      if (dev.srq != nullptr && dev.srq->parked() > dev.srq->parked_share()) {
        evict_srq_parkers(dev);
      }
      if (got < kPollBatch) break;  // empty now
    }
  }
  flush_touched(dev);  // backend completions and started waiters chain work too
  return n;
}

void EventLoop::dispatch(DeviceContext& dev, const ibv_wc& wc) {
  if (auto it = dev.qps.find(wc.qp_num); it != dev.qps.end()) {
    it->second->on_completion(wc);
    return;
  }
  // No queue has this QP: cannot happen (a queue is in qps from its QP's creation until its
  // QP's last completion was polled). Should it, an SRQ receive must still go back.
  const auto [kind, index] = verbs::decode_wr_id(wc.wr_id);
  if (kind == verbs::WrKind::kRecv && dev.srq != nullptr && dev.srq->consumed(index, wc.qp_num)) {
    (void)dev.srq->repost(index);
  }
  uint64_t suppressed = 0;
  if (refusal_log_limiter().allow("stray completion", std::chrono::steady_clock::now(),
                                  &suppressed)) {
    NVMF_LOG(WARN, "target") << "work completion for QP " << wc.qp_num << ", which no queue has ("
                             << verbs::wr_kind_name(kind) << "); dropped"
                             << suppressed_note(suppressed);
  }
}

void EventLoop::evict_srq_parkers(DeviceContext& dev) {
  const SharedReceiveQueue* srq = dev.srq.get();
  // Receives of queues already being torn down come back when they are swept: not counted.
  auto live = [srq](const RdmaQueue& q) {
    return q.shared_receive_queue() == srq && !q.wants_teardown();
  };
  uint32_t parked = 0;
  for (auto& [id, q] : queues_) {
    if (live(*q)) parked += q->srq_receives_parked();
  }
  while (parked > srq->parked_share()) {
    RdmaQueue* heaviest = nullptr;
    for (auto& [id, q] : queues_) {
      if (live(*q) && q->srq_receives_parked() > 0 &&
          (heaviest == nullptr || q->srq_receives_parked() > heaviest->srq_receives_parked())) {
        heaviest = q.get();
      }
    }
    if (heaviest == nullptr) return;
    const uint32_t held = heaviest->srq_receives_parked();
    const std::string what =
        std::to_string(held) + " of the shared receive queue's " + std::to_string(srq->depth()) +
        " receives in capsules waiting for a command slot (capsules parked "
        "on this device: " +
        std::to_string(parked) + ", at most " + std::to_string(srq->parked_share()) + ")";
    uint64_t suppressed = 0;
    if (refusal_log_limiter().allow("srq parked", std::chrono::steady_clock::now(), &suppressed)) {
      NVMF_LOG(WARN, "target") << heaviest->describe() << ": holds " << what << "; disconnecting"
                               << suppressed_note(suppressed);
    }
    heaviest->request_disconnect("holds " + what + " (the host takes no responses?)");
    if (!heaviest->wants_teardown()) return;  // not this group's queue: never so
    parked -= held;
  }
}

void EventLoop::flush_touched(DeviceContext& dev) {
  for (RdmaQueue* q : dev.touched) q->flush();
  dev.touched.clear();
}

void EventLoop::shared_cq_failed(DeviceContext& dev, SharedCq& cq) {
  cq.broken = true;
  NVMF_LOG(ERROR, "target") << "device " << verbs::device_name(dev.context)
                            << ": ibv_poll_cq failed on a shared CQ of " << cq.queues
                            << " queues; tearing them down";
  for (auto& [qp_num, q] : dev.qps) {
    if (q->shared_cq() == &cq) q->request_disconnect("ibv_poll_cq failed on its shared CQ");
  }
}

void EventLoop::arm_queues() {
  for (auto& d : devices_) {
    for (auto& c : d->cqs) {
      if (!c->armed && !c->broken) c->armed = c->cq.req_notify().ok();
    }
  }
}

void EventLoop::drain_cq_events(DeviceContext& dev) {
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  while (ibv_get_cq_event(dev.channel.get(), &cq, &context) == 0) {
    ibv_ack_cq_events(cq, 1);
    for (auto& c : dev.cqs) {
      if (c->cq.get() == cq) c->armed = false;
    }
  }
}

bool EventLoop::buffer_waiters_can_start() const {
  for (const auto& d : devices_) {
    if (d->pool != nullptr && d->pool->chunks().waiting() > 0 &&
        d->pool->chunks().free_count() > 0) {
      return true;
    }
  }
  return false;
}

}  // namespace nvmf::target
