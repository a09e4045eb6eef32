// SPDX-License-Identifier: BSD-3-Clause
// Port: subsystem lookup at Connect, the per-host Discovery Log Page, CNTLID uniqueness.
#include "target/port.h"

#include <algorithm>
#include <string>

#include "proto/fabrics.h"
#include "proto/nvme.h"

namespace nvmf::target {

Port::Port(DiscoveryAddress address, Subsystem& discovery)
    : address_(std::move(address)), discovery_(discovery) {
  // A subsystem on several ports keeps the first as its own (Subsystem::port()); a queue asks
  // the port it came in on for lookups and in-capsule size.
  if (discovery_.port() == nullptr) discovery_.set_port(this);
}

Port::~Port() {
  if (discovery_.port() == this) discovery_.set_port(nullptr);
  for (Subsystem* s : subsystems_) {
    if (s->port() == this) s->set_port(nullptr);
  }
}

void Port::link(Subsystem& subsystem) {
  if (subsystem.port() == nullptr) subsystem.set_port(this);
  subsystems_.push_back(&subsystem);
  auto states = std::make_shared<AnaStates>();
  states->assign(ana_defaults_);
  ana_[&subsystem] = std::move(states);
  ++genctr_;
}

bool Port::unlink(const Subsystem& subsystem) {
  auto it = std::find(subsystems_.begin(), subsystems_.end(), &subsystem);
  if (it == subsystems_.end()) return false;
  subsystems_.erase(it);
  ana_.erase(&subsystem);  // queues still bound keep their own reference
  ++genctr_;
  return true;
}

std::shared_ptr<const AnaStates> Port::ana_states(const Subsystem& subsystem) const {
  auto it = ana_.find(&subsystem);
  return it != ana_.end() ? it->second : nullptr;
}

void Port::ana_membership_changed(Subsystem& subsystem) {
  auto it = ana_.find(&subsystem);
  if (it == ana_.end()) return;
  it->second->touch();
  subsystem.post_event(
      proto::aen_dw0(proto::kAenTypeNotice, proto::kAenInfoAnaChange, proto::kLogAna),
      proto::kAecAnaChange, this);
}

size_t Port::set_ana_state(const Subsystem* subsystem, uint32_t grpid, AnaState state) {
  if (grpid == 0 || grpid > kMaxAnaGroups) return 0;
  if (subsystem == nullptr) (void)ana_defaults_.set(grpid, state);
  size_t changed = 0;
  for (Subsystem* s : subsystems_) {
    if (subsystem != nullptr && s != subsystem) continue;
    auto it = ana_.find(s);
    if (it == ana_.end() || !it->second->set(grpid, state)) continue;
    ++changed;
    s->post_event(proto::aen_dw0(proto::kAenTypeNotice, proto::kAenInfoAnaChange, proto::kLogAna),
                  proto::kAecAnaChange, this);
  }
  return changed;
}

bool Port::linked(const Subsystem& subsystem) const {
  return std::find(subsystems_.begin(), subsystems_.end(), &subsystem) != subsystems_.end();
}

std::vector<Subsystem*> Port::served() const {
  std::vector<Subsystem*> out{&discovery_};
  auto add = [&out](const Port& p) {
    for (Subsystem* s : p.subsystems_) {
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    }
  };
  if (group_.empty()) add(*this);
  for (const Port* p : group_) add(*p);
  return out;
}

Subsystem* Port::find(std::string_view subnqn) const {
  if (subnqn == proto::kDiscoveryNqn) return &discovery_;
  for (Subsystem* s : subsystems_) {
    if (s->config().nqn == subnqn) return s;
  }
  return nullptr;
}

std::vector<uint8_t> Port::discovery_log(std::string_view hostnqn) const {
  std::vector<DiscoveryRecord> records;
  uint64_t genctr = 0;
  auto add = [&](const Port& p) {
    genctr += p.genctr_;
    if (!p.enabled_) return;
    for (const Subsystem* s : p.subsystems_) {
      if (s->host_allowed(hostnqn)) records.push_back({p.address_, s->config().nqn});
    }
  };
  if (group_.empty()) add(*this);
  for (const Port* p : group_) add(*p);
  return build_discovery_log_records(address_, records, genctr,
                                     static_cast<uint16_t>(discovery_.config().admin_queue_size));
}

bool Port::cntlid_in_use(uint16_t cntlid) const {
  for (const Subsystem* s : served()) {
    if (s->find_controller(cntlid) != nullptr) return true;
  }
  return false;
}

size_t Port::controller_count(bool discovery) const {
  size_t n = 0;
  for (const Subsystem* s : served()) {
    if (s->config().discovery == discovery) n += s->controller_count();
  }
  return n;
}

size_t Port::controller_count_for(std::string_view hostnqn, std::string_view peer_host,
                                  bool discovery) const {
  size_t n = 0;
  for (const Subsystem* s : served()) {
    if (s->config().discovery == discovery) n += s->controller_count_for(hostnqn, peer_host);
  }
  return n;
}

}  // namespace nvmf::target
