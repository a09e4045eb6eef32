// SPDX-License-Identifier: BSD-3-Clause
// Credits and SlotFifo: the bookkeeping behind a request that waits for a queue resource (RDMA
// READ depth, send-queue entries) in arrival order instead of failing. Event-loop thread only;
// no allocation after reset().
#ifndef NVMF_TARGET_CREDITS_H_
#define NVMF_TARGET_CREDITS_H_

#include <cstdint>
#include <vector>

namespace nvmf::target {

// A resource of `limit` units: take() what a work request needs when it is posted, give_back()
// when its completion arrives. high_water() is the most ever in use at once.
class Credits {
 public:
  void set_limit(uint32_t limit) { limit_ = limit; }
  uint32_t limit() const { return limit_; }
  uint32_t in_use() const { return in_use_; }
  uint32_t high_water() const { return high_water_; }
  bool available(uint32_t n) const { return n <= limit_ - in_use_; }
  // False (nothing taken) when fewer than `n` are free.
  bool take(uint32_t n) {
    if (!available(n)) return false;
    in_use_ += n;
    if (in_use_ > high_water_) high_water_ = in_use_;
    return true;
  }
  // Gives back `n` (at most what is in use: a surplus is dropped, never wrapped around).
  void give_back(uint32_t n) { in_use_ -= n < in_use_ ? n : in_use_; }

 private:
  uint32_t limit_ = 0;
  uint32_t in_use_ = 0;
  uint32_t high_water_ = 0;
};

// First in, first out of command slot indices, at most `capacity` (one per slot: a slot waits
// in at most one FIFO at a time).
class SlotFifo {
 public:
  // Empties the FIFO and sizes it (allocates; call when the queue is set up).
  void reset(uint32_t capacity) {
    ring_.assign(capacity, 0);
    head_ = count_ = 0;
  }
  bool empty() const { return count_ == 0; }
  uint32_t size() const { return count_; }
  // False when full.
  bool push(uint32_t slot) {
    if (count_ == ring_.size()) return false;
    ring_[(head_ + count_) % ring_.size()] = slot;
    ++count_;
    return true;
  }
  // The oldest; only when !empty().
  uint32_t front() const { return ring_[head_]; }
  void pop() {
    head_ = (head_ + 1) % static_cast<uint32_t>(ring_.size());
    --count_;
  }

 private:
  std::vector<uint32_t> ring_;
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_CREDITS_H_
