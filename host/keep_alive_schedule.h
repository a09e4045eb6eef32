// SPDX-License-Identifier: BSD-3-Clause
// KeepAliveSchedule: when the host's keep-alive thread sends its next Keep Alive (admin 18h).
#ifndef NVMF_HOST_KEEP_ALIVE_SCHEDULE_H_
#define NVMF_HOST_KEEP_ALIVE_SCHEDULE_H_

#include <chrono>
#include <cstdint>

namespace nvmf::host {

// The deadlines of a periodic Keep Alive, `interval` apart (Controller: KATO / 2, KATO being
// HostOptions::kato_ms in milliseconds). Each deadline is the previous deadline plus the
// interval, not the previous Keep Alive's completion plus the interval: the time a Keep Alive
// takes (its round trip, 1-2 s on soft-RoCE in an emulated guest) does not push every later one
// back. Linux does the same (nvme_keep_alive_finish takes the command's round trip off the delay
// to the next one). When a Keep Alive finished after the next deadline had already passed (it
// took longer than the interval, e.g. it timed out), the next one is due at once and the
// schedule goes on from that time: one command, no burst to catch up.
//
// No clock of its own: the caller passes the times (steady_clock in the Controller, any time
// points in tests).
class KeepAliveSchedule {
 public:
  using Clock = std::chrono::steady_clock;

  // The first Keep Alive is due `interval` after `start` (the association went live).
  KeepAliveSchedule(Clock::duration interval, Clock::time_point start)
      : interval_(interval), deadline_(start + interval) {}

  // When the next Keep Alive is due.
  Clock::time_point deadline() const { return deadline_; }
  Clock::duration interval() const { return interval_; }
  // Deadlines that had passed when the previous Keep Alive finished (restarted from `now`).
  uint64_t overruns() const { return overruns_; }

  // The Keep Alive due at deadline() has finished, whatever its outcome, at `now`.
  void advance(Clock::time_point now) {
    deadline_ += interval_;
    if (deadline_ < now) {
      deadline_ = now;
      ++overruns_;
    }
  }

 private:
  Clock::duration interval_;
  Clock::time_point deadline_;
  uint64_t overruns_ = 0;
};

}  // namespace nvmf::host

#endif  // NVMF_HOST_KEEP_ALIVE_SCHEDULE_H_
