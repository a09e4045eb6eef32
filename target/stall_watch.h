// SPDX-License-Identifier: BSD-3-Clause
// StallWatch: since when a queue's posted send work (RDMA READs, response SENDs and the RDMA
// WRITEs before them) has made no progress. Fed by the event loop's housekeeping pass, never on
// the I/O path.
//
// Why: a command holds its shared data buffer (target/buffer_pool.h) until its response SEND
// completes, and a SEND completes only once the host has a receive posted for it. The CM REQUEST
// sets the RNR retry count of our QP, and hosts ask for 7 (retry forever, as nvme-rdma and every
// target do), so a host that stops posting receives stalls that SEND, and every READ and SEND
// behind it on the QP, forever: its commands keep their chunks, and every other host's commands
// that need one wait behind them (measured: ci/e2e hostile_host_test
// HostWithoutReceivesCannotHoldTheSharedBuffers). The event loop tears such a queue down once it
// has been stalled for --send-stall-timeout-ms while others wait for a chunk it holds.
#ifndef NVMF_TARGET_STALL_WATCH_H_
#define NVMF_TARGET_STALL_WATCH_H_

#include <chrono>
#include <cstdint>
#include <optional>

namespace nvmf::target {

class StallWatch {
 public:
  using Clock = std::chrono::steady_clock;

  // One look: `outstanding` send work requests posted and not completed, `completions` send-side
  // work completions so far (a counter that only grows). Returns the start of the current stall:
  // the first look that saw work outstanding with no completion since; nullopt when nothing is
  // outstanding. A completion between two looks starts a new stall at `now`.
  std::optional<Clock::time_point> observe(uint32_t outstanding, uint64_t completions,
                                           Clock::time_point now) {
    if (outstanding == 0) {
      since_.reset();
    } else if (!since_ || completions != seen_) {
      since_ = now;
    }
    seen_ = completions;
    return since_;
  }

 private:
  std::optional<Clock::time_point> since_;
  uint64_t seen_ = 0;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_STALL_WATCH_H_
