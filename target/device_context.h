// DeviceContext: the per-RDMA-device objects every queue on that device shares.
#ifndef NVMF_TARGET_DEVICE_CONTEXT_H_
#define NVMF_TARGET_DEVICE_CONTEXT_H_

#include <infiniband/verbs.h>

#include <memory>

#include "common/verbs/completion_channel.h"
#include "common/verbs/protection_domain.h"
#include "target/buffer_pool.h"

namespace nvmf::target {

// One per ibv_context seen (librdmacm opens each device once, so the pointer identifies it).
// Destroy after every queue using it (their QPs, MRs and CQs).
struct DeviceContext {
  ibv_context* context = nullptr;  // not owned (librdmacm's)
  ibv_device_attr attr{};
  verbs::ProtectionDomain pd;
  verbs::CompletionChannel channel;  // shared by every queue's CQ on this device, non-blocking
  // The shared data buffers (TargetOptions::num_shared_buffers > 0), made by the first queue
  // whose Connect was accepted; destroyed first (its MR before the PD).
  std::unique_ptr<BufferPool> pool;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_DEVICE_CONTEXT_H_
