// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes target::check_cm_request with any RDMA_CM_REQUEST private data and limits: it must
// never read past the data, and what it accepts must fit the limits (NVMe RDMA Transport 1.0
// §3.3).
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz/input.h"
#include "proto/rdma_cm.h"
#include "target/cm_request.h"
#include "target/testing/fake_queue.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nvmf::target::testing::require;
  nvmf::fuzz::Input in(data, size);
  nvmf::target::CmLimits limits;
  if (in.u8() % 2 == 0) {  // otherwise the defaults
    limits.max_io_queues = in.u16();
    limits.admin_queue_size = in.u16();
    limits.io_queue_size = in.u32();
  }
  // The rest is the private data, in a buffer of exactly its size (ASan sees any overread).
  auto rest = in.bytes(size);
  std::vector<uint8_t> pd(rest.begin(), rest.end());
  nvmf::target::CmRequestCheck c = nvmf::target::check_cm_request(pd, limits);
  require(c.accepted() == c.reason.empty(), "a reason without a reject, or a reject without one");
  if (!c.accepted()) {
    require(c.reject_sts >= nvmf::proto::kCmRejectInvalidPrivateDataLength &&
                c.reject_sts <= nvmf::proto::kCmRejectInvalidHrqsize,
            "a reject status outside 1..5");
    return 0;
  }
  require(pd.size() >= sizeof(nvmf::proto::CmRequestPrivateData), "accepted short private data");
  nvmf::proto::CmRequestPrivateData req;
  std::memcpy(&req, pd.data(), sizeof(req));
  uint32_t max_size = req.qid == 0 ? limits.admin_queue_size : limits.io_queue_size;
  require(req.recfmt == 0, "accepted RECFMT != 0");
  require(c.qid == req.qid && c.qid <= limits.max_io_queues, "accepted a QID above the limit");
  require(c.hsqsize == req.hsqsize && c.queue_size == req.hsqsize + 1u,
          "queue size is not HSQSIZE + 1");
  require(c.queue_size >= 2 && c.queue_size <= max_size, "accepted a queue size outside 2..limit");
  require(c.hrqsize == req.hrqsize && c.hrqsize >= 1 && c.hrqsize <= max_size,
          "accepted HRQSIZE outside 1..limit");
  return 0;
}
