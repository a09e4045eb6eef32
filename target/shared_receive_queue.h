// SPDX-License-Identifier: BSD-3-Clause
// SharedReceiveQueue: one ibv_srq per DeviceContext whose receives every queue
// of that device takes its command capsules from, instead of hsqsize + 1 receives per queue.
// Like SPDK's nvmf RDMA transport with max_srq_depth (default 4096, as here); nvmet-rdma has
// the same design (use_srq, one SRQ per completion vector).
//
// Receive i: SGE 0 is its 64-byte SQE, SGE 1 (absent when in-capsule data is off) its
// in-capsule area of `pages` pages of page_size bytes, contiguous. Both areas are in one
// registered buffer (one MR): depth x 64 bytes of SQEs (rounded up to a page), then
// depth x pages x page_size bytes of in-capsule areas. The area is sized for the largest
// in-capsule size of the ports the device serves; a queue of a port with a smaller size sees
// only its own pages (RdmaQueue).
//
// Ownership of a receive: posted (the device may fill it) or held by the queue whose QP took
// it (wc.qp_num) until that queue posts it again. A command keeps its receive until just before
// its response SEND (its SQE and in-capsule data are read in place, no copy, as SPDK and
// nvmet-rdma do); a queue torn down posts back every receive it still holds (ReceiveTable).
//
// SRQ limit: srq_limit is armed at depth / 8 receives; IBV_EVENT_SRQ_LIMIT_REACHED (read by the
// device's async event thread, DeviceContext) is counted and the limit re-armed by the event
// loop's housekeeping once the SRQ is above it again. With fewer than that posted, hosts are
// close to RNR NAKs (their sends retried by the RNIC, rnr_retry 7 = forever for Linux).
#ifndef NVMF_TARGET_SHARED_RECEIVE_QUEUE_H_
#define NVMF_TARGET_SHARED_RECEIVE_QUEUE_H_

#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/verbs/registered_buffer.h"
#include "target/counters.h"

namespace nvmf::target {

// Which receive buffers are posted and which queue (by QP number) holds the others. Pure
// bookkeeping, no verbs: unit-tested. Event-loop thread only, except posted_now() (relaxed).
class ReceiveTable {
 public:
  explicit ReceiveTable(uint32_t count);

  uint32_t count() const { return static_cast<uint32_t>(owner_.size()); }
  // Receive `index` was posted (again). False, nothing changed, when out of range or already
  // posted (a transport bug, never a host's doing).
  bool posted(uint32_t index);
  // Its completion arrived on QP `qp_num`, which now holds it. False, nothing changed, when out
  // of range or not posted (a corrupt wr_id or a completion seen twice).
  bool consumed(uint32_t index, uint32_t qp_num);
  // The receives QP `qp_num` holds, in index order (teardown, not the fast path).
  std::vector<uint32_t> held_by(uint32_t qp_num) const;
  bool is_posted(uint32_t index) const { return index < count() && owner_[index] == kPosted; }
  uint32_t posted_now() const { return static_cast<uint32_t>(posted_.get()); }
  // The fewest posted at once since the first post.
  uint32_t posted_low() const { return static_cast<uint32_t>(low_.get()); }

 private:
  static constexpr uint64_t kPosted = ~uint64_t{0};
  static constexpr uint64_t kNever = kPosted - 1;  // never posted yet
  std::vector<uint64_t> owner_;                    // kPosted, kNever, or the holding QP's number
  Gauge posted_;
  Gauge low_;
  bool low_set_ = false;
};

class SharedReceiveQueue {
 public:
  // ibv_create_srq on `pd` with `depth` receives (clamped to attr.max_srq_wr, with a WARN) of
  // 64 + in_capsule_bytes (rounded up to pages of page_size), registers their buffer, posts
  // every receive and arms srq_limit. Errors: kUnavailable when attr.max_srq is 0 or
  // max_srq_sge is below the SGEs needed; otherwise the failing verb (ibv_create_srq,
  // ibv_reg_mr, ibv_post_srq_recv) and its errno.
  static Result<std::unique_ptr<SharedReceiveQueue>> create(ibv_pd* pd, const ibv_device_attr& attr,
                                                            uint32_t depth,
                                                            uint32_t in_capsule_bytes,
                                                            uint32_t page_size);
  // ibv_destroy_srq, then the buffer. Every QP using it must be destroyed first.
  ~SharedReceiveQueue();
  SharedReceiveQueue(const SharedReceiveQueue&) = delete;
  SharedReceiveQueue& operator=(const SharedReceiveQueue&) = delete;

  ibv_srq* get() const { return srq_; }
  uint32_t depth() const { return table_.count(); }
  uint32_t pages_per_recv() const { return pages_; }
  uint32_t page_size() const { return page_size_; }
  uint32_t in_capsule_bytes() const { return pages_ * page_size_; }
  uint64_t registered_bytes() const { return buffer_->size(); }
  // Receive `index`'s SQE and the start of its in-capsule pages (index < depth()).
  const uint8_t* sqe(uint32_t index) const { return buffer_->data() + size_t{index} * 64; }
  // With no in-capsule data (pages_per_recv() 0) there are no pages: nullptr, never an index
  // into the empty table.
  uint8_t* const* pages(uint32_t index) const {
    return pages_ == 0 ? nullptr : page_ptrs_.data() + size_t{index} * pages_;
  }

  // Fast path. A completion of receive `index` arrived on QP `qp_num`: false when the wr_id
  // names no receive of this SRQ that is posted (the caller tears its queue down).
  bool consumed(uint32_t index, uint32_t qp_num);
  // Posts receive `index` again (ibv_post_srq_recv). Returns 0 or an errno (EINVAL also for a
  // receive that is already posted).
  int repost(uint32_t index);
  // Teardown of QP `qp_num`: posts back every receive it still holds; returns how many.
  uint32_t repost_held_by(uint32_t qp_num);

  // Async event thread: IBV_EVENT_SRQ_LIMIT_REACHED (the provider disarmed the limit).
  void limit_reached();
  // Event-loop thread (housekeeping): re-arms srq_limit after an event once more than the limit
  // are posted again; returns true when an event was seen since the last call (for one WARN).
  bool maintain();

  // Receives held by capsules parked with their in-capsule data (no free command slot on their
  // queue), across every queue of the device; event-loop thread. A queue adds what it parks
  // and takes off what it starts or gives back at teardown.
  void parked_changed(int32_t delta) { parked_ = static_cast<uint32_t>(int64_t{parked_} + delta); }
  uint32_t parked() const { return parked_; }
  // The most receives parked capsules may hold at once: half the depth. Beyond it the queue
  // parking the most is torn down (EventLoop), so the other half stays for every other host.
  uint32_t parked_share() const { return depth() / 2; }

  const ReceiveTable& table() const { return table_; }
  const SrqCounters& counters() const { return counters_; }

 private:
  SharedReceiveQueue(uint32_t depth, uint32_t pages, uint32_t page_size)
      : table_(depth), pages_(pages), page_size_(page_size) {}
  Status arm_limit();

  ReceiveTable table_;
  uint32_t pages_ = 0;
  uint32_t page_size_ = 4096;
  uint32_t limit_ = 0;
  uint32_t parked_ = 0;
  ibv_srq* srq_ = nullptr;
  std::optional<verbs::RegisteredBuffer> buffer_;
  std::vector<ibv_recv_wr> wrs_;
  std::vector<ibv_sge> sges_;
  std::vector<uint8_t*> page_ptrs_;
  std::atomic<bool> limit_fired_{false};
  bool limit_armed_ = false;
  SrqCounters counters_;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_SHARED_RECEIVE_QUEUE_H_
