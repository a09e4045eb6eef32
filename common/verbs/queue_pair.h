// SPDX-License-Identifier: BSD-3-Clause
// QueuePair: an RC QP created on a CmId (rdma_create_qp), home of the inline-send fallback.
#ifndef NVMF_COMMON_VERBS_QUEUE_PAIR_H_
#define NVMF_COMMON_VERBS_QUEUE_PAIR_H_

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <functional>
#include <string_view>

#include "common/inline_send.h"
#include "common/status.h"
#include "common/verbs/cm_id.h"

namespace nvmf::verbs {

// One 64-byte SQE: enough to post every command capsule without in-capsule data inline.
inline constexpr uint32_t kDefaultMaxInlineData = 64;

// What to ask for when creating a QP. The CQs (and SRQ) are not owned and must outlive the QP.
struct QpConfig {
  ibv_cq* send_cq = nullptr;
  ibv_cq* recv_cq = nullptr;
  ibv_srq* srq = nullptr;  // Optional shared receive queue.
  uint32_t max_send_wr = 0;
  uint32_t max_recv_wr = 0;
  uint32_t max_send_sge = 1;
  uint32_t max_recv_sge = 1;
  // Largest inline send wanted (IBV_SEND_INLINE, see common/inline_send.h). 0 asks for none.
  uint32_t requested_max_inline_data = kDefaultMaxInlineData;
  bool sq_sig_all = false;     // Signal every send WR (otherwise only IBV_SEND_SIGNALED ones).
  void* qp_context = nullptr;  // Stored in ibv_qp::qp_context.
};

// Capabilities as granted by the provider (written back into ibv_qp_init_attr::cap by create).
// They may exceed the request: rxe answers max_inline_data 0 with 16, and grows max_send_sge
// with the inline size.
struct QpCaps {
  uint32_t max_send_wr = 0;
  uint32_t max_recv_wr = 0;
  uint32_t max_send_sge = 0;
  uint32_t max_recv_sge = 0;
  uint32_t max_inline_data = 0;
};

// Outcome of create_qp_with_inline_fallback().
struct QpCreation {
  QpCaps granted;
  uint32_t requested_max_inline_data = 0;
  // True when the first attempt (with requested_max_inline_data > 0) failed and the QP was
  // created by the retry with max_inline_data = 0.
  bool inline_fallback = false;
  int first_errno = 0;  // The failed first attempt's errno when inline_fallback.

  // nvmf::usable_max_inline_data() of this creation: the ceiling for IBV_SEND_INLINE.
  uint32_t usable_max_inline_data() const {
    return nvmf::usable_max_inline_data(requested_max_inline_data, granted.max_inline_data,
                                        inline_fallback);
  }
};

// Builds the RC init attributes of `config` with cap.max_inline_data = `max_inline_data`.
ibv_qp_init_attr make_qp_init_attr(const QpConfig& config, uint32_t max_inline_data);

// Creates a QP from attributes: returns 0, or an errno. On success attr.cap must hold the
// granted capabilities (rdma_create_qp/ibv_create_qp write them back).
using QpCreateFn = std::function<int(ibv_qp_init_attr& attr)>;

// THE inline-send fallback, factored out so it can be tested without a device:
// 1. create with max_inline_data = config.requested_max_inline_data;
// 2. if that fails and the request was > 0, log one WARN naming `device_name`, the size and
//    the errno, and create again with max_inline_data = 0 (some providers refuse any inline
//    size, e.g. irdma, or sizes above their limit: rxe > 512, qedr > 128). Any errno triggers
//    the retry: librdmacm may report ENOMEM whatever the provider said;
// 3. if the request was 0, or the retry fails too, return the error (naming rdma_create_qp,
//    the errno, and the first attempt's errno after a fallback). No further retries.
Result<QpCreation> create_qp_with_inline_fallback(const QpConfig& config,
                                                  std::string_view device_name,
                                                  const QpCreateFn& create);

// An RC queue pair attached to a CmId. Move-only.
//
// Destruction order: destroy the QueuePair (rdma_destroy_qp) before its CmId (which checks
// that id->qp is gone), and before its CQs, SRQ, MRs and PD. The QueuePair keeps a non-owning
// pointer to the rdma_cm_id, so the CmId must not be moved-from-and-destroyed while the QP
// lives (moving the CmId object is fine: the rdma_cm_id itself does not move).
class QueuePair {
 public:
  // rdma_create_qp(id, pd, attr) with the inline-send fallback above. `id` must have a device
  // (address resolved, or adopted from a CONNECT_REQUEST) and no QP yet; `pd` and both CQs
  // must be set and belong to the id's device.
  static Result<QueuePair> create(CmId& id, ibv_pd* pd, const QpConfig& config);

  ~QueuePair();
  QueuePair(QueuePair&& other) noexcept;
  QueuePair& operator=(QueuePair&& other) noexcept;
  QueuePair(const QueuePair&) = delete;
  QueuePair& operator=(const QueuePair&) = delete;

  ibv_qp* get() const { return qp_; }
  uint32_t qp_num() const { return qp_->qp_num; }

  // What the caller asked for, and what the provider granted (reported as is; post with
  // usable_max_inline_data(), which also honours a request of 0 and the fallback).
  uint32_t requested_max_inline_data() const { return creation_.requested_max_inline_data; }
  uint32_t granted_max_inline_data() const { return creation_.granted.max_inline_data; }
  bool inline_fallback() const { return creation_.inline_fallback; }
  // The ceiling every IBV_SEND_INLINE decision of this QP uses: 0 after the fallback or when 0
  // was requested (even though rxe grants 16 then), else min(requested, granted).
  uint32_t usable_max_inline_data() const { return creation_.usable_max_inline_data(); }
  uint32_t granted_max_send_sge() const { return creation_.granted.max_send_sge; }
  uint32_t granted_max_recv_sge() const { return creation_.granted.max_recv_sge; }
  uint32_t granted_max_send_wr() const { return creation_.granted.max_send_wr; }
  uint32_t granted_max_recv_wr() const { return creation_.granted.max_recv_wr; }
  const QpCaps& granted() const { return creation_.granted; }

  // choose_send_mode() against this QP's usable_max_inline_data().
  SendMode send_mode(uint32_t capsule_bytes, bool has_in_capsule_data) const {
    return choose_send_mode(capsule_bytes, has_in_capsule_data, usable_max_inline_data());
  }

  // Fast path: ibv_post_send / ibv_post_recv. Return 0 or an errno; `bad_wr` (optional)
  // receives the first WR that failed. No allocation.
  int post_send(ibv_send_wr* wr, ibv_send_wr** bad_wr = nullptr) {
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp_, wr, bad_wr != nullptr ? bad_wr : &bad);
  }
  int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad_wr = nullptr) {
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(qp_, wr, bad_wr != nullptr ? bad_wr : &bad);
  }

 private:
  QueuePair(rdma_cm_id* id, const QpCreation& creation)
      : id_(id), qp_(id->qp), creation_(creation) {}
  void destroy();

  rdma_cm_id* id_;  // Not owned: the CmId owns it and outlives this QP.
  ibv_qp* qp_;
  QpCreation creation_;
};

}  // namespace nvmf::verbs

#endif  // NVMF_COMMON_VERBS_QUEUE_PAIR_H_
