// SPDX-License-Identifier: BSD-3-Clause
// Discovery Log Page (Get Log Page LID 70h) layouts and the Discovery Log entry codes.
//
// Layouts and constants only. Sections refer to the NVMe over Fabrics 1.1 specification
// ("Fabrics 1.1", §5 "Discovery Service") and the NVMe-oF RDMA Transport Binding 1.0 ("RDMA
// 1.0", §3.1.2 "Transport Specific Address Subtype").
#ifndef NVMF_PROTO_DISCOVERY_H_
#define NVMF_PROTO_DISCOVERY_H_

#include <cstddef>
#include <cstdint>

#include "proto/fabrics.h"

namespace nvmf::proto {

// Get Log Page LID of the Discovery Log Page. Fabrics 1.1 §5.3.
inline constexpr uint8_t kLogDiscovery = 0x70;

// TRTYPE. Fabrics 1.1 figure "Discovery Log Page Entry", byte 00.
inline constexpr uint8_t kTrtypeRdma = 1;
inline constexpr uint8_t kTrtypeFc = 2;
inline constexpr uint8_t kTrtypeTcp = 3;
inline constexpr uint8_t kTrtypeLoop = 254;  // Linux intra-host transport

// ADRFAM, byte 01.
inline constexpr uint8_t kAdrfamIpv4 = 1;
inline constexpr uint8_t kAdrfamIpv6 = 2;
inline constexpr uint8_t kAdrfamIb = 3;
inline constexpr uint8_t kAdrfamFc = 4;

// SUBTYPE, byte 02: what the entry's SUBNQN names.
inline constexpr uint8_t kSubtypeReferral = 1;          // another discovery service
inline constexpr uint8_t kSubtypeNvme = 2;              // an NVM subsystem
inline constexpr uint8_t kSubtypeCurrentDiscovery = 3;  // this discovery service (TP 8013)

// TREQ bits 1:0, byte 03: secure channel. Bit 2 (TP 8005): SQ flow control disable supported.
inline constexpr uint8_t kTreqNotSpecified = 0;
inline constexpr uint8_t kTreqRequired = 1;
inline constexpr uint8_t kTreqNotRequired = 2;
inline constexpr uint8_t kTreqSecureChannelMask = 0x3;
inline constexpr uint8_t kTreqDisableSqFlowControl = 1u << 2;

// CNTLID in an entry: FFFFh = the dynamic controller model. Fabrics 1.1 §5.3.
inline constexpr uint16_t kDiscoveryCntlidDynamic = 0xFFFF;

// RDMA Transport Specific Address Subtype. RDMA 1.0 §3.1.2 figure "RDMA Transport Specific
// Address Subtype Definition".
inline constexpr uint8_t kRdmaQptypeConnected = 1;     // reliable connected
inline constexpr uint8_t kRdmaQptypeDatagram = 2;      // reliable datagram
inline constexpr uint8_t kRdmaPrtypeNotSpecified = 1;  // no provider type given
inline constexpr uint8_t kRdmaPrtypeIb = 2;
inline constexpr uint8_t kRdmaPrtypeRoce = 3;
inline constexpr uint8_t kRdmaPrtypeRocev2 = 4;
inline constexpr uint8_t kRdmaPrtypeIwarp = 5;
inline constexpr uint8_t kRdmaCmsRdmaCm = 1;  // connection management: rdma_cm

inline constexpr size_t kTrsvcidFieldLength = 32;
inline constexpr size_t kTraddrFieldLength = 256;
inline constexpr size_t kTsasFieldLength = 256;

struct RdmaTsas {
  uint8_t qptype;  // 0
  uint8_t prtype;  // 1
  uint8_t cms;     // 2
  uint8_t rsvd3[5];
  uint16_t pkey;  // 8, InfiniBand partition key (0 elsewhere)
  uint8_t rsvd10[246];
};
static_assert(sizeof(RdmaTsas) == kTsasFieldLength, "RDMA 1.0 §3.1.2: TSAS is 256 bytes");
static_assert(offsetof(RdmaTsas, cms) == 2);
static_assert(offsetof(RdmaTsas, pkey) == 8, "RDMA 1.0 §3.1.2: RDMA_PKEY at 09:08");

// One Discovery Log Page Entry (1024 bytes). Fabrics 1.1 §5.3 figure "Discovery Log Page Entry".
// Text fields are ASCII: TRSVCID and TRADDR space padded per the spec (Linux pads with NULs),
// SUBNQN NUL terminated.
inline constexpr size_t kDiscoveryLogEntrySize = 1024;
struct DiscoveryLogEntry {
  uint8_t trtype;   // 0
  uint8_t adrfam;   // 1
  uint8_t subtype;  // 2
  uint8_t treq;     // 3
  uint16_t portid;  // 4
  uint16_t cntlid;  // 6
  uint16_t asqsz;   // 8, admin max SQ size (entries)
  uint16_t eflags;  // 10, entry flags (TP 8013); 0 here
  uint8_t rsvd12[20];
  char trsvcid[kTrsvcidFieldLength];  // 32
  uint8_t rsvd64[192];
  char subnqn[kNqnFieldLength];     // 256
  char traddr[kTraddrFieldLength];  // 512
  RdmaTsas tsas;                    // 768
};
static_assert(sizeof(DiscoveryLogEntry) == kDiscoveryLogEntrySize);
static_assert(offsetof(DiscoveryLogEntry, treq) == 3);
static_assert(offsetof(DiscoveryLogEntry, portid) == 4, "Fabrics 1.1 §5.3: PORTID at 05:04");
static_assert(offsetof(DiscoveryLogEntry, cntlid) == 6, "Fabrics 1.1 §5.3: CNTLID at 07:06");
static_assert(offsetof(DiscoveryLogEntry, asqsz) == 8, "Fabrics 1.1 §5.3: ASQSZ at 09:08");
static_assert(offsetof(DiscoveryLogEntry, trsvcid) == 32, "Fabrics 1.1 §5.3: TRSVCID at 63:32");
static_assert(offsetof(DiscoveryLogEntry, subnqn) == 256, "Fabrics 1.1 §5.3: SUBNQN at 511:256");
static_assert(offsetof(DiscoveryLogEntry, traddr) == 512, "Fabrics 1.1 §5.3: TRADDR at 767:512");
static_assert(offsetof(DiscoveryLogEntry, tsas) == 768, "Fabrics 1.1 §5.3: TSAS at 1023:768");

// Discovery Log Page header (1024 bytes); NUMREC entries follow it. Fabrics 1.1 §5.3 figure
// "Discovery Log Page".
inline constexpr size_t kDiscoveryLogHeaderSize = 1024;
struct DiscoveryLogHeader {
  uint64_t genctr;  // 0, generation counter: changes when the log changes
  uint64_t numrec;  // 8, number of records
  uint16_t recfmt;  // 16, record format 0
  uint8_t rsvd18[1006];
};
static_assert(sizeof(DiscoveryLogHeader) == kDiscoveryLogHeaderSize);
static_assert(offsetof(DiscoveryLogHeader, numrec) == 8, "Fabrics 1.1 §5.3: NUMREC at 15:08");
static_assert(offsetof(DiscoveryLogHeader, recfmt) == 16, "Fabrics 1.1 §5.3: RECFMT at 17:16");

}  // namespace nvmf::proto

#endif  // NVMF_PROTO_DISCOVERY_H_
