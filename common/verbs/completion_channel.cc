// SPDX-License-Identifier: BSD-3-Clause
// CompletionChannel: ibv_create_comp_channel / ibv_destroy_comp_channel.
#include "common/verbs/completion_channel.h"

#include <cerrno>

#include "common/log.h"
#include "common/verbs/device.h"
#include "common/verbs/fd_wait.h"

namespace nvmf::verbs {
namespace {

void destroy_channel(ibv_comp_channel* channel) {
  if (channel == nullptr) return;
  if (const int err = ibv_destroy_comp_channel(channel); err != 0) {
    NVMF_LOG(ERROR, "verbs") << Status::from_errno("ibv_destroy_comp_channel", err).message()
                             << " (CQs still attached?)";
  }
}

}  // namespace

Result<CompletionChannel> CompletionChannel::create(ibv_context* context) {
  if (context == nullptr) {
    return Status::invalid_argument("ibv_create_comp_channel: null device context");
  }
  ibv_comp_channel* channel = ibv_create_comp_channel(context);
  if (channel == nullptr) {
    return Status::from_errno("ibv_create_comp_channel", errno, device_name(context));
  }
  return CompletionChannel(channel);
}

CompletionChannel::~CompletionChannel() { destroy_channel(channel_); }

CompletionChannel& CompletionChannel::operator=(CompletionChannel&& other) noexcept {
  if (this != &other) {
    destroy_channel(channel_);
    channel_ = other.channel_;
    other.channel_ = nullptr;
  }
  return *this;
}

Status CompletionChannel::set_nonblocking() {
  return set_fd_nonblocking(channel_->fd, "completion channel");
}

}  // namespace nvmf::verbs
