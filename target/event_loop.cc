// SPDX-License-Identifier: BSD-3-Clause
// EventLoop: CM event handling, queue creation and teardown, and the poll/arm/sleep cycle.
#include "target/event_loop.h"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

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
#include "target/log_limiter.h"
#include "target/poll_group.h"
#include "target/port.h"

namespace nvmf::target {
namespace {

constexpr uint64_t kTagCm = 0;
constexpr uint64_t kTagWake = 1;
constexpr uint64_t kTagDeviceBase = 2;
constexpr uint64_t kTagEngine = ~uint64_t{0};
constexpr int kIdleSpins = 64;      // empty polls between two looks at the clock
constexpr int kCmCheckRounds = 64;  // busy rounds between two looks at the CM channel
constexpr int kListenBacklog = 128;
// Work completions taken from a shared CQ by one ibv_poll_cq, and the batches taken from one CQ
// in one round before the loop moves on (the posts those completions led to go out after each
// batch).
constexpr int kPollBatch = 32;
constexpr int kBatchesPerRound = 4;

uint32_t page_size() { return static_cast<uint32_t>(::sysconf(_SC_PAGESIZE)); }

// Gives the heap pages freed with a queue back to the system (glibc's malloc_trim). Not under
// ASan or TSan: their allocator owns the heap and does not intercept malloc_trim, so the call
// would reach glibc's unused allocator and initialise it lazily from whichever poll group
// calls first; two groups doing that at once (queues of both torn down together) both attach
// to main_arena with one count, and glibc aborts at the second one's thread exit
// ("__malloc_arena_thread_freeres: a->attached_threads > 0": asan.rxe keep_alive_test with
// NVMF_E2E_POLL_GROUPS=2, in one of three runs).
void trim_heap() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return;
#else
  ::malloc_trim(0);
#endif
}

std::string peer_of(const verbs::CmId& id) {
  auto addr = id.peer_address();
  return addr.ok() ? addr->to_string() : std::string("(unknown peer)");
}

// The peer's address without its port: the key of the per-peer shares.
std::string peer_host_of(const verbs::CmId& id) {
  auto addr = id.peer_address();
  return addr.ok() ? addr->host() : std::string("(unknown peer)");
}

}  // namespace

EventLoop::EventLoop(const TargetOptions& options, StatusCounters& statuses,
                     verbs::EventChannel channel, IoEngine* engine, std::vector<Port*> ports,
                     size_t group)
    : options_(options),
      group_(group),
      statuses_(statuses),
      engine_(engine),
      cm_channel_(std::move(channel)) {
  for (Port* p : ports) listeners_.push_back(Listener{p, std::nullopt, 0, {}});
}

Result<std::unique_ptr<EventLoop>> EventLoop::create(const TargetOptions& options,
                                                     StatusCounters& statuses, IoEngine* engine,
                                                     std::vector<Port*> ports, size_t group) {
  if (ports.empty() || ports.size() > kMaxPorts) {
    return Status::invalid_argument(std::to_string(ports.size()) + " ports: give 1.." +
                                    std::to_string(kMaxPorts));
  }
  NVMF_ASSIGN_OR_RETURN(auto channel, verbs::EventChannel::create());
  std::unique_ptr<EventLoop> loop(
      new EventLoop(options, statuses, std::move(channel), engine, std::move(ports), group));
  NVMF_RETURN_IF_ERROR(loop->open(options));
  return loop;
}

Status EventLoop::open(const TargetOptions& /*options*/) {
  NVMF_RETURN_IF_ERROR(cm_channel_.set_nonblocking());
  for (Listener& l : listeners_) {
    if (group_ != 0) break;  // the listeners are group 0's
    const DiscoveryAddress& a = l.port->address();
    NVMF_ASSIGN_OR_RETURN(auto addr, verbs::SocketAddress::parse(a.traddr, a.trsvcid));
    NVMF_ASSIGN_OR_RETURN(auto id, verbs::CmId::create(cm_channel_));
    l.id.emplace(std::move(id));
    NVMF_RETURN_IF_ERROR(l.id->bind(addr));
    NVMF_RETURN_IF_ERROR(l.id->listen(kListenBacklog));
    NVMF_ASSIGN_OR_RETURN(auto local, l.id->local_address());
    l.number = local.port();
    l.address = local.to_string();
  }
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return Status::from_errno("epoll_create1", errno);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return Status::from_errno("eventfd", errno);
  NVMF_RETURN_IF_ERROR(add_fd(cm_channel_.fd(), kTagCm));
  NVMF_RETURN_IF_ERROR(add_fd(wake_fd_, kTagWake));
  if (engine_ != nullptr) NVMF_RETURN_IF_ERROR(add_fd(engine_->event_fd(), kTagEngine));
  for (Listener& l : listeners_) {
    if (l.id && l.id->verbs() != nullptr) NVMF_RETURN_IF_ERROR(device_for(l.id->verbs()));
  }
  return ok_status();
}

EventLoop::~EventLoop() {
  {
    // Connections handed over and never taken (stopped first): their ids go before the channel.
    std::lock_guard lock(inbox_mutex_);
    inbox_.clear();
  }
  shutdown();
  for (auto& d : devices_) {
    if (d->srq != nullptr) first_port().discovery().registry().remove_srq(&d->srq->counters());
    if (d->pool != nullptr && engine_ != nullptr) engine_->unregister_memory(d->pool->data());
  }
  devices_.clear();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

Status EventLoop::add_fd(int fd, uint64_t tag) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = tag;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    return Status::from_errno("epoll_ctl(ADD)", errno);
  }
  return ok_status();
}

void EventLoop::post(std::function<void()> task) {
  {
    std::lock_guard lock(inbox_mutex_);
    inbox_.push_back(std::move(task));
  }
  inbox_pending_.store(true, std::memory_order_release);
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof(one));
}

void EventLoop::drain_inbox() {
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard lock(inbox_mutex_);
    inbox_pending_.store(false, std::memory_order_relaxed);
    tasks.swap(inbox_);
  }
  for (auto& task : tasks) task();
}

void EventLoop::unassign(const RdmaQueue& q) {
  queues_assigned_.fetch_sub(1, std::memory_order_relaxed);
  if (q.params().qid != 0) io_queues_assigned_.fetch_sub(1, std::memory_order_relaxed);
}

void EventLoop::set_groups(std::vector<EventLoop*> groups) {
  groups_ = std::move(groups);
  for (EventLoop* g : groups_) {
    g->leader_ = this;
    if (g == this) continue;
    // The devices group 0 opened at start-up (listen addresses on an RDMA device): every group
    // opens its own context and SRQ now too, before any host connects, rather than in its first
    // connection's hand-over (an SRQ of several MiB registered on the connect path, and RSS that
    // moves after start-up).
    for (const auto& d : devices_) {
      if (auto dev = g->device_for(d->context); !dev.ok()) {
        NVMF_LOG(WARN, "target") << "poll group " << g->group_ << ": device "
                                 << verbs::device_name(d->context) << ": "
                                 << dev.status().to_string() << "; opened at its first connection";
      }
    }
  }
  std::lock_guard lock(close_mutex_);
  ports_dropped_.assign(std::max<size_t>(groups_.size(), 1), 0);
}

void EventLoop::stop() {
  stop_requested_.store(true, std::memory_order_relaxed);
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof(one));
}

// ---------------------------------------------------------------------------------- devices --

Result<DeviceContext*> EventLoop::device_for(ibv_context* context) {
  for (auto& d : devices_) {
    if (d->context == context) return d.get();
  }
  NVMF_ASSIGN_OR_RETURN(auto attr, verbs::query_device(context));
  NVMF_ASSIGN_OR_RETURN(auto pd, verbs::ProtectionDomain::create(context));
  NVMF_ASSIGN_OR_RETURN(auto channel, verbs::CompletionChannel::create(context));
  NVMF_RETURN_IF_ERROR(channel.set_nonblocking());
  auto dev = std::make_unique<DeviceContext>(DeviceContext{.context = context,
                                                           .attr = attr,
                                                           .pd = std::move(pd),
                                                           .channel = std::move(channel),
                                                           .cqs = {},
                                                           .qps = {},
                                                           .touched = {},
                                                           .drain = nullptr,
                                                           .pool = nullptr,
                                                           .async_events = nullptr,
                                                           .srq = nullptr,
                                                           .srq_unavailable = false});
  dev->drain = [this, d = dev.get()] { poll_device(*d, /*max_batches=*/-1); };
  NVMF_ASSIGN_OR_RETURN(dev->async_events, AsyncEventThread::start(context));
  NVMF_RETURN_IF_ERROR(add_fd(dev->channel.fd(), kTagDeviceBase + devices_.size()));
  devices_.push_back(std::move(dev));
  if (!resolved_ && group_ == 0) resolve_negotiation(*devices_.back());
  // At start-up when the listen address is on an RDMA device (as SPDK makes its SRQs when the
  // poll group adds the device): a device-wide cost paid before any host connects, not by the
  // first connection.
  ensure_srq(*devices_.back());
  // Its first shared CQ too (after the SRQ, whose depth it keeps room for). A failure is a WARN:
  // the first queue tries again.
  if (Status st = ensure_shared_cq(*devices_.back(), first_port().discovery().registry());
      !st.ok()) {
    NVMF_LOG(WARN, "target") << "device " << verbs::device_name(context)
                             << ": no shared CQ yet: " << st.to_string();
  }
  return devices_.back().get();
}

void EventLoop::ensure_srq(DeviceContext& dev) {
  if (!options_.srq || dev.srq != nullptr || dev.srq_unavailable) return;
  uint32_t in_capsule = 0;  // the largest of the ports'
  for (const Listener& l : listeners_) {
    in_capsule = std::max(in_capsule, l.port->in_capsule_data_size());
  }
  // Each poll group's SRQ on the device gets its share of the receives, at most what a shared
  // CQ can keep for it next to its first queues (target/shared_cq.h): every receive of the SRQ
  // may complete on one CQ.
  uint32_t depth = poll_group_shares(options_, options_.poll_groups).srq_depth;
  if (const uint32_t most = max_srq_depth_for_cq(dev.attr.max_cqe); depth > most) {
    NVMF_LOG(WARN, "target") << "device " << verbs::device_name(dev.context) << ": SRQ depth "
                             << depth << " (--max-srq-depth per poll group) is above what a CQ of "
                             << std::min(dev.attr.max_cqe, kSharedCqEntries)
                             << " entries holds next to its queues; using " << most;
    depth = most;
  }
  auto srq = SharedReceiveQueue::create(dev.pd.get(), dev.attr, depth, in_capsule, page_size());
  if (!srq.ok()) {
    dev.srq_unavailable = true;  // once per device
    NVMF_LOG(WARN, "target") << "device " << verbs::device_name(dev.context)
                             << ": no shared receive queue (" << srq.status().to_string()
                             << "); every queue posts its own receives";
    return;
  }
  dev.srq = std::move(*srq);
  StatsRegistry& registry = first_port().discovery().registry();
  // Registered for the target's life, like the buffer pool: counted once.
  registry.add_resources(static_cast<int64_t>(dev.srq->registered_bytes()), 1, dev.srq->depth());
  registry.add_srq(&dev.srq->counters());
  NVMF_LOG(INFO, "target") << "device " << verbs::device_name(dev.context)
                           << ": shared receive queue of " << dev.srq->depth()
                           << " receives x (64 + " << dev.srq->in_capsule_bytes() << ") bytes, "
                           << dev.srq->registered_bytes() << " bytes registered";
}

void EventLoop::resolve_negotiation(const DeviceContext& dev) {
  for (size_t i = 0; i < listeners_.size(); ++i) {
    Port& port = *listeners_[i].port;
    const PortLimits& limits = port.limits();
    const int32_t configured = port.configured_inline_data_size();
    auto sized =
        resolve_inline_data_size(configured, page_size(), static_cast<uint32_t>(dev.attr.max_sge));
    NegotiationStats n;
    n.resolved = true;
    n.configured_inline_data_size = configured;
    if (sized.ok()) {
      n.in_capsule_data_size = sized->bytes;
      n.warnings = sized->warnings;
    } else {
      n.warnings.push_back(sized.status().to_string() + "; in-capsule data off");
    }
    for (const auto& w : n.warnings) NVMF_LOG(WARN, "target") << w;
    n.ioccsz = ioccsz_for_in_capsule_size(n.in_capsule_data_size);
    n.sgls = proto::kSglsSupported | proto::kSglsKeyedDataBlock |
             (n.in_capsule_data_size > 0 ? proto::kSglsOffset : 0);
    n.mdts = limits.mdts;
    n.max_transfer_bytes = limits.max_transfer_bytes();
    port.set_in_capsule_data_size(n.in_capsule_data_size);
    // The stats report the first port's negotiation (the only one without --config ports).
    if (i == 0) port.discovery().registry().set_negotiation(n);
    NVMF_LOG(INFO, "target") << "device " << verbs::device_name(dev.context) << ", port "
                             << port.address().portid << ": in-capsule data "
                             << n.in_capsule_data_size << " bytes (IOCCSZ " << n.ioccsz
                             << ", SGLS 0x" << std::hex << n.sgls << std::dec << "), MDTS "
                             << unsigned{n.mdts} << " (" << n.max_transfer_bytes << " bytes)";
  }
  resolved_ = true;
}

Status EventLoop::close_listener(size_t index) {
  if (index >= listeners_.size()) {
    return Status::invalid_argument("no port " + std::to_string(index) + " (" +
                                    std::to_string(listeners_.size()) + " ports)");
  }
  const uint64_t bit = uint64_t{1} << index;
  std::unique_lock lock(close_mutex_);
  if ((closed_ & bit) != 0) return ok_status();
  close_requests_.fetch_or(bit, std::memory_order_relaxed);
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof(one));
  if (!close_done_.wait_for(lock, std::chrono::seconds(10), [&] { return (closed_ & bit) != 0; })) {
    return Status::timeout("port " + std::to_string(index) +
                           ": the event loop did not close it within 10 s (is run() running?)");
  }
  return ok_status();
}

void EventLoop::close_requested_listeners() {
  const uint64_t requests = close_requests_.exchange(0, std::memory_order_relaxed);
  for (size_t i = 0; i < listeners_.size(); ++i) {
    if ((requests & (uint64_t{1} << i)) == 0) continue;
    Listener& l = listeners_[i];
    if (l.id) {
      NVMF_LOG(INFO, "target") << "port " << l.port->address().portid << " (" << l.address
                               << "): removed; disconnecting its queues";
      l.id.reset();
      // Disabled before any group looks for its queues: a connection handed over and not yet
      // accepted is then refused (accept_connection), so none comes after the drop.
      ControlLock lock(control_mutex());
      l.port->disable();
    }
  }
  if (groups_.empty()) return drop_ports(requests);
  for (EventLoop* g : groups_) {
    if (g == this) continue;
    g->drop_requests_.fetch_or(requests, std::memory_order_release);
    uint64_t one = 1;
    if (g->wake_fd_ >= 0) (void)!::write(g->wake_fd_, &one, sizeof(one));
  }
  drop_ports(requests);
}

void EventLoop::drop_ports(uint64_t ports) {
  dropping_ |= ports;
  sweep();  // disconnects them; reports the ports with no queue left
}

void EventLoop::ports_dropped(size_t group, uint64_t ports) {
  std::lock_guard lock(close_mutex_);
  if (ports_dropped_.empty()) ports_dropped_.assign(1, 0);
  ports_dropped_.at(group) |= ports;
  uint64_t everywhere = ~uint64_t{0};
  for (uint64_t m : ports_dropped_) everywhere &= m;
  if ((everywhere & ~closed_) == 0) return;
  closed_ |= everywhere;
  close_done_.notify_all();
}

// ------------------------------------------------------------------------------- CM events --

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

// ----------------------------------------------------------------------------- completions --

int EventLoop::poll_queues() {
  int n = engine_ != nullptr ? engine_->reap() : 0;
  if (buffer_waiters_can_start()) {
    // One FIFO per pool, whatever queue a waiter came from (target/buffer_pool.h).
    for (auto& d : devices_) {
      if (d->pool != nullptr) n += static_cast<int>(d->pool->chunks().serve());
    }
  }
  for (auto& d : devices_) n += poll_device(*d, kBatchesPerRound);
  if (engine_ != nullptr) engine_->flush_submissions();
  return n;
}

int EventLoop::poll_device(DeviceContext& dev, int max_batches) {
  int n = 0;
  ibv_wc wcs[kPollBatch];
  for (auto& c : dev.cqs) {
    if (c->broken) continue;
    for (int batch = 0; max_batches < 0 || batch < max_batches; ++batch) {
      int got = c->cq.poll(wcs);
      if (got < 0) {
        shared_cq_failed(dev, *c);
        break;
      }
      for (int i = 0; i < got; ++i) dispatch(dev, wcs[i]);
      n += got;
      flush_touched(dev);
      if (dev.srq != nullptr && dev.srq->parked() > dev.srq->parked_share()) {
        evict_srq_parkers(dev);
      }
      if (got < kPollBatch) break;  // empty now
    }
  }
  flush_touched(dev);  // backend completions and started waiters chain work too
  return n;
}

void EventLoop::dispatch(DeviceContext& dev, const ibv_wc& wc) {
  if (auto it = dev.qps.find(wc.qp_num); it != dev.qps.end()) {
    it->second->on_completion(wc);
    return;
  }
  // No queue has this QP: cannot happen (a queue is in qps from its QP's creation until its
  // QP's last completion was polled). Should it, an SRQ receive must still go back.
  const auto [kind, index] = verbs::decode_wr_id(wc.wr_id);
  if (kind == verbs::WrKind::kRecv && dev.srq != nullptr && dev.srq->consumed(index, wc.qp_num)) {
    (void)dev.srq->repost(index);
  }
  uint64_t suppressed = 0;
  if (refusal_log_limiter().allow("stray completion", std::chrono::steady_clock::now(),
                                  &suppressed)) {
    NVMF_LOG(WARN, "target") << "work completion for QP " << wc.qp_num << ", which no queue has ("
                             << verbs::wr_kind_name(kind) << "); dropped"
                             << suppressed_note(suppressed);
  }
}

void EventLoop::evict_srq_parkers(DeviceContext& dev) {
  const SharedReceiveQueue* srq = dev.srq.get();
  // Receives of queues already being torn down come back when they are swept: not counted.
  auto live = [srq](const RdmaQueue& q) {
    return q.shared_receive_queue() == srq && !q.wants_teardown();
  };
  uint32_t parked = 0;
  for (auto& [id, q] : queues_) {
    if (live(*q)) parked += q->srq_receives_parked();
  }
  while (parked > srq->parked_share()) {
    RdmaQueue* heaviest = nullptr;
    for (auto& [id, q] : queues_) {
      if (live(*q) && q->srq_receives_parked() > 0 &&
          (heaviest == nullptr || q->srq_receives_parked() > heaviest->srq_receives_parked())) {
        heaviest = q.get();
      }
    }
    if (heaviest == nullptr) return;
    const uint32_t held = heaviest->srq_receives_parked();
    const std::string what =
        std::to_string(held) + " of the shared receive queue's " + std::to_string(srq->depth()) +
        " receives in capsules waiting for a command slot (capsules parked "
        "on this device: " +
        std::to_string(parked) + ", at most " + std::to_string(srq->parked_share()) + ")";
    uint64_t suppressed = 0;
    if (refusal_log_limiter().allow("srq parked", std::chrono::steady_clock::now(), &suppressed)) {
      NVMF_LOG(WARN, "target") << heaviest->describe() << ": holds " << what << "; disconnecting"
                               << suppressed_note(suppressed);
    }
    heaviest->request_disconnect("holds " + what + " (the host takes no responses?)");
    parked -= held;
  }
}

void EventLoop::flush_touched(DeviceContext& dev) {
  for (RdmaQueue* q : dev.touched) q->flush();
  dev.touched.clear();
}

void EventLoop::shared_cq_failed(DeviceContext& dev, SharedCq& cq) {
  cq.broken = true;
  NVMF_LOG(ERROR, "target") << "device " << verbs::device_name(dev.context)
                            << ": ibv_poll_cq failed on a shared CQ of " << cq.queues
                            << " queues; tearing them down";
  for (auto& [qp_num, q] : dev.qps) {
    if (q->shared_cq() == &cq) q->request_disconnect("ibv_poll_cq failed on its shared CQ");
  }
}

void EventLoop::arm_queues() {
  for (auto& d : devices_) {
    for (auto& c : d->cqs) {
      if (!c->armed && !c->broken) c->armed = c->cq.req_notify().ok();
    }
  }
}

void EventLoop::drain_cq_events(DeviceContext& dev) {
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  while (ibv_get_cq_event(dev.channel.get(), &cq, &context) == 0) {
    ibv_ack_cq_events(cq, 1);
    for (auto& c : dev.cqs) {
      if (c->cq.get() == cq) c->armed = false;
    }
  }
}

std::optional<std::chrono::steady_clock::time_point> EventLoop::expire_connect_deadlines(
    std::chrono::steady_clock::time_point now) {
  const auto timeout = std::chrono::milliseconds(options_.connect_timeout_ms);
  std::optional<std::chrono::steady_clock::time_point> next;
  for (auto& [id, q] : queues_) {
    if (q->connected() || q->wants_teardown()) continue;
    auto deadline = q->accepted_at() + timeout;
    if (deadline <= now) {
      uint64_t suppressed = 0;
      if (refusal_log_limiter().allow("connect deadline", now, &suppressed)) {
        NVMF_LOG(WARN, "target") << q->describe() << ": no Connect within "
                                 << options_.connect_timeout_ms
                                 << " ms (--connect-timeout-ms); disconnecting"
                                 << suppressed_note(suppressed);
      }
      q->request_disconnect("no Connect within the deadline");
    } else if (!next || deadline < *next) {
      next = deadline;
    }
  }
  return next;
}

std::optional<std::chrono::steady_clock::time_point> EventLoop::expire_stalled_queues(
    std::chrono::steady_clock::time_point now) {
  const auto timeout = std::chrono::milliseconds(options_.send_stall_timeout_ms);
  std::optional<std::chrono::steady_clock::time_point> next;
  for (auto& [id, q] : queues_) {
    auto since = q->send_stalled_since(now);
    if (!since || q->wants_teardown()) continue;
    // What the stalled queue holds that others need: shared data buffers other commands wait
    // for, SRQ receives its parked capsules keep from every other queue on the device; and
    // capsules parked at all mean a host sending commands while taking no responses.
    const uint32_t chunks = q->buffers_waited_for() ? q->chunks_held() : 0;
    const uint32_t parked = q->capsules_parked();
    if (chunks == 0 && parked == 0) continue;
    if (*since + timeout <= now) {
      const std::string held = std::to_string(chunks) + " shared buffers others wait for and " +
                               std::to_string(parked) + " capsules parked (" +
                               std::to_string(q->srq_receives_parked()) +
                               " shared receive queue receives)";
      uint64_t suppressed = 0;
      if (refusal_log_limiter().allow("send stall", now, &suppressed)) {
        NVMF_LOG(WARN, "target") << q->describe() << ": no send completion for "
                                 << options_.send_stall_timeout_ms
                                 << " ms (--send-stall-timeout-ms) while holding " << held
                                 << "; disconnecting" << suppressed_note(suppressed);
      }
      q->request_disconnect(
          "no RDMA READ or SEND completion for " + std::to_string(options_.send_stall_timeout_ms) +
          " ms (--send-stall-timeout-ms) while holding " + held + " (the host posts no receives?)");
    } else if (!next || *since + timeout < *next) {
      next = *since + timeout;
    }
  }
  return next;
}

int EventLoop::expire_keep_alives() {
  const auto now = std::chrono::steady_clock::now();
  std::optional<Controller::Clock::time_point> next = expire_connect_deadlines(now);
  if (auto stalled = expire_stalled_queues(now); stalled && (!next || *stalled < *next)) {
    next = stalled;
  }
  auto visit = [&](Subsystem& s) {
    auto d = s.expire_keep_alives(now);
    if (d && (!next || *d < *next)) next = d;
  };
  if (group_ == 0) {  // the keep-alive timers are group 0's, whichever group got the traffic
    ControlLock lock(control_mutex());
    for (Subsystem* s : listeners_.front().port->served()) visit(*s);
  }
  sweep();  // the freed controllers' queues
  if (!next) return -1;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 1000 * 1000));
}

int EventLoop::check_stalls() {
  const auto now = std::chrono::steady_clock::now();
  int next = -1;
  for (auto& [id, q] : queues_) {
    if (!q->stall_watch_enabled()) continue;
    q->check_stall(now);
    if (q->outstanding() == 0) continue;
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(q->stall_check_interval()).count();
    if (next < 0 || ms < next) next = static_cast<int>(ms);
  }
  return next;
}

int EventLoop::wait_idle() {
  arm_queues();
  // Landed before the arm: handled now, and counted as work by run(), so that the busy-poll
  // window restarts from here (a backend operation submitted by this poll is then reaped by
  // polling, not by a wake-up from epoll).
  if (int n = poll_queues(); n > 0) return n;
  maintain_srqs();
  int timeout_ms = expire_keep_alives();
  // That pass may have torn queues down (keep-alive timer, stalled send queue) and so given
  // shared buffers back that other queues' commands wait for: start them, do not sleep on them.
  if (buffer_waiters_can_start()) return true;
  // Commands outstanding: wake up to look at them again, so that a stall is reported while it
  // lasts (a stalled queue has no completion to wake the loop).
  if (int stall_ms = check_stalls(); stall_ms >= 0 && (timeout_ms < 0 || stall_ms < timeout_ms)) {
    timeout_ms = stall_ms;
  }
  epoll_event events[8];
  int n = ::epoll_wait(epoll_fd_, events, 8, timeout_ms);
  if (n < 0) {
    if (errno == EINTR) return 0;
    NVMF_LOG(ERROR, "target") << "epoll_wait: " << errno_string(errno) << "; stopping";
    return -1;
  }
  for (int i = 0; i < n; ++i) {
    uint64_t tag = events[i].data.u64;
    if (tag == kTagCm) {
      if (Status st = drain_cm_events(); !st.ok()) {
        NVMF_LOG(ERROR, "target") << "rdma_cm events: " << st.to_string();
      }
    } else if (tag == kTagWake) {
      uint64_t value = 0;
      (void)!::read(wake_fd_, &value, sizeof(value));
    } else if (tag == kTagEngine) {
      engine_->clear_event();  // the completions are reaped by the next poll_queues()
    } else if (tag - kTagDeviceBase < devices_.size()) {
      drain_cq_events(*devices_[tag - kTagDeviceBase]);
    }
  }
  return 0;
}

void EventLoop::sweep() {
  for (auto& [id, q] : queues_) {
    q->take_remote_disconnect();
    if (dropping_ != 0 && !q->wants_teardown()) {
      for (size_t i = 0; i < listeners_.size(); ++i) {
        if ((dropping_ >> i & 1) != 0 && q->params().port == listeners_[i].port) {
          q->request_disconnect("port removed");
        }
      }
    }
  }
  bool removed = false;
  for (bool again = true; again;) {
    again = false;
    for (auto it = queues_.begin(); it != queues_.end(); ++it) {
      if (!it->second->wants_teardown()) continue;
      if (it->second->backend_in_flight() > 0) {
        it->second->disconnect();  // the host sees it now; the buffers go when the I/O is done
        continue;
      }
      std::unique_ptr<RdmaQueue> q = std::move(it->second);
      queues_.erase(it);
      unassign(*q);
      q->disconnect();
      if (uint64_t suppressed = 0; connection_log_limiter().allow(
              "disconnected", std::chrono::steady_clock::now(), &suppressed)) {
        NVMF_LOG(INFO, "target") << q->describe() << ": disconnected (" << q->disconnect_reason()
                                 << ")" << suppressed_note(suppressed);
      }
      q.reset();  // may ask other queues to disconnect (controller freed)
      again = removed = true;
      break;
    }
  }
  // A queue's small buffers come from the heap, between other allocations; give the pages
  // freed with it back to the system, so that many short-lived connections (hosts that never
  // Connect, reconnect storms) leave the RSS where it was. Only when a queue went away.
  if (removed) trim_heap();
  if (dropping_ != 0) {  // port removal: the ports none of this group's queues came in on
    uint64_t gone = dropping_;
    for (const auto& [id, q] : queues_) {
      for (size_t i = 0; i < listeners_.size(); ++i) {
        if (q->params().port == listeners_[i].port) gone &= ~(uint64_t{1} << i);
      }
    }
    if (gone != 0) {
      dropping_ &= ~gone;
      leader_->ports_dropped(group_, gone);
    }
  }
}

void EventLoop::housekeeping() {
  if (Status st = drain_cm_events(); !st.ok()) {
    NVMF_LOG(ERROR, "target") << "rdma_cm events: " << st.to_string();
  }
  // A device's shared data buffers (made by its first Connect) become io_uring fixed buffers
  // (no-op once registered, or for the thread engine).
  for (auto& d : devices_) {
    if (d->pool != nullptr && engine_ != nullptr) {
      (void)engine_->register_memory(d->pool->data(), d->pool->registered_bytes());
    }
  }
  maintain_srqs();
  (void)expire_keep_alives();  // sweeps
  (void)check_stalls();
}

void EventLoop::maintain_srqs() {
  for (auto& d : devices_) {
    if (d->srq == nullptr || !d->srq->maintain()) continue;
    uint64_t suppressed = 0;
    if (refusal_log_limiter().allow("srq limit", std::chrono::steady_clock::now(), &suppressed)) {
      NVMF_LOG(WARN, "target") << "device " << verbs::device_name(d->context)
                               << ": the shared receive queue fell below "
                               << d->srq->counters().limit.get() << " posted receives (fewest "
                               << d->srq->table().posted_low() << " of " << d->srq->depth()
                               << "); hosts may be RNR-NAKed: raise --max-srq-depth"
                               << suppressed_note(suppressed);
    }
  }
}

bool EventLoop::buffer_waiters_can_start() const {
  for (const auto& d : devices_) {
    if (d->pool != nullptr && d->pool->chunks().waiting() > 0 &&
        d->pool->chunks().free_count() > 0) {
      return true;
    }
  }
  return false;
}

std::optional<cpu_set_t> EventLoop::pin_thread() {
  if (options_.cpu == kCpuNone) return std::nullopt;
  int cpu = options_.cpu == kCpuAuto ? ::sched_getcpu() : options_.cpu;
  if (options_.cpu == kCpuAuto && options_.poll_groups > 1) {
    // Group i on the ((i - 1) mod n)-th CPU the thread may run on, n the number of groups
    // (wrapping when groups outnumber the CPUs). On an idle target a host's I/O queue qid goes to
    // group qid mod n (least_loaded_group), so it is answered from the (qid - 1)-th CPU: the
    // CPU from which a Linux host on the same machine drives it (blk-mq hardware context qid - 1
    // when queues and CPUs are as many), as nvmet-rdma answers on the CPU a queue's packets
    // arrive on. On soft-RoCE over a veth without Receive Packet Steering that keeps each QP's
    // packets leaving one CPU (docs/soft-roce.md).
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (::sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0) {
      const size_t groups = options_.poll_groups;
      size_t nth = (group_ + groups - 1) % groups % static_cast<size_t>(CPU_COUNT(&allowed));
      for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &allowed)) continue;
        if (nth-- == 0) {
          cpu = c;
          break;
        }
      }
    }
  }
  if (cpu < 0 || cpu >= CPU_SETSIZE) {
    NVMF_LOG(WARN, "target") << "event loop: no CPU to pin to (sched_getcpu: "
                             << errno_string(errno) << "); left to the scheduler";
    return std::nullopt;
  }
  cpu_set_t before;
  CPU_ZERO(&before);
  if (::pthread_getaffinity_np(::pthread_self(), sizeof(before), &before) != 0) {
    return std::nullopt;  // no mask to give back: better not pinned than pinned for good
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (int err = ::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set); err != 0) {
    NVMF_LOG(WARN, "target") << "event loop: pinning to CPU " << cpu << ": " << errno_string(err)
                             << "; left to the scheduler";
    return std::nullopt;
  }
  NVMF_LOG(INFO, "target") << "poll group " << group_ << " pinned to CPU " << cpu
                           << (options_.cpu == kCpuAuto ? " (--cpu auto)" : "");
  return before;
}

Status EventLoop::run() {
  struct Unpin {
    std::optional<cpu_set_t> mask;
    ~Unpin() {
      if (mask) (void)::pthread_setaffinity_np(::pthread_self(), sizeof(*mask), &*mask);
    }
  } unpin{pin_thread()};
  using Clock = std::chrono::steady_clock;
  const auto window = std::chrono::microseconds(options_.busy_poll_us);
  int idle = 0;
  uint64_t rounds = 0;
  bool worked = false;  // a completion since the clock was last read
  Clock::time_point last_work = Clock::now();
  while (!stop_requested_.load(std::memory_order_relaxed)) {
    if (close_requests_.load(std::memory_order_relaxed) != 0) close_requested_listeners();
    if (drop_requests_.load(std::memory_order_relaxed) != 0) {
      drop_ports(drop_requests_.exchange(0, std::memory_order_acquire));
    }
    if (inbox_pending_.load(std::memory_order_acquire)) drain_inbox();
    int n = poll_queues();
    sweep();
    if (n > 0) {
      idle = 0;
      worked = true;
      if (++rounds % kCmCheckRounds == 0) housekeeping();
      continue;
    }
    if (++idle < kIdleSpins) continue;
    idle = 0;
    if (options_.poll_mode == PollMode::kEvent) {
      // Read the clock once per kIdleSpins empty polls (clock_gettime is a vDSO call).
      Clock::time_point now = Clock::now();
      if (worked) {
        worked = false;
        last_work = now;
      }
      if (now - last_work < window) {
        if (++rounds % kCmCheckRounds == 0) housekeeping();
        continue;
      }
    }
    if (options_.poll_mode == PollMode::kBusy) {
      // Never sleep: look for connects and disconnects without blocking now and then. With
      // several poll groups, give the CPU to another runnable thread (another group, the
      // host's threads in-process) once per kIdleSpins empty polls: groups that outnumber the
      // free CPUs would otherwise starve each other, and group 0's listener and keep-alive
      // timers with them.
      if (options_.poll_groups > 1) ::sched_yield();
      if (++rounds % kCmCheckRounds == 0) housekeeping();
      continue;
    }
    // Shared buffers given back outside a poll round (a queue torn down) while commands of
    // other queues wait for one: poll again rather than sleep on them.
    if (buffer_waiters_can_start()) continue;
    // Polled reads and writes in the kernel: only reap() finds their completions (no eventfd).
    // Spinning for them as --poll busy does: the CM channel, keep-alive expiry and stall checks
    // now and then (wait_idle() does them otherwise, and a polled operation that takes long, a
    // device timing out, would leave this group deaf to connects and keep-alive timers), and
    // the CPU given to another group's thread when there are several.
    if (engine_ != nullptr && engine_->polled_in_kernel() > 0) {
      if (options_.poll_groups > 1) ::sched_yield();
      if (++rounds % kCmCheckRounds == 0) housekeeping();
      continue;
    }
    const int handled = wait_idle();
    if (handled < 0) {
      shutdown();
      return Status::internal("event loop: epoll_wait failed");
    }
    if (handled > 0) worked = true;
    sweep();
  }
  shutdown();
  return ok_status();
}

void EventLoop::shutdown() {
  for (auto& [id, q] : queues_) q->request_disconnect("target stopping");
  // The kernel may still be reading into the queues' buffers: wait for every operation (their
  // completions are dropped, the queues want teardown).
  if (engine_ != nullptr) engine_->drain();
  while (!queues_.empty()) {
    auto node = queues_.extract(queues_.begin());
    unassign(*node.mapped());
    node.mapped()->disconnect();
    NVMF_LOG(INFO, "target") << node.mapped()->describe() << ": disconnected ("
                             << node.mapped()->disconnect_reason() << ")";
    node.mapped().reset();
  }
}

}  // namespace nvmf::target
