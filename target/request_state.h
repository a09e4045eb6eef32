// SPDX-License-Identifier: BSD-3-Clause
// RequestState: where one command of an RDMA queue is in its life, and what it waits for. One
// table (transition_allowed) says which moves exist; RdmaQueue moves every request through it
// and keeps per-state counters (QueueCounters::state_entered / state_now, the --json report's
// "request_states").
//
//   done --capsule--> new [--no free shared buffer--> waiting for buffer --buffer-->]
//                      | (the processor's decision, from new or waiting for buffer:)
//                      | --kRespond--------------------------> ready to complete
//                      | --kWriteToHostThenRespond-------------> ready to complete
//                      | --kReadFromHost--> waiting for READ credit --> transferring from host
//                      | --kBackend--> executing                          | READ completion
//                      | --kHold--> held (AER)                            v
//                      |                                           ready to execute
//   ready to execute / executing --(the processor's next step, as from new)--> ...
//   held --event--> ready to complete --SQ credit--> completing | transferring to host
//   completing / transferring to host --SEND completion--> done
//
// Requests wait in order: one that finds no RDMA READ credit (at most the initiator depth
// negotiated at connect outstanding) or no send-queue room waits in its state's FIFO and is
// served first when a credit comes back; nothing fails for want of a resource. The model is
// SPDK's nvmf RDMA request states (spdk_nvmf_rdma_request_state). With the shared buffer pool
// (target/buffer_pool.h) a command that needs a data buffer and finds none waits in
// waiting_for_buffer, in order.
#ifndef NVMF_TARGET_REQUEST_STATE_H_
#define NVMF_TARGET_REQUEST_STATE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nvmf::target {

enum class RequestState : uint8_t {
  kDone = 0,              // the slot is free (its last response's SEND completed)
  kNew,                   // a capsule took the slot; the command processor decides
  kWaitingForBuffer,      // its SGL1 describes data and no shared data buffer is free
  kWaitingForReadCredit,  // needs an RDMA READ; the queue's READ depth or send queue is full
  kTransferringFromHost,  // RDMA READ of the host's data posted
  kReadyToExecute,        // the host's data arrived; the processor finishes the command
  kExecuting,             // a backend operation (IoEngine) is in the kernel
  kHeld,                  // an Async Event Request kept until an event
  kReadyToComplete,       // the CQE is filled; waits for send-queue room
  kTransferringToHost,    // RDMA WRITE of the data and the response SEND posted
  kCompleting,            // the response SEND posted
};

inline constexpr size_t kRequestStateCount = static_cast<size_t>(RequestState::kCompleting) + 1;

// The report's name of a state: "done", "new", "waiting_for_read_credit", ...
std::string_view request_state_name(RequestState s);

// True for the moves the table above has. Anything else is a transport bug: RdmaQueue tears the
// queue down rather than lose track of a request.
bool transition_allowed(RequestState from, RequestState to);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_REQUEST_STATE_H_
