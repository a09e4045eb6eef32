// SPDX-License-Identifier: BSD-3-Clause
// IoChannel: what an IoQueue (host/io_queue.h) needs of one connected I/O queue. The library's
// RDMA connection implements it; the unit tests drive IoQueue through a fake.
#ifndef NVMF_HOST_IO_CHANNEL_H_
#define NVMF_HOST_IO_CHANNEL_H_

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <span>

#include "common/in_capsule.h"
#include "common/status.h"
#include "host/io_plan.h"
#include "proto/nvme.h"

namespace nvmf::host {

// Command slots in flight use steady_clock deadlines.
using Deadline = std::chrono::steady_clock::time_point;
// Whole milliseconds from now to `deadline` as a poll() timeout: 0 once it passed (or less than
// 1 ms is left), at most INT32_MAX.
int remaining_ms(Deadline deadline);

// Capsules one connection posted; plain integers, read on the thread that uses the connection.
struct QueueCounters {
  uint64_t capsules_inline = 0;        // posted with IBV_SEND_INLINE
  uint64_t capsules_by_reference = 0;  // posted from the registered SQE buffer
  // Of capsules_by_reference, those carrying in-capsule data (multi-SGE, never inline send).
  uint64_t capsules_with_in_capsule_data = 0;

  QueueCounters& operator+=(const QueueCounters& c) {
    capsules_inline += c.capsules_inline;
    capsules_by_reference += c.capsules_by_reference;
    capsules_with_in_capsule_data += c.capsules_with_in_capsule_data;
    return *this;
  }
  // What was posted between two readings of one connection's (or one IoQueue's) counters.
  QueueCounters operator-(const QueueCounters& earlier) const {
    return {capsules_inline - earlier.capsules_inline,
            capsules_by_reference - earlier.capsules_by_reference,
            capsules_with_in_capsule_data - earlier.capsules_with_in_capsule_data};
  }
};

// One connected queue's command engine, used by one thread; no call allocates on success. A
// failed call (kIo, kUnavailable, kTimeout) leaves the connection failed for good: the IoQueue
// drops it and takes the next association's.
class IoChannel {
 public:
  virtual ~IoChannel() = default;

  virtual uint16_t qid() const = 0;
  // Slots for concurrent commands (CID = slot), and those free now.
  virtual uint16_t num_slots() const = 0;
  virtual uint16_t free_slots() const = 0;
  // What in-capsule data the target takes on this queue (common/in_capsule.h).
  virtual const HostInCapsulePolicy& in_capsule_policy() const = 0;
  // Posts `sqe` (CID set to the slot) with `in_capsule` pieces after it; the slot.
  // kResourceExhausted: no free slot; kIo / kUnavailable: the queue failed.
  virtual Result<uint16_t> post(const proto::Sqe& sqe, std::span<const Piece> in_capsule,
                                bool defer) = 0;
  // Posts the chain of `defer` posts with one ibv_post_send; kIo / kUnavailable: the queue
  // failed.
  virtual Status post_deferred() = 0;
  // One look at the completion queue: how many work completions it handled (0: none yet).
  // Errors: kIo (a work completion error), kUnavailable (the target disconnected).
  virtual Result<int> poll_completions() = 0;
  // True once `slot` has its response and its send completion; release_slot() then frees it
  // and returns the CQE.
  virtual bool slot_done(uint16_t slot) const = 0;
  virtual proto::Cqe release_slot(uint16_t slot) = 0;
  // Sleeping on the queue: fds[0] the completion channel (-1 when busy-polled), fds[1] the
  // rdma_cm channel; after poll(), after_wait() consumes what fired (kUnavailable once the
  // target disconnected, kTimeout at `deadline`: the queue is then failed).
  virtual void wait_fds(pollfd fds[2]) const = 0;
  virtual Status after_wait(const pollfd fds[2], Deadline deadline) = 0;
  // The capsules posted on this connection so far (none for a channel without an RDMA QP).
  virtual QueueCounters capsule_counters() const { return {}; }
};

}  // namespace nvmf::host

#endif  // NVMF_HOST_IO_CHANNEL_H_
