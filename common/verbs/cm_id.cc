// SPDX-License-Identifier: BSD-3-Clause
// CmId: rdma_cm_id ownership and the CM calls, with the resolve waits.
#include "common/verbs/cm_id.h"

#include <cassert>
#include <cerrno>
#include <cstdlib>

#include "common/log.h"

namespace nvmf::verbs {
namespace {

// The kernel reports ADDR_ERROR/ROUTE_ERROR itself after the resolve timeout; wait a bit longer
// so its precise error wins over our generic kTimeout.
constexpr int kResolveWaitMarginMs = 1000;

rdma_conn_param make_conn_param(const void* private_data, uint8_t len, uint8_t responder_resources,
                                uint8_t initiator_depth, uint8_t retry_count, uint8_t rnr_retry) {
  rdma_conn_param param{};
  param.private_data = private_data;
  param.private_data_len = private_data != nullptr ? len : 0;
  param.responder_resources = responder_resources;
  param.initiator_depth = initiator_depth;
  param.flow_control = 1;
  param.retry_count = retry_count;
  param.rnr_retry_count = rnr_retry;
  return param;
}

}  // namespace

Result<CmId> CmId::create(EventChannel& channel, void* context) {
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(channel.get(), &id, context, RDMA_PS_TCP) != 0) {
    return Status::from_errno("rdma_create_id", errno);
  }
  return CmId(id);
}

CmId CmId::adopt(rdma_cm_id* id) { return CmId(id); }

CmId::~CmId() { destroy(); }

CmId& CmId::operator=(CmId&& other) noexcept {
  if (this != &other) {
    destroy();
    id_ = other.id_;
    other.id_ = nullptr;
  }
  return *this;
}

void CmId::destroy() {
  if (id_ == nullptr) return;
  if (id_->qp != nullptr) {
    // Destroying the id would leave the QueuePair with a dangling rdma_cm_id.
    NVMF_LOG(ERROR, "verbs") << "CmId destroyed while its QP " << id_->qp->qp_num
                             << " still exists: destroy the QueuePair first; leaking the id";
    assert(id_->qp == nullptr && "destroy the QueuePair before its CmId");
    id_ = nullptr;
    return;
  }
  if (rdma_destroy_id(id_) != 0) {
    NVMF_LOG(ERROR, "verbs") << Status::from_errno("rdma_destroy_id", errno).message();
  }
  id_ = nullptr;
}

Status CmId::bind(const SocketAddress& addr) {
  if (rdma_bind_addr(id_, const_cast<sockaddr*>(addr.get())) != 0) {
    return Status::from_errno("rdma_bind_addr", errno, addr.to_string());
  }
  return ok_status();
}

Status CmId::bind(std::string_view addr, uint16_t port) {
  NVMF_ASSIGN_OR_RETURN(const SocketAddress parsed, SocketAddress::parse(addr, port));
  return bind(parsed);
}

Status CmId::listen(int backlog) {
  if (rdma_listen(id_, backlog) != 0) return Status::from_errno("rdma_listen", errno);
  return ok_status();
}

Status CmId::resolve_addr(const std::optional<SocketAddress>& src, const SocketAddress& dst,
                          int timeout_ms) {
  sockaddr* src_addr = src ? const_cast<sockaddr*>(src->get()) : nullptr;
  if (rdma_resolve_addr(id_, src_addr, const_cast<sockaddr*>(dst.get()), timeout_ms) != 0) {
    return Status::from_errno("rdma_resolve_addr", errno, dst.to_string());
  }
  return wait_for(RDMA_CM_EVENT_ADDR_RESOLVED, timeout_ms + kResolveWaitMarginMs,
                  "resolve address " + dst.to_string());
}

Status CmId::resolve_addr(std::string_view src, std::string_view dst, uint16_t port,
                          int timeout_ms) {
  std::optional<SocketAddress> src_addr;
  if (!src.empty()) {
    NVMF_ASSIGN_OR_RETURN(src_addr, SocketAddress::parse(src, uint16_t{0}));
  }
  NVMF_ASSIGN_OR_RETURN(const SocketAddress dst_addr, SocketAddress::parse(dst, port));
  return resolve_addr(src_addr, dst_addr, timeout_ms);
}

Status CmId::resolve_route(int timeout_ms) {
  if (rdma_resolve_route(id_, timeout_ms) != 0) {
    return Status::from_errno("rdma_resolve_route", errno);
  }
  return wait_for(RDMA_CM_EVENT_ROUTE_RESOLVED, timeout_ms + kResolveWaitMarginMs, "resolve route");
}

Status CmId::wait_for(rdma_cm_event_type expected, int timeout_ms, std::string_view context) {
  Result<CmEvent> event = get_cm_event(id_->channel, timeout_ms);
  if (!event.ok()) return std::move(event).status().annotate(context);
  if (event->id() != id_) {
    return Status::internal(std::string(context) + ": " + std::string(event->name()) +
                            " arrived for another rdma_cm_id on the same channel (dropped); " +
                            "use one event channel per connecting id");
  }
  return event->expect(expected).annotate(context);
}

Status CmId::set_ack_timeout(uint8_t timeout) {
  if (rdma_set_option(id_, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof(timeout)) !=
      0) {
    return Status::from_errno("rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)", errno);
  }
  return ok_status();
}

Status CmId::connect(const void* private_data, uint8_t len, uint8_t responder_resources,
                     uint8_t initiator_depth, uint8_t retry_count, uint8_t rnr_retry) {
  rdma_conn_param param = make_conn_param(private_data, len, responder_resources, initiator_depth,
                                          retry_count, rnr_retry);
  if (rdma_connect(id_, &param) != 0) return Status::from_errno("rdma_connect", errno);
  return ok_status();
}

Status CmId::accept(const void* private_data, uint8_t len, uint8_t responder_resources,
                    uint8_t initiator_depth, uint8_t rnr_retry) {
  rdma_conn_param param = make_conn_param(private_data, len, responder_resources, initiator_depth,
                                          /*retry_count=*/0, rnr_retry);
  if (rdma_accept(id_, &param) != 0) return Status::from_errno("rdma_accept", errno);
  return ok_status();
}

Status CmId::reject(const void* private_data, uint8_t len) {
  if (rdma_reject(id_, private_data, private_data != nullptr ? len : 0) != 0) {
    return Status::from_errno("rdma_reject", errno);
  }
  return ok_status();
}

Status CmId::migrate(EventChannel& channel) {
  if (rdma_migrate_id(id_, channel.get()) != 0) return Status::from_errno("rdma_migrate_id", errno);
  return ok_status();
}

Status CmId::disconnect() {
  if (rdma_disconnect(id_) != 0) return Status::from_errno("rdma_disconnect", errno);
  return ok_status();
}

Result<SocketAddress> CmId::local_address() const {
  return SocketAddress::from_sockaddr(rdma_get_local_addr(id_));
}

Result<SocketAddress> CmId::peer_address() const {
  return SocketAddress::from_sockaddr(rdma_get_peer_addr(id_));
}

}  // namespace nvmf::verbs
