// SPDX-License-Identifier: BSD-3-Clause
// check_cm_request: validation of the RDMA_CM_REQUEST private data.
#include "target/cm_request.h"

#include <cstring>

#include "proto/rdma_cm.h"

namespace nvmf::target {
namespace {

CmRequestCheck reject(CmRequestCheck check, uint16_t sts, std::string_view reason) {
  check.reject_sts = sts;
  check.reason = reason;
  return check;
}

}  // namespace

CmRequestCheck check_cm_request(std::span<const uint8_t> private_data, const CmLimits& limits) {
  CmRequestCheck check;
  if (private_data.size() < sizeof(proto::CmRequestPrivateData)) {
    return reject(check, proto::kCmRejectInvalidPrivateDataLength,
                  "private data shorter than 32 bytes");
  }
  proto::CmRequestPrivateData req;
  std::memcpy(&req, private_data.data(), sizeof(req));
  check.qid = req.qid;
  check.hrqsize = req.hrqsize;
  check.hsqsize = req.hsqsize;
  check.queue_size = static_cast<uint32_t>(req.hsqsize) + 1;
  if (req.recfmt != proto::kCmRecfmt0) {
    return reject(check, proto::kCmRejectInvalidRecfmt, "recfmt is not 0");
  }
  if (req.qid > limits.max_io_queues) {
    return reject(check, proto::kCmRejectInvalidQid, "qid above the I/O queues offered");
  }
  uint32_t max_size = req.qid == 0 ? limits.admin_queue_size : limits.io_queue_size;
  if (req.hsqsize == 0 || check.queue_size > max_size) {
    return reject(check, proto::kCmRejectInvalidHsqsize, "hsqsize 0 or above the queue size");
  }
  if (req.hrqsize == 0 || req.hrqsize > max_size) {
    return reject(check, proto::kCmRejectInvalidHrqsize, "hrqsize 0 or above the queue size");
  }
  return check;
}

}  // namespace nvmf::target
