// SPDX-License-Identifier: BSD-3-Clause
// poll()-based waits on the file descriptors of event channels and completion channels.
#ifndef NVMF_COMMON_VERBS_FD_WAIT_H_
#define NVMF_COMMON_VERBS_FD_WAIT_H_

#include <string_view>

#include "common/status.h"

namespace nvmf::verbs {

// Waits until `fd` is readable. Returns true when readable, false when `timeout_ms` passed first
// (timeout_ms < 0 waits forever, 0 only checks). EINTR is retried with the remaining time.
// `what` names the object in errors, e.g. "poll(rdma_cm event channel)".
Result<bool> wait_readable(int fd, int timeout_ms, std::string_view what);

// Sets O_NONBLOCK on `fd`; errors name `what` and the errno.
Status set_fd_nonblocking(int fd, std::string_view what);

}  // namespace nvmf::verbs

#endif  // NVMF_COMMON_VERBS_FD_WAIT_H_
