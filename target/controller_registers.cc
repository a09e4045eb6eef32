// SPDX-License-Identifier: BSD-3-Clause
// ControllerRegisters: CAP/VS/CC/CSTS and the CC.EN / CC.SHN state machine.
#include "target/controller_registers.h"

#include "common/nvme_status.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"

namespace nvmf::target {
namespace {

constexpr uint64_t kCapTimeout = 15;  // CAP.TO in 500 ms units: 7.5 s, as nvmet

uint32_t cc_field(uint32_t cc, uint32_t mask, unsigned shift) { return (cc & mask) >> shift; }

// True when CC selects what this controller supports (nvmet_start_ctrl's checks).
bool cc_config_valid(uint32_t cc) {
  return cc_field(cc, proto::kCcIosqesMask, proto::kCcIosqesShift) == proto::kSqesLog2 &&
         cc_field(cc, proto::kCcIocqesMask, proto::kCcIocqesShift) == proto::kCqesLog2 &&
         (cc & proto::kCcCssMask) == 0 && (cc & proto::kCcMpsMask) == 0 &&
         (cc & proto::kCcAmsMask) == 0;
}

}  // namespace

const char* cc_transition_name(CcTransition t) {
  switch (t) {
    case CcTransition::kNone:
      return "none";
    case CcTransition::kEnabled:
      return "enabled";
    case CcTransition::kEnableFailed:
      return "enable failed (CSTS.CFS)";
    case CcTransition::kDisabled:
      return "disabled (reset)";
    case CcTransition::kShutdown:
      return "shutdown (CC.SHN)";
  }
  return "?";
}

ControllerRegisters::ControllerRegisters(uint32_t max_queue_entries, uint32_t version)
    : cap_(((max_queue_entries - 1) & proto::kCapMqesMask) | proto::kCapCqr |
           (kCapTimeout << proto::kCapToShift) | proto::kCapCssNvm),
      vs_(version) {}

bool ControllerRegisters::ready() const { return (csts_ & proto::kCstsRdy) != 0; }

uint16_t ControllerRegisters::property_get(uint8_t attrib, uint32_t offset, uint64_t* value) const {
  *value = 0;
  // ATTRIB.SIZE (bits 2:0): 0 = 4 bytes, 1 = 8 bytes, the rest reserved: Invalid Field, never
  // read as 4 bytes (Fabrics 1.1 §3.4.3.2).
  const uint8_t size = attrib & 0x7;
  if (size != proto::kPropertySize4 && size != proto::kPropertySize8) {
    return generic_status(proto::kScInvalidField);
  }
  bool eight = size == proto::kPropertySize8;
  if (eight && offset == proto::kPropCap) {
    *value = cap_;
  } else if (!eight && offset == proto::kPropVs) {
    *value = vs_;
  } else if (!eight && offset == proto::kPropCc) {
    *value = cc_;
  } else if (!eight && offset == proto::kPropCsts) {
    *value = csts_;
  } else {
    return generic_status(proto::kScInvalidField);
  }
  return kStatusSuccess;
}

uint16_t ControllerRegisters::property_set(uint8_t attrib, uint32_t offset, uint64_t value,
                                           CcTransition* transition) {
  CcTransition t = CcTransition::kNone;
  uint16_t status = kStatusSuccess;
  if ((attrib & 0x7) != proto::kPropertySize4 || offset != proto::kPropCc) {
    status = generic_status(proto::kScInvalidField);
  } else {
    t = write_cc(static_cast<uint32_t>(value));
  }
  if (transition != nullptr) *transition = t;
  return status;
}

CcTransition ControllerRegisters::write_cc(uint32_t value) {
  uint32_t old = cc_;
  cc_ = value;
  CcTransition t = CcTransition::kNone;
  bool was_en = (old & proto::kCcEn) != 0;
  bool now_en = (value & proto::kCcEn) != 0;
  if (now_en && !was_en) {
    bool ok = cc_config_valid(value);
    csts_ = ok ? proto::kCstsRdy : proto::kCstsCfs;
    t = ok ? CcTransition::kEnabled : CcTransition::kEnableFailed;
  }
  if (!now_en && was_en) {
    csts_ &= ~(proto::kCstsRdy | proto::kCstsCfs);
    t = CcTransition::kDisabled;
  }
  bool was_shn = (old & proto::kCcShnMask) != 0;
  bool now_shn = (value & proto::kCcShnMask) != 0;
  if (now_shn && !was_shn) {
    csts_ &= ~(proto::kCstsRdy | proto::kCstsShstMask);
    // Shutdown processing occurring until the owner has flushed: shutdown_complete().
    csts_ |= proto::kShstOccurring << proto::kCstsShstShift;
    t = CcTransition::kShutdown;
  }
  if (!now_shn && was_shn) csts_ &= ~proto::kCstsShstMask;
  return t;
}

void ControllerRegisters::shutdown_complete() {
  if ((cc_ & proto::kCcShnMask) == 0) return;  // SHN cleared meanwhile: nothing to report
  csts_ = (csts_ & ~proto::kCstsShstMask) | (proto::kShstComplete << proto::kCstsShstShift);
}

}  // namespace nvmf::target
