// SPDX-License-Identifier: BSD-3-Clause
// NVMe over Fabrics command capsule overlays (Connect, Property Get/Set) and their constants.
//
// Layouts and constants only. Section numbers refer to NVM Express Base Specification 2.0
// ("Base 2.0"), chapter 6 "Fabrics Command Set" (formerly NVMe-oF 1.1 §3.3).
#ifndef NVMF_PROTO_FABRICS_H_
#define NVMF_PROTO_FABRICS_H_

#include <cstddef>
#include <cstdint>

#include "proto/nvme.h"

namespace nvmf::proto {

// FCTYPE (SQE byte 4 of opcode 7Fh). Base 2.0 §6 figure "Fabrics Command Type". Like an opcode,
// FCTYPE bits 1:0 give the data direction.
inline constexpr uint8_t kFctypePropertySet = 0x00;
inline constexpr uint8_t kFctypeConnect = 0x01;
inline constexpr uint8_t kFctypePropertyGet = 0x04;
inline constexpr uint8_t kFctypeAuthSend = 0x05;
inline constexpr uint8_t kFctypeAuthReceive = 0x06;
inline constexpr uint8_t kFctypeDisconnect = 0x08;

// Well-known discovery subsystem NQN. Base 2.0 §4.5 "NVMe Qualified Names".
inline constexpr char kDiscoveryNqn[] = "nqn.2014-08.org.nvmexpress.discovery";
// An NQN is at most 223 bytes (UTF-8, without the NUL); the fields holding one are 256 bytes.
inline constexpr size_t kNqnMaxLength = 223;
inline constexpr size_t kNqnFieldLength = 256;

// Connect data CNTLID FFFFh on the admin queue: "allocate any controller" (dynamic controller
// model). Base 2.0 §6.3 figure "Connect Command Data".
inline constexpr uint16_t kAdminQueueCntlid = 0xFFFF;
inline constexpr uint16_t kRecfmt0 = 0;  // Connect RECFMT 0: the only defined record format
// Connect CATTR bit 2: the host disables SQ flow control; every CQE then carries SQHD FFFFh
// (TP 8005; offered in the Discovery Log TREQ bit 2).
inline constexpr uint8_t kCattrDisableSqFlowControl = 1u << 2;
inline constexpr uint16_t kSqhdDisabled = 0xFFFF;

// Common overlay of any Fabrics command (opcode 7Fh). Base 2.0 §6 "Fabrics Command Set"
// figure "Fabrics Command – Submission Queue Entry Format".
struct FabricsCommand {
  uint8_t opcode;  // kOpcodeFabrics
  uint8_t flags;   // PSDT must be 01b (kFlagsPsdtSgl)
  uint16_t cid;
  uint8_t fctype;  // byte 4
  uint8_t rsvd5[19];
  SglDescriptor sgl1;  // 24
  uint8_t fabric_specific[24];
};
static_assert(sizeof(FabricsCommand) == 64);
static_assert(offsetof(FabricsCommand, fctype) == 4, "Base 2.0 §6: FCTYPE at byte 4");
static_assert(offsetof(FabricsCommand, sgl1) == 24);

// Connect. Base 2.0 §6.3 figure "Connect – Submission Queue Entry".
struct ConnectCommand {
  uint8_t opcode;
  uint8_t flags;
  uint16_t cid;
  uint8_t fctype;  // kFctypeConnect
  uint8_t rsvd5[19];
  SglDescriptor sgl1;  // 24, describes the 1024-byte ConnectData
  uint16_t recfmt;     // 40
  uint16_t qid;        // 42, 0 = admin queue
  uint16_t sqsize;     // 44, 0-based
  uint8_t cattr;       // 46
  uint8_t rsvd47;
  uint32_t kato;  // 48, keep alive timeout in ms (admin queue)
  uint8_t rsvd52[12];
};
static_assert(sizeof(ConnectCommand) == 64);
static_assert(offsetof(ConnectCommand, fctype) == 4);
static_assert(offsetof(ConnectCommand, sgl1) == 24);
static_assert(offsetof(ConnectCommand, recfmt) == 40, "Base 2.0 §6.3: RECFMT at 41:40");
static_assert(offsetof(ConnectCommand, qid) == 42, "Base 2.0 §6.3: QID at 43:42");
static_assert(offsetof(ConnectCommand, sqsize) == 44, "Base 2.0 §6.3: SQSIZE at 45:44");
static_assert(offsetof(ConnectCommand, cattr) == 46, "Base 2.0 §6.3: CATTR at 46");
static_assert(offsetof(ConnectCommand, kato) == 48, "Base 2.0 §6.3: KATO at 51:48");

// Connect data (1024 bytes, host to controller). Base 2.0 §6.3 figure "Connect Command Data".
inline constexpr size_t kConnectDataSize = 1024;
struct ConnectData {
  uint8_t hostid[16];  // 0
  uint16_t cntlid;     // 16, kAdminQueueCntlid on the admin queue
  uint8_t rsvd18[238];
  char subnqn[kNqnFieldLength];   // 256, NUL terminated
  char hostnqn[kNqnFieldLength];  // 512, NUL terminated
  uint8_t rsvd768[256];
};
static_assert(sizeof(ConnectData) == kConnectDataSize, "Base 2.0 §6.3: Connect data 1024 bytes");
static_assert(offsetof(ConnectData, cntlid) == 16);
static_assert(offsetof(ConnectData, subnqn) == 256);
static_assert(offsetof(ConnectData, hostnqn) == 512);

// Connect response DW0. Base 2.0 §6.3 figure "Connect – Response".
// Success: CNTLID in bits 15:0 (AUTHREQ in 31:16, unused here).
inline constexpr uint32_t kConnectRespCntlidMask = 0xFFFF;
// Status Connect Invalid Parameters: IPO (byte offset of the bad field) in bits 15:0, IATTR in
// bits 23:16; IATTR bit 0 set = the offset is in the Connect data, clear = in the SQE.
inline constexpr uint32_t kConnectRespIpoMask = 0xFFFF;
inline constexpr unsigned kConnectRespIattrShift = 16;
inline constexpr uint32_t kConnectRespIattrInData = 1u << kConnectRespIattrShift;

constexpr uint32_t connect_invalid_param_in_sqe(uint16_t byte_offset) { return byte_offset; }
constexpr uint32_t connect_invalid_param_in_data(uint16_t byte_offset) {
  return kConnectRespIattrInData | byte_offset;
}

// Property Get/Set ATTRIB (byte 40) bits 2:0: property size.
inline constexpr uint8_t kPropertySize4 = 0;
inline constexpr uint8_t kPropertySize8 = 1;

// Property Set. Base 2.0 §6.6 figure "Property Set – Submission Queue Entry".
struct PropertySetCommand {
  uint8_t opcode;
  uint8_t flags;
  uint16_t cid;
  uint8_t fctype;  // kFctypePropertySet
  uint8_t rsvd5[35];
  uint8_t attrib;  // 40
  uint8_t rsvd41[3];
  uint32_t ofst;   // 44, property offset
  uint64_t value;  // 48, 4- or 8-byte value
  uint8_t rsvd56[8];
};
static_assert(sizeof(PropertySetCommand) == 64);
static_assert(offsetof(PropertySetCommand, attrib) == 40, "Base 2.0 §6.6: ATTRIB at byte 40");
static_assert(offsetof(PropertySetCommand, ofst) == 44, "Base 2.0 §6.6: OFST at 47:44");
static_assert(offsetof(PropertySetCommand, value) == 48, "Base 2.0 §6.6: VALUE at 55:48");

// Property Get. Base 2.0 §6.5 figure "Property Get – Submission Queue Entry". The value comes
// back in CQE DW0 (4 bytes) or DW1:DW0 (8 bytes).
struct PropertyGetCommand {
  uint8_t opcode;
  uint8_t flags;
  uint16_t cid;
  uint8_t fctype;  // kFctypePropertyGet
  uint8_t rsvd5[35];
  uint8_t attrib;  // 40
  uint8_t rsvd41[3];
  uint32_t ofst;  // 44
  uint8_t rsvd48[16];
};
static_assert(sizeof(PropertyGetCommand) == 64);
static_assert(offsetof(PropertyGetCommand, attrib) == 40, "Base 2.0 §6.5: ATTRIB at byte 40");
static_assert(offsetof(PropertyGetCommand, ofst) == 44, "Base 2.0 §6.5: OFST at 47:44");

}  // namespace nvmf::proto

#endif  // NVMF_PROTO_FABRICS_H_
