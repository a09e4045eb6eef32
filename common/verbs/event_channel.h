// SPDX-License-Identifier: BSD-3-Clause
// EventChannel: owns an rdma_cm event channel (rdma_create_event_channel).
#ifndef NVMF_COMMON_VERBS_EVENT_CHANNEL_H_
#define NVMF_COMMON_VERBS_EVENT_CHANNEL_H_

#include <rdma/rdma_cma.h>

#include "common/status.h"
#include "common/verbs/cm_event.h"

namespace nvmf::verbs {

// Appended to the error when there is no RDMA device at all (ENODEV from librdmacm).
inline constexpr char kNoRdmaDeviceHint[] =
    "; no RDMA device on this machine: load an RDMA NIC driver, or soft-RoCE "
    "(modprobe rdma_rxe; rdma link add rxe0 type rxe netdev IFACE), or run under ci/rxe-run";

// The channel on which rdma_cm reports events for the ids created on it. Move-only.
// Destroy it after every CmId created on it (destruction order: QueuePair, CmId, EventChannel).
// Creating one opens /dev/infiniband/rdma_cm and fails (ENODEV) where no RDMA device exists.
class EventChannel {
 public:
  // rdma_create_event_channel(); the error names the verb and errno.
  static Result<EventChannel> create();

  ~EventChannel();
  EventChannel(EventChannel&& other) noexcept : channel_(other.channel_) {
    other.channel_ = nullptr;
  }
  EventChannel& operator=(EventChannel&& other) noexcept;
  EventChannel(const EventChannel&) = delete;
  EventChannel& operator=(const EventChannel&) = delete;

  // The channel's file descriptor, for poll/epoll in an event loop.
  int fd() const { return channel_->fd; }
  // Makes rdma_get_cm_event() return EAGAIN instead of blocking (get_event() handles both).
  Status set_nonblocking();

  // Waits up to `timeout_ms` (< 0: forever) for the next event: poll() on fd(), then
  // rdma_get_cm_event(). kTimeout when none arrived in time. The event may belong to any id
  // created on this channel.
  Result<CmEvent> get_event(int timeout_ms);

  rdma_event_channel* get() const { return channel_; }

 private:
  explicit EventChannel(rdma_event_channel* channel) : channel_(channel) {}
  rdma_event_channel* channel_;
};

// get_event() for a raw channel, e.g. the one an adopted CmId reports on (id->channel).
Result<CmEvent> get_cm_event(rdma_event_channel* channel, int timeout_ms);

}  // namespace nvmf::verbs

#endif  // NVMF_COMMON_VERBS_EVENT_CHANNEL_H_
