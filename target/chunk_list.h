// SPDX-License-Identifier: BSD-3-Clause
// ChunkList: the free list of a pool of data chunks and the FIFO of the commands waiting for one
// (no memory registration: target/buffer_pool.h registers the memory it lists).
//
// A command whose SGL1 describes data takes a chunk before the command processor sees it and
// gives it back when its response SEND completes. When none is free it waits (request state
// waiting_for_buffer) in the pool's one FIFO of waiters, whatever queue it came from, and is
// served first come first served as chunks come back (SPDK keeps one pending-buffer queue per
// poll group the same way): a queue with many commands waiting cannot take every freed chunk
// ahead of another queue's older one. A command of a queue with no waiter takes a chunk only
// when more are free than are waited for, so waiters go before newcomers too.
//
// Fair share: while commands wait, a freed chunk goes to the oldest waiter whose queue holds
// fewer chunks than its share (the pool's chunks over the queues holding or waiting for one,
// at least 1), and to the oldest waiter only when every waiting queue holds its share. So a
// queue keeping 128 large Reads outstanding can take every chunk while it is alone (nothing is
// held back from a lone queue), but a QD1 queue beside it waits for one chunk to come back,
// never behind the other queue's whole backlog. Event-loop thread only; take(), give() and the
// FIFOs are a few loads and stores (no allocation, no syscall, no lock): a waiter is a node
// inside the command's slot, each queue keeps its own waiters in arrival order (tickets from
// one counter), and serve() looks at the oldest waiter of each queue that has one: its cost is
// the number of waiting queues, not of waiting commands.
#ifndef NVMF_TARGET_CHUNK_LIST_H_
#define NVMF_TARGET_CHUNK_LIST_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "target/counters.h"

namespace nvmf::target {

struct ChunkWaiter;

// Who holds chunks and whose commands wait: the queue that starts a waiter once it has its
// chunk. The counts and links are ChunkList's (take, give, wait, withdraw, serve).
class ChunkWaiterOwner {
 public:
  // The command in `slot` got `chunk` (taken from the list for it): start it.
  virtual void chunk_ready(uint32_t slot, uint8_t* chunk) = 0;
  uint32_t pool_chunks_held() const { return pool_held_; }
  uint32_t pool_waiters() const { return pool_waiting_; }

 protected:
  ~ChunkWaiterOwner() = default;

 private:
  friend class ChunkList;
  uint32_t pool_held_ = 0;
  uint32_t pool_waiting_ = 0;
  ChunkWaiter* head_ = nullptr;  // its waiters, oldest first
  ChunkWaiter* tail_ = nullptr;
  ChunkWaiterOwner* prev_ = nullptr;  // in ChunkList's list of owners with waiters
  ChunkWaiterOwner* next_ = nullptr;
};

// A command waiting for a chunk: a node of its owner's FIFO, kept inside the command's slot.
struct ChunkWaiter {
  ChunkWaiterOwner* owner = nullptr;
  uint32_t slot = 0;
  ChunkWaiter* prev = nullptr;
  ChunkWaiter* next = nullptr;
  uint64_t ticket = 0;  // arrival order across owners
  bool linked = false;
};

// The free list of `count` chunks of `chunk_bytes` at `base` (memory owned by the caller), and
// the FIFO of commands waiting for one.
class ChunkList {
 public:
  ChunkList(uint8_t* base, uint32_t count, uint32_t chunk_bytes);

  // A free chunk, or nullptr when none is free.
  uint8_t* get();
  // Gives back a chunk get() returned. False (nothing changed) for a pointer that is not the
  // start of a chunk of this list or is already free: a transport bug, never a host's doing.
  bool put(uint8_t* chunk);
  // get() and put() for a queue: its chunks held count toward its share.
  uint8_t* take(ChunkWaiterOwner& owner);
  bool give(uint8_t* chunk, ChunkWaiterOwner& owner);

  uint32_t count() const { return count_; }
  uint32_t chunk_bytes() const { return chunk_bytes_; }
  uint32_t free_count() const { return static_cast<uint32_t>(free_.size()); }
  uint32_t in_use() const { return count_ - free_count(); }
  uint32_t high_water() const { return high_water_; }
  // Mirrors this list into `gauges` from now on (chunks added now; in_use and its peak kept by
  // get() and put(), relaxed stores): what the --json report's "resources" shows.
  void set_gauges(SharedBufferGauges* gauges);

  // Commands of all queues waiting for a chunk.
  uint32_t waiting() const { return waiting_; }
  // Chunks a command may take at once: free ones not spoken for by waiters.
  bool unclaimed() const { return free_count() > waiting_; }
  // Appends `w` (not linked and with an owner: false otherwise, nothing changed) to the FIFO.
  bool wait(ChunkWaiter& w);
  // Takes `w` out of the FIFO (a queue being torn down withdraws its waiters); no-op if unlinked.
  void withdraw(ChunkWaiter& w);
  // While a chunk is free and a command waits: the oldest waiter whose queue holds less than
  // share(), else the oldest waiter, gets one (its owner's chunk_ready, called after it left
  // its FIFO). Returns how many were started.
  uint32_t serve();
  // Queues holding or waiting for a chunk now.
  uint32_t active_owners() const { return active_; }
  // A queue's fair share: count() / active_owners(), at least 1.
  uint32_t share() const { return active_ <= 1 ? count_ : std::max<uint32_t>(1, count_ / active_); }

 private:
  uint8_t* base_;
  uint32_t count_;
  uint32_t chunk_bytes_;
  uint32_t high_water_ = 0;
  SharedBufferGauges* gauges_ = nullptr;
  ChunkWaiterOwner* owners_ = nullptr;  // owners with waiters (any order)
  uint64_t next_ticket_ = 0;
  uint32_t waiting_ = 0;
  uint32_t active_ = 0;         // owners with chunks held or waiters
  std::vector<uint32_t> free_;  // chunk indices, a stack
  std::vector<bool> is_free_;   // per chunk
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_CHUNK_LIST_H_
