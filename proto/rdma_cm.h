// SPDX-License-Identifier: BSD-3-Clause
// RDMA CM private data exchanged when an NVMe-oF RDMA queue connects (request, accept, reject).
//
// Layouts and constants only. Source: NVM Express RDMA Transport Specification 1.0b ("RDMA
// 1.0"), the "RDMA_CM_REQUEST / RDMA_CM_ACCEPT / RDMA_CM_REJECT Private Data Format" figures
// (earlier: NVMe-oF 1.1, RDMA transport binding, TP 8000). Linux: include/linux/nvme-rdma.h.
#ifndef NVMF_PROTO_RDMA_CM_H_
#define NVMF_PROTO_RDMA_CM_H_

#include <cstddef>
#include <cstdint>

#include "proto/nvme.h"

namespace nvmf::proto {

inline constexpr uint16_t kCmRecfmt0 = 0;  // the only defined private data record format

// Sent by the host with RDMA_CM connect. On IB/RoCE the CM pads private data (a REQ arrives with
// 56 bytes), so a target checks private_data_len >= sizeof, not ==.
struct CmRequestPrivateData {
  uint16_t recfmt;   // 0
  uint16_t qid;      // 2, 0 = admin queue
  uint16_t hrqsize;  // 4, host receive queue size (entries, 1-based)
  uint16_t hsqsize;  // 6, host send queue size, 0-based like Connect SQSIZE
  uint16_t cntlid;   // 8, RDMA 1.0 addition; Linux leaves it 0 (reserved), SPDK reads it
  uint8_t rsvd10[22];
};
static_assert(sizeof(CmRequestPrivateData) == 32, "RDMA 1.0: REQUEST private data is 32 bytes");
static_assert(offsetof(CmRequestPrivateData, qid) == 2);
static_assert(offsetof(CmRequestPrivateData, hrqsize) == 4);
static_assert(offsetof(CmRequestPrivateData, hsqsize) == 6);
static_assert(offsetof(CmRequestPrivateData, cntlid) == 8);

// Sent by the target with RDMA_CM accept.
struct CmAcceptPrivateData {
  uint16_t recfmt;   // 0
  uint16_t crqsize;  // 2, controller receive queue size (entries)
  uint8_t rsvd4[28];
};
static_assert(sizeof(CmAcceptPrivateData) == 32, "RDMA 1.0: ACCEPT private data is 32 bytes");
static_assert(offsetof(CmAcceptPrivateData, crqsize) == 2);

// Sent by the target with RDMA_CM reject.
struct CmRejectPrivateData {
  uint16_t recfmt;  // 0
  uint16_t sts;     // 2, one of kCmReject*
};
static_assert(sizeof(CmRejectPrivateData) == 4, "RDMA 1.0: REJECT private data is 4 bytes");
static_assert(offsetof(CmRejectPrivateData, sts) == 2);

// Reject STS values. RDMA 1.0 figure "RDMA_CM_REJECT Private Data Format".
inline constexpr uint16_t kCmRejectInvalidPrivateDataLength = 0x01;
inline constexpr uint16_t kCmRejectInvalidRecfmt = 0x02;
inline constexpr uint16_t kCmRejectInvalidQid = 0x03;
inline constexpr uint16_t kCmRejectInvalidHsqsize = 0x04;
inline constexpr uint16_t kCmRejectInvalidHrqsize = 0x05;
inline constexpr uint16_t kCmRejectNoResources = 0x06;
inline constexpr uint16_t kCmRejectInvalidIrd = 0x07;
inline constexpr uint16_t kCmRejectInvalidOrd = 0x08;
inline constexpr uint16_t kCmRejectInvalidCntlid = 0x09;  // RDMA 1.0 / SPDK; not in Linux

}  // namespace nvmf::proto

#endif  // NVMF_PROTO_RDMA_CM_H_
