// Subsystem.
#include "target/subsystem.h"

#include <cstdio>
#include <utility>

#include "common/log.h"
#include "target/command_processor.h"
#include "target/identify.h"

namespace nvmf::target {
namespace {

constexpr uint16_t kMaxCntlid = 0xFFEF;  // Base 2.0: FFF0h..FFFFh are reserved

std::string serial_from(const std::array<uint8_t, 16>& id) {
  char text[21];
  for (int i = 0; i < 10; ++i) std::snprintf(text + 2 * i, 3, "%02x", id[i]);
  return std::string(text, 20);
}

}  // namespace

Subsystem::Subsystem(SubsystemConfig config, Namespace& ns, StatsRegistry& registry)
    : config_(std::move(config)),
      ns_(ns),
      registry_(registry),
      nguid_(stable_id_from(config_.nqn)) {
  serial_ = config_.serial.empty() ? serial_from(nguid_) : config_.serial;
}

Subsystem::~Subsystem() {
  while (!controllers_.empty()) free_controller(controllers_.begin()->first, "target stopping");
}

Controller* Subsystem::create_controller(const std::string& hostnqn,
                                         const std::array<uint8_t, 16>& hostid, uint32_t kato_ms) {
  uint16_t cntlid = 1;
  for (const auto& [used, c] : controllers_) {
    if (used != cntlid) break;
    ++cntlid;
  }
  if (cntlid > kMaxCntlid) return nullptr;
  auto ctrl = std::make_unique<Controller>(cntlid, hostnqn, hostid, kato_ms, config_.max_io_queues,
                                           config_.io_queue_size, config_.version);
  Controller* raw = ctrl.get();
  controllers_[cntlid] = std::move(ctrl);
  registry_.add_controller(cntlid, hostnqn);
  NVMF_LOG(INFO, "target") << "controller " << cntlid << " created for " << hostnqn << " (kato "
                           << kato_ms << " ms)";
  return raw;
}

Controller* Subsystem::find_controller(uint16_t cntlid) const {
  auto it = controllers_.find(cntlid);
  return it == controllers_.end() ? nullptr : it->second.get();
}

void Subsystem::free_controller(uint16_t cntlid, std::string_view reason) {
  auto it = controllers_.find(cntlid);
  if (it == controllers_.end()) return;
  Controller& ctrl = *it->second;
  for (CommandProcessor* q : ctrl.io_queues()) q->controller_freed();
  if (CommandProcessor* admin = ctrl.queue(0)) admin->controller_freed();
  NVMF_LOG(INFO, "target") << "controller " << cntlid << " freed (" << reason << ")";
  registry_.remove_controller(cntlid);
  controllers_.erase(it);
}

}  // namespace nvmf::target
