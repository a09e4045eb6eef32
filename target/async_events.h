// SPDX-License-Identifier: BSD-3-Clause
// AsyncEventThread: reads an RDMA device's asynchronous events (ibv_get_async_event) on a thread
// of its own and acknowledges each one at once.
//
// Why a thread: libibverbs' ibv_destroy_qp and ibv_destroy_srq wait until every async event the
// kernel reported for that object was acknowledged. A QP attached to an SRQ gets
// IBV_EVENT_QP_LAST_WQE_REACHED when it enters the error state (IB spec 11.6.3.3), after the
// disconnect, at a time the event loop cannot predict; with nobody reading, the event loop's
// ibv_destroy_qp would block forever. The thread touches no queue state: an SRQ limit event
// goes to SharedReceiveQueue::limit_reached() (an atomic flag and a counter), every other event
// is logged (debug) and counted.
#ifndef NVMF_TARGET_ASYNC_EVENTS_H_
#define NVMF_TARGET_ASYNC_EVENTS_H_

#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "common/status.h"

namespace nvmf::target {

class AsyncEventThread {
 public:
  // Sets the device's async fd non-blocking and starts the thread. Errors: fcntl, eventfd.
  static Result<std::unique_ptr<AsyncEventThread>> start(ibv_context* context);
  // Stops and joins the thread (events still queued are read and acknowledged first).
  ~AsyncEventThread();
  AsyncEventThread(const AsyncEventThread&) = delete;
  AsyncEventThread& operator=(const AsyncEventThread&) = delete;

  uint64_t events() const { return events_.load(std::memory_order_relaxed); }

 private:
  AsyncEventThread(ibv_context* context, int stop_fd) : context_(context), stop_fd_(stop_fd) {}
  void run();
  void drain();

  ibv_context* context_;
  int stop_fd_;
  std::atomic<uint64_t> events_{0};
  std::thread thread_;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_ASYNC_EVENTS_H_
