// SPDX-License-Identifier: BSD-3-Clause
// BufferPool: the data buffers every queue of one RDMA device shares, instead of
// queue_size x MDTS per queue. One anonymous mapping of `count` chunks of `chunk_bytes` (the
// MDTS transfer size: an RDMA READ or WRITE of a command uses one SGE, so a command's data is
// one chunk), registered once (one verbs::RegisteredBuffer: one MR, one lkey). Like SPDK's nvmf
// transport option num_shared_buffers; SPDK's per-poll-group buf_cache_size has no counterpart
// while one thread serves every queue (there is no contention to save).
//
// A command whose SGL1 describes data takes a chunk before the command processor sees it and
// gives it back when its response SEND completes. When none is free it waits, in its queue's
// FIFO (request state waiting_for_buffer), and `waiting` counts such requests over all queues:
// a queue takes a chunk for a new command only when more are free than are waited for, so a
// queue that waits is served before newcomers of other queues. Event-loop thread only; get()
// and put() are a few loads and stores on a free list (no allocation, no syscall, no lock).
#ifndef NVMF_TARGET_BUFFER_POOL_H_
#define NVMF_TARGET_BUFFER_POOL_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"
#include "common/verbs/registered_buffer.h"
#include "target/counters.h"

namespace nvmf::target {

// The free list of `count` chunks of `chunk_bytes` at `base` (memory owned by the caller).
class ChunkList {
 public:
  ChunkList(uint8_t* base, uint32_t count, uint32_t chunk_bytes);

  // A free chunk, or nullptr when none is free.
  uint8_t* get();
  // Gives back a chunk get() returned. False (nothing changed) for a pointer that is not the
  // start of a chunk of this list or is already free: a transport bug, never a host's doing.
  bool put(uint8_t* chunk);

  uint32_t count() const { return count_; }
  uint32_t chunk_bytes() const { return chunk_bytes_; }
  uint32_t free_count() const { return static_cast<uint32_t>(free_.size()); }
  uint32_t in_use() const { return count_ - free_count(); }
  uint32_t high_water() const { return high_water_; }
  // Mirrors this list into `gauges` from now on (chunks added now; in_use and its peak kept by
  // get() and put(), relaxed stores): what the --json report's "resources" shows.
  void set_gauges(SharedBufferGauges* gauges);

  // Requests of all queues waiting for a chunk (kept by the queues).
  uint32_t waiting = 0;
  // Chunks a request without waiters may take now: free ones not spoken for by waiters.
  bool unclaimed() const { return free_count() > waiting; }

 private:
  uint8_t* base_;
  uint32_t count_;
  uint32_t chunk_bytes_;
  uint32_t high_water_ = 0;
  SharedBufferGauges* gauges_ = nullptr;
  std::vector<uint32_t> free_;  // chunk indices, a stack
  std::vector<bool> is_free_;   // per chunk
};

// ChunkList over one registered buffer of count x chunk_bytes, page-aligned.
class BufferPool {
 public:
  // verbs::RegisteredBuffer with local write access (RDMA READ target, WRITE source); its
  // errors (allocation, ibv_reg_mr) name "shared data buffers" and the size. Destruction
  // deregisters, then frees: every queue using it must have destroyed its QP first.
  // `gauges` (may be null): see ChunkList::set_gauges.
  static Result<std::unique_ptr<BufferPool>> create(ibv_pd* pd, uint32_t count,
                                                    uint32_t chunk_bytes,
                                                    SharedBufferGauges* gauges = nullptr);

  ChunkList& chunks() { return chunks_; }
  uint32_t lkey() const { return buffer_.lkey(); }
  uint64_t registered_bytes() const { return buffer_.size(); }
  // The start of the registered_bytes() every chunk lies in.
  uint8_t* data() { return buffer_.data(); }

 private:
  explicit BufferPool(verbs::RegisteredBuffer buffer, uint32_t count, uint32_t chunk_bytes)
      : buffer_(std::move(buffer)), chunks_(buffer_.data(), count, chunk_bytes) {}
  verbs::RegisteredBuffer buffer_;
  ChunkList chunks_;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_BUFFER_POOL_H_
