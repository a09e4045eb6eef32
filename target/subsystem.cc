// SPDX-License-Identifier: BSD-3-Clause
// Subsystem.
#include "target/subsystem.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <utility>

#include "common/log.h"
#include "target/command_processor.h"
#include "target/identify.h"
#include "target/log_limiter.h"
#include "target/port.h"

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
    : Subsystem(config, std::vector<SubsystemNamespace>{{1, &ns, {}, config.uuid}}, registry) {}

Subsystem::Subsystem(SubsystemConfig config, std::vector<SubsystemNamespace> namespaces,
                     StatsRegistry& registry)
    : config_(std::move(config)),
      current_(std::make_unique<NamespaceTable>()),
      table_(current_.get()),
      registry_(registry),
      nguid_(config_.nguid ? *config_.nguid : stable_id_from(config_.nqn)) {
  serial_ = config_.serial.empty() ? serial_from(stable_id_from(config_.nqn)) : config_.serial;
  std::sort(namespaces.begin(), namespaces.end(),
            [](const auto& a, const auto& b) { return a.nsid < b.nsid; });
  for (SubsystemNamespace& n : namespaces) {
    if (n.nguid == std::array<uint8_t, 16>{}) n.nguid = derived_nguid(n.nsid);
    max_nsid_ = std::max(max_nsid_, n.nsid);
  }
  if (!namespaces.empty()) nguid_ = namespaces.front().nguid;
  current_->namespaces = std::move(namespaces);
}

Subsystem::Subsystem(SubsystemConfig config, StatsRegistry& registry)
    : config_(std::move(config)),
      current_(std::make_unique<NamespaceTable>()),
      table_(current_.get()),
      registry_(registry),
      nguid_(stable_id_from(config_.nqn)) {
  serial_ = config_.serial.empty() ? serial_from(nguid_) : config_.serial;
}

std::array<uint8_t, 16> Subsystem::derived_nguid(uint32_t nsid) const {
  // nsid 1: from the NQN alone (or the configured subsystem NGUID), as with one namespace.
  if (nsid == 1) return config_.nguid ? *config_.nguid : stable_id_from(config_.nqn);
  return stable_id_from(config_.nqn + "/" + std::to_string(nsid));
}

const SubsystemNamespace* Subsystem::find_namespace(uint32_t nsid) const {
  for (const SubsystemNamespace& n : namespaces()) {
    if (n.nsid == nsid) return &n;
  }
  return nullptr;
}

const SubsystemNamespace* Subsystem::namespace_after(uint32_t nsid) const {
  for (const SubsystemNamespace& n : namespaces()) {
    if (n.nsid > nsid) return &n;
  }
  return nullptr;
}

void Subsystem::publish(std::vector<SubsystemNamespace> namespaces) {
  auto next = std::make_unique<NamespaceTable>();
  next->namespaces = std::move(namespaces);
  table_.store(next.get(), std::memory_order_release);
  retired_.push_back(std::move(current_));
  current_ = std::move(next);
}

void Subsystem::retire_tables() { retired_.clear(); }

void Subsystem::tell_controllers(uint32_t nsid) {
  for (const auto& [cntlid, ctrl] : controllers_) ctrl->note_namespace_changed(nsid);
  post_event(proto::aen_dw0(proto::kAenTypeNotice, proto::kAenInfoNamespaceAttributeChanged,
                            proto::kLogChangedNamespaceList),
             proto::kAecNamespaceAttribute);
}

Status Subsystem::check_new_nsid(uint32_t nsid) const {
  if (config_.discovery) {
    return Status::invalid_argument("the discovery subsystem has no namespaces");
  }
  if (nsid == 0) nsid = lowest_free_nsid();
  if (nsid > max_nsid_ || nsid == 0xFFFFFFFF) {
    return Status::invalid_argument("NSID " + std::to_string(nsid) + " is above " +
                                    std::to_string(max_nsid_) +
                                    ", the largest this subsystem reports (NN)");
  }
  if (find_namespace(nsid) != nullptr) {
    return Status::invalid_argument("NSID " + std::to_string(nsid) + " is in use");
  }
  return ok_status();
}

uint32_t Subsystem::lowest_free_nsid() const {
  uint32_t nsid = 1;
  for (const SubsystemNamespace& e : current_->namespaces) {
    if (e.nsid == nsid) ++nsid;  // ascending: the first gap
  }
  return nsid;
}

Result<uint32_t> Subsystem::add_namespace(SubsystemNamespace n) {
  NVMF_RETURN_IF_ERROR(check_new_nsid(n.nsid));
  std::vector<SubsystemNamespace> next = current_->namespaces;
  if (n.nsid == 0) n.nsid = lowest_free_nsid();
  if (n.nguid == std::array<uint8_t, 16>{}) n.nguid = derived_nguid(n.nsid);
  const uint32_t nsid = n.nsid;
  next.push_back(std::move(n));
  std::sort(next.begin(), next.end(), [](const auto& a, const auto& b) { return a.nsid < b.nsid; });
  publish(std::move(next));
  tell_controllers(nsid);
  return nsid;
}

Result<Namespace*> Subsystem::remove_namespace(uint32_t nsid) {
  std::vector<SubsystemNamespace> next = current_->namespaces;
  auto it = std::find_if(next.begin(), next.end(), [&](const auto& n) { return n.nsid == nsid; });
  if (it == next.end()) return Status::not_found("NSID " + std::to_string(nsid) + " is not active");
  Namespace* ns = it->ns;
  next.erase(it);
  publish(std::move(next));
  tell_controllers(nsid);
  return ns;
}

void Subsystem::namespace_changed(uint32_t nsid) { tell_controllers(nsid); }

Status Subsystem::set_namespace_group(uint32_t nsid, uint32_t grpid) {
  if (grpid == 0 || grpid > kMaxAnaGroups) {
    return Status::invalid_argument("ANA group " + std::to_string(grpid) + " is not in 1.." +
                                    std::to_string(kMaxAnaGroups));
  }
  std::vector<SubsystemNamespace> next = current_->namespaces;
  auto it = std::find_if(next.begin(), next.end(), [&](const auto& n) { return n.nsid == nsid; });
  if (it == next.end()) return Status::not_found("NSID " + std::to_string(nsid) + " is not active");
  it->anagrpid = grpid;
  publish(std::move(next));
  return ok_status();
}

bool Subsystem::host_allowed(std::string_view hostnqn) const {
  if (config_.discovery || config_.allow_any_host) return true;
  for (const auto& h : config_.allowed_hosts) {
    if (h == hostnqn) return true;
  }
  return false;
}

const HostKey* Subsystem::host_key(std::string_view hostnqn) const {
  if (config_.discovery || !config_.host_keys) return nullptr;
  auto it = config_.host_keys->find(hostnqn);
  return it == config_.host_keys->end() ? nullptr : &it->second;
}

bool Subsystem::add_host(const std::string& hostnqn) {
  for (const auto& h : config_.allowed_hosts) {
    if (h == hostnqn) return false;
  }
  config_.allowed_hosts.push_back(hostnqn);
  return true;
}

bool Subsystem::remove_host(const std::string& hostnqn, std::string_view reason) {
  auto& hosts = config_.allowed_hosts;
  auto it = std::find(hosts.begin(), hosts.end(), hostnqn);
  if (it == hosts.end()) return false;
  hosts.erase(it);
  disconnect_host(hostnqn, reason);
  return true;
}

size_t Subsystem::post_event(uint32_t dw0, uint32_t aec_bit, const Port* port) {
  size_t queued = 0;
  for (const auto& [cntlid, ctrl] : controllers_) {
    if (port != nullptr) {
      const CommandProcessor* admin = ctrl->queue(0);
      if (admin == nullptr || admin->port() != port) continue;
    }
    if (!ctrl->post_event(dw0, aec_bit)) continue;
    ++queued;
    if (CommandProcessor* admin = ctrl->queue(0)) admin->request_event_delivery();
  }
  return queued;
}

size_t Subsystem::disconnect_host(std::string_view hostnqn, std::string_view reason) {
  return disconnect_where([&](const Controller& c) { return c.hostnqn() == hostnqn; }, reason);
}

size_t Subsystem::disconnect_port(const Port* port, std::string_view reason) {
  return disconnect_where(
      [&](const Controller& c) {
        if (port == nullptr) return true;
        const CommandProcessor* admin = c.queue(0);
        if (admin != nullptr && admin->port() == port) return true;
        // An I/O queue that came in on the port (its admin queue on another) goes too: nothing
        // of the subsystem stays reachable through a port that no longer serves it.
        for (const CommandProcessor* q : c.io_queues()) {
          if (q->port() == port) return true;
        }
        return false;
      },
      reason);
}

size_t Subsystem::disconnect_where(const std::function<bool(const Controller&)>& match,
                                   std::string_view reason) {
  std::vector<uint16_t> cntlids;
  for (const auto& [cntlid, ctrl] : controllers_) {
    if (match(*ctrl)) cntlids.push_back(cntlid);
  }
  for (uint16_t cntlid : cntlids) {
    CommandProcessor* admin = controllers_.at(cntlid)->queue(0);
    free_controller(cntlid, reason);  // disconnects its I/O queues
    // The admin queue too: the host's controller is gone (queues are torn down under the
    // control lock, held here, so it still exists).
    if (admin != nullptr) admin->disconnect(reason);
  }
  return cntlids.size();
}

uint32_t Subsystem::in_capsule_data_size() const {
  return port_ != nullptr ? port_->in_capsule_data_size() : in_capsule_data_size_;
}

void Subsystem::set_in_capsule_data_size(uint32_t bytes) {
  if (port_ != nullptr) port_->set_in_capsule_data_size(bytes);
  in_capsule_data_size_ = bytes;
}

Subsystem::~Subsystem() {
  while (!controllers_.empty()) free_controller(controllers_.begin()->first, "target stopping");
}

Controller* Subsystem::create_controller(const std::string& hostnqn,
                                         const std::array<uint8_t, 16>& hostid, uint32_t kato_ms,
                                         std::string peer_host) {
  uint32_t last = std::min<uint32_t>(config_.cntlid_max, kMaxCntlid);
  uint32_t cntlid = config_.cntlid_min == 0 ? 1 : config_.cntlid_min;
  for (; cntlid <= last; ++cntlid) {
    auto id = static_cast<uint16_t>(cntlid);
    if (controllers_.count(id) == 0 && (port_ == nullptr || !port_->cntlid_in_use(id))) break;
  }
  if (cntlid > last) return nullptr;
  uint16_t io_queues = config_.discovery ? 0 : config_.max_io_queues;
  auto ctrl = std::make_shared<Controller>(static_cast<uint16_t>(cntlid), hostnqn, hostid, kato_ms,
                                           io_queues, config_.io_queue_size, config_.version);
  ctrl->set_peer_host(std::move(peer_host));
  Controller* raw = ctrl.get();
  controllers_[raw->cntlid()] = std::move(ctrl);
  registry_.add_controller(raw->cntlid(), hostnqn, config_.nqn);
  if (uint64_t suppressed = 0; connection_log_limiter().allow(
          "controller created", std::chrono::steady_clock::now(), &suppressed)) {
    NVMF_LOG(INFO, "target") << "controller " << raw->cntlid() << " of " << config_.nqn
                             << " created for " << hostnqn << " (kato " << kato_ms << " ms)"
                             << suppressed_note(suppressed);
  }
  return raw;
}

size_t Subsystem::controller_count_for(std::string_view hostnqn, std::string_view peer_host) const {
  size_t n = 0;
  for (const auto& [cntlid, ctrl] : controllers_) {
    n += ctrl->hostnqn() == hostnqn && ctrl->peer_host() == peer_host ? 1 : 0;
  }
  return n;
}

Controller* Subsystem::find_controller(uint16_t cntlid) const {
  auto it = controllers_.find(cntlid);
  return it == controllers_.end() ? nullptr : it->second.get();
}

std::shared_ptr<Controller> Subsystem::shared_controller(uint16_t cntlid) const {
  auto it = controllers_.find(cntlid);
  return it == controllers_.end() ? nullptr : it->second;
}

std::optional<Controller::Clock::time_point> Subsystem::expire_keep_alives(
    Controller::Clock::time_point now) {
  std::optional<Controller::Clock::time_point> earliest;
  std::vector<std::pair<uint16_t, uint32_t>> expired;  // cntlid, kato_ms
  for (const auto& [cntlid, ctrl] : controllers_) {
    auto deadline = ctrl->keep_alive_deadline();
    if (!deadline) continue;
    if (*deadline <= now && ctrl->restart_for_traffic(now)) deadline = ctrl->keep_alive_deadline();
    if (*deadline <= now) {
      expired.emplace_back(cntlid, ctrl->kato_ms());
    } else if (!earliest || *deadline < *earliest) {
      earliest = deadline;
    }
  }
  for (auto [cntlid, kato_ms] : expired) {
    if (uint64_t suppressed = 0;
        connection_log_limiter().allow("keep-alive expired", now, &suppressed)) {
      NVMF_LOG(WARN, "target") << "controller " << cntlid << " of " << config_.nqn
                               << ": no Keep Alive within KATO " << kato_ms
                               << " ms; freeing it (keep-alive timer expired)"
                               << suppressed_note(suppressed);
    }
    // nvmet_ctrl_fatal_error: the whole association goes, the admin queue included (freeing
    // alone disconnects only the I/O queues: normally the admin queue is why it is freed).
    if (CommandProcessor* admin = controllers_.at(cntlid)->queue(0)) {
      admin->link().request_disconnect("keep-alive timer expired");
    }
    free_controller(cntlid, "keep-alive timer expired");
  }
  return earliest;
}

void Subsystem::free_controller(uint16_t cntlid, std::string_view reason) {
  auto it = controllers_.find(cntlid);
  if (it == controllers_.end()) return;
  Controller& ctrl = *it->second;
  for (CommandProcessor* q : ctrl.io_queues()) q->controller_freed();
  if (CommandProcessor* admin = ctrl.queue(0)) admin->controller_freed();
  if (uint64_t suppressed = 0; connection_log_limiter().allow(
          "controller freed", std::chrono::steady_clock::now(), &suppressed)) {
    NVMF_LOG(INFO, "target") << "controller " << cntlid << " freed (" << reason << ")"
                             << suppressed_note(suppressed);
  }
  registry_.remove_controller(cntlid);
  controllers_.erase(it);
}

}  // namespace nvmf::target
