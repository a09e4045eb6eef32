// SPDX-License-Identifier: BSD-3-Clause
// EventLoop, port removal: listeners closed on request, and the groups told when a port is gone.
#include <pthread.h>
#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
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

Status EventLoop::add_listener(Port& port) {
  if (group_ != 0) return Status::internal("add_listener: not group 0");
  const DiscoveryAddress& a = port.address();
  NVMF_ASSIGN_OR_RETURN(auto addr, verbs::SocketAddress::parse(a.traddr, a.trsvcid));
  NVMF_ASSIGN_OR_RETURN(auto created, verbs::CmId::create(cm_channel_));
  auto id = std::make_shared<verbs::CmId>(std::move(created));
  NVMF_RETURN_IF_ERROR(id->bind(addr));
  struct Done {
    std::mutex mutex;
    std::condition_variable cv;
    std::optional<Status> status;
    size_t groups_left = 0;
  };
  auto done = std::make_shared<Done>();
  done->groups_left = groups_.empty() ? 0 : groups_.size() - 1;
  auto finish = [done](std::optional<Status> st) {
    std::lock_guard lock(done->mutex);
    if (st) {
      done->status = std::move(st);
    } else {
      --done->groups_left;
    }
    done->cv.notify_all();
  };
  post([this, &port, id, finish] {
    if (listeners_.size() >= kMaxPorts) {
      finish(Status::resource_exhausted("at most " + std::to_string(kMaxPorts) + " ports"));
      return;
    }
    Listener l{&port, std::move(*id), 0, {}};
    Status st = l.id->listen(kListenBacklog);
    auto local = st.ok() ? l.id->local_address() : Result<verbs::SocketAddress>(st);
    if (!local.ok()) {
      finish(local.status());
      return;
    }
    l.number = local->port();
    l.address = local->to_string();
    port.set_trsvcid(std::to_string(l.number));
    if (l.id->verbs() != nullptr) {
      if (auto dev = device_for(l.id->verbs()); dev.ok()) {
        resolve_port(port, **dev, false);
      }
    }
    NVMF_LOG(INFO, "target") << "port " << port.address().portid << ": listening on " << l.address;
    listeners_.push_back(std::move(l));
    for (EventLoop* g : groups_) {
      if (g == this) continue;
      g->post([g, &port, finish] {
        g->listeners_.push_back(Listener{&port, std::nullopt, 0, {}});
        finish(std::nullopt);
      });
    }
    finish(ok_status());
  });
  std::unique_lock lock(done->mutex);
  if (!done->cv.wait_for(lock, std::chrono::seconds(10), [&] {
        return done->status && (!done->status->ok() || done->groups_left == 0);
      })) {
    return Status::timeout("port " + std::to_string(port.address().portid) +
                           ": the event loops did not take it within 10 s (is run() running?)");
  }
  return *done->status;
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

}  // namespace nvmf::target
