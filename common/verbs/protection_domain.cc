// SPDX-License-Identifier: BSD-3-Clause
// ProtectionDomain: ibv_alloc_pd / ibv_dealloc_pd.
#include "common/verbs/protection_domain.h"

#include "common/log.h"
#include "common/verbs/device.h"

namespace nvmf::verbs {
namespace {

void dealloc(ibv_pd* pd) {
  if (pd == nullptr) return;
  if (const int err = ibv_dealloc_pd(pd); err != 0) {
    NVMF_LOG(ERROR, "verbs") << Status::from_errno("ibv_dealloc_pd", err).message()
                             << " (QPs or MRs still use it?)";
  }
}

}  // namespace

Result<ProtectionDomain> ProtectionDomain::create(ibv_context* context) {
  if (context == nullptr) return Status::invalid_argument("ibv_alloc_pd: null device context");
  ibv_pd* pd = ibv_alloc_pd(context);
  if (pd == nullptr) return Status::from_errno("ibv_alloc_pd", errno, device_name(context));
  return ProtectionDomain(pd);
}

ProtectionDomain::~ProtectionDomain() { dealloc(pd_); }

ProtectionDomain& ProtectionDomain::operator=(ProtectionDomain&& other) noexcept {
  if (this != &other) {
    dealloc(pd_);
    pd_ = other.pd_;
    other.pd_ = nullptr;
  }
  return *this;
}

}  // namespace nvmf::verbs
