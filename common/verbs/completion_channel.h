// SPDX-License-Identifier: BSD-3-Clause
// CompletionChannel: owns an ibv_comp_channel (ibv_create_comp_channel).
#ifndef NVMF_COMMON_VERBS_COMPLETION_CHANNEL_H_
#define NVMF_COMMON_VERBS_COMPLETION_CHANNEL_H_

#include <infiniband/verbs.h>

#include "common/status.h"

namespace nvmf::verbs {

// A file descriptor that becomes readable when an armed CQ attached to it gets a completion.
// Move-only. Destroy it after every CompletionQueue attached to it.
class CompletionChannel {
 public:
  // ibv_create_comp_channel(context); the error names the verb and errno.
  static Result<CompletionChannel> create(ibv_context* context);

  ~CompletionChannel();
  CompletionChannel(CompletionChannel&& other) noexcept : channel_(other.channel_) {
    other.channel_ = nullptr;
  }
  CompletionChannel& operator=(CompletionChannel&& other) noexcept;
  CompletionChannel(const CompletionChannel&) = delete;
  CompletionChannel& operator=(const CompletionChannel&) = delete;

  int fd() const { return channel_->fd; }
  // Makes ibv_get_cq_event() return EAGAIN instead of blocking.
  Status set_nonblocking();

  ibv_comp_channel* get() const { return channel_; }

 private:
  explicit CompletionChannel(ibv_comp_channel* channel) : channel_(channel) {}
  ibv_comp_channel* channel_;
};

}  // namespace nvmf::verbs

#endif  // NVMF_COMMON_VERBS_COMPLETION_CHANNEL_H_
