// SPDX-License-Identifier: BSD-3-Clause
// Port: one listening transport address and the subsystems linked to it, plus the discovery
// subsystem every port serves (nvmet's port with its linked subsystems).
#ifndef NVMF_TARGET_PORT_H_
#define NVMF_TARGET_PORT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "target/ana.h"
#include "target/discovery.h"
#include "target/subsystem.h"

namespace nvmf::target {

// What every queue on a port shares, whichever subsystem its Connect picks (nvmet: the port's
// param_inline_data_size and the transport's queue limits). The CM request is checked against
// the queue counts and sizes before any subsystem is known (NVMe-oF RDMA 1.1 §3.1.1).
struct PortLimits {
  uint32_t in_capsule_data_size = 0;  // bytes; resolved once the first RDMA device is known
  uint16_t max_io_queues = 4;         // I/O queues per controller: highest qid in a CM request
  uint32_t admin_queue_size = 32;     // entries
  uint32_t io_queue_size = 128;       // entries, CAP.MQES + 1
  uint8_t mdts = 5;                   // log2 of max_transfer_bytes / 4 KiB
  uint8_t aerl = 3;                   // Async Event Requests held per admin queue, 0-based

  // 4 KiB << mdts: the data buffer of each command slot.
  uint32_t max_transfer_bytes() const { return 4096u << mdts; }
};

// Event-loop thread only. Does not own the subsystems; they must outlive the port.
class Port {
 public:
  // `discovery` must have config().discovery set and NQN proto::kDiscoveryNqn.
  Port(DiscoveryAddress address, Subsystem& discovery);
  ~Port();
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  // Links an NVM subsystem (sets its port); GENCTR counts links, like nvmet's genctr. The
  // subsystem's ANA states on this port start as the port's (ana_defaults()).
  void link(Subsystem& subsystem);
  // Unlinks it (the control socket's nvmf_subsystem_remove_listener, nvmf_delete_subsystem):
  // new Connects to it on this port find no subsystem; GENCTR moves on. False when it was not
  // linked. Under the control lock.
  bool unlink(const Subsystem& subsystem);
  bool linked(const Subsystem& subsystem) const;

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
  // Live controllers of the subsystems served by the group, NVM subsystems and discovery apart
  // (`discovery`: which kind), in all and for `hostnqn` connected from `peer_host`: each kind
  // has its own --max-controllers and --max-controllers-per-host, so that discovery controllers
  // (anyone may open them) never take an NVM subsystem's room, and a host NQN claimed from
  // another address takes nothing from the host that really has it.
  size_t controller_count(bool discovery) const;
  size_t controller_count_for(std::string_view hostnqn, std::string_view peer_host,
                              bool discovery) const;

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
  // What a host may see in the Discovery Log Page changed (an allowed host added or removed):
  // GENCTR moves on. Under the control lock.
  void log_changed() { ++genctr_; }

  // Asymmetric Namespace Access. A port presents each linked subsystem's ANA groups in a
  // state of their own (SPDK: per listener of a subsystem); the port's defaults (nvmetcli's
  // ports[].ana_groups, nvmet's per-port ana_state) apply to every subsystem linked.
  // - ana_states(s): the states `s` has on this port, shared with the queues that came in on
  //   it (they read them on the I/O path); null when `s` is not linked.
  // - set_ana_state(s, grpid, state): sets group `grpid` (1..kMaxAnaGroups) of `s` (null: of
  //   every linked subsystem, and the port's default) and, for each subsystem whose state
  //   changed, queues an ANA Change notice (AEC bit 11, log page 0Ch) to its controllers whose
  //   admin queue came in on this port. Returns how many subsystems changed. Under the control
  //   lock.
  // - ana_membership_changed(s): a namespace of `s` joined, left or changed its group: the
  //   ANA log's change count of `s` on this port moves on and its controllers here get an ANA
  //   Change notice (nvmet's ana_grpid_store does the same). No-op when `s` is not linked.
  std::shared_ptr<const AnaStates> ana_states(const Subsystem& subsystem) const;
  size_t set_ana_state(const Subsystem* subsystem, uint32_t grpid, AnaState state);
  void ana_membership_changed(Subsystem& subsystem);
  const AnaStates& ana_defaults() const { return ana_defaults_; }

  // The queue counts and sizes every queue on this port is checked against (PortLimits).
  const PortLimits& limits() const { return limits_; }
  void set_limits(const PortLimits& limits) { limits_ = limits; }
  // In-capsule data bytes of every queue on this port (nvmet: port inline_data_size), once
  // resolved against the device; Identify IOCCSZ of a controller whose admin queue came in on
  // this port.
  uint32_t in_capsule_data_size() const { return limits_.in_capsule_data_size; }
  void set_in_capsule_data_size(uint32_t bytes) { limits_.in_capsule_data_size = bytes; }
  // The configured value, nvmet's param_inline_data_size meaning (-1 one page, 0 off, bytes).
  int32_t configured_inline_data_size() const { return configured_inline_data_size_; }
  void set_configured_inline_data_size(int32_t value) { configured_inline_data_size_ = value; }

 private:
  DiscoveryAddress address_;
  Subsystem& discovery_;
  std::vector<Subsystem*> subsystems_;
  uint64_t genctr_ = 0;
  PortLimits limits_;
  int32_t configured_inline_data_size_ = -1;
  std::vector<Port*> group_;
  bool enabled_ = true;
  AnaStates ana_defaults_;
  std::map<const Subsystem*, std::shared_ptr<AnaStates>> ana_;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_PORT_H_
