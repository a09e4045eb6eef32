// SPDX-License-Identifier: BSD-3-Clause
// DrainCounter: how many users something has on the poll groups (backend operations on a
// namespace, queues bound to a subsystem), so that the control thread can free it once the
// last one is gone, without a lock on the users' side.
#ifndef NVMF_TARGET_DRAIN_COUNTER_H_
#define NVMF_TARGET_DRAIN_COUNTER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace nvmf::target {

// acquire()/release() from any thread: one atomic operation each, and release() takes a mutex
// only when it drops the count to zero while a waiter is there. wait_idle() waits for zero.
// release() still touches the counter after the count reads zero: the owner frees it only once
// every releasing thread has moved on (for poll groups: after a round, Target's quiescence).
class DrainCounter {
 public:
  void acquire() { count_.fetch_add(1, std::memory_order_seq_cst); }
  void release() {
    if (count_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        draining_.load(std::memory_order_seq_cst)) {
      std::lock_guard lock(mutex_);
      idle_.notify_all();
    }
  }
  int32_t count() const { return count_.load(std::memory_order_relaxed); }
  // Waits until the count is zero, at most `timeout`; false on timeout. Once called, every
  // release() to zero wakes it (the draining flag stays set: the thing is going away).
  bool wait_idle(std::chrono::milliseconds timeout) {
    draining_.store(true, std::memory_order_seq_cst);
    std::unique_lock lock(mutex_);
    return idle_.wait_for(lock, timeout,
                          [&] { return count_.load(std::memory_order_seq_cst) == 0; });
  }

 private:
  std::atomic<int32_t> count_{0};
  std::atomic<bool> draining_{false};
  std::mutex mutex_;
  std::condition_variable idle_;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_DRAIN_COUNTER_H_
