// SPDX-License-Identifier: BSD-3-Clause
// EventChannel: creation, destruction and timed event retrieval.
#include "common/verbs/event_channel.h"

#include <cerrno>
#include <chrono>

#include "common/log.h"
#include "common/verbs/fd_wait.h"

namespace nvmf::verbs {

Result<EventChannel> EventChannel::create() {
  rdma_event_channel* channel = rdma_create_event_channel();
  if (channel == nullptr) {
    const int err = errno;
    Status s = Status::from_errno("rdma_create_event_channel", err);
    if (err != ENODEV) return s;
    // librdmacm answers ENODEV when the machine has no RDMA device at all: say what to do.
    return Status::unavailable(s.message() + kNoRdmaDeviceHint).with_errno(err);
  }
  return EventChannel(channel);
}

EventChannel::~EventChannel() {
  if (channel_ != nullptr) rdma_destroy_event_channel(channel_);
}

EventChannel& EventChannel::operator=(EventChannel&& other) noexcept {
  if (this != &other) {
    if (channel_ != nullptr) rdma_destroy_event_channel(channel_);
    channel_ = other.channel_;
    other.channel_ = nullptr;
  }
  return *this;
}

Status EventChannel::set_nonblocking() {
  return set_fd_nonblocking(channel_->fd, "rdma_cm event channel");
}

Result<CmEvent> EventChannel::get_event(int timeout_ms) {
  return get_cm_event(channel_, timeout_ms);
}

Result<CmEvent> get_cm_event(rdma_event_channel* channel, int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  for (;;) {
    int remaining = timeout_ms;
    if (timeout_ms >= 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      remaining = left > 0 ? static_cast<int>(left) : 0;
    }
    NVMF_ASSIGN_OR_RETURN(const bool readable,
                          wait_readable(channel->fd, remaining, "poll(rdma_cm event channel)"));
    if (!readable) {
      return Status::timeout("no rdma_cm event within " + std::to_string(timeout_ms) + " ms");
    }
    rdma_cm_event* event = nullptr;
    if (rdma_get_cm_event(channel, &event) == 0) return CmEvent(event);
    // EAGAIN: a nonblocking channel woke up without an event (another reader took it). Retry.
    if (errno != EAGAIN && errno != EINTR) return Status::from_errno("rdma_get_cm_event", errno);
  }
}

}  // namespace nvmf::verbs
