// SPDX-License-Identifier: BSD-3-Clause
// CompletionQueue: creation, arming and completion-event waits.
#include "common/verbs/completion_queue.h"

#include <cerrno>
#include <string>

#include "common/log.h"
#include "common/verbs/device.h"
#include "common/verbs/fd_wait.h"

namespace nvmf::verbs {
namespace {

void destroy_cq(ibv_cq* cq) {
  if (cq == nullptr) return;
  if (const int err = ibv_destroy_cq(cq); err != 0) {
    NVMF_LOG(ERROR, "verbs") << Status::from_errno("ibv_destroy_cq", err).message()
                             << " (a QP still uses it?)";
  }
}

}  // namespace

Result<CompletionQueue> CompletionQueue::create(ibv_context* context, int cqe,
                                                CompletionChannel* channel, int comp_vector) {
  if (context == nullptr) return Status::invalid_argument("ibv_create_cq: null device context");
  if (cqe <= 0) return Status::invalid_argument("ibv_create_cq: cqe " + std::to_string(cqe));
  ibv_comp_channel* raw_channel = channel != nullptr ? channel->get() : nullptr;
  ibv_cq* cq = ibv_create_cq(context, cqe, nullptr, raw_channel, comp_vector);
  if (cq == nullptr) {
    return Status::from_errno("ibv_create_cq", errno,
                              std::string(device_name(context)) + ", cqe " + std::to_string(cqe));
  }
  return CompletionQueue(cq, raw_channel);
}

CompletionQueue::~CompletionQueue() { destroy_cq(cq_); }

CompletionQueue& CompletionQueue::operator=(CompletionQueue&& other) noexcept {
  if (this != &other) {
    destroy_cq(cq_);
    cq_ = other.cq_;
    channel_ = other.channel_;
    other.cq_ = nullptr;
  }
  return *this;
}

Status CompletionQueue::resize(int cqe) {
  if (const int err = ibv_resize_cq(cq_, cqe); err != 0) {
    return Status::from_errno("ibv_resize_cq", err, "cqe " + std::to_string(cqe));
  }
  return ok_status();
}

Status CompletionQueue::req_notify(bool solicited_only) {
  if (const int err = ibv_req_notify_cq(cq_, solicited_only ? 1 : 0); err != 0) {
    return Status::from_errno("ibv_req_notify_cq", err);
  }
  return ok_status();
}

Result<bool> CompletionQueue::wait_event(int timeout_ms) {
  if (channel_ == nullptr) {
    return Status::internal("CompletionQueue::wait_event: CQ created without a channel");
  }
  NVMF_ASSIGN_OR_RETURN(const bool readable,
                        wait_readable(channel_->fd, timeout_ms, "poll(completion channel)"));
  if (!readable) return false;
  ibv_cq* event_cq = nullptr;
  void* cq_context = nullptr;
  if (ibv_get_cq_event(channel_, &event_cq, &cq_context) != 0) {
    if (errno == EAGAIN) return false;  // Nonblocking channel, event taken by another reader.
    return Status::from_errno("ibv_get_cq_event", errno);
  }
  ibv_ack_cq_events(event_cq, 1);
  if (event_cq != cq_) {
    return Status::internal("ibv_get_cq_event: event for another CQ on this channel");
  }
  NVMF_RETURN_IF_ERROR(req_notify());
  return true;
}

}  // namespace nvmf::verbs
