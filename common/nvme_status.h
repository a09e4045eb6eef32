// SPDX-License-Identifier: BSD-3-Clause
// Composes, takes apart and names the 16-bit NVMe CQE status field.
//
// The field is CQE DW3 bits 31:16 seen as a 16-bit value: P bit 0, SC 8:1, SCT 11:9, CRD 13:12,
// M 14, DNR 15 (NVMe Base 2.0 §4.2.3 "Status Field"). Linux's NVME_SC_* constants are this field
// shifted right by one; our values always keep the phase bit position.
#ifndef NVMF_COMMON_NVME_STATUS_H_
#define NVMF_COMMON_NVME_STATUS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "proto/nvme.h"

namespace nvmf {

// The status field for (SCT, SC), with DNR when `dnr`, phase bit 0, CRD 0, M 0.
// make_status(kSctGeneric, kScSuccess) == 0.
constexpr uint16_t make_status(uint8_t sct, uint8_t sc, bool dnr = false) {
  return static_cast<uint16_t>(((sct & 0x7u) << proto::kStatusSctShift) |
                               (static_cast<uint16_t>(sc) << proto::kStatusScShift) |
                               (dnr ? proto::kStatusDnr : 0u));
}

// Shorthand for the generic (SCT 0) statuses the target answers most.
constexpr uint16_t generic_status(uint8_t sc, bool dnr = true) {
  return make_status(proto::kSctGeneric, sc, dnr);
}

inline constexpr uint16_t kStatusSuccess = 0;

// Fields of a 16-bit CQE status field (CQE DW3 bits 31:16; Base 2.0 §4.6.1): bit 0 the phase
// tag (P), bits 8:1 the Status Code (SC), 11:9 the Status Code Type (SCT), 13:12 the Command
// Retry Delay (CRD), bit 14 More (M), bit 15 Do Not Retry (DNR).
constexpr uint8_t status_sc(uint16_t status) {
  return static_cast<uint8_t>((status & proto::kStatusScMask) >> proto::kStatusScShift);
}
constexpr uint8_t status_sct(uint16_t status) {
  return static_cast<uint8_t>((status & proto::kStatusSctMask) >> proto::kStatusSctShift);
}
constexpr uint8_t status_crd(uint16_t status) {
  return static_cast<uint8_t>((status & proto::kStatusCrdMask) >> proto::kStatusCrdShift);
}
constexpr bool status_dnr(uint16_t status) { return (status & proto::kStatusDnr) != 0; }
constexpr bool status_more(uint16_t status) { return (status & proto::kStatusMore) != 0; }
constexpr bool status_phase(uint16_t status) { return (status & proto::kStatusPhase) != 0; }
// The field with the phase bit cleared, for comparisons against make_status() values.
constexpr uint16_t status_without_phase(uint16_t status) {
  return static_cast<uint16_t>(status & ~proto::kStatusPhase);
}
// True when SCT and SC are both 0 (the command succeeded); ignores P, CRD, M and DNR.
constexpr bool status_is_success(uint16_t status) {
  return (status & (proto::kStatusScMask | proto::kStatusSctMask)) == 0;
}

// The spec name of (SCT, SC), e.g. "LBA Out of Range"; "Unknown" when we have no name for it.
// Command-specific SC 80h..84h are named as Fabrics Connect statuses (the only command-specific
// range this project answers in that range).
std::string_view status_code_text(uint8_t sct, uint8_t sc);

// A human description of a status field, e.g.
// "LBA Out of Range (SCT 0x0 SC 0x80, DNR)" or "Success (SCT 0x0 SC 0x00)".
// Flags appended after the codes when set: DNR, M, CRD n. The phase bit is ignored.
std::string status_name(uint16_t status);

}  // namespace nvmf

#endif  // NVMF_COMMON_NVME_STATUS_H_
