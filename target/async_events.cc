// SPDX-License-Identifier: BSD-3-Clause
// AsyncEventThread: poll() on the async fd and a stop eventfd.
#include "target/async_events.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "common/log.h"
#include "target/shared_receive_queue.h"

namespace nvmf::target {

Result<std::unique_ptr<AsyncEventThread>> AsyncEventThread::start(ibv_context* context) {
  const int flags = ::fcntl(context->async_fd, F_GETFL);
  if (flags < 0 || ::fcntl(context->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return Status::from_errno("fcntl(async_fd, O_NONBLOCK)", errno);
  }
  const int stop_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (stop_fd < 0) return Status::from_errno("eventfd", errno);
  std::unique_ptr<AsyncEventThread> t(new AsyncEventThread(context, stop_fd));
  t->thread_ = std::thread([p = t.get()] { p->run(); });
  return t;
}

AsyncEventThread::~AsyncEventThread() {
  uint64_t one = 1;
  (void)!::write(stop_fd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  drain();
  ::close(stop_fd_);
}

void AsyncEventThread::run() {
  for (;;) {
    pollfd fds[2] = {{context_->async_fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    int n = ::poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      NVMF_LOG(ERROR, "target") << "poll on the device's async events: " << errno_string(errno);
      return;
    }
    if ((fds[0].revents & POLLIN) != 0) drain();
    if ((fds[1].revents & POLLIN) != 0) return;
  }
}

void AsyncEventThread::drain() {
  ibv_async_event event{};
  while (ibv_get_async_event(context_, &event) == 0) {
    events_.fetch_add(1, std::memory_order_relaxed);
    if (event.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && event.element.srq != nullptr &&
        event.element.srq->srq_context != nullptr) {
      static_cast<SharedReceiveQueue*>(event.element.srq->srq_context)->limit_reached();
    } else if (event.event_type == IBV_EVENT_CQ_ERR) {
      // rxe reports a CQ overflow this way (ibv_poll_cq does not fail): completions were lost.
      // The shared CQs' room promises (target/shared_cq.h) exist so that this never happens.
      NVMF_LOG(ERROR, "target") << "device async event: " << ibv_event_type_str(event.event_type)
                                << " (a CQ overflowed or failed: completions are lost)";
    } else {
      NVMF_LOG(DEBUG, "target") << "device async event: " << ibv_event_type_str(event.event_type);
    }
    ibv_ack_async_event(&event);
  }
}

}  // namespace nvmf::target
