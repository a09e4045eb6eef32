// BufferPool and its free list.
#include "target/buffer_pool.h"

#include <sys/mman.h>

#include <cerrno>
#include <string>

namespace nvmf::target {

ChunkList::ChunkList(uint8_t* base, uint32_t count, uint32_t chunk_bytes)
    : base_(base), count_(count), chunk_bytes_(chunk_bytes), is_free_(count, true) {
  free_.reserve(count);
  for (uint32_t i = count; i > 0; --i) free_.push_back(i - 1);  // chunk 0 on top
}

uint8_t* ChunkList::get() {
  if (free_.empty()) return nullptr;
  uint32_t index = free_.back();
  free_.pop_back();
  is_free_[index] = false;
  if (in_use() > high_water_) high_water_ = in_use();
  return base_ + static_cast<size_t>(index) * chunk_bytes_;
}

bool ChunkList::put(uint8_t* chunk) {
  if (chunk < base_ || chunk_bytes_ == 0) return false;
  size_t offset = static_cast<size_t>(chunk - base_);
  if (offset % chunk_bytes_ != 0 || offset / chunk_bytes_ >= count_) return false;
  auto index = static_cast<uint32_t>(offset / chunk_bytes_);
  if (is_free_[index]) return false;
  is_free_[index] = true;
  free_.push_back(index);
  return true;
}

Result<std::unique_ptr<BufferPool>> BufferPool::create(ibv_pd* pd, uint32_t count,
                                                       uint32_t chunk_bytes) {
  std::unique_ptr<BufferPool> pool(new BufferPool());
  pool->bytes_ = static_cast<size_t>(count) * chunk_bytes;
  void* p =
      ::mmap(nullptr, pool->bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return Status::from_errno("mmap", errno,
                              "shared data buffers of " + std::to_string(pool->bytes_) + " bytes");
  }
  pool->base_ = static_cast<uint8_t*>(p);
  NVMF_ASSIGN_OR_RETURN(auto mr,
                        verbs::MemoryRegion::create(pd, p, pool->bytes_, IBV_ACCESS_LOCAL_WRITE));
  pool->mr_.emplace(std::move(mr));
  pool->chunks_.emplace(pool->base_, count, chunk_bytes);
  return pool;
}

BufferPool::~BufferPool() {
  mr_.reset();
  if (base_ != nullptr) ::munmap(base_, bytes_);
}

}  // namespace nvmf::target
