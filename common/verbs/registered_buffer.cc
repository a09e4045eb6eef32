// SPDX-License-Identifier: BSD-3-Clause
// AlignedBuffer (posix_memalign / free) and RegisteredBuffer (plus ibv_reg_mr / ibv_dereg_mr).
#include "common/verbs/registered_buffer.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

namespace nvmf::verbs {

void AlignedBuffer::Free::operator()(uint8_t* p) const { std::free(p); }

Result<AlignedBuffer> AlignedBuffer::create(size_t bytes, size_t alignment, std::string_view what) {
  if (bytes == 0) return Status::invalid_argument(std::string(what) + ": zero bytes");
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) {
    return Status::invalid_argument(std::string(what) + ": alignment " + std::to_string(alignment) +
                                    " is not a power of two of at least " +
                                    std::to_string(sizeof(void*)));
  }
  void* p = nullptr;
  if (int err = ::posix_memalign(&p, alignment, bytes); err != 0) {
    return Status::from_errno("posix_memalign", err,
                              std::string(what) + ", " + std::to_string(bytes) + " bytes");
  }
  std::memset(p, 0, bytes);
  return AlignedBuffer(static_cast<uint8_t*>(p), bytes);
}

Result<RegisteredBuffer> RegisteredBuffer::create(ibv_pd* pd, size_t bytes, size_t alignment,
                                                  int access, std::string_view what,
                                                  std::shared_ptr<const void> pd_owner) {
  if (pd == nullptr) return Status::invalid_argument(std::string(what) + ": no protection domain");
  NVMF_ASSIGN_OR_RETURN(AlignedBuffer mem, AlignedBuffer::create(bytes, alignment, what));
  Result<MemoryRegion> mr = MemoryRegion::create(pd, mem.data(), mem.size(), access);
  if (!mr.ok()) return std::move(mr).status().annotate(what);
  uint8_t* data = mem.data();
  size_t size = mem.size();
  return RegisteredBuffer(std::move(pd_owner), std::move(mem), std::move(*mr), data, size);
}

Result<RegisteredBuffer> RegisteredBuffer::register_memory(ibv_pd* pd, void* addr, size_t bytes,
                                                           int access, std::string_view what,
                                                           std::shared_ptr<const void> pd_owner) {
  if (pd == nullptr) return Status::invalid_argument(std::string(what) + ": no protection domain");
  if (addr == nullptr || bytes == 0) {
    return Status::invalid_argument(std::string(what) + ": null or empty memory");
  }
  Result<MemoryRegion> mr = MemoryRegion::create(pd, addr, bytes, access);
  if (!mr.ok()) return std::move(mr).status().annotate(what);
  return RegisteredBuffer(std::move(pd_owner), AlignedBuffer(), std::move(*mr),
                          static_cast<uint8_t*>(addr), bytes);
}

RegisteredBuffer::RegisteredBuffer(RegisteredBuffer&& other) noexcept
    : pd_owner_(std::move(other.pd_owner_)),
      mem_(std::move(other.mem_)),
      mr_(std::move(other.mr_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

RegisteredBuffer& RegisteredBuffer::operator=(RegisteredBuffer&& other) noexcept {
  if (this != &other) {
    // The old MR goes before the old memory it covers.
    mr_ = std::move(other.mr_);
    mem_ = std::move(other.mem_);
    pd_owner_ = std::move(other.pd_owner_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

RegisteredBuffer::~RegisteredBuffer() = default;

}  // namespace nvmf::verbs
