// SPDX-License-Identifier: BSD-3-Clause
// MemoryRegion: owns an ibv_mr (ibv_reg_mr).
#ifndef NVMF_COMMON_VERBS_MEMORY_REGION_H_
#define NVMF_COMMON_VERBS_MEMORY_REGION_H_

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

#include "common/status.h"

namespace nvmf::verbs {

// A registered memory region. Move-only. The memory is not owned: it must outlive the MR, and
// the MR must be destroyed after the last work request using it completed, and before its PD.
class MemoryRegion {
 public:
  // ibv_reg_mr(pd, addr, length, access). `access` is a mask of ibv_access_flags, e.g.
  // IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE. A null or empty
  // buffer is kInvalidArgument; the verbs error names ibv_reg_mr, the length and errno.
  static Result<MemoryRegion> create(ibv_pd* pd, void* addr, size_t length, int access);

  ~MemoryRegion();
  MemoryRegion(MemoryRegion&& other) noexcept : mr_(other.mr_) { other.mr_ = nullptr; }
  MemoryRegion& operator=(MemoryRegion&& other) noexcept;
  MemoryRegion(const MemoryRegion&) = delete;
  MemoryRegion& operator=(const MemoryRegion&) = delete;

  // For local SGEs.
  uint32_t lkey() const { return mr_->lkey; }
  // For keyed SGL descriptors sent to the peer.
  uint32_t rkey() const { return mr_->rkey; }
  void* addr() const { return mr_->addr; }
  size_t length() const { return mr_->length; }
  // True when [p, p + len) lies inside the region.
  bool contains(const void* p, size_t len) const;

  ibv_mr* get() const { return mr_; }

 private:
  explicit MemoryRegion(ibv_mr* mr) : mr_(mr) {}
  ibv_mr* mr_;
};

}  // namespace nvmf::verbs

#endif  // NVMF_COMMON_VERBS_MEMORY_REGION_H_
