// SPDX-License-Identifier: BSD-3-Clause
// CommandChannel: the seam between controller bring-up logic and the RDMA queue engine, so the
// admin sequence (Connect, properties, Identify, shutdown) can be unit-tested without verbs.
#ifndef NVMF_HOST_CHANNEL_H_
#define NVMF_HOST_CHANNEL_H_

#include <cstdint>
#include <span>

#include "common/status.h"
#include "proto/nvme.h"

namespace nvmf::host {

// Runs one setup-path command to completion (not the I/O fast path).
class CommandChannel {
 public:
  virtual ~CommandChannel() = default;

  // Sends `sqe` (the channel sets CID and SGL1) and waits for its completion.
  // - `data_out` (host to controller, e.g. Connect data) is copied into a registered buffer the
  //   channel owns and sent keyed, or in-capsule when `allow_in_capsule` and the queue's
  //   negotiated in-capsule size allows (I/O queue Connect, like Linux).
  // - `data_in` (controller to host, e.g. Identify) receives the data on success.
  // At most one of them is non-empty; each at most 4096 bytes. Returns the CQE whatever its
  // status (the caller decides); errors are transport failures and timeouts.
  virtual Result<proto::Cqe> run(const proto::Sqe& sqe, std::span<const uint8_t> data_out,
                                 std::span<uint8_t> data_in, bool allow_in_capsule) = 0;
};

}  // namespace nvmf::host

#endif  // NVMF_HOST_CHANNEL_H_
