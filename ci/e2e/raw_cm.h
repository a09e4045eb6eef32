// SPDX-License-Identifier: BSD-3-Clause
// A bare rdma_cm connect to the target, for the tests that send a CM request our host library
// never would (bad private data, no RDMA READ resources) and expect the target to reject it.
#ifndef NVMF_CI_E2E_RAW_CM_H_
#define NVMF_CI_E2E_RAW_CM_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ci/e2e/rxe_env.h"
#include "common/status.h"
#include "common/verbs/cm_event.h"
#include "common/verbs/cm_id.h"
#include "common/verbs/completion_queue.h"
#include "common/verbs/event_channel.h"
#include "common/verbs/protection_domain.h"
#include "common/verbs/queue_pair.h"
#include "proto/rdma_cm.h"

namespace nvmf::e2e {

// From env.host_addr to env.target_addr:`port`: resolves, creates a QP (one CQ, 4 send and 4
// receive WRs), calls rdma_connect with `private_data` (`len` bytes, at most 255) and the given
// RDMA READ resources, and waits up to `timeout_ms` for the answer. Returns the NVMe-oF CM
// reject private data (RECFMT, STS; NVMe-oF RDMA binding §3.4) when the target rejected;
// kRejected naming the event when it did not (accepted, unreachable...), or the failing step's
// Status.
inline Result<proto::CmRejectPrivateData> raw_connect_expect_reject(
    const RxeEnv& env, uint16_t port, const void* private_data, uint8_t len,
    uint8_t responder_resources, uint8_t initiator_depth, int timeout_ms) {
  NVMF_ASSIGN_OR_RETURN(auto channel, verbs::EventChannel::create());
  NVMF_ASSIGN_OR_RETURN(auto id, verbs::CmId::create(channel));
  NVMF_RETURN_IF_ERROR(id.resolve_addr(env.host_addr, env.target_addr, port, timeout_ms));
  NVMF_RETURN_IF_ERROR(id.resolve_route(timeout_ms));
  NVMF_ASSIGN_OR_RETURN(auto pd, verbs::ProtectionDomain::create(id.verbs()));
  NVMF_ASSIGN_OR_RETURN(auto cq, verbs::CompletionQueue::create(id.verbs(), 8));
  verbs::QpConfig cfg;
  cfg.send_cq = cq.get();
  cfg.recv_cq = cq.get();
  cfg.max_send_wr = 4;
  cfg.max_recv_wr = 4;
  NVMF_ASSIGN_OR_RETURN(auto qp, verbs::QueuePair::create(id, pd.get(), cfg));
  NVMF_RETURN_IF_ERROR(id.connect(private_data, len, responder_resources, initiator_depth));
  NVMF_ASSIGN_OR_RETURN(auto ev, channel.get_event(timeout_ms));
  if (ev.event() != RDMA_CM_EVENT_REJECTED) {
    return Status::rejected(std::string("expected a CM reject, got ") + std::string(ev.name()));
  }
  std::vector<uint8_t> data = ev.copy_private_data();
  if (data.size() < sizeof(proto::CmRejectPrivateData)) {
    return Status::rejected("CM reject with " + std::to_string(data.size()) +
                            " bytes of private data, fewer than the NVMe-oF reject's 4");
  }
  proto::CmRejectPrivateData rej;
  std::memcpy(&rej, data.data(), sizeof(rej));
  return rej;
}

}  // namespace nvmf::e2e

#endif  // NVMF_CI_E2E_RAW_CM_H_
