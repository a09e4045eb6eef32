// SPDX-License-Identifier: BSD-3-Clause
// DeviceContext: the per-RDMA-device objects every queue on that device shares.
#ifndef NVMF_TARGET_DEVICE_CONTEXT_H_
#define NVMF_TARGET_DEVICE_CONTEXT_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "common/verbs/completion_channel.h"
#include "common/verbs/protection_domain.h"
#include "target/async_events.h"
#include "target/buffer_pool.h"
#include "target/shared_cq.h"
#include "target/shared_receive_queue.h"

namespace nvmf::target {

class RdmaQueue;

// One per ibv_context seen (librdmacm opens each device once, so the pointer identifies it).
// Destroy after every queue using it (their QPs, MRs and CQs). Members are destroyed in reverse
// order: the SRQ, then the async event thread (which must outlive every QP and the SRQ: their
// destruction waits for their events to be acknowledged), the pool, the shared CQs, the
// channel and the PD.
struct DeviceContext {
  ibv_context* context = nullptr;  // not owned (librdmacm's)
  ibv_device_attr attr{};
  verbs::ProtectionDomain pd;
  verbs::CompletionChannel channel;  // the shared CQs' completion events, non-blocking
  // Every queue's QP on this device sends its completions to one of these (target/shared_cq.h);
  // a new one is made when none has room for a new queue.
  std::vector<std::unique_ptr<SharedCq>> cqs;
  // QP number -> its queue, for the completions polled from `cqs` (a queue is in it from its
  // QP's creation until the last completion of that QP was polled: RdmaQueue's destructor).
  std::unordered_map<uint32_t, RdmaQueue*> qps;
  // Queues with work requests to post (RdmaQueue::flush()) after this round's completions; each
  // at most once, room for every queue in qps reserved, so adding never allocates.
  std::vector<RdmaQueue*> touched;
  // Set by the event loop: polls every CQ in `cqs` until it is empty, hands each completion to
  // its queue and flushes them (a queue being destroyed drains its completions this way).
  std::function<void()> drain;
  // The shared data buffers (TargetOptions::num_shared_buffers > 0), made by the first queue
  // whose Connect was accepted; destroyed first (its MR before the PD).
  std::unique_ptr<BufferPool> pool;
  // Reads and acknowledges the device's async events (target/async_events.h).
  std::unique_ptr<AsyncEventThread> async_events;
  // The shared receive queue every queue of this device takes its command capsules from
  // (TargetOptions::srq), made when the device is first seen (at start-up when a listen
  // address is on it); null with --srq off, or where
  // the device has none (then srq_unavailable, and queues post their own receives).
  std::unique_ptr<SharedReceiveQueue> srq;
  bool srq_unavailable = false;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_DEVICE_CONTEXT_H_
