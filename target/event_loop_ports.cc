// SPDX-License-Identifier: BSD-3-Clause
// EventLoop, port removal: listeners closed on request, and the groups told when a port is gone.
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

}  // namespace nvmf::target
