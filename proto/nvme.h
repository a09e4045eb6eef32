// SPDX-License-Identifier: BSD-3-Clause
// NVMe wire layouts and constants (SQE, CQE, SGL descriptor, status, properties, Identify data).
//
// Layouts and constants only. Every multi-byte field is little-endian on the wire; we require a
// little-endian host (asserted below) and store fields as native integers.
// Section numbers refer to NVM Express Base Specification 2.0 ("Base 2.0") and NVM Command Set
// Specification 1.0 ("NVM CS 1.0"); figure titles are quoted so they can be found in later
// revisions too.
#ifndef NVMF_PROTO_NVME_H_
#define NVMF_PROTO_NVME_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nvmf::proto {

static_assert(std::endian::native == std::endian::little,
              "proto/ stores little-endian wire fields as native integers");

// ---------------------------------------------------------------------------------------------
// SGL descriptor. Base 2.0 §4.3.2 "Scatter Gather List (SGL)", figures "SGL Descriptor Format",
// "Keyed SGL Data Block descriptor", "SGL Data Block descriptor".
// ---------------------------------------------------------------------------------------------

// SGL Identifier byte (byte 15): descriptor type in bits 7:4, subtype in bits 3:0.
inline constexpr uint8_t kSglTypeDataBlock = 0x0;
inline constexpr uint8_t kSglTypeBitBucket = 0x1;
inline constexpr uint8_t kSglTypeSegment = 0x2;
inline constexpr uint8_t kSglTypeLastSegment = 0x3;
inline constexpr uint8_t kSglTypeKeyedDataBlock = 0x4;
inline constexpr uint8_t kSglTypeTransportDataBlock = 0x5;
inline constexpr uint8_t kSglTypeVendorSpecific = 0xF;

inline constexpr uint8_t kSglSubtypeAddress = 0x0;
inline constexpr uint8_t kSglSubtypeOffset = 0x1;  // address is an offset (in-capsule data)
inline constexpr uint8_t kSglSubtypeTransport = 0xA;
inline constexpr uint8_t kSglSubtypeInvalidateKey = 0xF;  // keyed: target answers SEND w/ Inval.

// Whole identifier bytes as they appear on the wire.
inline constexpr uint8_t kSglIdDataBlockAddress = 0x00;   // Data Block, Address
inline constexpr uint8_t kSglIdDataBlockOffset = 0x01;    // Data Block, Offset (in-capsule)
inline constexpr uint8_t kSglIdLastSegmentOffset = 0x31;  // Last Segment, Offset
inline constexpr uint8_t kSglIdKeyed = 0x40;              // Keyed Data Block, Address
inline constexpr uint8_t kSglIdKeyedInvalidate = 0x4F;    // Keyed Data Block, Invalidate Key

constexpr uint8_t sgl_id(uint8_t type, uint8_t subtype) {
  return static_cast<uint8_t>((type << 4) | (subtype & 0xF));
}
constexpr uint8_t sgl_type(uint8_t id) { return id >> 4; }
constexpr uint8_t sgl_subtype(uint8_t id) { return id & 0xF; }

// Keyed SGL Data Block: LENGTH is 24 bits (bytes 10:8), KEY is 32 bits (bytes 14:11).
inline constexpr uint32_t kKeyedSglMaxLength = 0xFFFFFF;

// Bytes 14:8 of a Keyed SGL Data Block descriptor.
struct __attribute__((packed)) SglKeyedFields {
  uint8_t length[3];  // 24-bit little-endian length in bytes
  uint32_t key;       // remote key (rkey)
};
static_assert(sizeof(SglKeyedFields) == 7);

// Bytes 14:8 of a (non-keyed) SGL Data Block / Segment / Last Segment descriptor.
struct __attribute__((packed)) SglUnkeyedFields {
  uint32_t length;  // bytes
  uint8_t rsvd[3];
};
static_assert(sizeof(SglUnkeyedFields) == 7);

// One 16-byte SGL descriptor (SQE bytes 39:24 when PSDT selects SGLs).
struct __attribute__((packed)) SglDescriptor {
  uint64_t addr;  // address, or offset into the in-capsule data area for subtype Offset
  union {
    SglKeyedFields keyed;
    SglUnkeyedFields unkeyed;
  };
  uint8_t id;  // SGL Identifier: type << 4 | subtype

  constexpr uint32_t keyed_length() const {
    return keyed.length[0] | (keyed.length[1] << 8) |
           (static_cast<uint32_t>(keyed.length[2]) << 16);
  }
  constexpr void set_keyed_length(uint32_t len) {
    keyed.length[0] = static_cast<uint8_t>(len);
    keyed.length[1] = static_cast<uint8_t>(len >> 8);
    keyed.length[2] = static_cast<uint8_t>(len >> 16);
  }
};
static_assert(sizeof(SglDescriptor) == 16, "Base 2.0 §4.3.2: SGL descriptor is 16 bytes");
static_assert(offsetof(SglDescriptor, addr) == 0);
static_assert(offsetof(SglDescriptor, keyed.length) == 8, "Keyed SGL: LENGTH at bytes 10:8");
static_assert(offsetof(SglDescriptor, keyed.key) == 11, "Keyed SGL: KEY at bytes 14:11");
static_assert(offsetof(SglDescriptor, unkeyed.length) == 8, "SGL Data Block: LENGTH at 11:8");
static_assert(offsetof(SglDescriptor, id) == 15, "SGL Identifier at byte 15");

// ---------------------------------------------------------------------------------------------
// Submission Queue Entry. Base 2.0 §4.1 "Submission Queue Entry", figure "Common Command Format".
// ---------------------------------------------------------------------------------------------

// CDW0 byte 1: FUSE bits 1:0, PSDT bits 7:6. PSDT 01b = SGLs, metadata in one contiguous buffer.
inline constexpr uint8_t kFlagsFuseMask = 0x03;
inline constexpr uint8_t kFlagsPsdtMask = 0xC0;
inline constexpr uint8_t kFlagsPsdtPrp = 0x00;
inline constexpr uint8_t kFlagsPsdtSgl = 0x40;  // the only value NVMe-oF allows (Base 2.0 §4.1)
inline constexpr uint8_t kFlagsPsdtSglMptrSgl = 0x80;

struct Sqe {
  uint8_t opcode;  // byte 0
  uint8_t flags;   // byte 1: FUSE, PSDT
  uint16_t cid;    // bytes 3:2
  uint32_t nsid;   // bytes 7:4 (Fabrics commands: byte 4 is FCTYPE)
  uint32_t cdw2;
  uint32_t cdw3;
  uint64_t mptr;       // bytes 23:16
  SglDescriptor dptr;  // bytes 39:24, SGL1
  uint32_t cdw10;
  uint32_t cdw11;
  uint32_t cdw12;
  uint32_t cdw13;
  uint32_t cdw14;
  uint32_t cdw15;
};
static_assert(sizeof(Sqe) == 64, "Base 2.0 §4.1: SQE is 64 bytes");
static_assert(offsetof(Sqe, flags) == 1);
static_assert(offsetof(Sqe, cid) == 2);
static_assert(offsetof(Sqe, nsid) == 4);
static_assert(offsetof(Sqe, mptr) == 16);
static_assert(offsetof(Sqe, dptr) == 24, "Base 2.0 §4.1: DPTR at bytes 39:24");
static_assert(offsetof(Sqe, cdw10) == 40);
static_assert(offsetof(Sqe, cdw15) == 60);

// ---------------------------------------------------------------------------------------------
// Completion Queue Entry. Base 2.0 §4.2 "Completion Queue Entry", figure "Common CQE".
// ---------------------------------------------------------------------------------------------

struct Cqe {
  uint32_t dw0;     // command specific result (Connect: CNTLID; Property Get: value 31:0)
  uint32_t dw1;     // command specific (Property Get of 8 bytes: value 63:32)
  uint16_t sqhd;    // SQ head pointer
  uint16_t sqid;    // SQ identifier
  uint16_t cid;     // command identifier
  uint16_t status;  // status field incl. phase tag bit 0 (see kStatus* below)
};
static_assert(sizeof(Cqe) == 16, "Base 2.0 §4.2: CQE is 16 bytes");
static_assert(offsetof(Cqe, sqhd) == 8);
static_assert(offsetof(Cqe, sqid) == 10);
static_assert(offsetof(Cqe, cid) == 12);
static_assert(offsetof(Cqe, status) == 14, "Base 2.0 §4.2: status is DW3 bits 31:16");

// Status field (CQE DW3 bits 31:16 seen as a 16-bit value). Base 2.0 §4.2.3 "Status Field".
// Note: Linux's NVME_SC_* values are this field shifted right by one (no phase bit).
inline constexpr uint16_t kStatusPhase = 1u << 0;  // P
inline constexpr unsigned kStatusScShift = 1;      // SC bits 8:1
inline constexpr uint16_t kStatusScMask = 0xFFu << kStatusScShift;
inline constexpr unsigned kStatusSctShift = 9;  // SCT bits 11:9
inline constexpr uint16_t kStatusSctMask = 0x7u << kStatusSctShift;
inline constexpr unsigned kStatusCrdShift = 12;  // CRD bits 13:12
inline constexpr uint16_t kStatusCrdMask = 0x3u << kStatusCrdShift;
inline constexpr uint16_t kStatusMore = 1u << 14;  // M
inline constexpr uint16_t kStatusDnr = 1u << 15;   // DNR: do not retry

// Status Code Type. Base 2.0 figure "Status Code Type Values".
inline constexpr uint8_t kSctGeneric = 0x0;
inline constexpr uint8_t kSctCommandSpecific = 0x1;
inline constexpr uint8_t kSctMediaError = 0x2;  // media and data integrity errors
inline constexpr uint8_t kSctPath = 0x3;        // path related status
inline constexpr uint8_t kSctVendor = 0x7;      // vendor specific

// Generic command status (SCT 0). Base 2.0 figure "Generic Command Status Values".
inline constexpr uint8_t kScSuccess = 0x00;
inline constexpr uint8_t kScInvalidOpcode = 0x01;
inline constexpr uint8_t kScInvalidField = 0x02;
inline constexpr uint8_t kScCommandIdConflict = 0x03;
inline constexpr uint8_t kScDataTransferError = 0x04;
inline constexpr uint8_t kScAbortedPowerLoss = 0x05;
inline constexpr uint8_t kScInternalError = 0x06;
inline constexpr uint8_t kScAbortRequested = 0x07;
inline constexpr uint8_t kScAbortedSqDeletion = 0x08;
inline constexpr uint8_t kScInvalidNamespaceOrFormat = 0x0B;
inline constexpr uint8_t kScCommandSequenceError = 0x0C;
inline constexpr uint8_t kScInvalidSglSegmentDescriptor = 0x0D;  // Linux: SGL_INVALID_LAST
inline constexpr uint8_t kScInvalidNumberOfSglDescriptors = 0x0E;
inline constexpr uint8_t kScDataSglLengthInvalid = 0x0F;
inline constexpr uint8_t kScMetadataSglLengthInvalid = 0x10;
inline constexpr uint8_t kScSglDescriptorTypeInvalid = 0x11;
inline constexpr uint8_t kScSglOffsetInvalid = 0x16;
inline constexpr uint8_t kScHostIdentifierInconsistentFormat = 0x18;
inline constexpr uint8_t kScKeepAliveTimerExpired = 0x19;
inline constexpr uint8_t kScKeepAliveTimeoutInvalid = 0x1A;
// Generic status, NVM command set (SCT 0, 80h..). NVM CS 1.0 "Status Information".
inline constexpr uint8_t kScLbaOutOfRange = 0x80;
inline constexpr uint8_t kScCapacityExceeded = 0x81;
inline constexpr uint8_t kScNamespaceNotReady = 0x82;
inline constexpr uint8_t kScReservationConflict = 0x83;
// Media and data integrity errors (SCT 2). Base 2.0 figure "Media and Data Integrity Errors".
inline constexpr uint8_t kScWriteFault = 0x80;
inline constexpr uint8_t kScUnrecoveredReadError = 0x81;

// Command specific status (SCT 1). Base 2.0 figure "Command Specific Status Values".
inline constexpr uint8_t kScCompletionQueueInvalid = 0x00;
inline constexpr uint8_t kScInvalidQueueIdentifier = 0x01;
inline constexpr uint8_t kScInvalidQueueSize = 0x02;
inline constexpr uint8_t kScAbortCommandLimitExceeded = 0x03;
inline constexpr uint8_t kScAsyncEventRequestLimitExceeded = 0x05;
inline constexpr uint8_t kScInvalidLogPage = 0x09;
inline constexpr uint8_t kScFeatureIdNotSaveable = 0x0D;
inline constexpr uint8_t kScFeatureNotChangeable = 0x0E;
inline constexpr uint8_t kScFeatureNotNamespaceSpecific = 0x0F;
// Fabrics command specific (SCT 1), Connect responses. Base 2.0 §6.3 "Connect command".
inline constexpr uint8_t kScIncompatibleFormat = 0x80;
inline constexpr uint8_t kScControllerBusy = 0x81;
inline constexpr uint8_t kScConnectInvalidParameters = 0x82;
inline constexpr uint8_t kScConnectRestartDiscovery = 0x83;
inline constexpr uint8_t kScConnectInvalidHost = 0x84;
// Path related status (SCT 3). Base 2.0 figure "Path Related Status Values". A host sets
// Host Pathing Error itself on a command it cannot send (Linux: NVME_SC_HOST_PATH_ERROR when
// fast_io_fail_tmo or ctrl_loss_tmo runs out).
inline constexpr uint8_t kScAnaPersistentLoss = 0x01;  // Asymmetric Access Persistent Loss
inline constexpr uint8_t kScAnaInaccessible = 0x02;    // Asymmetric Access Inaccessible
inline constexpr uint8_t kScAnaTransition = 0x03;      // Asymmetric Access Transition
// A controller answers Controller Pathing Error on a queue whose controller it has freed (the
// host retries on another path; nvmet drops such commands unanswered).
inline constexpr uint8_t kScControllerPathingError = 0x60;
inline constexpr uint8_t kScHostPathingError = 0x70;
inline constexpr uint8_t kScCommandAbortedByHost = 0x71;

// ---------------------------------------------------------------------------------------------
// Opcodes. Base 2.0 §5 "Admin Command Set" figure "Opcodes for Admin Commands"; NVM CS 1.0
// figure "Opcodes for NVM Commands"; Base 2.0 §6 "Fabrics Command Set".
// Opcode bits 1:0 give the data direction (00 none, 01 host to controller, 10 controller to
// host, 11 bidirectional), Base 2.0 figure "Opcodes for Admin Commands" note.
// ---------------------------------------------------------------------------------------------
inline constexpr uint8_t kAdminGetLogPage = 0x02;
inline constexpr uint8_t kAdminIdentify = 0x06;
inline constexpr uint8_t kAdminAbort = 0x08;
inline constexpr uint8_t kAdminSetFeatures = 0x09;
inline constexpr uint8_t kAdminGetFeatures = 0x0A;
inline constexpr uint8_t kAdminAsyncEventRequest = 0x0C;
inline constexpr uint8_t kAdminKeepAlive = 0x18;

inline constexpr uint8_t kNvmFlush = 0x00;
inline constexpr uint8_t kNvmWrite = 0x01;
inline constexpr uint8_t kNvmRead = 0x02;
inline constexpr uint8_t kNvmWriteZeroes = 0x08;
inline constexpr uint8_t kNvmDatasetManagement = 0x09;

inline constexpr uint8_t kOpcodeFabrics = 0x7F;

// Identify CNS values (CDW10 bits 7:0). Base 2.0 §5.17 "Identify command", figure "CNS Values".
inline constexpr uint8_t kCnsNamespace = 0x00;
inline constexpr uint8_t kCnsController = 0x01;
inline constexpr uint8_t kCnsActiveNamespaceList = 0x02;
inline constexpr uint8_t kCnsNamespaceIdDescriptorList = 0x03;

// Feature identifiers (Set/Get Features CDW10 bits 7:0). Base 2.0 §5.27.1.
inline constexpr uint8_t kFeatureNumberOfQueues = 0x07;
inline constexpr uint8_t kFeatureAsyncEventConfig = 0x0B;
// Asynchronous events (Base 2.0 §5.2, Figure 150): the AER completion's DW0 is type (bits 2:0) |
// information (15:8) | log page (23:16).
inline constexpr uint8_t kAenTypeNotice = 0x2;
inline constexpr uint8_t kAenInfoNamespaceAttributeChanged = 0x00;
inline constexpr uint8_t kAenInfoAnaChange = 0x03;
inline constexpr uint8_t kAenInfoDiscoveryLogChange = 0xF0;
inline constexpr uint8_t kLogChangedNamespaceList = 0x04;
inline constexpr uint8_t kLogAna = 0x0C;

// Asymmetric Namespace Access log page (Log Identifier 0Ch, Base 2.0 §5.16.1.13): this header,
// then per ANA group a descriptor followed by its NNSIDS NSIDs (u32 each). Little endian.
struct AnaLogHeader {
  uint64_t change_count;
  uint16_t ngrps;  // number of ANA group descriptors
  uint8_t rsvd10[6];
};
static_assert(sizeof(AnaLogHeader) == 16);
struct AnaGroupDescriptor {
  uint32_t grpid;
  uint32_t nnsids;
  uint64_t change_count;
  uint8_t state;  // kAna* below
  uint8_t rsvd17[15];
};
static_assert(sizeof(AnaGroupDescriptor) == 32);
// ANA states (Base 2.0 §8.1, figure "ANA Group Descriptor format").
inline constexpr uint8_t kAnaOptimized = 0x01;
inline constexpr uint8_t kAnaNonOptimized = 0x02;
inline constexpr uint8_t kAnaInaccessible = 0x03;
inline constexpr uint8_t kAnaPersistentLoss = 0x04;
inline constexpr uint8_t kAnaChange = 0x0F;
// Get Log Page 0Ch LSP bit 0 (CDW10 bit 8): Return Groups Only, the descriptors without NSIDs.
inline constexpr uint32_t kAnaLogRgo = 1u << 8;
// nvmetcli's and Linux's names of the ANA states (configfs ana_state, /sys/.../ana_state):
// "optimized", "non-optimized", "inaccessible", "persistent-loss", "change"; empty for any
// other value.
constexpr std::string_view ana_state_name(uint8_t state) {
  switch (state) {
    case kAnaOptimized:
      return "optimized";
    case kAnaNonOptimized:
      return "non-optimized";
    case kAnaInaccessible:
      return "inaccessible";
    case kAnaPersistentLoss:
      return "persistent-loss";
    case kAnaChange:
      return "change";
    default:
      return {};
  }
}
constexpr uint32_t aen_dw0(uint8_t type, uint8_t info, uint8_t log_page) {
  return uint32_t{type} | uint32_t{info} << 8 | uint32_t{log_page} << 16;
}
// Asynchronous Event Configuration (feature 0Bh) bits and the matching OAES bits of Identify
// Controller: Namespace Attribute Notices (8), Asymmetric Namespace Access Change Notices (11),
// Discovery Log Page Change Notification (31).
inline constexpr uint32_t kAecNamespaceAttribute = 1u << 8;
inline constexpr uint32_t kAecAnaChange = 1u << 11;
inline constexpr uint32_t kAecDiscoveryLogChange = 1u << 31;
inline constexpr uint8_t kFeatureKeepAliveTimer = 0x0F;

// Read/Write: SLBA in CDW11:CDW10, NLB (0-based) in CDW12 bits 15:0. NVM CS 1.0 §3.2.4/§3.2.6.
inline constexpr uint32_t kRwNlbMask = 0xFFFF;
// Read/Write CDW12 bit 30: Force Unit Access (the data is durable before the completion).
inline constexpr uint32_t kRwFua = 1u << 30;
// Write Zeroes CDW12 bit 25: deallocate the blocks (NVM CS 1.0 §3.2.8).
inline constexpr uint32_t kWriteZeroesDeac = 1u << 25;
// Dataset Management: CDW10 bits 7:0 NR (ranges, 0-based), CDW11 bit 2 AD (deallocate); the
// data is NR + 1 ranges of 16 bytes. NVM CS 1.0 §3.2.3, figure "Dataset Management - Range".
inline constexpr uint32_t kDsmAttributeDeallocate = 1u << 2;
inline constexpr uint32_t kDsmMaxRanges = 256;
struct DsmRange {
  uint32_t cattr;  // context attributes
  uint32_t nlb;    // length in logical blocks
  uint64_t slba;   // starting LBA
};
static_assert(sizeof(DsmRange) == 16);

// ---------------------------------------------------------------------------------------------
// Controller properties (Fabrics: read with Property Get/Set). Base 2.0 §3.1.3 "Controller
// Properties", figures "Offset 0h: CAP", "Offset 14h: CC", "Offset 1Ch: CSTS".
// ---------------------------------------------------------------------------------------------
inline constexpr uint32_t kPropCap = 0x00;   // 8 bytes
inline constexpr uint32_t kPropVs = 0x08;    // 4 bytes
inline constexpr uint32_t kPropCc = 0x14;    // 4 bytes
inline constexpr uint32_t kPropCsts = 0x1C;  // 4 bytes

// CAP (64 bits).
inline constexpr uint64_t kCapMqesMask = 0xFFFF;  // bits 15:0, max queue entries, 0-based
inline constexpr uint64_t kCapCqr = 1ull << 16;   // contiguous queues required
inline constexpr unsigned kCapAmsShift = 17;      // bits 18:17
inline constexpr unsigned kCapToShift = 24;       // bits 31:24, ready timeout in 500 ms units
inline constexpr uint64_t kCapToMask = 0xFFull << kCapToShift;
inline constexpr unsigned kCapDstrdShift = 32;      // bits 35:32
inline constexpr unsigned kCapCssShift = 37;        // bits 44:37
inline constexpr uint64_t kCapCssNvm = 1ull << 37;  // NVM command set supported
inline constexpr unsigned kCapMpsminShift = 48;     // bits 51:48, 2^(12+MPSMIN) bytes
inline constexpr unsigned kCapMpsmaxShift = 52;     // bits 55:52

// VS: major 31:16, minor 15:8, tertiary 7:0.
constexpr uint32_t make_version(uint32_t major, uint32_t minor, uint32_t tertiary = 0) {
  return (major << 16) | (minor << 8) | tertiary;
}

// CC (32 bits).
inline constexpr uint32_t kCcEn = 1u << 0;
inline constexpr unsigned kCcCssShift = 4;  // bits 6:4
inline constexpr uint32_t kCcCssMask = 0x7u << kCcCssShift;
inline constexpr unsigned kCcMpsShift = 7;  // bits 10:7
inline constexpr uint32_t kCcMpsMask = 0xFu << kCcMpsShift;
inline constexpr unsigned kCcAmsShift = 11;  // bits 13:11
inline constexpr uint32_t kCcAmsMask = 0x7u << kCcAmsShift;
inline constexpr unsigned kCcShnShift = 14;  // bits 15:14
inline constexpr uint32_t kCcShnMask = 0x3u << kCcShnShift;
inline constexpr uint32_t kCcShnNone = 0;
inline constexpr uint32_t kCcShnNormal = 1;
inline constexpr uint32_t kCcShnAbrupt = 2;
inline constexpr unsigned kCcIosqesShift = 16;  // bits 19:16, log2 of SQE size
inline constexpr uint32_t kCcIosqesMask = 0xFu << kCcIosqesShift;
inline constexpr unsigned kCcIocqesShift = 20;  // bits 23:20, log2 of CQE size
inline constexpr uint32_t kCcIocqesMask = 0xFu << kCcIocqesShift;
inline constexpr uint32_t kSqesLog2 = 6;  // 64-byte SQE
inline constexpr uint32_t kCqesLog2 = 4;  // 16-byte CQE

// CSTS (32 bits).
inline constexpr uint32_t kCstsRdy = 1u << 0;
inline constexpr uint32_t kCstsCfs = 1u << 1;
inline constexpr unsigned kCstsShstShift = 2;  // bits 3:2
inline constexpr uint32_t kCstsShstMask = 0x3u << kCstsShstShift;
inline constexpr uint32_t kShstNormal = 0;
inline constexpr uint32_t kShstOccurring = 1;
inline constexpr uint32_t kShstComplete = 2;

// ---------------------------------------------------------------------------------------------
// Identify Controller data structure (CNS 01h). Base 2.0 §5.17.2.1, figure "Identify –
// Identify Controller Data Structure, I/O Command Set Independent".
// ---------------------------------------------------------------------------------------------

// SGLS (bytes 539:536).
inline constexpr uint32_t kSglsSupportMask = 0x3;         // bits 1:0: 00 none, 01 any, 10 dword
inline constexpr uint32_t kSglsSupported = 0x1;           // SGLs supported, no alignment
inline constexpr uint32_t kSglsKeyedDataBlock = 1u << 2;  // Keyed SGL Data Block supported
inline constexpr uint32_t kSglsBitBucket = 1u << 16;
// Identify Controller CTRATT bit 6: Traffic Based Keep Alive support (any command restarts the
// keep-alive timer, not only Keep Alive). Base 2.0 §3.9.
inline constexpr uint32_t kCtrattTbkas = 1u << 6;
inline constexpr uint32_t kSglsOffset = 1u << 20;  // SGL address may be an offset (in-capsule)
// CMIC (byte 76), Controller Multi-Path I/O and Namespace Sharing Capabilities. Base 2.0
// §5.17.2.1. Linux refuses a second controller to one subsystem unless bit 1 is set
// ("Subsystem does not support multiple controllers"). Bit 3 (ANA reporting) makes hosts read
// the ANA log page (0Ch) and pick paths by ANA state.
inline constexpr uint8_t kCmicMultiPort = 1u << 0;  // the subsystem may have two or more ports
inline constexpr uint8_t kCmicMultiCtrl = 1u << 1;  // two or more controllers at a time
inline constexpr uint8_t kCmicAna = 1u << 3;        // Asymmetric Namespace Access reporting
// ANACAP (byte 343): the ANA states the controller reports (bits 0-4: optimized,
// non-optimized, inaccessible, persistent loss, change), as nvmet.
inline constexpr uint8_t kAnacapAllStates = 0x1F;

// Identify Namespace NMIC (byte 30) bit 0: the namespace may be attached to two or more
// controllers at a time (NVM CS 1.0 §4.1.5.1). Linux merges the namespaces of two controllers
// into one multipath device only when it is set and their identifiers (NGUID, UUID) agree.
inline constexpr uint8_t kNmicShared = 1u << 0;

// CNTRLTYPE (byte 111).
inline constexpr uint8_t kCntrltypeIo = 1;
inline constexpr uint8_t kCntrltypeDiscovery = 2;
inline constexpr uint8_t kCntrltypeAdmin = 3;

inline constexpr size_t kIdentifyDataSize = 4096;

struct IdentifyPowerState {
  uint8_t raw[32];
};

struct IdentifyController {
  uint16_t vid;  // 0
  uint16_t ssvid;
  char sn[20];  // 4, ASCII, space padded
  char mn[40];  // 24
  char fr[8];   // 64
  uint8_t rab;  // 72
  uint8_t ieee[3];
  uint8_t cmic;     // 76
  uint8_t mdts;     // 77, max transfer 2^MDTS * CAP.MPSMIN pages, 0 = no limit
  uint16_t cntlid;  // 78
  uint32_t ver;     // 80
  uint32_t rtd3r;   // 84
  uint32_t rtd3e;   // 88
  uint32_t oaes;    // 92
  uint32_t ctratt;  // 96
  uint16_t rrls;    // 100
  uint8_t rsvd102[9];
  uint8_t cntrltype;  // 111
  uint8_t fguid[16];  // 112
  uint16_t crdt1;     // 128
  uint16_t crdt2;
  uint16_t crdt3;
  uint8_t rsvd134[119];
  uint8_t nvmsr;  // 253
  uint8_t vwci;
  uint8_t mec;
  uint16_t oacs;  // 256
  uint8_t acl;    // 258
  uint8_t aerl;   // 259
  uint8_t frmw;   // 260
  uint8_t lpa;    // 261
  uint8_t elpe;   // 262
  uint8_t npss;   // 263
  uint8_t avscc;
  uint8_t apsta;
  uint16_t wctemp;  // 266
  uint16_t cctemp;
  uint16_t mtfa;
  uint32_t hmpre;  // 272
  uint32_t hmmin;
  uint8_t tnvmcap[16];  // 280
  uint8_t unvmcap[16];  // 296
  uint32_t rpmbs;       // 312
  uint16_t edstt;       // 316
  uint8_t dsto;
  uint8_t fwug;
  uint16_t kas;  // 320, keep alive granularity in 100 ms units
  uint8_t rsvd322[20];
  uint8_t anatt;       // 342, ANA transition time, seconds
  uint8_t anacap;      // 343, ANA capabilities (kAnacap*)
  uint32_t anagrpmax;  // 344, largest ANA group ID
  uint32_t nanagrpid;  // 348, number of ANA group IDs
  uint8_t rsvd352[160];
  uint8_t sqes;     // 512
  uint8_t cqes;     // 513
  uint16_t maxcmd;  // 514
  uint32_t nn;      // 516
  uint16_t oncs;    // 520
  uint16_t fuses;   // 522
  uint8_t fna;      // 524
  uint8_t vwc;      // 525
  uint16_t awun;    // 526
  uint16_t awupf;   // 528
  uint8_t icsvscc;  // 530
  uint8_t nwpc;
  uint16_t acwu;  // 532
  uint16_t ocfs;  // 534
  uint32_t sgls;  // 536
  uint32_t mnan;  // 540
  uint8_t rsvd544[224];
  char subnqn[256];  // 768, NUL terminated
  uint8_t rsvd1024[768];
  // Fabrics only (Base 2.0 same figure, bytes 2047:1792).
  uint32_t ioccsz;  // 1792, I/O command capsule size in 16-byte units
  uint32_t iorcsz;  // 1796, I/O response capsule size in 16-byte units
  uint16_t icdoff;  // 1800, in-capsule data offset in 16-byte units
  uint8_t fcatt;    // 1802, fabrics controller attributes
  uint8_t msdbd;    // 1803, max SGL data block descriptors per command
  uint16_t ofcs;    // 1804, optional fabric commands supported
  uint8_t dctype;   // 1806
  uint8_t rsvd1807[241];
  IdentifyPowerState psd[32];  // 2048
  uint8_t vs[1024];            // 3072
};
static_assert(sizeof(IdentifyController) == kIdentifyDataSize, "Base 2.0 §5.17.2.1: 4096 bytes");
static_assert(offsetof(IdentifyController, sn) == 4);
static_assert(offsetof(IdentifyController, mn) == 24);
static_assert(offsetof(IdentifyController, fr) == 64);
static_assert(offsetof(IdentifyController, ieee) == 73);
static_assert(offsetof(IdentifyController, mdts) == 77);
static_assert(offsetof(IdentifyController, cntlid) == 78);
static_assert(offsetof(IdentifyController, ver) == 80);
static_assert(offsetof(IdentifyController, oaes) == 92);
static_assert(offsetof(IdentifyController, ctratt) == 96);
static_assert(offsetof(IdentifyController, cntrltype) == 111);
static_assert(offsetof(IdentifyController, oacs) == 256);
static_assert(offsetof(IdentifyController, acl) == 258);
static_assert(offsetof(IdentifyController, npss) == 263);
static_assert(offsetof(IdentifyController, kas) == 320);
static_assert(offsetof(IdentifyController, anatt) == 342);
static_assert(offsetof(IdentifyController, anagrpmax) == 344);
static_assert(offsetof(IdentifyController, nanagrpid) == 348);
static_assert(offsetof(IdentifyController, sqes) == 512);
static_assert(offsetof(IdentifyController, cqes) == 513);
static_assert(offsetof(IdentifyController, maxcmd) == 514);
static_assert(offsetof(IdentifyController, nn) == 516);
static_assert(offsetof(IdentifyController, oncs) == 520);
static_assert(offsetof(IdentifyController, vwc) == 525);
// ONCS bits (Identify Controller bytes 521:520, Base 2.0 §5.17.2.1).
inline constexpr uint16_t kOncsDatasetManagement = 1u << 2;
inline constexpr uint16_t kOncsWriteZeroes = 1u << 3;
// VWC bit 0 (Identify Controller byte 525): a volatile write cache is present.
inline constexpr uint8_t kVwcPresent = 1u << 0;
static_assert(offsetof(IdentifyController, awupf) == 528);
static_assert(offsetof(IdentifyController, sgls) == 536);
static_assert(offsetof(IdentifyController, subnqn) == 768);
static_assert(offsetof(IdentifyController, ioccsz) == 1792);
static_assert(offsetof(IdentifyController, iorcsz) == 1796);
static_assert(offsetof(IdentifyController, icdoff) == 1800);
static_assert(offsetof(IdentifyController, fcatt) == 1802);
static_assert(offsetof(IdentifyController, msdbd) == 1803);
static_assert(offsetof(IdentifyController, ofcs) == 1804);
static_assert(offsetof(IdentifyController, psd) == 2048);
static_assert(offsetof(IdentifyController, vs) == 3072);

// ---------------------------------------------------------------------------------------------
// Identify Namespace data structure (CNS 00h). NVM CS 1.0 §4.1.5.1, figure "Identify Namespace
// Data Structure, NVM Command Set". LBAF0..15 at 128; Base 2.0 extends to 64 formats (to 383).
// ---------------------------------------------------------------------------------------------

struct LbaFormat {
  uint16_t ms;    // metadata bytes per LBA
  uint8_t lbads;  // LBA data size, 2^lbads bytes (9 = 512)
  uint8_t rp;     // relative performance, bits 1:0
};
static_assert(sizeof(LbaFormat) == 4);

inline constexpr uint8_t kFlbasFormatMask = 0x0F;  // FLBAS bits 3:0: format index (low bits)

struct IdentifyNamespace {
  uint64_t nsze;   // 0, in logical blocks
  uint64_t ncap;   // 8
  uint64_t nuse;   // 16
  uint8_t nsfeat;  // 24
  uint8_t nlbaf;   // 25, number of LBA formats, 0-based
  uint8_t flbas;   // 26, formatted LBA size
  uint8_t mc;
  uint8_t dpc;
  uint8_t dps;
  uint8_t nmic;
  uint8_t rescap;
  uint8_t fpi;  // 32
  uint8_t dlfeat;
  uint16_t nawun;  // 34
  uint16_t nawupf;
  uint16_t nacwu;
  uint16_t nabsn;
  uint16_t nabo;
  uint16_t nabspf;
  uint16_t noiob;
  uint8_t nvmcap[16];  // 48
  uint16_t npwg;       // 64
  uint16_t npwa;
  uint16_t npdg;
  uint16_t npda;
  uint16_t nows;
  uint16_t mssrl;  // 74
  uint32_t mcl;    // 76
  uint8_t msrc;    // 80
  uint8_t rsvd81[11];
  uint32_t anagrpid;  // 92
  uint8_t rsvd96[3];
  uint8_t nsattr;  // 99
  uint16_t nvmsetid;
  uint16_t endgid;
  uint8_t nguid[16];   // 104
  uint8_t eui64[8];    // 120
  LbaFormat lbaf[64];  // 128
  uint8_t rsvd384[3328];
  uint8_t vs[384];  // 3712
};
static_assert(sizeof(IdentifyNamespace) == kIdentifyDataSize, "NVM CS 1.0 §4.1.5.1: 4096 bytes");
static_assert(offsetof(IdentifyNamespace, ncap) == 8);
static_assert(offsetof(IdentifyNamespace, nuse) == 16);
static_assert(offsetof(IdentifyNamespace, nsfeat) == 24);
static_assert(offsetof(IdentifyNamespace, nlbaf) == 25);
static_assert(offsetof(IdentifyNamespace, flbas) == 26);
static_assert(offsetof(IdentifyNamespace, nvmcap) == 48);
static_assert(offsetof(IdentifyNamespace, anagrpid) == 92);
static_assert(offsetof(IdentifyNamespace, nguid) == 104);
static_assert(offsetof(IdentifyNamespace, eui64) == 120);
static_assert(offsetof(IdentifyNamespace, lbaf) == 128);
static_assert(offsetof(IdentifyNamespace, vs) == 3712);

}  // namespace nvmf::proto

#endif  // NVMF_PROTO_NVME_H_
