// SPDX-License-Identifier: BSD-3-Clause
// AlignedBuffer and RegisteredBuffer: memory for work requests and its MR, with one owner (the
// one registered-buffer type of the project: target queues, host queues and host I/O buffers).
#ifndef NVMF_COMMON_VERBS_REGISTERED_BUFFER_H_
#define NVMF_COMMON_VERBS_REGISTERED_BUFFER_H_

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "common/status.h"
#include "common/verbs/memory_region.h"

namespace nvmf::verbs {

// A zeroed allocation of `size()` bytes whose address is a multiple of the alignment it was made
// with. Move-only; freed by the destructor.
class AlignedBuffer {
 public:
  // posix_memalign(alignment, bytes) then memset 0. `alignment` in bytes: a power of two and at
  // least sizeof(void*); `bytes` > 0. Otherwise kInvalidArgument (checked here: posix_memalign
  // is never given an invalid alignment). Out of memory: the posix_memalign errno as a Status
  // naming `what` and the size.
  static Result<AlignedBuffer> create(size_t bytes, size_t alignment, std::string_view what);

  AlignedBuffer() = default;
  AlignedBuffer(AlignedBuffer&&) noexcept = default;
  AlignedBuffer& operator=(AlignedBuffer&&) noexcept = default;

  uint8_t* data() const { return mem_.get(); }
  size_t size() const { return size_; }
  std::span<uint8_t> span() const { return {mem_.get(), size_}; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  AlignedBuffer(uint8_t* p, size_t size) : mem_(p), size_(size) {}
  std::unique_ptr<uint8_t, Free> mem_;
  size_t size_ = 0;
};

// Memory registered as one MR, with one owner: either an AlignedBuffer this object allocated
// (create()) or memory the caller owns (register_memory()). Move-only. Destruction deregisters
// the MR, then frees the memory when it owns it, then drops `pd_owner` (so a PD kept alive by it
// outlives the MR). As with any MR, the owner must keep it until no posted work request uses it.
class RegisteredBuffer {
 public:
  // AlignedBuffer::create(bytes, alignment, what), then ibv_reg_mr(pd, ..., access) (`access`:
  // ibv_access_flags, e.g. IBV_ACCESS_LOCAL_WRITE for receive buffers, plus REMOTE_READ and
  // REMOTE_WRITE for data a peer RDMA READs or WRITEs). A null `pd` is kInvalidArgument; the
  // errors name `what`. `pd_owner`, when given, is whatever keeps `pd` allocated (the host's
  // controller shares its PD with buffers that may outlive it).
  static Result<RegisteredBuffer> create(ibv_pd* pd, size_t bytes, size_t alignment, int access,
                                         std::string_view what,
                                         std::shared_ptr<const void> pd_owner = nullptr);
  // ibv_reg_mr(pd, addr, bytes, access) over memory the caller owns and keeps until this object
  // is destroyed (it is never freed here). A null `pd`, a null `addr` or 0 `bytes` is
  // kInvalidArgument; errors name `what`. `pd_owner` as create().
  static Result<RegisteredBuffer> register_memory(ibv_pd* pd, void* addr, size_t bytes, int access,
                                                  std::string_view what,
                                                  std::shared_ptr<const void> pd_owner = nullptr);

  RegisteredBuffer(RegisteredBuffer&& other) noexcept;
  RegisteredBuffer& operator=(RegisteredBuffer&&) noexcept;
  ~RegisteredBuffer();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<uint8_t> span() const { return {data_, size_}; }
  // True when the memory was allocated here (create()), false for register_memory().
  bool owns_memory() const { return mem_.data() != nullptr; }
  // For local SGEs.
  uint32_t lkey() const { return mr_.lkey(); }
  // For keyed SGL descriptors sent to the peer.
  uint32_t rkey() const { return mr_.rkey(); }
  // True when [p, p + len) lies inside the buffer.
  bool contains(const void* p, size_t len) const { return mr_.contains(p, len); }
  // An SGE for bytes [offset, offset + length) (not range-checked: fast path).
  ibv_sge sge(size_t offset, uint32_t length) const {
    return ibv_sge{reinterpret_cast<uintptr_t>(data_ + offset), length, mr_.lkey()};
  }

 private:
  RegisteredBuffer(std::shared_ptr<const void> pd_owner, AlignedBuffer mem, MemoryRegion mr,
                   uint8_t* data, size_t size)
      : pd_owner_(std::move(pd_owner)),
        mem_(std::move(mem)),
        mr_(std::move(mr)),
        data_(data),
        size_(size) {}
  // Members are destroyed in reverse order: the MR, the memory (when owned), then the PD's owner.
  std::shared_ptr<const void> pd_owner_;
  AlignedBuffer mem_;  // empty for caller-owned memory
  MemoryRegion mr_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace nvmf::verbs

#endif  // NVMF_COMMON_VERBS_REGISTERED_BUFFER_H_
