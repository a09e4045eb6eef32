// SPDX-License-Identifier: BSD-3-Clause
// Request: one command in flight on a queue, as the transport and the command processor share it.
#ifndef NVMF_TARGET_REQUEST_H_
#define NVMF_TARGET_REQUEST_H_

#include <cstdint>
#include <span>

#include "common/sgl.h"
#include "proto/nvme.h"
#include "target/in_capsule_area.h"
#include "target/io_engine.h"
#include "target/request_state.h"

namespace nvmf::target {

// What the transport must do after CommandProcessor::begin() or data_arrived() returns.
enum class NextStep : uint8_t {
  kRespond,                 // send `cqe` now
  kWriteToHostThenRespond,  // RDMA WRITE buffer[0, transfer_bytes) to `sgl`, then send `cqe`
  kReadFromHost,            // RDMA READ `sgl` into buffer[0, transfer_bytes), then call
                            // CommandProcessor::data_arrived()
  kHold,                    // keep the command without answering (Async Event Request)
  kBackend,                 // the IoEngine executes `io`: keep the command (its receive and
                            // slot) until IoCompletion::io_done(io), then hand the Request to
                            // CommandProcessor::io_done() and carry out what it returns
};

// The work left once host data has been read into `buffer`.
enum class PendingOp : uint8_t { kNone, kConnect, kWrite, kDsmRanges, kAuthSend };

// Transport-neutral state of one command. The transport owns the memory (one Request per
// command slot) and fills the inputs; the processor fills the rest.
struct Request {
  // Inputs, set by the transport before begin():
  const proto::Sqe* sqe = nullptr;  // in the receive buffer; valid until the response is sent
  InCapsuleArea in_capsule;         // the receive's in-capsule pages and byte count
  std::span<uint8_t> buffer;        // the slot's registered data buffer (max transfer bytes)

  // Outputs, set by the processor:
  DecodedSgl sgl;               // the decoded SGL1
  uint32_t transfer_bytes = 0;  // bytes to move in the RDMA phase
  bool invalidate = false;      // answer with SEND with Invalidate of sgl.rkey (SGL id 0x4F)
  PendingOp pending = PendingOp::kNone;
  uint64_t ns_offset = 0;       // byte offset in the namespace, for kWrite
  bool fua = false;             // kWrite: Force Unit Access asked (CDW12 bit 30)
  uint32_t nsid = 0;            // the namespace of a kWrite / kBackend command
  uint64_t ns_serial = 0;       // and its Namespace::serial(), checked at every later step
  uint32_t step = 0;            // kBackend commands of several operations: where they are
  bool fallback_tried = false;  // zeroing: the other fallocate mode was tried (EOPNOTSUPP)
  proto::Cqe cqe{};             // the response (cid, sqid, sqhd, status, dw0/dw1)
  // kReadFromHost: the word receive_data() stamped into `buffer` before the READ, which
  // data_arrived() must find overwritten (read_data_missing() in command_processor.h).
  uint64_t read_sentinel = 0;

  // Where the transport has the request (target/request_state.h); the transport moves it.
  RequestState state = RequestState::kDone;

  // The backend operation of a kBackend step. The transport sets io.done and io.tag once per
  // slot; the processor fills the rest before returning kBackend.
  IoRequest io;
  // The namespace `io` was submitted on, counted in its Namespace::io_in_flight() until the
  // completion is handled (CommandProcessor::backend_done); null when none is in flight.
  class Namespace* io_ns = nullptr;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_REQUEST_H_
