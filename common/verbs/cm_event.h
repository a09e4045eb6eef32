// SPDX-License-Identifier: BSD-3-Clause
// CmEvent: one rdma_cm event, acknowledged (rdma_ack_cm_event) when the wrapper goes away.
#ifndef NVMF_COMMON_VERBS_CM_EVENT_H_
#define NVMF_COMMON_VERBS_CM_EVENT_H_

#include <rdma/rdma_cma.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace nvmf::verbs {

// Owns one event returned by rdma_get_cm_event() and acks it exactly once: on ack() or in the
// destructor. Move-only.
//
// Lifetime rules that librdmacm imposes:
// - private_data() and conn_param() point into the event: copy what you need before the ack
//   (copy_private_data()).
// - rdma_destroy_id() blocks until every event reported on that id has been acked, so a CmEvent
//   must be destroyed (or ack()ed) before the CmId of event.id is destroyed, or the thread
//   deadlocks. Same for listen_id and the listener's CmId.
// - On RDMA_CM_EVENT_CONNECT_REQUEST, id() is a new rdma_cm_id the caller now owns: adopt it
//   with CmId::adopt() (then accept or reject it). Acking the event does not free it.
class CmEvent {
 public:
  // Takes ownership of `event` (non-null, from rdma_get_cm_event()).
  explicit CmEvent(rdma_cm_event* event) : event_(event) {}
  ~CmEvent() { ack(); }
  CmEvent(CmEvent&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  CmEvent& operator=(CmEvent&& other) noexcept;
  CmEvent(const CmEvent&) = delete;
  CmEvent& operator=(const CmEvent&) = delete;

  // Accessors; only valid before ack().
  rdma_cm_event_type event() const { return event_->event; }
  // "RDMA_CM_EVENT_ESTABLISHED" etc. (rdma_event_str).
  std::string_view name() const { return rdma_event_str(event_->event); }
  rdma_cm_id* id() const { return event_->id; }
  // The listener's id on CONNECT_REQUEST; null otherwise.
  rdma_cm_id* listen_id() const { return event_->listen_id; }
  // 0 on success. A negative errno on ADDR_ERROR/ROUTE_ERROR/UNREACHABLE/CONNECT_ERROR; on
  // REJECTED the transport's reject reason (IB CM: 8 = no listener, 28 = consumer reject).
  int status() const { return event_->status; }
  // Private data of CONNECT_REQUEST (REQ, padded to 56 bytes on RoCE/IB), ESTABLISHED on the
  // active side (the accept's data) and REJECTED (the reject's data); empty if none.
  std::span<const uint8_t> private_data() const;
  std::vector<uint8_t> copy_private_data() const;
  // The connection parameters of CONNECT_REQUEST/ESTABLISHED: the peer's responder_resources
  // and initiator_depth in particular. private_data is the same as above.
  const rdma_conn_param& conn_param() const { return event_->param.conn; }

  // Ok when this is `expected` with status 0; otherwise a Status explaining what arrived
  // instead (see cm_event_status()).
  Status expect(rdma_cm_event_type expected) const;

  // Acks now (idempotent). Accessors must not be used afterwards.
  void ack();
  bool acked() const { return event_ == nullptr; }
  rdma_cm_event* get() const { return event_; }

 private:
  rdma_cm_event* event_;
};

// Turns "event `got` with `status` arrived while waiting for `expected`" into a Status:
// - got == expected and status == 0: ok;
// - REJECTED: kRejected (reason 8, no listener on that port: kUnavailable, "connection refused");
// - ADDR_ERROR / ROUTE_ERROR: from the errno in -status (ETIMEDOUT: kTimeout, otherwise
//   kUnavailable);
// - UNREACHABLE / CONNECT_ERROR / DISCONNECTED / DEVICE_REMOVAL: kUnavailable;
// - anything else: kInternal ("unexpected event").
// The message names both events and the status, prefixed with `context` when not empty.
Status cm_event_status(rdma_cm_event_type got, int status, rdma_cm_event_type expected,
                       std::string_view context = {});

// IB CM reject reasons seen in RDMA_CM_EVENT_REJECTED's status (IBTA Table 112, ib_cm.h).
inline constexpr int kIbCmRejectInvalidServiceId = 8;  // No listener on the port.
inline constexpr int kIbCmRejectConsumerDefined = 28;  // The peer called rdma_reject().

}  // namespace nvmf::verbs

#endif  // NVMF_COMMON_VERBS_CM_EVENT_H_
