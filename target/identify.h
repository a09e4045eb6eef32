// SPDX-License-Identifier: BSD-3-Clause
// Builds the Identify data the target returns: Controller (CNS 01h), Namespace (CNS 00h),
// Active Namespace ID list (CNS 02h) and Namespace Identification Descriptors (CNS 03h).
#ifndef NVMF_TARGET_IDENTIFY_H_
#define NVMF_TARGET_IDENTIFY_H_

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "proto/nvme.h"

namespace nvmf::target {

// Inputs of Identify Controller. Every value is what the target really does.
struct IdentifyControllerParams {
  uint16_t cntlid = 0;
  uint32_t version = 0;               // VS, e.g. make_version(1, 3)
  uint8_t mdts = 0;                   // max transfer = 2^mdts * 4 KiB (CAP.MPSMIN 0)
  uint32_t in_capsule_data_size = 0;  // bytes per I/O capsule after the SQE; 0 = off
  uint16_t maxcmd = 0;                // outstanding commands per I/O queue
  uint8_t aerl = 3;                   // Async Event Requests held, 0-based
  uint16_t kas = 1;                   // keep alive granularity, 100 ms units (Linux refuses 0)
  bool volatile_write_cache = false;  // VWC bit 0: Flush does something (file backing)
  uint16_t oncs = 0;                  // optional NVM commands: kOncs* below
  uint32_t nn = 1;                    // NN and MNAN: the largest NSID a namespace may have
  uint32_t oaes = 0;                  // OAES: the notices it sends (proto::kAec* bits)
  bool ana = false;                   // ANA reporting: CMIC bit 3, ANATT, ANACAP, ANAGRPMAX
  std::string_view subnqn;
  std::string_view serial;    // SN, at most 20 ASCII characters
  std::string_view model;     // MN, at most 40
  std::string_view firmware;  // FR, at most 8
};

using proto::kOncsDatasetManagement;
using proto::kOncsWriteZeroes;
// DLFEAT (Identify Namespace byte 33, NVM CS 1.0 §4.1.5.1): bit 3 = the Deallocate bit of Write
// Zeroes is supported; bits 2:0 = 001b: deallocated blocks read as zeroes.
inline constexpr uint8_t kDlfeatDeallocateReadsZeroes = (1u << 3) | 0x1;

// Identify Controller (Base 2.0 §5.17.2.1; Fabrics fields 1792..): SN/MN/FR space padded,
// CMIC = multi-port | multi-controller (bits 0, 1), plus ANA reporting (bit 3) with `ana`, then
// ANATT kAnaTransitionTimeSeconds, ANACAP every state, ANAGRPMAX = NANAGRPID = kMaxAnaGroups (as
// nvmet),
// CNTRLTYPE 1 (I/O controller), SQES 0x66, CQES 0x44, NN = MNAN = `nn`, OAES = `oaes`, SGLS = bits
// 0 (SGLs supported) and 2 (Keyed SGL Data Block), plus bit 20 (offset addresses, in-capsule data)
// only when in_capsule_data_size > 0; IOCCSZ = (64 + in_capsule_data_size) / 16, IORCSZ 1, ICDOFF
// 0, MSDBD 1 (one descriptor per command, like nvmet), FCATT 0 (dynamic controller model).
void build_identify_controller(const IdentifyControllerParams& params,
                               proto::IdentifyController* out);

// Identify Namespace (NVM CS 1.0 §4.1.5.1): NSZE = NCAP = NUSE = `num_lbas`, one LBA format
// (NLBAF 0, FLBAS 0) with LBADS = `lba_shift`, NGUID = `nguid`, DLFEAT = `dlfeat`, NMIC bit 0
// (shared: every controller of the subsystem reaches it, so Linux native multipath merges the
// paths), ANAGRPID = `anagrpid` (0: no ANA reporting).
void build_identify_namespace(uint64_t num_lbas, uint8_t lba_shift,
                              const std::array<uint8_t, 16>& nguid, proto::IdentifyNamespace* out,
                              uint8_t dlfeat = 0, uint32_t anagrpid = 0);

// Active Namespace ID list (CNS 02h, Base 2.0 §5.17.2.2): the active nsids greater than `nsid`
// (CDW1 NSID), ascending, zero-terminated, in the 4096-byte `out` (at most 1024 entries).
// `active` must be ascending.
void build_active_ns_list(uint32_t nsid, std::span<const uint32_t> active,
                          std::span<uint8_t, proto::kIdentifyDataSize> out);

// Namespace Identification Descriptor list (CNS 03h, Base 2.0 §5.17.2.3) with one NGUID
// descriptor (NIDT 2, NIDL 16), then a UUID descriptor (NIDT 3, NIDL 16) when `uuid` is given,
// in the 4096-byte `out`.
void build_ns_id_descriptors(const std::array<uint8_t, 16>& nguid,
                             std::span<uint8_t, proto::kIdentifyDataSize> out,
                             const std::array<uint8_t, 16>* uuid = nullptr);

// A stable 16-byte identifier derived from `text` (FNV-1a based, not cryptographic): used for
// the namespace NGUID (from the subsystem NQN) and the serial number.
std::array<uint8_t, 16> stable_id_from(std::string_view text);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_IDENTIFY_H_
