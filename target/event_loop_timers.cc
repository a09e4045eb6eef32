// SPDX-License-Identifier: BSD-3-Clause
// EventLoop, timers: Connect deadlines, keep-alive expiry, send stalls and stall reports.
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

std::optional<std::chrono::steady_clock::time_point> EventLoop::expire_connect_deadlines(
    std::chrono::steady_clock::time_point now) {
  const auto timeout = std::chrono::milliseconds(options_.connect_timeout_ms);
  std::optional<std::chrono::steady_clock::time_point> next;
  for (auto& [id, q] : queues_) {
    // A queue is done with this deadline once connected and, when its host has a DH-HMAC-CHAP
    // key, authenticated: a host stalling mid-transaction is torn down like one never sending
    // its Connect.
    const bool authenticating = q->awaiting_authentication();
    if ((q->connected() && !authenticating) || q->wants_teardown()) continue;
    auto deadline = q->accepted_at() + timeout;
    if (deadline <= now) {
      uint64_t suppressed = 0;
      if (refusal_log_limiter().allow("connect deadline", now, &suppressed)) {
        NVMF_LOG(WARN, "target") << q->describe() << ": no "
                                 << (authenticating ? "successful authentication" : "Connect")
                                 << " within " << options_.connect_timeout_ms
                                 << " ms (--connect-timeout-ms); disconnecting"
                                 << suppressed_note(suppressed);
      }
      q->request_disconnect(authenticating ? "no authentication within the deadline"
                                           : "no Connect within the deadline");
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

}  // namespace nvmf::target
