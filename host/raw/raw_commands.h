// SPDX-License-Identifier: BSD-3-Clause
// Raw commands on a connected Controller's queues, for tests that must send what the library
// never would (a reserved opcode, a bad NSID, an SGL the target must refuse): the SQE goes as
// given. Not a part of the library's API: programs use IoQueue::submit_raw() (passthrough on an
// I/O queue, host/io_queue.h).
#ifndef NVMF_HOST_RAW_RAW_COMMANDS_H_
#define NVMF_HOST_RAW_RAW_COMMANDS_H_

#include <cstdint>
#include <span>

#include "common/status.h"
#include "host/controller.h"
#include "proto/nvme.h"

namespace nvmf::host {

// Sends `sqe` exactly as given on queue `qid` of `c` (0 = admin), except the CID, which the
// engine assigns; SGL1 is not touched. `in_capsule_data` segments (at most 4, registered by
// `c`) follow the SQE in the same SEND. Returns the CQE whatever its NVMe status.
// qid 0: under the admin lock, beside the keep-alive and recovery threads; errors are transport
// failures and timeouts. qid >= 1: IoQueue::submit_raw() on io_queue(qid - 1), waited for on
// the caller's thread (the IoQueue's thread rule); lost with its association it answers Command
// Aborted By Host (SCT 3h SC 71h) and the association recovers.
// kInvalidArgument: more than 4 segments, or no such queue.
Result<proto::Cqe> submit_raw(Controller& c, uint16_t qid, proto::Sqe sqe,
                              std::span<const DataSegment> in_capsule_data);

}  // namespace nvmf::host

#endif  // NVMF_HOST_RAW_RAW_COMMANDS_H_
