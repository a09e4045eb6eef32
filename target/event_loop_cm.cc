// SPDX-License-Identifier: BSD-3-Clause
// EventLoop, the listener: RDMA CM events, connect requests checked and accepted or rejected.
#include <pthread.h>
#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <utility>

#include "common/in_capsule.h"
#include "common/log.h"
#include "common/verbs/address.h"
#include "common/verbs/device.h"
#include "common/verbs/work_request_id.h"
#include "proto/nvme.h"
#include "proto/rdma_cm.h"
#include "target/cm_request.h"
#include "target/control_lock.h"
#include "target/event_loop.h"
#include "target/event_loop_internal.h"
#include "target/log_limiter.h"
#include "target/poll_group.h"
#include "target/port.h"

namespace nvmf::target {
using namespace event_loop_detail;  // NOLINT(build/namespaces)

Status EventLoop::drain_cm_events() {
  for (;;) {
    auto event = verbs::get_cm_event(cm_channel_.get(), 0);
    if (!event.ok()) {
      if (event.status().code() == StatusCode::kTimeout) return ok_status();
      return event.status();
    }
    handle_cm_event(*event);
  }
}

void EventLoop::handle_cm_event(verbs::CmEvent& event) {
  if (event.event() == RDMA_CM_EVENT_CONNECT_REQUEST) {
    on_connect_request(event);
    return;
  }
  rdma_cm_event_type type = event.event();
  rdma_cm_id* id = event.id();
  std::string name(event.name());
  event.ack();
  for (const Listener& l : listeners_) {
    if (!l.id || id != l.id->get()) continue;
    if (type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
      NVMF_LOG(ERROR, "target") << "listener " << l.address << ": RDMA device removed; stopping";
      stop();
    }
    return;
  }
  auto it = queues_.find(id);
  if (it == queues_.end()) return;
  switch (type) {
    case RDMA_CM_EVENT_ESTABLISHED:
      NVMF_LOG(DEBUG, "target") << it->second->describe() << ": established";
      break;
    case RDMA_CM_EVENT_DISCONNECTED:
      it->second->request_disconnect("host disconnected");
      break;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
    case RDMA_CM_EVENT_REJECTED:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_CONNECT_ERROR:
      it->second->request_disconnect(name);
      break;
    default:
      break;
  }
}

void EventLoop::on_connect_request(verbs::CmEvent& event) {
  rdma_cm_id* raw = event.id();
  rdma_cm_id* listen_id = event.listen_id();
  std::vector<uint8_t> private_data = event.copy_private_data();
  rdma_conn_param param = event.conn_param();
  event.ack();
  verbs::CmId id = verbs::CmId::adopt(raw);
  std::string peer = peer_of(id);
  if (stop_requested_.load(std::memory_order_relaxed)) {
    return reject(id, proto::kCmRejectNoResources, peer, "target stopping");
  }
  Port* port = nullptr;
  for (const Listener& l : listeners_) {
    if (l.id && l.id->get() == listen_id) port = l.port;
  }
  // A request that raced with close_listener(): its port is gone.
  if (port == nullptr) return reject(id, proto::kCmRejectNoResources, peer, "port removed");
  const PortLimits& limits = port->limits();
  CmRequestCheck check = check_cm_request(
      private_data, CmLimits{limits.max_io_queues, limits.admin_queue_size, limits.io_queue_size});
  if (!check.accepted()) return reject(id, check.reject_sts, peer, check.reason);
  // Connections waiting for their Connect, over every poll group: bounded, refused at the CM
  // before anything is allocated for them. The place is taken now and given back by the queue
  // (or by the hand-over, when refused).
  const std::string peer_host = peer_host_of(id);
  if (!pending_->try_admit(options_.max_pending_connections, peer_host,
                           options_.max_pending_connections_per_peer)) {
    const size_t mine = pending_->count_for(peer_host);
    if (mine >= options_.max_pending_connections_per_peer) {
      return reject(id, proto::kCmRejectNoResources, peer,
                    std::to_string(mine) + " connections of " + peer_host +
                        " are waiting for their Connect, its share "
                        "(--max-pending-connections-per-peer " +
                        std::to_string(options_.max_pending_connections_per_peer) + ")");
    }
    return reject(id, proto::kCmRejectNoResources, peer,
                  std::to_string(pending_->count()) +
                      " connections are waiting for their Connect, the limit "
                      "(--max-pending-connections " +
                      std::to_string(options_.max_pending_connections) + ")");
  }
  PendingSlot pending(pending_, peer_host);
  // The listener's device context first: it resolves the ports' in-capsule sizes (once) before
  // any group sizes a queue by them.
  if (auto dev = device_for(id.verbs()); !dev.ok()) {
    return reject(id, proto::kCmRejectNoResources, peer, dev.status().to_string());
  }
  Handoff h{std::move(id), port, check.qid, check.hrqsize,     check.queue_size,
            param,         peer, peer_host, std::move(pending)};
  size_t target = 0;
  if (groups_.size() > 1) {
    std::vector<GroupLoad> loads;
    for (const EventLoop* g : groups_)
      loads.push_back({g->queues_assigned(), g->io_queues_assigned()});
    target = least_loaded_group(loads, check.qid);
  }
  EventLoop* g = groups_.empty() ? this : groups_[target];
  g->queues_assigned_.fetch_add(1, std::memory_order_relaxed);
  if (check.qid != 0) g->io_queues_assigned_.fetch_add(1, std::memory_order_relaxed);
  if (g == this) return accept_connection(h);
  // The id's events (ESTABLISHED, DISCONNECTED) go to the group's channel from now on.
  if (Status st = h.id.migrate(g->cm_channel_); !st.ok()) {
    g->queues_assigned_.fetch_sub(1, std::memory_order_relaxed);
    if (check.qid != 0) g->io_queues_assigned_.fetch_sub(1, std::memory_order_relaxed);
    return reject(h.id, proto::kCmRejectNoResources, peer, st.to_string());
  }
  auto moved = std::make_shared<Handoff>(std::move(h));
  g->post([g, moved] { g->accept_connection(*moved); });
}

void EventLoop::accept_connection(Handoff& h) {
  verbs::CmId& id = h.id;
  const std::string& peer = h.peer;
  Port* port = h.port;
  const rdma_conn_param& param = h.param;
  const PortLimits& limits = port->limits();
  // Every way out below but an accepted queue gives the queue back to the group's load.
  bool accepted = false;
  struct Unassign {
    EventLoop* loop;
    uint16_t qid;
    bool* accepted;
    ~Unassign() {
      if (*accepted) return;
      loop->queues_assigned_.fetch_sub(1, std::memory_order_relaxed);
      if (qid != 0) loop->io_queues_assigned_.fetch_sub(1, std::memory_order_relaxed);
    }
  } unassign_on_refusal{this, h.qid, &accepted};
  if (stop_requested_.load(std::memory_order_relaxed)) {
    return reject(id, proto::kCmRejectNoResources, peer, "target stopping");
  }
  // Handed over before its port was removed (close_listener), taken after: refused, as the
  // listener would have.
  bool enabled = false;
  {
    ControlLock lock(control_mutex());
    enabled = port->enabled();
  }
  if (!enabled) return reject(id, proto::kCmRejectNoResources, peer, "port removed");
  auto dev = device_for(id.verbs());
  if (!dev.ok()) return reject(id, proto::kCmRejectNoResources, peer, dev.status().to_string());
  const ibv_device_attr& attr = (*dev)->attr;
  // The kernel reports the REQ's values from our side: param.initiator_depth is the host's
  // responder_resources (its IRD), the most RDMA READs we may have outstanding towards it. The
  // queue's READ depth is what we accept with (RdmaQueue::accept).
  auto initiator_depth =
      static_cast<uint8_t>(std::min({int{param.initiator_depth}, attr.max_qp_init_rd_atom,
                                     static_cast<int>(options_.max_rdma_read_depth)}));
  auto responder_resources =
      static_cast<uint8_t>(std::min<int>(param.responder_resources, attr.max_qp_rd_atom));
  // With no READ credit an RDMA READ is never sent (rxe's check_init_depth() waits for one
  // forever): every keyed Write or Connect data would hang unanswered. Refuse at the CM.
  if (initiator_depth == 0) {
    return reject(id, proto::kCmRejectInvalidIrd, peer,
                  "host offers no RDMA READ resources (responder_resources 0)");
  }
  ensure_srq(**dev);
  uint32_t page = page_size();
  RdmaQueueParams p;
  p.qid = h.qid;
  p.queue_size = h.queue_size;
  p.hrqsize = h.hrqsize;
  p.in_capsule_bytes = port->in_capsule_data_size();
  p.port = port;
  p.page_size = page;
  p.max_transfer_bytes = limits.max_transfer_bytes();
  // Each poll group's pool on the device gets its share of the chunks.
  p.shared_buffers = poll_group_shares(options_, options_.poll_groups).shared_buffers;
  p.requested_max_inline_data = options_.requested_max_inline_data;
  p.ack_timeout = static_cast<uint8_t>(options_.ack_timeout);  // 0..31: checked
  p.held_slots = h.qid == 0 ? uint32_t{limits.aerl} + 1 : 0;
  p.stall_warn_ms = options_.stall_warn_ms;
  p.peer = peer;
  p.peer_host = h.peer_host;
  p.srq = (*dev)->srq.get();
  p.wake_fd = wake_fd_;
  p.engine = engine_;
  p.buffer_gauges = &first_port().discovery().registry().shared_buffers(group_);
  p.group = static_cast<uint32_t>(group_);
  auto queue = RdmaQueue::create(id, **dev, p, port->discovery(), statuses_);
  if (!queue.ok()) {
    return reject(id, proto::kCmRejectNoResources, peer, queue.status().to_string());
  }
  std::unique_ptr<RdmaQueue> q = std::move(queue).value();
  if (Status st = q->accept(responder_resources, initiator_depth); !st.ok()) {
    if (uint64_t suppressed = 0; refusal_log_limiter().allow(
            "accept failed", std::chrono::steady_clock::now(), &suppressed)) {
      NVMF_LOG(WARN, "target") << q->describe() << ": accept failed: " << st.to_string()
                               << suppressed_note(suppressed);
    }
    first_port().discovery().registry().count_rejected();
    return;
  }
  if (q->inline_fallback()) first_port().discovery().registry().count_inline_send_fallback();
  first_port().discovery().registry().count_accepted();
  // A host can connect at will: at most kConnectionLogBurst such lines a second.
  if (uint64_t suppressed = 0;
      connection_log_limiter().allow("accepted", std::chrono::steady_clock::now(), &suppressed)) {
    NVMF_LOG(INFO, "target") << q->describe() << ": accepted (queue size " << p.queue_size
                             << ", hrqsize " << p.hrqsize << ", in-capsule " << p.in_capsule_bytes
                             << " bytes, inline send up to " << q->usable_max_inline_data()
                             << " bytes, initiator depth " << unsigned{initiator_depth} << "; "
                             << describe_qp(q->stall_snapshot()) << ")"
                             << suppressed_note(suppressed);
  }
  accepted = true;
  q->hold_pending(std::move(h.pending));
  queues_[q->cm_id()] = std::move(q);
}

void EventLoop::reject(verbs::CmId& id, uint16_t sts, std::string_view peer,
                       std::string_view reason) {
  proto::CmRejectPrivateData data{proto::kCmRecfmt0, sts};
  Status st = id.reject(&data, sizeof(data));
  first_port().discovery().registry().count_rejected();
  // At most one line a second per reject status: a host must not be able to flood the log.
  uint64_t suppressed = 0;
  if (refusal_log_limiter().allow("cm reject " + std::to_string(sts),
                                  std::chrono::steady_clock::now(), &suppressed)) {
    NVMF_LOG(INFO, "target") << peer << ": rejected: " << reason << " (sts " << sts << ")"
                             << (st.ok() ? "" : "; rdma_reject failed: " + st.to_string())
                             << suppressed_note(suppressed);
  }
}

}  // namespace nvmf::target
