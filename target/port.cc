// Port: subsystem lookup at Connect, the per-host Discovery Log Page, CNTLID uniqueness.
#include "target/port.h"

#include <string>

#include "proto/fabrics.h"

namespace nvmf::target {

Port::Port(DiscoveryAddress address, Subsystem& discovery)
    : address_(std::move(address)), discovery_(discovery) {
  discovery_.set_port(this);
}

Port::~Port() {
  discovery_.set_port(nullptr);
  for (Subsystem* s : subsystems_) s->set_port(nullptr);
}

void Port::link(Subsystem& subsystem) {
  subsystem.set_port(this);
  subsystems_.push_back(&subsystem);
  ++genctr_;
}

Subsystem* Port::find(std::string_view subnqn) const {
  if (subnqn == proto::kDiscoveryNqn) return &discovery_;
  for (Subsystem* s : subsystems_) {
    if (s->config().nqn == subnqn) return s;
  }
  return nullptr;
}

std::vector<uint8_t> Port::discovery_log(std::string_view hostnqn) const {
  std::vector<std::string> nqns;
  for (const Subsystem* s : subsystems_) {
    if (s->host_allowed(hostnqn)) nqns.push_back(s->config().nqn);
  }
  return build_discovery_log(address_, nqns, genctr_,
                             static_cast<uint16_t>(discovery_.config().admin_queue_size));
}

bool Port::cntlid_in_use(uint16_t cntlid) const {
  if (discovery_.find_controller(cntlid) != nullptr) return true;
  for (const Subsystem* s : subsystems_) {
    if (s->find_controller(cntlid) != nullptr) return true;
  }
  return false;
}

size_t Port::controller_count() const {
  size_t n = discovery_.controller_count();
  for (const Subsystem* s : subsystems_) n += s->controller_count();
  return n;
}

size_t Port::controller_count_for(std::string_view hostnqn) const {
  size_t n = discovery_.controller_count_for(hostnqn);
  for (const Subsystem* s : subsystems_) n += s->controller_count_for(hostnqn);
  return n;
}

}  // namespace nvmf::target
