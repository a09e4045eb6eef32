// SPDX-License-Identifier: BSD-3-Clause
// QueueLink: what the command processor may ask of the transport that carries its queue.
#ifndef NVMF_TARGET_QUEUE_LINK_H_
#define NVMF_TARGET_QUEUE_LINK_H_

#include <string>
#include <string_view>

#include "target/request.h"

namespace nvmf::target {

// Implemented by the transport's queue (RdmaQueue), and by fakes in tests.
class QueueLink {
 public:
  virtual ~QueueLink() = default;
  // Tear this queue down soon (not from inside this call): the controller it served is gone,
  // or a new connection replaced it. Idempotent. From another poll group's thread: thread-safe,
  // carried out by the owner at its next round.
  virtual void request_disconnect(std::string_view reason) = 0;
  // "10.0.0.2:51234 qid 1", for logs.
  virtual std::string describe() const = 0;
  // The peer's address without the port ("10.0.0.2"): the key of the per-host controller
  // limits (a host NQN is only claimed; the address is where the connection really comes
  // from). The default: one peer for every fake.
  virtual std::string peer_host() const { return {}; }
  // A Connect on this queue passed every check: set up what the queue needs for commands beyond
  // a Connect (the RDMA transport registers its data buffers and posts the rest of its
  // receives), before the Connect's response is sent. False when that failed (logged by the
  // link): the Connect then fails with Internal Error and the queue stays unconnected. The
  // default has nothing to set up.
  virtual bool connect_accepted() { return true; }
  // Send the response of a command the processor held (NextStep::kHold, an Async Event Request)
  // and completed later: `r.cqe` is filled in; its receive was already given back when it was
  // held. The default drops it (a fake without responses).
  virtual void respond_held(Request& r) { (void)r; }
  // True on the thread that owns the queue (its poll group's). request_disconnect() may be
  // called from any thread (under the control lock); everything else only from the owner. The
  // default: single-threaded fakes.
  virtual bool on_owner_thread() const { return true; }
  // From another thread (under the control lock): the controller has an asynchronous event for
  // this admin queue's held Async Event Requests. The owner calls
  // CommandProcessor::deliver_events() at its next round. The default: single-threaded fakes
  // are called on their owner thread, where the processor delivers at once.
  virtual void wake_for_events() {}
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_QUEUE_LINK_H_
