// SPDX-License-Identifier: BSD-3-Clause
// CmId: owns an rdma_cm_id (RDMA_PS_TCP, reliable connected) and wraps the CM calls on it.
#ifndef NVMF_COMMON_VERBS_CM_ID_H_
#define NVMF_COMMON_VERBS_CM_ID_H_

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/status.h"
#include "common/verbs/address.h"
#include "common/verbs/event_channel.h"

namespace nvmf::verbs {

// One connection (or listener) endpoint. Move-only; the destructor calls rdma_destroy_id().
//
// Destruction order, enforced where cheap:
//   1. QueuePair (rdma_destroy_qp on this id). The destructor checks id->qp == nullptr: a CmId
//      destroyed while its QP still exists is a bug (the QueuePair would later touch a freed id);
//      it aborts in debug builds, and in NDEBUG builds logs an ERROR and leaks the id instead.
//   2. Every CmEvent reported on this id must be acked first: rdma_destroy_id() blocks until it.
//   3. CmId (this).
//   4. EventChannel it was created on (or, for an adopted id, the listener's channel).
// CQs, MRs and the PD are independent of the CmId but must outlive the QueuePair.
//
// Thread-safety: none; use an id from one thread at a time.
class CmId {
 public:
  // rdma_create_id(channel, RDMA_PS_TCP). `context` is stored in id->context.
  static Result<CmId> create(EventChannel& channel, void* context = nullptr);
  // Takes ownership of an id that arrived in a CONNECT_REQUEST event (CmEvent::id()). It reports
  // on the listener's channel.
  static CmId adopt(rdma_cm_id* id);

  ~CmId();
  CmId(CmId&& other) noexcept : id_(other.id_) { other.id_ = nullptr; }
  CmId& operator=(CmId&& other) noexcept;
  CmId(const CmId&) = delete;
  CmId& operator=(const CmId&) = delete;

  // rdma_bind_addr. Port 0 picks an ephemeral port.
  Status bind(const SocketAddress& addr);
  // Parses then binds; kInvalidArgument names a bad address.
  Status bind(std::string_view addr, uint16_t port);
  // rdma_listen. CONNECT_REQUEST events then arrive on this id's channel.
  Status listen(int backlog);

  // rdma_resolve_addr, then waits for ADDR_RESOLVED on this id's channel. `src` (optional) picks
  // the local address/device. The kernel gives up after `timeout_ms`; the wait allows one more
  // second for its ADDR_ERROR. ADDR_ERROR and friends become a clear Status (cm_event_status()).
  // The channel must carry no other id's events meanwhile: give each connecting id its own
  // channel, as the host does.
  Status resolve_addr(const std::optional<SocketAddress>& src, const SocketAddress& dst,
                      int timeout_ms);
  // Parses then resolves; `src` empty means any local address.
  Status resolve_addr(std::string_view src, std::string_view dst, uint16_t port, int timeout_ms);
  // rdma_resolve_route, then waits for ROUTE_RESOLVED (same rules as resolve_addr()).
  Status resolve_route(int timeout_ms);

  // rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT): the local ACK timeout (4.096 us x 2^timeout,
  // 0..31) the QP gets when rdma_connect / rdma_accept moves it to RTS. Call before either.
  Status set_ack_timeout(uint8_t timeout);
  // rdma_connect with a QP already created on this id (QueuePair::create). Does not wait: the
  // caller waits for ESTABLISHED, REJECTED (private data = NVMe-oF reject) or UNREACHABLE on the
  // channel. `responder_resources` must be >= 1 for the target to RDMA READ from this host.
  // rnr_retry 7 means retry forever.
  Status connect(const void* private_data, uint8_t len, uint8_t responder_resources,
                 uint8_t initiator_depth, uint8_t retry_count = 7, uint8_t rnr_retry = 7);
  // rdma_accept on an adopted CONNECT_REQUEST id with its QP created. `initiator_depth` should
  // be min(peer's responder_resources, device max_qp_init_rd_atom), `responder_resources`
  // min(peer's initiator_depth, device max_qp_rd_atom).
  Status accept(const void* private_data, uint8_t len, uint8_t responder_resources,
                uint8_t initiator_depth, uint8_t rnr_retry = 7);
  // rdma_reject on an adopted CONNECT_REQUEST id, e.g. with the 4-byte NVMe-oF reject data.
  Status reject(const void* private_data, uint8_t len);
  // rdma_migrate_id: this id's events go to `channel` from now on (a poll group takes over a
  // connection its listener accepted). Waits while events of this id on the old channel are
  // unacknowledged.
  Status migrate(EventChannel& channel);
  // rdma_disconnect: moves the QP to the error state (flushing posted WRs) and tells the peer.
  // Both sides then get DISCONNECTED.
  Status disconnect();

  // The device context, set once the address is resolved or bound to an RDMA address; null
  // before (and for a listener bound to the wildcard address).
  ibv_context* verbs() const { return id_->verbs; }
  rdma_cm_id* get() const { return id_; }
  rdma_event_channel* channel() const { return id_->channel; }
  void set_context(void* context) { id_->context = context; }

  // rdma_get_local_addr / rdma_get_peer_addr.
  Result<SocketAddress> local_address() const;
  Result<SocketAddress> peer_address() const;

 private:
  explicit CmId(rdma_cm_id* id) : id_(id) {}
  void destroy();
  Status wait_for(rdma_cm_event_type expected, int timeout_ms, std::string_view context);

  rdma_cm_id* id_;
};

}  // namespace nvmf::verbs

#endif  // NVMF_COMMON_VERBS_CM_ID_H_
