// SPDX-License-Identifier: BSD-3-Clause
// The request state table.
#include "target/request_state.h"

namespace nvmf::target {

std::string_view request_state_name(RequestState s) {
  switch (s) {
    case RequestState::kDone:
      return "done";
    case RequestState::kNew:
      return "new";
    case RequestState::kWaitingForBuffer:
      return "waiting_for_buffer";
    case RequestState::kWaitingForReadCredit:
      return "waiting_for_read_credit";
    case RequestState::kTransferringFromHost:
      return "transferring_from_host";
    case RequestState::kReadyToExecute:
      return "ready_to_execute";
    case RequestState::kExecuting:
      return "executing";
    case RequestState::kHeld:
      return "held";
    case RequestState::kReadyToComplete:
      return "ready_to_complete";
    case RequestState::kTransferringToHost:
      return "transferring_to_host";
    case RequestState::kCompleting:
      return "completing";
  }
  return "unknown";
}

namespace {

// Where the processor's decision (NextStep) can take a request that is being decided: new,
// waiting for buffer (it got one), ready to execute (the READ's data arrived) or executing (a
// backend operation finished).
bool is_decision_target(RequestState to) {
  switch (to) {
    case RequestState::kWaitingForReadCredit:  // kReadFromHost
    case RequestState::kExecuting:             // kBackend
    case RequestState::kHeld:                  // kHold
    case RequestState::kReadyToComplete:       // kRespond, kWriteToHostThenRespond
      return true;
    default:
      return false;
  }
}

}  // namespace

bool transition_allowed(RequestState from, RequestState to) {
  using S = RequestState;
  switch (from) {
    case S::kDone:
      return to == S::kNew;
    case S::kNew:
      return to == S::kWaitingForBuffer || is_decision_target(to);
    case S::kWaitingForBuffer:
    case S::kReadyToExecute:
    case S::kExecuting:
      return is_decision_target(to);
    case S::kWaitingForReadCredit:
      return to == S::kTransferringFromHost;
    case S::kTransferringFromHost:
      return to == S::kReadyToExecute;
    case S::kHeld:
      return to == S::kReadyToComplete;
    case S::kReadyToComplete:
      return to == S::kTransferringToHost || to == S::kCompleting;
    case S::kTransferringToHost:
    case S::kCompleting:
      return to == S::kDone;
  }
  return false;
}

}  // namespace nvmf::target
