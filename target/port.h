// Port: one listening transport address and the subsystems linked to it, plus the discovery
// subsystem every port serves (nvmet's port with its linked subsystems).
#ifndef NVMF_TARGET_PORT_H_
#define NVMF_TARGET_PORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "target/discovery.h"
#include "target/subsystem.h"

namespace nvmf::target {

// Event-loop thread only. Does not own the subsystems; they must outlive the port.
class Port {
 public:
  // `discovery` must have config().discovery set and NQN proto::kDiscoveryNqn.
  Port(DiscoveryAddress address, Subsystem& discovery);
  ~Port();
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  // Links an NVM subsystem (sets its port); GENCTR counts links, like nvmet's genctr.
  void link(Subsystem& subsystem);

  // The subsystem a Connect names: the discovery subsystem for proto::kDiscoveryNqn, else a
  // linked subsystem with that NQN; null when none (Connect Invalid Parameters on SUBNQN).
  Subsystem* find(std::string_view subnqn) const;
  // The Discovery Log Page for `hostnqn`: one entry per linked subsystem that allows the host,
  // in link order (nvmet discovery_log_entries + nvmet_execute_disc_get_log_page).
  std::vector<uint8_t> discovery_log(std::string_view hostnqn) const;
  // True when a controller of any subsystem on this port (discovery included) uses `cntlid`.
  bool cntlid_in_use(uint16_t cntlid) const;
  // Live controllers on this port (discovery included), in all and for `hostnqn`.
  size_t controller_count() const;
  size_t controller_count_for(std::string_view hostnqn) const;

  const DiscoveryAddress& address() const { return address_; }
  // The port really listened on (trsvcid "0" picks one at bind time).
  void set_trsvcid(std::string trsvcid) { address_.trsvcid = std::move(trsvcid); }
  Subsystem& discovery() const { return discovery_; }
  const std::vector<Subsystem*>& subsystems() const { return subsystems_; }
  uint64_t genctr() const { return genctr_; }

  // In-capsule data bytes of every queue on this port (nvmet: port inline_data_size).
  uint32_t in_capsule_data_size() const { return in_capsule_data_size_; }
  void set_in_capsule_data_size(uint32_t bytes) { in_capsule_data_size_ = bytes; }

 private:
  DiscoveryAddress address_;
  Subsystem& discovery_;
  std::vector<Subsystem*> subsystems_;
  uint64_t genctr_ = 0;
  uint32_t in_capsule_data_size_ = 0;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_PORT_H_
