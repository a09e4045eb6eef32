// SPDX-License-Identifier: BSD-3-Clause
// CommandProcessor: the discovery controller's admin commands (nvmet_parse_discovery_cmd):
// Identify (CNS 01h only), Get Log Page (Discovery Log, LID 70h), Set/Get Features (KATO and
// Asynchronous Event Configuration only), Keep Alive and Asynchronous Event Request.
#include <chrono>
#include <cstring>
#include <span>
#include <vector>

#include "common/nvme_status.h"
#include "proto/discovery.h"
#include "target/command_processor.h"
#include "target/discovery.h"
#include "target/port.h"

namespace nvmf::target {
namespace {

constexpr uint16_t kInvalidOpcode = generic_status(proto::kScInvalidOpcode);
constexpr uint16_t kInvalidField = generic_status(proto::kScInvalidField);

bool discovery_feature(uint32_t cdw10) {
  uint8_t fid = static_cast<uint8_t>(cdw10 & 0xFF);
  return fid == proto::kFeatureKeepAliveTimer || fid == proto::kFeatureAsyncEventConfig;
}

}  // namespace

NextStep CommandProcessor::begin_discovery(Request& r) {
  switch (r.sqe->opcode) {
    case proto::kAdminIdentify:
      return discovery_identify(r);
    case proto::kAdminGetLogPage:
      return discovery_log_page(r);
    case proto::kAdminSetFeatures:
      if (!discovery_feature(r.sqe->cdw10)) return complete(r, kInvalidField);
      return set_features(r);
    case proto::kAdminGetFeatures:
      if (!discovery_feature(r.sqe->cdw10)) return complete(r, kInvalidField);
      return get_features(r);
    case proto::kAdminAsyncEventRequest:
      return async_event_request(r);
    case proto::kAdminKeepAlive: {
      if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
      if (uint16_t st = check_data_length(r.sgl, 0); st != kStatusSuccess) return complete(r, st);
      controller_->keep_alive(std::chrono::steady_clock::now());
      return complete(r, kStatusSuccess);
    }
    default:
      return complete(r, kInvalidOpcode);  // nvmet: any other opcode is Invalid Opcode, DNR
  }
}

NextStep CommandProcessor::discovery_identify(Request& r) {
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  if (uint16_t st = check_data_length(r.sgl, proto::kIdentifyDataSize); st != kStatusSuccess) {
    return complete(r, st);
  }
  if (r.buffer.size() < proto::kIdentifyDataSize) {
    return complete(r, generic_status(proto::kScInternalError));
  }
  // nvmet_execute_disc_identify answers any CNS but 01h with Invalid Opcode, DNR.
  if ((r.sqe->cdw10 & 0xFF) != proto::kCnsController) return complete(r, kInvalidOpcode);
  const SubsystemConfig& cfg = subsystem_->config();
  DiscoveryIdentifyParams p;
  p.cntlid = controller_->cntlid();
  p.version = cfg.version;
  p.kas = cfg.kas;
  p.maxcmd = static_cast<uint16_t>(cfg.admin_queue_size);
  p.aerl = cfg.aerl;
  p.in_capsule =
      (port() != nullptr ? port()->in_capsule_data_size() : subsystem_->in_capsule_data_size()) > 0;
  p.serial = subsystem_->serial();
  p.model = cfg.model;
  p.firmware = cfg.firmware;
  build_discovery_identify_controller(
      p, reinterpret_cast<proto::IdentifyController*>(r.buffer.data()));
  return respond_with_data(r, proto::kIdentifyDataSize);
}

NextStep CommandProcessor::discovery_log_page(Request& r) {
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  const proto::Sqe& s = *r.sqe;
  // NUMD (0-based dwords): NUMDU CDW11 15:0, NUMDL CDW10 31:16; LPOL CDW12, LPOU CDW13.
  // Base 2.0 §5.16.
  uint64_t numd = ((static_cast<uint64_t>(s.cdw11 & 0xFFFF) << 16) | (s.cdw10 >> 16)) + 1;
  uint64_t bytes = numd * 4;
  uint64_t offset = (static_cast<uint64_t>(s.cdw13) << 32) | s.cdw12;
  if (uint16_t st = check_data_length(r.sgl, bytes); st != kStatusSuccess) return complete(r, st);
  if (bytes > r.buffer.size()) return complete(r, kInvalidField);
  // nvmet_execute_disc_get_log_page: another LID is Invalid Opcode, DNR.
  if ((s.cdw10 & 0xFF) != proto::kLogDiscovery) return complete(r, kInvalidOpcode);
  Port* port = this->port();
  std::vector<uint8_t> log =
      port != nullptr
          ? port->discovery_log(controller_->hostnqn())
          : build_discovery_log(DiscoveryAddress{}, {}, 0,
                                static_cast<uint16_t>(subsystem_->config().admin_queue_size));
  std::span<uint8_t> out(r.buffer.data(), static_cast<size_t>(bytes));
  if (uint16_t st = copy_log_window(log, offset, out); st != kStatusSuccess) {
    return complete(r, st);
  }
  // Read without Retain Asynchronous Event (CDW10 bit 15): its change notices may come again.
  if ((s.cdw10 & (1u << 15)) == 0) controller_->log_page_read(proto::kLogDiscovery);
  return respond_with_data(r, static_cast<uint32_t>(bytes));
}

}  // namespace nvmf::target
