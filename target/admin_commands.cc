// SPDX-License-Identifier: BSD-3-Clause
// CommandProcessor: Admin commands (Identify, Get Log Page, Set/Get Features, Keep Alive,
// Async Event Request, Abort). Base 2.0 §5.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "common/nvme_status.h"
#include "target/command_processor.h"
#include "target/identify.h"
#include "target/port.h"

namespace nvmf::target {
namespace {

constexpr uint16_t kInvalidField = generic_status(proto::kScInvalidField);
constexpr uint16_t kInvalidNamespace = generic_status(proto::kScInvalidNamespaceOrFormat);

// Identify CNS 06h: I/O Command Set specific Identify Controller, CSI in CDW11 31:24 (Base 2.0
// figure "CNS Values"; NVM CS 1.0 §4.1.5.3). The Linux host asks for it (CSI 0) and tolerates
// an error, but nvmet answers it.
constexpr uint8_t kCnsIoCommandSetController = 0x06;
constexpr uint8_t kLogErrorInformation = 0x01;  // Base 2.0 §5.16.1.2
constexpr uint8_t kLogSmartHealth = 0x02;       // §5.16.1.3
constexpr uint8_t kLogFirmwareSlot = 0x03;      // §5.16.1.4
// Changed Namespace List (§5.16.1.5): the namespaces added, removed or resized since it was
// last read (Controller::take_changed_namespaces), up to 1024 NSIDs; zeroes after the last.
constexpr uint8_t kLogChangedNamespaceList = proto::kLogChangedNamespaceList;
constexpr uint32_t kRetainAsynchronousEvent = 1u << 15;  // Get Log Page CDW10 bit 15 (RAE)

}  // namespace

NextStep CommandProcessor::begin_admin(Request& r) {
  if (subsystem_->config().discovery) return begin_discovery(r);
  switch (r.sqe->opcode) {
    case proto::kAdminIdentify:
      return identify(r);
    case proto::kAdminGetLogPage:
      return get_log_page(r);
    case proto::kAdminSetFeatures:
      return set_features(r);
    case proto::kAdminGetFeatures:
      return get_features(r);
    case proto::kAdminAsyncEventRequest:
      return async_event_request(r);
    case proto::kAdminKeepAlive:
    case proto::kAdminAbort: {
      if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
      if (uint16_t st = check_data_length(r.sgl, 0); st != kStatusSuccess) {
        return complete(r, st);
      }
      if (r.sqe->opcode == proto::kAdminKeepAlive) {
        controller_->keep_alive(std::chrono::steady_clock::now());
      }
      // Abort: DW0 bit 0 set = command not aborted (nvmet does the same).
      r.cqe.dw0 = r.sqe->opcode == proto::kAdminAbort ? 1 : 0;
      return complete(r, kStatusSuccess);
    }
    default:
      return complete(r, generic_status(proto::kScInvalidOpcode));
  }
}

NextStep CommandProcessor::identify(Request& r) {
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  if (uint16_t st = check_data_length(r.sgl, proto::kIdentifyDataSize); st != kStatusSuccess) {
    return complete(r, st);
  }
  if (r.buffer.size() < proto::kIdentifyDataSize) {
    return complete(r, generic_status(proto::kScInternalError));
  }
  std::span<uint8_t, proto::kIdentifyDataSize> out(r.buffer.data(), proto::kIdentifyDataSize);
  uint8_t cns = static_cast<uint8_t>(r.sqe->cdw10 & 0xFF);
  uint32_t nsid = r.sqe->nsid;
  const SubsystemConfig& cfg = subsystem_->config();
  switch (cns) {
    case proto::kCnsController: {
      IdentifyControllerParams p;
      p.cntlid = controller_->cntlid();
      p.version = cfg.version;
      p.mdts = cfg.mdts;
      p.in_capsule_data_size =
          port() != nullptr ? port()->in_capsule_data_size() : subsystem_->in_capsule_data_size();
      p.maxcmd = static_cast<uint16_t>(cfg.io_queue_size);
      p.aerl = cfg.aerl;
      p.kas = cfg.kas;
      // VWC: what is true of the namespaces (a file or device behind a page cache or a
      // write-back device cache); Flush is an fdatasync there. Write Zeroes and Dataset
      // Management (deallocate) work on every backing (io_commands.cc).
      for (const SubsystemNamespace& n : subsystem_->namespaces()) {
        p.volatile_write_cache = p.volatile_write_cache || n.ns->volatile_write_cache();
      }
      p.oncs = kOncsDatasetManagement | kOncsWriteZeroes;
      p.nn = subsystem_->max_nsid();
      p.oaes = proto::kAecNamespaceAttribute | proto::kAecAnaChange;
      p.ana = true;
      p.subnqn = cfg.nqn;
      p.serial = subsystem_->serial();
      p.model = cfg.model;
      p.firmware = cfg.firmware;
      build_identify_controller(p, reinterpret_cast<proto::IdentifyController*>(out.data()));
      break;
    }
    case proto::kCnsNamespace: {
      const SubsystemNamespace* n = subsystem_->find_namespace(nsid);
      if (n == nullptr) return complete(r, kInvalidNamespace);
      build_identify_namespace(n->ns->num_lbas(), n->ns->lba_shift(), n->nguid,
                               reinterpret_cast<proto::IdentifyNamespace*>(out.data()),
                               kDlfeatDeallocateReadsZeroes, n->anagrpid);
      break;
    }
    case proto::kCnsActiveNamespaceList: {
      if (nsid >= 0xFFFFFFFE) return complete(r, kInvalidNamespace);  // Base 2.0 §5.17.2.2
      std::vector<uint32_t> active;
      for (const SubsystemNamespace& n : subsystem_->namespaces()) active.push_back(n.nsid);
      build_active_ns_list(nsid, active, out);
      break;
    }
    case proto::kCnsNamespaceIdDescriptorList: {
      const SubsystemNamespace* n = subsystem_->find_namespace(nsid);
      if (n == nullptr) return complete(r, kInvalidNamespace);
      build_ns_id_descriptors(n->nguid, out, n->uuid ? &*n->uuid : nullptr);
      break;
    }
    case kCnsIoCommandSetController:
      // NVM command set (CSI 0): all-zero = no extra limits (VSL, WZSL, DMRSL), as nvmet.
      if ((r.sqe->cdw11 >> 24) != 0) return complete(r, kInvalidField);
      std::fill(out.begin(), out.end(), 0);
      break;
    default:
      return complete(r, kInvalidField);
  }
  return respond_with_data(r, proto::kIdentifyDataSize);
}

NextStep CommandProcessor::get_log_page(Request& r) {
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  const proto::Sqe& s = *r.sqe;
  uint8_t lid = static_cast<uint8_t>(s.cdw10 & 0xFF);
  // NUMD (0-based dwords): NUMDU CDW11 15:0, NUMDL CDW10 31:16. Base 2.0 §5.16.
  uint64_t numd = ((static_cast<uint64_t>(s.cdw11 & 0xFFFF) << 16) | (s.cdw10 >> 16)) + 1;
  uint64_t bytes = numd * 4;
  if (uint16_t st = check_data_length(r.sgl, bytes); st != kStatusSuccess) return complete(r, st);
  if (bytes > r.buffer.size()) return complete(r, kInvalidField);
  uint64_t log_bytes = 0;
  switch (lid) {
    case kLogErrorInformation:  // ELPE 0: one 64-byte entry, no errors recorded (all zero)
      log_bytes = 64;
      break;
    case kLogSmartHealth:  // nothing to report
    case kLogFirmwareSlot:
      log_bytes = 512;
      break;
    case kLogChangedNamespaceList:  // 1024 NSIDs
      log_bytes = 4096;
      break;
    case proto::kLogAna:
      return ana_log_page(r, bytes);
    default:  // Base 2.0 §5.16: an unsupported or reserved LID is Invalid Log Page
      return complete(r, make_status(proto::kSctCommandSpecific, proto::kScInvalidLogPage, true));
  }
  // LPO (CDW13:CDW12, bytes) must be dword aligned and not beyond the log: Invalid Field
  // (Base 2.0 §5.16). Every other log here is all zero, so any window of it is zeros.
  uint64_t lpo = (static_cast<uint64_t>(s.cdw13) << 32) | s.cdw12;
  if ((lpo & 3) != 0 || lpo > log_bytes) return complete(r, kInvalidField);
  std::memset(r.buffer.data(), 0, bytes);
  if (lid == kLogChangedNamespaceList) {
    // A read from the start that holds the whole list takes it: the list starts again empty
    // (as nvmet's, which only serves whole reads); a partial window leaves it for a whole read.
    const std::vector<uint32_t>& changed = controller_->changed_namespaces();
    for (uint64_t i = lpo / 4; i < changed.size() && (i - lpo / 4) * 4 < bytes; ++i) {
      std::memcpy(r.buffer.data() + (i - lpo / 4) * 4, &changed[i], 4);
    }
    if (lpo == 0 && bytes >= changed.size() * 4) (void)controller_->take_changed_namespaces();
    if ((s.cdw10 & kRetainAsynchronousEvent) == 0) controller_->log_page_read(lid);
  }
  return respond_with_data(r, static_cast<uint32_t>(bytes));
}

NextStep CommandProcessor::ana_log_page(Request& r, uint64_t bytes) {
  // LSP (CDW10 bits 14:8) bit 0: Return Groups Only. Any other LSP bit is Invalid Field.
  const proto::Sqe& s = *r.sqe;
  const uint32_t lsp = s.cdw10 & (0x7Fu << 8);
  if ((lsp & ~proto::kAnaLogRgo) != 0) return complete(r, kInvalidField);
  static const AnaStates kAllOptimized;
  const std::vector<uint8_t> log =
      build_ana_log(ana_ != nullptr ? *ana_ : kAllOptimized, subsystem_->namespaces(),
                    (lsp & proto::kAnaLogRgo) != 0);
  // LPO (bytes) dword aligned and within the log, as for every log page; the window is copied,
  // zeros past the end.
  const uint64_t lpo = (static_cast<uint64_t>(s.cdw13) << 32) | s.cdw12;
  if ((lpo & 3) != 0 || lpo > log.size()) return complete(r, kInvalidField);
  std::memset(r.buffer.data(), 0, bytes);
  std::memcpy(r.buffer.data(), log.data() + lpo, std::min<uint64_t>(bytes, log.size() - lpo));
  if ((s.cdw10 & kRetainAsynchronousEvent) == 0) controller_->log_page_read(proto::kLogAna);
  return respond_with_data(r, static_cast<uint32_t>(bytes));
}

NextStep CommandProcessor::set_features(Request& r) {
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  if (uint16_t st = check_data_length(r.sgl, 0); st != kStatusSuccess) return complete(r, st);
  const proto::Sqe& s = *r.sqe;
  if ((s.cdw10 & (1u << 31)) != 0) {  // SV: nothing is saveable
    return complete(r,
                    make_status(proto::kSctCommandSpecific, proto::kScFeatureIdNotSaveable, true));
  }
  switch (static_cast<uint8_t>(s.cdw10 & 0xFF)) {
    case proto::kFeatureNumberOfQueues: {
      // Only before any I/O queue exists (Base 2.0 §5.27.1.5): Command Sequence Error after.
      if (!controller_->io_queues().empty()) {
        return complete(r, generic_status(proto::kScCommandSequenceError));
      }
      uint16_t nsqr = static_cast<uint16_t>(s.cdw11 & 0xFFFF);
      uint16_t ncqr = static_cast<uint16_t>(s.cdw11 >> 16);
      if (nsqr == 0xFFFF || ncqr == 0xFFFF) return complete(r, kInvalidField);
      r.cqe.dw0 = controller_->grant_queues(nsqr, ncqr);
      return complete(r, kStatusSuccess);
    }
    case proto::kFeatureKeepAliveTimer:
      controller_->set_kato_ms(s.cdw11, std::chrono::steady_clock::now());
      return complete(r, kStatusSuccess);
    case proto::kFeatureAsyncEventConfig:
      controller_->set_async_event_config(s.cdw11);
      return complete(r, kStatusSuccess);
    default:
      return complete(r, kInvalidField);
  }
}

NextStep CommandProcessor::get_features(Request& r) {
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  if (uint16_t st = check_data_length(r.sgl, 0); st != kStatusSuccess) return complete(r, st);
  switch (static_cast<uint8_t>(r.sqe->cdw10 & 0xFF)) {
    case proto::kFeatureNumberOfQueues:
      r.cqe.dw0 = controller_->granted_queues_dw0();
      break;
    case proto::kFeatureKeepAliveTimer:
      r.cqe.dw0 = controller_->kato_ms();
      break;
    case proto::kFeatureAsyncEventConfig:
      r.cqe.dw0 = controller_->async_event_config();
      break;
    default:
      return complete(r, kInvalidField);
  }
  return complete(r, kStatusSuccess);
}

NextStep CommandProcessor::async_event_request(Request& r) {
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  if (uint16_t st = check_data_length(r.sgl, 0); st != kStatusSuccess) return complete(r, st);
  // AERL + 1 at most (and never beyond the room reserved when the queue was made).
  if (held_aers_.size() > subsystem_->config().aerl || held_aers_.size() >= held_aers_.capacity()) {
    return complete(
        r, make_status(proto::kSctCommandSpecific, proto::kScAsyncEventRequestLimitExceeded, true));
  }
  // An event already queued completes it at once; otherwise it is held until an event, a
  // controller reset or shutdown, or the queue going away.
  if (std::optional<uint32_t> event = controller_->take_event()) {
    r.cqe.dw0 = *event;
    log_event_sent(*event);
    return complete(r, kStatusSuccess);
  }
  held_aers_.push_back(&r);
  r.cqe.sqhd = sqhd_disabled_ ? proto::kSqhdDisabled : sq_head_;
  return NextStep::kHold;
}

}  // namespace nvmf::target
