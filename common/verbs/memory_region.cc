// SPDX-License-Identifier: BSD-3-Clause
// MemoryRegion: ibv_reg_mr / ibv_dereg_mr.
#include "common/verbs/memory_region.h"

#include <cerrno>
#include <cstdint>
#include <string>

#include "common/log.h"

namespace nvmf::verbs {
namespace {

void dereg(ibv_mr* mr) {
  if (mr == nullptr) return;
  if (const int err = ibv_dereg_mr(mr); err != 0) {
    NVMF_LOG(ERROR, "verbs") << Status::from_errno("ibv_dereg_mr", err).message();
  }
}

}  // namespace

Result<MemoryRegion> MemoryRegion::create(ibv_pd* pd, void* addr, size_t length, int access) {
  if (pd == nullptr || addr == nullptr || length == 0) {
    return Status::invalid_argument("ibv_reg_mr: null PD, null address or zero length");
  }
  ibv_mr* mr = ibv_reg_mr(pd, addr, length, access);
  if (mr == nullptr) {
    return Status::from_errno("ibv_reg_mr", errno, std::to_string(length) + " bytes");
  }
  return MemoryRegion(mr);
}

MemoryRegion::~MemoryRegion() { dereg(mr_); }

MemoryRegion& MemoryRegion::operator=(MemoryRegion&& other) noexcept {
  if (this != &other) {
    dereg(mr_);
    mr_ = other.mr_;
    other.mr_ = nullptr;
  }
  return *this;
}

bool MemoryRegion::contains(const void* p, size_t len) const {
  const auto start = reinterpret_cast<uintptr_t>(mr_->addr);
  const auto q = reinterpret_cast<uintptr_t>(p);
  // Overflow-safe order: offset first, then length against what is left.
  if (q < start || q - start > mr_->length) return false;
  return len <= mr_->length - (q - start);
}

}  // namespace nvmf::verbs
