// SPDX-License-Identifier: BSD-3-Clause
// Poll-group placement: which poll group (target/event_loop.h) a new queue goes to.
#ifndef NVMF_TARGET_POLL_GROUP_H_
#define NVMF_TARGET_POLL_GROUP_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>

namespace nvmf::target {

// What the listener knows of one poll group's load: queues given to it and not yet gone, and
// how many of those are I/O queues (a queue counts from the listener's hand-over on, so that
// connections arriving back to back spread before the first is accepted).
struct GroupLoad {
  size_t queues = 0;
  size_t io_queues = 0;
};

// The group for a new queue of `qid`: an admin queue (qid 0) to the group with the fewest queues,
// an I/O queue to the one with the fewest I/O queues (I/O queues carry the load; an admin queue
// carries keep-alives and a few admin commands); a tie goes by the other count, then to the
// lowest index. On an idle target a host's admin queue lands in group 0 and its I/O queue qid
// in group qid mod n (EventLoop::pin_thread pins group g to the CPU of blk-mq context qid - 1
// under --cpu auto). 0 when `loads` is empty.
inline size_t least_loaded_group(std::span<const GroupLoad> loads, uint16_t qid) {
  auto key = [qid](const GroupLoad& l) {
    return qid == 0 ? std::pair{l.queues, l.io_queues} : std::pair{l.io_queues, l.queues};
  };
  size_t best = 0;
  for (size_t i = 1; i < loads.size(); ++i) {
    if (key(loads[i]) < key(loads[best])) best = i;
  }
  return best;
}

// Connections accepted at the CM that have not had a successful Fabrics Connect yet, over every
// poll group: what --max-pending-connections (TargetOptions::max_pending_connections) bounds, and
// each peer address's share of it (--max-pending-connections-per-peer), so that one peer holding
// bare CM connections (reopening each as its Connect deadline drops it) cannot shut every other
// peer out. The listener admits (try_admit: the checks and the increments are one step under a
// mutex); the group that owns the queue gives its place back (PendingSlot) at the instant it
// stops pending: its Connect succeeded (before the response is posted), it is torn down, or the
// hand-over was refused. So the counts are never behind what the groups hold: the limits are
// exact across groups. Thread-safe; never on the I/O path.
class PendingConnections {
 public:
  // Counts one more connection of `peer` (its address without the port) when fewer than
  // `limit` are pending in all and fewer than `per_peer_limit` of that peer; false (nothing
  // counted) otherwise.
  bool try_admit(size_t limit, const std::string& peer = {}, size_t per_peer_limit = SIZE_MAX) {
    std::lock_guard lock(mu_);
    if (count_.load(std::memory_order_relaxed) >= limit) return false;
    size_t& mine = by_peer_[peer];
    if (mine >= per_peer_limit) {
      if (mine == 0) by_peer_.erase(peer);
      return false;
    }
    ++mine;
    count_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void release(const std::string& peer = {}) {
    std::lock_guard lock(mu_);
    auto it = by_peer_.find(peer);
    if (it != by_peer_.end() && --it->second == 0) by_peer_.erase(it);
    count_.fetch_sub(1, std::memory_order_relaxed);
  }
  size_t count() const { return count_.load(std::memory_order_relaxed); }
  size_t count_for(const std::string& peer) const {
    std::lock_guard lock(mu_);
    auto it = by_peer_.find(peer);
    return it == by_peer_.end() ? 0 : it->second;
  }

 private:
  mutable std::mutex mu_;
  std::atomic<size_t> count_{0};
  std::map<std::string, size_t> by_peer_;  // guarded by mu_; peers with none pending are erased
};

// One admitted connection's place in a PendingConnections, given back once: by release() or
// by the destructor, whichever comes first (a queue destroyed or a hand-over dropped without a
// Connect). Owned by one thread at a time (the listener, then the queue's group); the
// PendingConnections lives as long as its last slot.
class PendingSlot {
 public:
  PendingSlot() = default;
  explicit PendingSlot(std::shared_ptr<PendingConnections> of, std::string peer = {})
      : of_(std::move(of)), peer_(std::move(peer)) {}
  PendingSlot(PendingSlot&& other) noexcept
      : of_(std::move(other.of_)), peer_(std::move(other.peer_)) {}
  PendingSlot& operator=(PendingSlot&& other) noexcept {
    if (this != &other) {
      release();
      of_ = std::move(other.of_);
      peer_ = std::move(other.peer_);
    }
    return *this;
  }
  PendingSlot(const PendingSlot&) = delete;
  PendingSlot& operator=(const PendingSlot&) = delete;
  ~PendingSlot() { release(); }

  bool held() const { return of_ != nullptr; }
  void release() {
    if (of_ == nullptr) return;
    of_->release(peer_);
    of_.reset();
  }

 private:
  std::shared_ptr<PendingConnections> of_;
  std::string peer_;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_POLL_GROUP_H_
