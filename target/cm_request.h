// SPDX-License-Identifier: BSD-3-Clause
// Checks the NVMe-oF RDMA_CM_REQUEST private data a host sends to open a queue.
#ifndef NVMF_TARGET_CM_REQUEST_H_
#define NVMF_TARGET_CM_REQUEST_H_

#include <cstdint>
#include <span>
#include <string_view>

namespace nvmf::target {

// What the target is willing to allocate for one queue.
struct CmLimits {
  uint16_t max_io_queues = 4;      // highest I/O qid accepted (qids 1..max_io_queues)
  uint32_t admin_queue_size = 32;  // admin queue entries (Linux NVME_AQ_DEPTH)
  uint32_t io_queue_size = 128;    // I/O queue entries (CAP.MQES + 1)
};

// The outcome: either accepted (reject_sts == 0) with the host's parameters, or the RDMA CM
// reject status to send (proto::kCmReject*) and a reason for the log.
struct CmRequestCheck {
  uint16_t reject_sts = 0;
  std::string_view reason;  // static text; empty when accepted
  uint16_t qid = 0;
  uint16_t hrqsize = 0;     // host receive queue entries (1-based)
  uint16_t hsqsize = 0;     // host send queue entries, 0-based
  uint32_t queue_size = 0;  // hsqsize + 1: receives the target posts, and command slots

  bool accepted() const { return reject_sts == 0; }
};

// Validates CONNECT_REQUEST private data, in this order (NVMe RDMA Transport 1.0 §3.3, figure
// "RDMA_CM_REQUEST Private Data Format"):
//  1. length < 32 bytes: kCmRejectInvalidPrivateDataLength. Longer is fine: IB/RoCE pad the
//     REQ private data to 56 bytes;
//  2. RECFMT != 0: kCmRejectInvalidRecfmt;
//  3. QID > limits.max_io_queues: kCmRejectInvalidQid (the controller is only known at Fabrics
//     Connect, which checks the qid again against it);
//  4. HSQSIZE 0 (a one-entry queue cannot hold a command) or HSQSIZE + 1 above the queue size
//     the target allocates (admin or I/O): kCmRejectInvalidHsqsize;
//  5. HRQSIZE 0 or above that same queue size: kCmRejectInvalidHrqsize. wire-facts: nvmet
//     accepted HRQSIZE 0 and then never answered the Connect.
CmRequestCheck check_cm_request(std::span<const uint8_t> private_data, const CmLimits& limits);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_CM_REQUEST_H_
