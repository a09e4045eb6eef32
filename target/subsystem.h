// SPDX-License-Identifier: BSD-3-Clause
// Subsystem: the one NVM subsystem this target serves: its NQN, namespace 1, its controllers,
// and the settings every controller reports.
#ifndef NVMF_TARGET_SUBSYSTEM_H_
#define NVMF_TARGET_SUBSYSTEM_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "target/ana.h"
#include "target/auth.h"
#include "target/controller.h"
#include "target/drain_counter.h"
#include "target/namespace.h"
#include "target/stats_registry.h"

namespace nvmf::target {

class Port;

// Fixed settings, decided when the target starts.
struct SubsystemConfig {
  std::string nqn;
  uint16_t max_io_queues = 4;
  uint32_t admin_queue_size = 32;  // entries
  uint32_t io_queue_size = 128;    // entries, CAP.MQES + 1
  uint8_t mdts = 5;                // 2^5 * 4 KiB = 128 KiB per command
  uint32_t version = 0x00010300;   // VS 1.3
  uint16_t kas = 1;                // 100 ms units
  uint8_t aerl = 3;                // 4 Async Event Requests held, 0-based
  // Controllers an admin Connect may create: on the whole port (discovery controllers
  // included), and for one host NQN. Above either, Connect Controller Busy (no DNR: one going
  // away makes room). Every subsystem of a port carries the port's values.
  uint32_t max_controllers = 128;
  uint32_t max_controllers_per_host = 32;
  std::string serial;  // empty: derived from the NQN
  std::string model = "nvmf-rdma target";
  std::string firmware = "0.1";
  // nvmetcli config (target/config.h): the discovery subsystem has no namespace and no I/O
  // queues; host access (checked at admin Connect); CNTLID range; namespace identifiers
  // (empty: NGUID derived from the NQN, no UUID).
  bool discovery = false;
  bool allow_any_host = true;
  std::vector<std::string> allowed_hosts;
  uint16_t cntlid_min = 1;
  uint16_t cntlid_max = 0xFFEF;
  std::optional<std::array<uint8_t, 16>> nguid;
  std::optional<std::array<uint8_t, 16>> uuid;
  // DH-HMAC-CHAP keys by host NQN (nvmetcli's hosts[]); shared by every subsystem of a target.
  // Null or no entry: the host is not authenticated.
  std::shared_ptr<const HostKeys> host_keys;

  // 4 KiB << mdts.
  uint32_t max_transfer_bytes() const { return 4096u << mdts; }
};

// One active namespace of a subsystem: its NSID, storage and identifiers (Identify CNS 00h/03h).
struct SubsystemNamespace {
  uint32_t nsid = 1;
  Namespace* ns = nullptr;
  std::array<uint8_t, 16> nguid{};
  std::optional<std::array<uint8_t, 16>> uuid;
  // Its ANA group (1..kMaxAnaGroups; nvmet's ana_grpid, SPDK's anagrpid): its state on each
  // port is the group's (Port::ana_states).
  uint32_t anagrpid = kDefaultAnaGroup;
};

// Owns the controllers. Any poll group, under the control lock (target/control_lock.h); the
// StatsRegistry it reports to is thread-safe.
class Subsystem {
 public:
  // `ns` and `registry` must outlive the subsystem.
  Subsystem(SubsystemConfig config, Namespace& ns, StatsRegistry& registry);
  // Several namespaces, by NSID (1..0xFFFFFFFE, distinct; sorted here). Each Namespace must
  // outlive the subsystem. An NGUID left all-zero is derived from the NQN and the NSID
  // (nsid 1: from the NQN alone, as with one namespace), so it survives a restart.
  Subsystem(SubsystemConfig config, std::vector<SubsystemNamespace> namespaces,
            StatsRegistry& registry);
  // A subsystem without namespace: the discovery subsystem (config.discovery).
  Subsystem(SubsystemConfig config, StatsRegistry& registry);
  ~Subsystem();
  Subsystem(const Subsystem&) = delete;
  Subsystem& operator=(const Subsystem&) = delete;

  const SubsystemConfig& config() const { return config_; }
  // The active namespaces, ascending NSID (empty for the discovery subsystem). Any poll group
  // reads the table without a lock (one atomic load): the table is immutable, a change publishes
  // a new one, and the old one lives until every poll group has passed its next round
  // (retire_tables()). So a reader uses what it got within one step of a request, never across
  // steps: a request that spans several finds its namespace again by NSID (and checks
  // Namespace::serial()).
  const std::vector<SubsystemNamespace>& namespaces() const {
    return table_.load(std::memory_order_acquire)->namespaces;
  }
  // The namespace with `nsid`; null when it is not active.
  const SubsystemNamespace* find_namespace(uint32_t nsid) const;
  // The active namespace with the lowest NSID above `nsid`; null when there is none (walks
  // "every namespace" one at a time across changes: none is skipped or visited twice).
  const SubsystemNamespace* namespace_after(uint32_t nsid) const;

  // Number of Namespaces (Identify Controller NN, and MNAN): the largest NSID a namespace of
  // this subsystem may have, fixed for its life so that hosts see namespaces come and go under
  // one NN: max(kMaxNamespaces, the largest NSID configured at start). nvmet reports 1024.
  uint32_t max_nsid() const { return max_nsid_; }
  static constexpr uint32_t kMaxNamespaces = 1024;

  // Namespace changes on a running target (the control socket's nvmf_subsystem_add_ns,
  // _remove_ns, _resize_ns; nvmet's namespace enable/disable and revalidate_size), under the
  // control lock. Each publishes a new table and sends the change to every controller as nvmet
  // does: the NSID goes into its Changed Namespace List (log page 04h) and a Namespace
  // Attribute Changed notice (AEC bit 8) is queued where enabled and not masked.
  // add_namespace: `n.nsid` 0 picks the lowest free NSID; returns the NSID. Errors:
  // kInvalidArgument (NSID in use, above max_nsid(), the discovery subsystem). An all-zero NGUID is
  // derived as at start.
  Result<uint32_t> add_namespace(SubsystemNamespace n);
  // The checks add_namespace makes of an NSID (0: any free one), without adding anything.
  Status check_new_nsid(uint32_t nsid) const;
  // Takes `nsid` out; returns its Namespace (the caller closes it once no poll group can use it
  // and no backend operation on it is in flight). kNotFound when it is not active.
  Result<Namespace*> remove_namespace(uint32_t nsid);
  // The namespace's size changed (Namespace::resize): hosts are told.
  void namespace_changed(uint32_t nsid);
  // Moves namespace `nsid` to ANA group `grpid` in place (nvmet's ana_grpid, written on a
  // running target): a new table is published; the caller tells each port
  // (Port::ana_membership_changed). kNotFound when `nsid` is not active, kInvalidArgument for a
  // group outside 1..kMaxAnaGroups. Under the control lock.
  Status set_namespace_group(uint32_t nsid, uint32_t grpid);
  // Frees the tables replaced since the last call: call once every poll group has passed a
  // round since the change (Target::quiesce_poll_groups).
  void retire_tables();
  StatsRegistry& registry() { return registry_; }
  const std::string& serial() const { return serial_; }
  const std::array<uint8_t, 16>& nguid() const { return nguid_; }
  const std::optional<std::array<uint8_t, 16>>& uuid() const { return config_.uuid; }

  // The port this subsystem is linked to (Port::link); null when used alone (unit tests).
  Port* port() const { return port_; }
  void set_port(Port* port) { port_ = port; }
  // nvmet_host_allowed: allow_any_host, or `hostnqn` is in allowed_hosts. The discovery
  // subsystem allows every host (its log page filters instead).
  bool host_allowed(std::string_view hostnqn) const;
  // The DH-HMAC-CHAP key `hostnqn` must prove on this subsystem's queues, or null: none
  // configured, or the discovery subsystem (as nvmet, discovery controllers are not
  // authenticated). Under the control lock.
  const HostKey* host_key(std::string_view hostnqn) const;
  // Replaces the keys (a configuration loaded on a running target); queues already
  // authenticated stay so. Under the control lock.
  void set_host_keys(std::shared_ptr<const HostKeys> keys) { config_.host_keys = std::move(keys); }
  // Changes to who may connect, made on a running target (the control socket's
  // nvmf_subsystem_add_host, _remove_host, _allow_any_host; nvmet's allowed_hosts links and
  // attr_allow_any_host). Under the control lock: Connect and the discovery log read them there.
  // add_host: false when `hostnqn` is listed already. remove_host: false when it is not listed;
  // otherwise it is removed and every controller of that host is freed and its queues, the
  // admin queue included, disconnected (SPDK's nvmf_subsystem_remove_host does the same).
  // set_allow_any_host leaves connected hosts connected (nvmet: the setting is checked at
  // Connect).
  bool add_host(const std::string& hostnqn);
  bool remove_host(const std::string& hostnqn, std::string_view reason);
  void set_allow_any_host(bool allow) { config_.allow_any_host = allow; }
  // Queues the asynchronous event `dw0` (proto::aen_dw0) on every controller that enabled
  // `aec_bit` and has not masked its log page (Controller::post_event) and asks each one's admin
  // queue to deliver it. Under the control lock, any thread. Returns how many queued it.
  // `port`: only the controllers whose admin queue came in on it (an ANA change is the port's).
  size_t post_event(uint32_t dw0, uint32_t aec_bit, const Port* port = nullptr);
  // Frees every controller of `hostnqn` and disconnects all their queues; returns how many.
  size_t disconnect_host(std::string_view hostnqn, std::string_view reason);
  // Frees every controller with a queue, admin or I/O, that came in on `port` (null: every
  // controller) and
  // disconnects all their queues; returns how many (nvmet_port_del_ctrls, and a deleted
  // subsystem's controllers).
  size_t disconnect_port(const Port* port, std::string_view reason);
  // Queues whose Connect chose this subsystem and that still exist, any poll group
  // (CommandProcessor::bind to its destructor): a deleted subsystem is freed once none is left.
  DrainCounter& queues() { return bound_queues_; }

  // The effective in-capsule data size (bytes) every I/O queue offers and Identify reports;
  // set once the device is known (resolve_inline_data_size).
  // Kept by the port when linked (every subsystem of a port shares its queues' receives).
  uint32_t in_capsule_data_size() const;
  void set_in_capsule_data_size(uint32_t bytes);

  // A new controller with the lowest CNTLID in cntlid_min..cntlid_max free in this subsystem and,
  // when linked, on the whole port (the stats registry keys controllers by CNTLID); null when
  // all are taken.
  // `peer_host`: the address of the admin queue's peer (Controller::peer_host).
  Controller* create_controller(const std::string& hostnqn, const std::array<uint8_t, 16>& hostid,
                                uint32_t kato_ms, std::string peer_host = {});
  Controller* find_controller(uint16_t cntlid) const;
  // The same, shared: what a queue bound to it holds (null when there is none).
  std::shared_ptr<Controller> shared_controller(uint16_t cntlid) const;
  // Frees a controller: each of its I/O queues is detached and asked to disconnect; logs one
  // line. `reason` goes into that line.
  void free_controller(uint16_t cntlid, std::string_view reason);
  size_t controller_count() const { return controllers_.size(); }
  // Controllers of this subsystem created for `hostnqn` from `peer_host`.
  size_t controller_count_for(std::string_view hostnqn, std::string_view peer_host = {}) const;
  // Frees every controller whose keep-alive timer expired by `now` (a WARN line each, like
  // nvmet's "keep-alive timer expired"; its queues are asked to disconnect). Returns the
  // earliest deadline left, or nullopt when no controller has a timer.
  std::optional<Controller::Clock::time_point> expire_keep_alives(
      Controller::Clock::time_point now);

 private:
  struct NamespaceTable {
    std::vector<SubsystemNamespace> namespaces;  // ascending NSID
  };
  void publish(std::vector<SubsystemNamespace> namespaces);
  uint32_t lowest_free_nsid() const;
  // The NGUID of a namespace configured without one: stable across restarts.
  std::array<uint8_t, 16> derived_nguid(uint32_t nsid) const;
  void tell_controllers(uint32_t nsid);
  size_t disconnect_where(const std::function<bool(const Controller&)>& match,
                          std::string_view reason);

  SubsystemConfig config_;
  std::unique_ptr<NamespaceTable> current_;  // owned; table_ points at it
  std::atomic<const NamespaceTable*> table_;
  std::vector<std::unique_ptr<NamespaceTable>> retired_;  // replaced, maybe still read
  uint32_t max_nsid_ = kMaxNamespaces;
  StatsRegistry& registry_;
  DrainCounter bound_queues_;
  Port* port_ = nullptr;
  std::string serial_;
  std::array<uint8_t, 16> nguid_;
  uint32_t in_capsule_data_size_ = 0;
  std::map<uint16_t, std::shared_ptr<Controller>> controllers_;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_SUBSYSTEM_H_
