// SPDX-License-Identifier: BSD-3-Clause
// ProtectionDomain: owns an ibv_pd (ibv_alloc_pd).
#ifndef NVMF_COMMON_VERBS_PROTECTION_DOMAIN_H_
#define NVMF_COMMON_VERBS_PROTECTION_DOMAIN_H_

#include <infiniband/verbs.h>

#include "common/status.h"

namespace nvmf::verbs {

// A protection domain. Move-only. Destroy it after every QueuePair and MemoryRegion in it
// (ibv_dealloc_pd fails with EBUSY otherwise; the destructor then logs an ERROR).
class ProtectionDomain {
 public:
  // ibv_alloc_pd(context); the error names the verb and errno.
  static Result<ProtectionDomain> create(ibv_context* context);

  ~ProtectionDomain();
  ProtectionDomain(ProtectionDomain&& other) noexcept : pd_(other.pd_) { other.pd_ = nullptr; }
  ProtectionDomain& operator=(ProtectionDomain&& other) noexcept;
  ProtectionDomain(const ProtectionDomain&) = delete;
  ProtectionDomain& operator=(const ProtectionDomain&) = delete;

  ibv_pd* get() const { return pd_; }
  ibv_context* context() const { return pd_->context; }

 private:
  explicit ProtectionDomain(ibv_pd* pd) : pd_(pd) {}
  ibv_pd* pd_;
};

}  // namespace nvmf::verbs

#endif  // NVMF_COMMON_VERBS_PROTECTION_DOMAIN_H_
