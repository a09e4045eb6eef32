// SPDX-License-Identifier: BSD-3-Clause
// Pure builders for the commands the host sends: CM private data, Fabrics Connect and its data,
// Property Get/Set, Identify, Set Features, Keep Alive, Read/Write/Flush. No verbs.
//
// Builders leave SGL1 (dptr) zero and cid 0: the queue engine fills both when it posts the
// capsule, because only it knows the slot and where the data lives (in-capsule or keyed).
#ifndef NVMF_HOST_COMMANDS_H_
#define NVMF_HOST_COMMANDS_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "host/options.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"
#include "proto/rdma_cm.h"

namespace nvmf::host {

// Admin queue depth, as the Linux host uses (NVME_AQ_DEPTH 32): CM hrqsize 32, hsqsize 31.
inline constexpr uint16_t kAdminQueueSize = 32;

// RDMA_CM_REQUEST private data for queue `qid` with `queue_size` entries: recfmt 0, hrqsize =
// queue_size, hsqsize = queue_size - 1 (0-based). RDMA 1.0 §3.3. `queue_size` must be >= 1.
proto::CmRequestPrivateData cm_request_private_data(uint16_t qid, uint16_t queue_size);

// Human text for an RDMA_CM_REJECT STS value, e.g. "invalid HSQSIZE". RDMA 1.0 figure
// "RDMA_CM_REJECT Private Data Format"; 9 (invalid CNTLID) from SPDK.
std::string_view cm_reject_status_name(uint16_t sts);
// The one-line message for a REJECTED event carrying `data` (its private data): "CM reject:
// invalid HSQSIZE (4)" when it holds >= 4 bytes of recfmt 0 reject data; otherwise "CM reject:
// no NVMe-oF status (consumer reason R)" with the transport's reason `cm_status`.
std::string cm_reject_message(const uint8_t* data, size_t len, int cm_status);

// Connect data (1024 bytes): hostid, cntlid (0xFFFF for the admin queue), subnqn, hostnqn, both
// NUL terminated. kInvalidArgument if an NQN is empty or longer than 223 bytes. Base 2.0 §6.3.
Result<proto::ConnectData> connect_data(const HostId& hostid, uint16_t cntlid,
                                        std::string_view subnqn, std::string_view hostnqn);
// Connect SQE: opcode 7Fh, PSDT SGL, FCTYPE 01h, RECFMT 0, QID, SQSIZE = queue_size - 1
// (0-based), KATO in ms (only meaningful on the admin queue; 0 on I/O queues as Linux sends).
proto::Sqe connect_sqe(uint16_t qid, uint16_t queue_size, uint32_t kato_ms);

// Property Get of `ofst` (proto::kPropCap etc.), 8 bytes when `eight_bytes`. Base 2.0 §6.5.
proto::Sqe property_get_sqe(uint32_t ofst, bool eight_bytes);
// Property Set of a 4-byte property. Base 2.0 §6.6.
proto::Sqe property_set_sqe(uint32_t ofst, uint32_t value);

// CC that enables the controller the way nvmet requires: EN, IOSQES 6, IOCQES 4, CSS/MPS/AMS 0
// = 0x00460001. Base 2.0 §3.1.3.5 "Offset 14h: CC".
inline constexpr uint32_t kCcEnable = proto::kCcEn | (proto::kSqesLog2 << proto::kCcIosqesShift) |
                                      (proto::kCqesLog2 << proto::kCcIocqesShift);
static_assert(kCcEnable == 0x00460001);
// `cc` with SHN = 01b (normal shutdown). Base 2.0 §3.6.2 "Shutdown".
constexpr uint32_t cc_with_normal_shutdown(uint32_t cc) {
  return (cc & ~proto::kCcShnMask) | (proto::kCcShnNormal << proto::kCcShnShift);
}
// CAP.TO in ms (500 ms units), at least 500 ms. Base 2.0 §3.1.3.1.
constexpr uint32_t cap_timeout_ms(uint64_t cap) {
  uint32_t to = static_cast<uint32_t>((cap & proto::kCapToMask) >> proto::kCapToShift);
  return (to == 0 ? 1 : to) * 500;
}
// Page size implied by CAP.MPSMIN: 2^(12 + MPSMIN) bytes.
constexpr uint32_t cap_mpsmin_bytes(uint64_t cap) {
  return 1u << (12 + ((cap >> proto::kCapMpsminShift) & 0xF));
}

// Identify with `cns` for `nsid` (4096 bytes of data, controller to host). Base 2.0 §5.17.
proto::Sqe identify_sqe(uint8_t cns, uint32_t nsid);
// Set Features Number of Queues asking for `n` I/O submission and completion queues
// (NSQR = NCQR = n - 1). Base 2.0 §5.27.1.5.
proto::Sqe set_num_queues_sqe(uint16_t n);
// Set Features Asynchronous Event Configuration (FID 0Bh): the notices in `aec` (proto::kAec*
// bits, CDW11) are sent as Asynchronous Events. Base 2.0 §5.27.1.7.
proto::Sqe set_async_event_config_sqe(uint32_t aec);
// Granted queue count from Set Features Number of Queues DW0: min(NSQA, NCQA) + 1.
constexpr uint32_t granted_num_queues(uint32_t dw0) {
  uint32_t nsqa = dw0 & 0xFFFF, ncqa = dw0 >> 16;
  return (nsqa < ncqa ? nsqa : ncqa) + 1;
}
// Keep Alive (admin 18h, no data). Base 2.0 §5.25.
proto::Sqe keep_alive_sqe();

// Read/Write of `nlb` blocks (1..65536) at `slba` on `nsid`: CDW10/11 SLBA, CDW12 NLB - 1.
// NVM CS 1.0 §3.2.4 / §3.2.6.
proto::Sqe read_sqe(uint32_t nsid, uint64_t slba, uint32_t nlb);
proto::Sqe write_sqe(uint32_t nsid, uint64_t slba, uint32_t nlb);
// Flush of `nsid`. NVM CS 1.0 §3.2.1.
proto::Sqe flush_sqe(uint32_t nsid);
// Write Zeroes of `nlb` blocks (1..65536) at `slba`: CDW10/11 SLBA, CDW12 NLB - 1. No data.
// NVM CS 1.0 §3.2.8.
proto::Sqe write_zeroes_sqe(uint32_t nsid, uint64_t slba, uint32_t nlb);
// Dataset Management with Attribute Deallocate over `nr` ranges (1..256): CDW10 NR - 1, CDW11
// AD. The ranges are the command's data (proto::DsmRange each). NVM CS 1.0 §3.2.3.
proto::Sqe deallocate_sqe(uint32_t nsid, uint32_t nr);

// "Connect", "Property Get", "Identify", "Read", ... for messages; `admin` selects the opcode
// table (admin vs NVM I/O).
std::string command_name(const proto::Sqe& sqe, bool admin);

}  // namespace nvmf::host

#endif  // NVMF_HOST_COMMANDS_H_
