// SPDX-License-Identifier: BSD-3-Clause
// BufferPool: the data buffers every queue of one RDMA device shares, instead of
// queue_size x MDTS per queue. One anonymous mapping of `count` chunks of `chunk_bytes` (the
// MDTS transfer size: an RDMA READ or WRITE of a command uses one SGE, so a command's data is
// one chunk), registered once (one verbs::RegisteredBuffer: one MR, one lkey). Like SPDK's nvmf
// transport option num_shared_buffers; SPDK's per-poll-group buf_cache_size has no counterpart
// while one thread serves every queue (there is no contention to save).
//
// The chunks and their waiters: target/chunk_list.h.
#ifndef NVMF_TARGET_BUFFER_POOL_H_
#define NVMF_TARGET_BUFFER_POOL_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>

#include "common/status.h"
#include "common/verbs/registered_buffer.h"
#include "target/chunk_list.h"

namespace nvmf::target {

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
