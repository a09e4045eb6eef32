// SPDX-License-Identifier: BSD-3-Clause
// Target: changes on a running target, shared by the control socket's methods and load_config
// (target/target_rpc.cc): namespaces added and removed, subsystems created and deleted, and a
// whole nvmetcli configuration applied by difference.
#include <algorithm>
#include <set>
#include <string>

#include "common/log.h"
#include "common/verbs/address.h"
#include "proto/discovery.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"
#include "target/control_lock.h"
#include "target/event_loop.h"
#include "target/namespace.h"
#include "target/port.h"
#include "target/subsystem.h"
#include "target/target.h"

namespace nvmf::target {

Subsystem* Target::subsystem_named(std::string_view nqn) const {
  for (const auto& s : subsystems_) {
    if (s->config().nqn == nqn) return s.get();
  }
  return nullptr;
}

Result<uint32_t> Target::add_namespace(Subsystem& sub, const NamespaceOptions& n) {
  {
    // Checked before the backing is opened (a file is created or extended by opening it).
    ControlLock lock(control_mutex());
    NVMF_RETURN_IF_ERROR(sub.check_new_nsid(n.nsid));
  }
  Result<std::unique_ptr<Namespace>> opened = Status::internal("not opened");
  if (!n.file_path.empty()) {
    FileBackingOptions backing;
    backing.direct = n.direct_io.has_value() ? n.direct_io : options_.direct_io;
    opened =
        Namespace::open_file(n.file_path, n.file_size, options_.lba_size, *io_engine_, backing);
  } else {
    opened = Namespace::create_ram(n.ram_size, options_.lba_size);
  }
  if (!opened.ok()) return opened.status();
  std::unique_ptr<Namespace> ns = std::move(*opened);
  uint32_t nsid = 0;
  {
    ControlLock lock(control_mutex());
    NVMF_ASSIGN_OR_RETURN(
        nsid, sub.add_namespace({n.nsid, ns.get(), n.nguid.value_or(std::array<uint8_t, 16>{}),
                                 n.uuid, n.anagrpid}));
    NVMF_LOG(INFO, "target") << "subsystem " << sub.config().nqn << ": namespace " << nsid
                             << " added on " << ns->describe() << ", " << ns->num_lbas()
                             << " LBAs of " << ns->lba_size() << " bytes";
    namespaces_.push_back(std::move(ns));
    ana_membership_changed(sub);
  }
  // The table it replaced: freed once no poll group can be reading it.
  if (quiesce_poll_groups(std::chrono::seconds(10))) {
    ControlLock lock(control_mutex());
    sub.retire_tables();
  }
  return nsid;
}

Status Target::remove_namespace(Subsystem& sub, uint32_t nsid) {
  Namespace* ns = nullptr;
  {
    ControlLock lock(control_mutex());
    NVMF_ASSIGN_OR_RETURN(ns, sub.remove_namespace(nsid));
    ana_membership_changed(sub);
    NVMF_LOG(INFO, "target") << "subsystem " << sub.config().nqn << ": namespace " << nsid
                             << " removed (" << ns->describe() << ")";
  }
  if (!quiesce_poll_groups(std::chrono::seconds(10))) {
    // A group that never comes back to the top of its loop may still read the old table: keep
    // everything (a leak, never a use after free).
    NVMF_LOG(WARN, "target") << "namespace " << nsid
                             << ": a poll group did not pass a round within 10 s; its storage "
                                "stays open";
    return ok_status();
  }
  {
    ControlLock lock(control_mutex());
    sub.retire_tables();
  }
  close_namespace(ns);
  return ok_status();
}

Status Target::create_subsystem(const SubsystemConfig& cfg) {
  ControlLock lock(control_mutex());
  if (subsystem_named(cfg.nqn) != nullptr) {
    return Status::invalid_argument("subsystem " + cfg.nqn + " exists");
  }
  subsystems_.push_back(
      std::make_unique<Subsystem>(cfg, std::vector<SubsystemNamespace>{}, *registry_));
  NVMF_LOG(INFO, "target") << "subsystem " << cfg.nqn << " created";
  return ok_status();
}

Result<Port*> Target::add_port(const PortOptions& spec) {
  if (auto port = verbs::parse_port(spec.trsvcid); !port.ok()) {
    return Status::invalid_argument("trsvcid: " + port.status().message());
  }
  if (auto addr = verbs::SocketAddress::parse(spec.traddr, uint16_t{0}); !addr.ok()) {
    return Status::invalid_argument("traddr: " + addr.status().message());
  }
  std::unique_ptr<Port> owned = make_port(spec);
  Port* port = owned.get();
  {
    ControlLock lock(control_mutex());
    if (ports_.size() >= EventLoop::kMaxPorts) {
      return Status::resource_exhausted("at most " + std::to_string(EventLoop::kMaxPorts) +
                                        " ports over the target's life (closed ones count)");
    }
    port->set_limits(ports_.front()->limits());
    ports_.push_back(std::move(owned));
    regroup_ports();
  }
  if (Status st = loop_->add_listener(*port); !st.ok()) {
    ControlLock lock(control_mutex());
    if (st.code() == StatusCode::kTimeout) {
      // The loop may still take it (it was not running): it keeps its place, disabled, so that
      // the ports and the loop's listeners stay in the same order.
      port->disable();
      return st;
    }
    ports_.pop_back();  // the loop never took it
    regroup_ports();
    return st;
  }
  added_ports_.push_back(port);
  return port;
}

void Target::discovery_log_changed(const Subsystem& s) {
  for (const auto& port : ports_) {
    if (port->linked(s)) port->log_changed();
  }
  discovery_->post_event(proto::aen_dw0(proto::kAenTypeNotice, proto::kAenInfoDiscoveryLogChange,
                                        proto::kLogDiscovery),
                         proto::kAecDiscoveryLogChange);
}

void Target::ana_membership_changed(Subsystem& s) {
  for (const auto& port : ports_) port->ana_membership_changed(s);
}

void Target::delete_subsystem(Subsystem& s) {
  std::unique_ptr<Subsystem> taken;
  {
    ControlLock lock(control_mutex());
    discovery_log_changed(s);
    for (const auto& port : ports_) port->unlink(s);
    s.disconnect_port(nullptr, "subsystem deleted");
    auto it = std::find_if(subsystems_.begin(), subsystems_.end(),
                           [&](const auto& owned) { return owned.get() == &s; });
    taken = std::move(*it);
    subsystems_.erase(it);
    NVMF_LOG(INFO, "target") << "subsystem " << taken->config().nqn << " deleted";
  }
  free_subsystem(std::move(taken));
}

}  // namespace nvmf::target
