// SPDX-License-Identifier: BSD-3-Clause
// BufferPool: the registered memory of a ChunkList.
#include "target/buffer_pool.h"

#include <utility>

namespace nvmf::target {

Result<std::unique_ptr<BufferPool>> BufferPool::create(ibv_pd* pd, uint32_t count,
                                                       uint32_t chunk_bytes,
                                                       SharedBufferGauges* gauges) {
  NVMF_ASSIGN_OR_RETURN(auto buffer, verbs::RegisteredBuffer::create(
                                         pd, static_cast<size_t>(count) * chunk_bytes, 4096,
                                         IBV_ACCESS_LOCAL_WRITE, "shared data buffers"));
  std::unique_ptr<BufferPool> pool(new BufferPool(std::move(buffer), count, chunk_bytes));
  pool->chunks_.set_gauges(gauges);
  return pool;
}

}  // namespace nvmf::target
