// SPDX-License-Identifier: BSD-3-Clause
// The controller properties a Fabrics host reads and writes with Property Get/Set: CAP, VS, CC,
// CSTS, and the CC state machine (enable, reset, shutdown).
#ifndef NVMF_TARGET_CONTROLLER_REGISTERS_H_
#define NVMF_TARGET_CONTROLLER_REGISTERS_H_

#include <atomic>
#include <cstdint>

namespace nvmf::target {

// What a Property Set of CC changed, for the controller's one-line state logs.
enum class CcTransition : uint8_t {
  kNone,
  kEnabled,       // CC.EN 0 -> 1 with a valid configuration: CSTS.RDY set
  kEnableFailed,  // CC.EN 0 -> 1 with a bad IOSQES/IOCQES/CSS/MPS/AMS: CSTS.CFS set
  kDisabled,      // CC.EN 1 -> 0: controller reset, CSTS.RDY cleared
  kShutdown,      // CC.SHN set: CSTS.SHST = shutdown complete
};

// "enabled", "enable failed (CSTS.CFS)", ... for logs.
const char* cc_transition_name(CcTransition t);

// Properties of one controller. Base 2.0 §3.1.3 ("Offset 0h: CAP" .. "Offset 1Ch: CSTS"); the
// Fabrics access rules (sizes, which offsets are writable) follow Linux nvmet
// (fabrics-cmd.c nvmet_execute_prop_get/set, core.c nvmet_update_cc/nvmet_start_ctrl).
class ControllerRegisters {
 public:
  // `max_queue_entries`: the largest I/O queue in entries (CAP.MQES = this - 1, >= 2).
  // `version`: VS, e.g. proto::make_version(1, 3).
  ControllerRegisters(uint32_t max_queue_entries, uint32_t version);

  // CAP: MQES, CQR = 1, TO = 15 (7.5 s), CSS = NVM only, MPSMIN = MPSMAX = 0 (4 KiB pages),
  // DSTRD 0, AMS 0.
  uint64_t cap() const { return cap_; }
  uint32_t vs() const { return vs_; }
  uint32_t cc() const { return cc_; }
  uint32_t csts() const { return csts_; }
  bool ready() const;  // CSTS.RDY

  // Property Get. `attrib` bits 2:0 select the size (0: 4 bytes, 1: 8 bytes). 8 bytes: CAP only;
  // 4 bytes: VS, CC, CSTS. Anything else: Invalid Field in Command with DNR. Returns the CQE
  // status field (0 on success) and stores the value in `*value`.
  uint16_t property_get(uint8_t attrib, uint32_t offset, uint64_t* value) const;

  // Property Set. Only a 4-byte write of CC is allowed (Invalid Field with DNR otherwise).
  // CC writes, as nvmet:
  //  - EN 0 -> 1: IOSQES must be 6, IOCQES 4, CSS 0 (NVM), MPS 0 and AMS 0; then CSTS.RDY,
  //    otherwise CSTS.CFS (the write itself succeeds: the failure is in CSTS);
  //  - EN 1 -> 0: reset, CSTS.RDY and CSTS.CFS cleared (CC keeps the written value);
  //  - SHN 0 -> non-zero: CSTS.RDY cleared and CSTS.SHST = shutdown processing occurring
  //    (01b) until shutdown_complete(); SHN back to 0 clears SHST.
  // Returns the status field; `*transition` (optional) tells what happened.
  uint16_t property_set(uint8_t attrib, uint32_t offset, uint64_t value,
                        CcTransition* transition = nullptr);
  // The shutdown asked by CC.SHN is done (written data flushed): CSTS.SHST = shutdown complete
  // (10b). Nothing when SHN was cleared meanwhile.
  void shutdown_complete();

 private:
  CcTransition write_cc(uint32_t value);

  uint64_t cap_;
  uint32_t vs_;
  // Atomic: written by the admin queue's poll group (under the control lock), read without it
  // by the I/O queues' groups (Controller::enabled() on every NVM command).
  std::atomic<uint32_t> cc_{0};
  std::atomic<uint32_t> csts_{0};
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_CONTROLLER_REGISTERS_H_
