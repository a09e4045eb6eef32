// SPDX-License-Identifier: BSD-3-Clause
// Capsules for the target's in-memory tests and fuzzers: SQEs and Fabrics Connect data built as a
// host builds them. No GoogleTest, so the fuzzers (//fuzz) and the unit tests
// (processor_harness.h) share them.
#ifndef NVMF_TARGET_TESTING_CAPSULES_H_
#define NVMF_TARGET_TESTING_CAPSULES_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/sgl.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"

namespace nvmf::target::testing {

inline constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:target";
inline constexpr char kHostNqn[] = "nqn.2014-08.org.nvmexpress:uuid:test-host";

// An SQE of `opcode` with PSDT = SGL (Fabrics RDMA carries SGLs only, NVMe-oF 1.1 §2.3.1) and a
// Null SGL: the caller sets the data descriptor when the command has data.
inline proto::Sqe base_sqe(uint8_t opcode, uint16_t cid = 1) {
  proto::Sqe s{};
  s.opcode = opcode;
  s.flags = proto::kFlagsPsdtSgl;
  s.cid = cid;
  encode_null_sgl(s.dptr);
  return s;
}

// The 1024-byte Connect data (NVMe-oF 1.1 §3.3, Figure 21): CNTLID (0xFFFF for a new admin
// queue's dynamic controller), SUBNQN and HOSTNQN, the rest zero (HOSTID included).
inline std::vector<uint8_t> connect_data(uint16_t cntlid, const char* subnqn = kNqn,
                                         const char* hostnqn = kHostNqn) {
  proto::ConnectData d{};
  d.cntlid = cntlid;
  std::strncpy(d.subnqn, subnqn, sizeof(d.subnqn));
  std::strncpy(d.hostnqn, hostnqn, sizeof(d.hostnqn));
  std::vector<uint8_t> bytes(sizeof(d));
  std::memcpy(bytes.data(), &d, sizeof(d));
  return bytes;
}

// A Connect (Fabrics 7Fh, FCTYPE 01h) on `qid` with SQSIZE `sqsize` (0's based) and KATO
// `kato_ms` (milliseconds), its Connect data in-capsule at offset 0.
inline proto::Sqe in_capsule_connect_sqe(uint16_t qid, uint16_t sqsize, uint32_t kato_ms = 5000) {
  proto::Sqe s = base_sqe(proto::kOpcodeFabrics);
  auto& c = reinterpret_cast<proto::ConnectCommand&>(s);
  c.fctype = proto::kFctypeConnect;
  c.qid = qid;
  c.sqsize = sqsize;
  c.kato = kato_ms;
  encode_in_capsule_sgl(c.sgl1, 0, proto::kConnectDataSize);
  return s;
}

// A Property Set (Fabrics 7Fh, FCTYPE 00h) of 4 bytes: `value` at property `offset` (CC is 14h).
inline proto::Sqe property_set_sqe(uint32_t offset, uint64_t value) {
  proto::Sqe s = base_sqe(proto::kOpcodeFabrics);
  auto& p = reinterpret_cast<proto::PropertySetCommand&>(s);
  p.fctype = proto::kFctypePropertySet;
  p.attrib = proto::kPropertySize4;
  p.ofst = offset;
  p.value = value;
  return s;
}

}  // namespace nvmf::target::testing

#endif  // NVMF_TARGET_TESTING_CAPSULES_H_
