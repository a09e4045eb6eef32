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

  // The ports of one target (this one included), which share the discovery subsystem and may
  // link the same NVM subsystems: CNTLIDs are unique, and controller limits count, across the
  // whole group (a host's two paths to one subsystem are two controllers of that subsystem, as
  // nvmet's controllers belong to the subsystem, not to a port). Empty: this port alone.
  void set_group(std::vector<Port*> group) { group_ = std::move(group); }
  // The discovery subsystem then every distinct subsystem linked to a port of the group.
  std::vector<Subsystem*> served() const;

  // The subsystem a Connect names: the discovery subsystem for proto::kDiscoveryNqn, else a
  // linked subsystem with that NQN; null when none (Connect Invalid Parameters on SUBNQN).
  Subsystem* find(std::string_view subnqn) const;
  // The Discovery Log Page for `hostnqn`: this port's own entry (SUBTYPE 3), then for each
  // enabled port of the group in order (this one alone without a group) one entry per linked
  // subsystem that allows the host, in link order, on that port's address
  // (build_discovery_log_records; nvmet_execute_disc_get_log_page per port). GENCTR: the sum
  // of the group's counters.
  std::vector<uint8_t> discovery_log(std::string_view hostnqn) const;
  // True when a controller of any subsystem served by the group (discovery included) uses
  // `cntlid`.
  bool cntlid_in_use(uint16_t cntlid) const;
  // Live controllers of the subsystems served by the group (discovery included), in all and for
  // `hostnqn`.
  size_t controller_count() const;
  size_t controller_count_for(std::string_view hostnqn) const;

  const DiscoveryAddress& address() const { return address_; }
  // The port really listened on (trsvcid "0" picks one at bind time).
  void set_trsvcid(std::string trsvcid) { address_.trsvcid = std::move(trsvcid); }
  Subsystem& discovery() const { return discovery_; }
  const std::vector<Subsystem*>& subsystems() const { return subsystems_; }
  uint64_t genctr() const { return genctr_; }
  // A removed port (Target::close_port) leaves the other ports' Discovery Log Pages; GENCTR
  // moves on.
  bool enabled() const { return enabled_; }
  void disable() {
    enabled_ = false;
    ++genctr_;
  }

  // In-capsule data bytes of every queue on this port (nvmet: port inline_data_size), once
  // resolved against the device; Identify IOCCSZ of a controller whose admin queue came in on
  // this port.
  uint32_t in_capsule_data_size() const { return in_capsule_data_size_; }
  void set_in_capsule_data_size(uint32_t bytes) { in_capsule_data_size_ = bytes; }
  // The configured value, nvmet's param_inline_data_size meaning (-1 one page, 0 off, bytes).
  int32_t configured_inline_data_size() const { return configured_inline_data_size_; }
  void set_configured_inline_data_size(int32_t value) { configured_inline_data_size_ = value; }

 private:
  DiscoveryAddress address_;
  Subsystem& discovery_;
  std::vector<Subsystem*> subsystems_;
  uint64_t genctr_ = 0;
  uint32_t in_capsule_data_size_ = 0;
  int32_t configured_inline_data_size_ = -1;
  std::vector<Port*> group_;
  bool enabled_ = true;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_PORT_H_
