// SPDX-License-Identifier: BSD-3-Clause
// poll()-based readiness waits with EINTR handling.
#include "common/verbs/fd_wait.h"

#include <fcntl.h>
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <string>

namespace nvmf::verbs {

Result<bool> wait_readable(int fd, int timeout_ms, std::string_view what) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  int remaining = timeout_ms;
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    const int n = ::poll(&pfd, 1, remaining);
    if (n > 0) {
      if ((pfd.revents & POLLNVAL) != 0) return Status::from_errno(what, EBADF);
      return true;  // POLLIN, or POLLERR/POLLHUP that the following read will report.
    }
    if (n == 0) return false;
    if (errno != EINTR) return Status::from_errno(what, errno);
    if (timeout_ms >= 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      remaining = left > 0 ? static_cast<int>(left) : 0;
    }
  }
}

Status set_fd_nonblocking(int fd, std::string_view what) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return Status::from_errno("fcntl(F_GETFL)", errno, what);
  if (::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return Status::from_errno("fcntl(F_SETFL, O_NONBLOCK)", errno, what);
  }
  return ok_status();
}

}  // namespace nvmf::verbs
