// SPDX-License-Identifier: BSD-3-Clause
// CmEvent acking and the mapping from unexpected CM events to Status.
#include "common/verbs/cm_event.h"

#include <cerrno>
#include <string>

namespace nvmf::verbs {
namespace {

std::string describe(rdma_cm_event_type got, int status, rdma_cm_event_type expected) {
  std::string msg = "expected ";
  msg += rdma_event_str(expected);
  msg += ", got ";
  msg += rdma_event_str(got);
  if (status < 0) {
    msg += ": " + errno_string(-status) + " (errno " + std::to_string(-status) + ")";
  } else if (status > 0) {
    msg += " (status " + std::to_string(status) + ")";
  }
  return msg;
}

StatusCode code_for(rdma_cm_event_type got, int status) {
  switch (got) {
    case RDMA_CM_EVENT_REJECTED:
      return status == kIbCmRejectInvalidServiceId ? StatusCode::kUnavailable
                                                   : StatusCode::kRejected;
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
      return status == -ETIMEDOUT ? StatusCode::kTimeout : StatusCode::kUnavailable;
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
      return StatusCode::kUnavailable;
    default:
      return StatusCode::kInternal;
  }
}

}  // namespace

CmEvent& CmEvent::operator=(CmEvent&& other) noexcept {
  if (this != &other) {
    ack();
    event_ = other.event_;
    other.event_ = nullptr;
  }
  return *this;
}

std::span<const uint8_t> CmEvent::private_data() const {
  const rdma_conn_param& conn = event_->param.conn;
  if (conn.private_data == nullptr) return {};
  return {static_cast<const uint8_t*>(conn.private_data), conn.private_data_len};
}

std::vector<uint8_t> CmEvent::copy_private_data() const {
  const auto data = private_data();
  return std::vector<uint8_t>(data.begin(), data.end());
}

Status CmEvent::expect(rdma_cm_event_type expected) const {
  return cm_event_status(event_->event, event_->status, expected);
}

void CmEvent::ack() {
  if (event_ != nullptr) {
    rdma_ack_cm_event(event_);
    event_ = nullptr;
  }
}

Status cm_event_status(rdma_cm_event_type got, int status, rdma_cm_event_type expected,
                       std::string_view context) {
  if (got == expected && status == 0) return ok_status();
  std::string msg = describe(got, status, expected);
  if (got == RDMA_CM_EVENT_REJECTED && status == kIbCmRejectInvalidServiceId) {
    msg += ": connection refused, no listener on that port";
  } else if (got == RDMA_CM_EVENT_REJECTED && status == kIbCmRejectConsumerDefined) {
    msg += ": rejected by the peer";
  }
  StatusCode code = code_for(got, status);
  if (got == expected) {  // The awaited event, but with an error status.
    code = status < 0 ? status_code_from_errno(-status) : StatusCode::kInternal;
  }
  Status s(code, std::move(msg));
  if (status < 0) s = std::move(s).with_errno(-status);
  return std::move(s).annotate(context);
}

}  // namespace nvmf::verbs
