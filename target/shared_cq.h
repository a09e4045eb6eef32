// SPDX-License-Identifier: BSD-3-Clause
// SharedCq: one completion queue for many queues of one device in one poll group, as SPDK's
// RDMA transport gives each poll group one CQ per device (its "poller") instead of one per
// qpair. The event loop polls it and hands each work completion to the queue whose QP number
// it carries (DeviceContext::qps); it arms it once before sleeping, not once per queue.
#ifndef NVMF_TARGET_SHARED_CQ_H_
#define NVMF_TARGET_SHARED_CQ_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "common/verbs/completion_queue.h"

namespace nvmf::target {

struct DeviceContext;
class StatsRegistry;

// The most entries asked of the device for one shared CQ (also capped by its max_cqe; rxe's is
// 32767). At 128-entry queues (256 send work requests each) about 120 queues fit in one next to
// a 2048-receive SRQ; more queues get a second CQ.
inline constexpr int kSharedCqEntries = 32767;
// Room for queues a new shared CQ starts with, beyond what it keeps for the SRQ (16 queues of
// 128 entries; SPDK's poller CQ starts at 4096 too). It grows (ibv_resize_cq, doubling) when a
// queue finds no room, up to kSharedCqEntries: each entry costs the provider's ring memory
// (rxe: 64 bytes, mapped into the process), so a target with few queues keeps it small.
inline constexpr int kSharedCqFirstRoom = 4096;

// No overflow, whatever the hosts do: a CQ that overflows is lost for every queue on it. So
// each shared CQ promises, before a queue joins it, room for the most completions that queue
// can have in it at once (entries are given back when the queue is destroyed):
//  - every send work request it may have posted (max_send_wr: a flushed QP completes all,
//    signaled or not), plus its own receive queue without an SRQ;
//  - with an SRQ, the SRQ's depth once per CQ: an SRQ receive completes once until we repost
//    it, and we repost only after polling its completion, so every queue together can have at
//    most that many receive completions unpolled (a host that ignores hsqsize included).
struct SharedCq {
  SharedCq(verbs::CompletionQueue c, int srq_reserved)
      : cq(std::move(c)), reserved(srq_reserved), free_cqes(cq.cqe() - srq_reserved) {}
  verbs::CompletionQueue cq;
  int reserved = 0;     // kept for the SRQ's receives (its depth when made)
  int free_cqes = 0;    // entries no queue has been promised
  uint32_t queues = 0;  // queues on it now
  bool armed = false;   // ibv_req_notify_cq done, no event consumed since
  bool broken = false;  // ibv_poll_cq failed: its queues are torn down and none joins it
};

// The CQ a queue that needs `need` entries joins: the index of the first of `free_cqes` (each
// CQ's free entries; a broken CQ is given as -1) with at least `need` free, or
// free_cqes.size() when none has room (a new CQ is then made).
size_t pick_shared_cq(std::span<const int> free_cqes, int need);

// The deepest SRQ a shared CQ can keep room for next to kSharedCqFirstRoom entries of queues,
// on a device whose max_cqe is `max_cqe` (rxe: 32767 - 4096 = 28671); the event loop clamps a
// poll group's SRQ to it (a deeper one would leave no CQ room for any queue).
inline uint32_t max_srq_depth_for_cq(int max_cqe) {
  const int limit = max_cqe < kSharedCqEntries ? max_cqe : kSharedCqEntries;
  return limit > kSharedCqFirstRoom ? static_cast<uint32_t>(limit - kSharedCqFirstRoom) : 0;
}

// Entries of a new shared CQ that keeps `reserved` for the SRQ: reserved + kSharedCqFirstRoom
// (at least reserved + need), capped at `limit` (min(max_cqe, kSharedCqEntries)).
inline int shared_cq_first_size(int reserved, int need, int limit) {
  const int room = need > kSharedCqFirstRoom ? need : kSharedCqFirstRoom;
  return reserved + room < limit ? reserved + room : limit;
}

// The size a shared CQ of `cqe` entries, `free` of them not promised, grows to so that a queue
// needing `need` fits: doubled until it fits, capped at `limit`; `cqe` when even `limit` is not
// enough (the caller then makes a new CQ).
int shared_cq_grown_size(int cqe, int free, int need, int limit);

// Makes dev's first shared CQ when it has none (when the device is first seen, as SPDK's poll
// group makes its poller CQ when it adds a device): shared_cq_first_size() for a 128-entry
// queue, the SRQ's depth kept. Counted in `registry` (add_cqs).
Status ensure_shared_cq(DeviceContext& dev, StatsRegistry& registry);
// Promises `need` entries on one of dev.cqs to a new queue: the first CQ with room, else the
// first that can grow enough (ibv_resize_cq to shared_cq_grown_size()), else a new one
// (ibv_create_cq on dev.channel, shared_cq_first_size()). Errors: kResourceExhausted when a
// CQ of the device's limit cannot hold the SRQ's depth plus `need`; the failing verb.
Result<SharedCq*> join_shared_cq(DeviceContext& dev, int need, StatsRegistry& registry);
// Gives a queue's `need` entries back (its last completion was polled). A CQ left without
// queues is destroyed unless it is the device's first (so many short-lived queues leave the
// memory where it was).
void leave_shared_cq(DeviceContext& dev, SharedCq& cq, int need, StatsRegistry& registry);

// Entries a queue needs on a shared CQ (see SharedCq): `max_send_wr`, plus `queue_size`
// receives when it has no SRQ.
inline int shared_cq_need(uint32_t max_send_wr, uint32_t queue_size, bool srq) {
  return static_cast<int>(max_send_wr + (srq ? 0 : queue_size));
}

}  // namespace nvmf::target

#endif  // NVMF_TARGET_SHARED_CQ_H_
