// SPDX-License-Identifier: BSD-3-Clause
// EventLoop: the poll/arm/sleep cycle, devices (SRQ, shared buffers), housekeeping and the sweep
// of torn-down queues. Its other jobs have files of their own (target/event_loop_internal.h).
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
#include "target/event_loop_internal.h"
#include "target/log_limiter.h"
#include "target/poll_group.h"
#include "target/port.h"

namespace nvmf::target {
using namespace event_loop_detail;  // NOLINT(build/namespaces)

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

void EventLoop::at_next_round(std::function<void()> done) {
  bool queued = false;
  {
    std::lock_guard lock(round_mutex_);
    if (running_) {
      round_tasks_.push_back(std::move(done));
      round_pending_.store(true, std::memory_order_release);
      queued = true;
    }
  }
  if (!queued) {  // not running: nothing of this group is in a step
    done();
    return;
  }
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof(one));
}

void EventLoop::run_round_tasks() {
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard lock(round_mutex_);
    round_pending_.store(false, std::memory_order_relaxed);
    tasks.swap(round_tasks_);
  }
  for (auto& task : tasks) task();
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
  if (dev.srq->parked_share() < options_.max_queue_size) {
    // A host at full queue depth whose SEND completions lag a moment behind its next capsules
    // (an ACK coalesced or lost) parks that many capsules with their in-capsule data.
    NVMF_LOG(WARN, "target") << "device " << verbs::device_name(dev.context)
                             << ": capsules parked with in-capsule data may hold at most "
                             << dev.srq->parked_share() << " of the shared receive queue's "
                             << dev.srq->depth() << " receives, fewer than --queue-size "
                             << options_.max_queue_size
                             << ": a queue parking more is disconnected; raise --max-srq-depth";
  }
  NVMF_LOG(INFO, "target") << "device " << verbs::device_name(dev.context)
                           << ": shared receive queue of " << dev.srq->depth()
                           << " receives x (64 + " << dev.srq->in_capsule_bytes() << ") bytes, "
                           << dev.srq->registered_bytes() << " bytes registered";
}

void EventLoop::resolve_negotiation(const DeviceContext& dev) {
  for (size_t i = 0; i < listeners_.size(); ++i) resolve_port(*listeners_[i].port, dev, i == 0);
  resolved_ = true;
}

void EventLoop::resolve_port(Port& port, const DeviceContext& dev, bool report) {
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
  // A port added to a running target: its capsules land in receives sized at start-up.
  if (resolved_ && dev.srq != nullptr && n.in_capsule_data_size > dev.srq->in_capsule_bytes()) {
    n.warnings.push_back("port " + std::to_string(port.address().portid) + ": in-capsule data " +
                         std::to_string(n.in_capsule_data_size) +
                         " bytes is above the shared receive queue's " +
                         std::to_string(dev.srq->in_capsule_bytes()) + "; using that");
    n.in_capsule_data_size = dev.srq->in_capsule_bytes();
  }
  for (const auto& w : n.warnings) NVMF_LOG(WARN, "target") << w;
  n.ioccsz = ioccsz_for_in_capsule_size(n.in_capsule_data_size);
  n.sgls = proto::kSglsSupported | proto::kSglsKeyedDataBlock |
           (n.in_capsule_data_size > 0 ? proto::kSglsOffset : 0);
  n.mdts = limits.mdts;
  n.max_transfer_bytes = limits.max_transfer_bytes();
  port.set_in_capsule_data_size(n.in_capsule_data_size);
  // The stats report the first port's negotiation (the only one without --config ports).
  if (report) port.discovery().registry().set_negotiation(n);
  NVMF_LOG(INFO, "target") << "device " << verbs::device_name(dev.context) << ", port "
                           << port.address().portid << ": in-capsule data "
                           << n.in_capsule_data_size << " bytes (IOCCSZ " << n.ioccsz << ", SGLS 0x"
                           << std::hex << n.sgls << std::dec << "), MDTS " << unsigned{n.mdts}
                           << " (" << n.max_transfer_bytes << " bytes)";
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
    q->take_remote_events();
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
  {
    std::lock_guard lock(round_mutex_);
    running_ = true;
  }
  while (!stop_requested_.load(std::memory_order_relaxed)) {
    if (round_pending_.load(std::memory_order_acquire)) run_round_tasks();
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
      stop_running();
      return Status::internal("event loop: epoll_wait failed");
    }
    if (handled > 0) worked = true;
    sweep();
  }
  shutdown();
  stop_running();
  return ok_status();
}

void EventLoop::stop_running() {
  {
    std::lock_guard lock(round_mutex_);
    running_ = false;
  }
  run_round_tasks();  // those that came during the last round: nothing runs any more
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
