// SPDX-License-Identifier: BSD-3-Clause
// Target: options validation, assembly of namespace + subsystem + event loop, and the API.
#include "target/target.h"

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "common/log.h"
#include "common/verbs/address.h"
#include "proto/discovery.h"
#include "proto/fabrics.h"
#include "target/control_lock.h"
#include "target/counters.h"
#include "target/event_loop.h"
#include "target/namespace.h"
#include "target/port.h"
#include "target/rpc.h"
#include "target/rpc_server.h"
#include "target/stats_registry.h"
#include "target/subsystem.h"

namespace nvmf::target {
namespace {

Status bad(const std::string& message) { return Status::invalid_argument(message); }

Result<std::unique_ptr<Namespace>> open_namespace(const NamespaceOptions& n, const TargetOptions& o,
                                                  IoEngine* engine) {
  if (!n.file_path.empty()) {
    FileBackingOptions backing;
    backing.direct = n.direct_io.has_value() ? n.direct_io : o.direct_io;
    return Namespace::open_file(n.file_path, n.file_size, o.lba_size, *engine, backing);
  }
  return Namespace::create_ram(n.ram_size, o.lba_size);
}

// The subsystems to serve: the configured ones, or one from the single-subsystem options.
std::vector<SubsystemOptions> subsystem_list(const TargetOptions& o) {
  if (!o.subsystems.empty()) return o.subsystems;
  SubsystemOptions s;
  s.nqn = o.subnqn;
  s.file_path = o.file_path;
  s.file_size = o.file_size;
  s.ram_size = o.ram_size;
  s.direct_io = o.direct_io;
  for (size_t i = 0; i < o.more_file_paths.size(); ++i) {
    NamespaceOptions n;
    n.nsid = static_cast<uint32_t>(i + 2);
    n.file_path = o.more_file_paths[i];
    n.file_size = o.file_size;
    n.direct_io = o.direct_io;
    s.more_namespaces.push_back(n);
  }
  return {s};
}

Status validate_subsystem(const SubsystemOptions& s, const std::string& where) {
  if (s.nqn.empty() || s.nqn.size() > proto::kNqnMaxLength) {
    return bad(where + " NQN must be 1..223 bytes, got " + std::to_string(s.nqn.size()));
  }
  if (s.nqn == proto::kDiscoveryNqn) {
    return bad(where + " NQN " + s.nqn + " is the discovery NQN, served by every port");
  }
  if (!s.file_path.empty() && s.ram_size != 0) {
    return bad(where + ": give one namespace backing: a file path or a RAM size");
  }
  if (s.file_path.empty() && s.file_size != 0) return bad(where + ": a size needs a file path");
  if (!s.more_namespaces.empty() && s.file_path.empty() && s.ram_size == 0) {
    return bad(where + ": further namespaces need a first one");
  }
  for (size_t i = 0; i < s.more_namespaces.size(); ++i) {
    const NamespaceOptions& n = s.more_namespaces[i];
    if (n.nsid == 0 || n.nsid >= 0xFFFFFFFF || n.file_path.empty() == (n.ram_size == 0)) {
      return bad(where + ": namespace " + std::to_string(n.nsid) +
                 " needs an NSID and a path or a RAM size");
    }
    bool taken = n.nsid == s.nsid;
    for (size_t j = 0; j < i; ++j) taken = taken || s.more_namespaces[j].nsid == n.nsid;
    if (taken) return bad(where + ": NSID " + std::to_string(n.nsid) + " is given twice");
  }
  if (s.cntlid_min == 0 || s.cntlid_min > s.cntlid_max || s.cntlid_max > 0xFFEF) {
    return bad(where + ": cntlid range " + std::to_string(s.cntlid_min) + ".." +
               std::to_string(s.cntlid_max) + " is not within 1..65519");
  }
  if (s.serial.size() > 20 || s.model.size() > 40 || s.firmware.size() > 8) {
    return bad(where + ": serial/model/firmware longer than 20/40/8 characters");
  }
  return ok_status();
}

}  // namespace

SubsystemConfig Target::subsystem_config(const SubsystemOptions& spec, const TargetOptions& o) {
  SubsystemConfig cfg = subsystem_defaults(o);
  cfg.nqn = spec.nqn;
  cfg.allow_any_host = spec.allow_any_host;
  cfg.allowed_hosts = spec.allowed_hosts;
  cfg.cntlid_min = spec.cntlid_min;
  cfg.cntlid_max = spec.cntlid_max;
  if (spec.qid_max != 0) cfg.max_io_queues = std::min(cfg.max_io_queues, spec.qid_max);
  cfg.nguid = spec.nguid;
  cfg.uuid = spec.uuid;
  if (!spec.serial.empty()) cfg.serial = spec.serial;
  if (!spec.model.empty()) cfg.model = spec.model;
  if (!spec.firmware.empty()) cfg.firmware = spec.firmware;
  if (spec.version != 0) cfg.version = spec.version;
  if (!o.host_keys.empty()) cfg.host_keys = std::make_shared<const HostKeys>(o.host_keys);
  return cfg;
}

std::unique_ptr<Port> Target::make_port(const PortOptions& spec) const {
  DiscoveryAddress address;
  address.portid = spec.portid;
  address.adrfam = adrfam_for(spec.traddr);
  // TREQ bit 2 as nvmet: a host may disable SQ flow control (Connect CATTR bit 2).
  address.treq = spec.treq | proto::kTreqDisableSqFlowControl;
  address.traddr = spec.traddr;
  address.trsvcid = spec.trsvcid;
  auto port = std::make_unique<Port>(address, *discovery_);
  port->set_configured_inline_data_size(spec.inline_data_size);
  for (const auto& [grpid, state] : spec.ana_groups)
    (void)port->set_ana_state(nullptr, grpid, state);
  return port;
}

void Target::regroup_ports() {
  std::vector<Port*> group;
  for (const auto& p : ports_) group.push_back(p.get());
  for (const auto& p : ports_) p->set_group(group);
}

SubsystemConfig Target::subsystem_defaults(const TargetOptions& o) {
  SubsystemConfig common;
  common.max_io_queues = o.max_io_queues;
  common.io_queue_size = o.max_queue_size;
  common.mdts = o.mdts;
  common.max_controllers = o.max_controllers;
  common.max_controllers_per_host = o.max_controllers_per_host;
  return common;
}

std::vector<NamespaceOptions> namespace_list(const SubsystemOptions& s) {
  std::vector<NamespaceOptions> out;
  if (s.file_path.empty() && s.ram_size == 0) return out;
  NamespaceOptions first;
  first.nsid = s.nsid;
  first.file_path = s.file_path;
  first.file_size = s.file_size;
  first.ram_size = s.ram_size;
  first.direct_io = s.direct_io;
  first.nguid = s.nguid;
  first.uuid = s.uuid;
  first.anagrpid = s.anagrpid;
  out.push_back(first);
  out.insert(out.end(), s.more_namespaces.begin(), s.more_namespaces.end());
  return out;
}

void set_namespace_list(SubsystemOptions& s, std::vector<NamespaceOptions> list) {
  s.more_namespaces.clear();
  s.file_path.clear();
  s.file_size = 0;
  s.ram_size = 0;
  if (list.empty()) return;
  const NamespaceOptions& first = list.front();
  s.nsid = first.nsid;
  s.file_path = first.file_path;
  s.file_size = first.file_size;
  s.ram_size = first.ram_size;
  s.direct_io = first.direct_io;
  s.nguid = first.nguid;
  s.uuid = first.uuid;
  s.anagrpid = first.anagrpid;
  s.more_namespaces.assign(std::make_move_iterator(list.begin() + 1),
                           std::make_move_iterator(list.end()));
}

std::vector<PortOptions> port_list(const TargetOptions& o) {
  if (!o.ports.empty()) return o.ports;
  PortOptions p;
  p.portid = o.portid;
  p.traddr = o.traddr;
  p.trsvcid = o.trsvcid;
  p.treq = o.treq;
  p.inline_data_size = o.inline_data_size;
  return {p};
}

uint32_t allowed_cpu_count() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return 0;
  return static_cast<uint32_t>(CPU_COUNT(&allowed));
}

PollGroupChoice choose_poll_groups(const TargetOptions& o, uint32_t allowed_cpus) {
  if (o.poll_groups != kPollGroupsAuto) {
    return {o.poll_groups, "--poll-groups " + std::to_string(o.poll_groups)};
  }
  if (o.cpu >= 0) return {1, "auto: --cpu " + std::to_string(o.cpu) + " pins one thread"};
  if (allowed_cpus == 0) return {1, "auto: the CPU affinity mask could not be read"};
  const std::string cpus =
      "auto: " + std::to_string(allowed_cpus) + (allowed_cpus == 1 ? " CPU" : " CPUs");
  if (allowed_cpus > kMaxPollGroups) {
    return {kMaxPollGroups, cpus + ", at most " + std::to_string(kMaxPollGroups)};
  }
  return {allowed_cpus, cpus};
}

PollGroupShares poll_group_shares(const TargetOptions& o, uint32_t groups) {
  groups = std::max<uint32_t>(groups, 1);
  PollGroupShares s;
  s.shared_buffers = (o.num_shared_buffers + groups - 1) / groups;  // >= 1 when asked for any
  s.srq_depth = std::max(kMinSrqDepthPerGroup, (o.max_srq_depth + groups - 1) / groups);
  s.total_shared_buffers = uint64_t{s.shared_buffers} * groups;
  s.total_srq_depth = uint64_t{s.srq_depth} * groups;
  return s;
}

const char* poll_mode_name(PollMode mode) { return mode == PollMode::kBusy ? "busy" : "event"; }

Status validate_options(const TargetOptions& o) {
  if (o.cpu < kCpuNone || o.cpu > 1023) {
    return bad("--cpu " + std::to_string(o.cpu) + " is not auto, none or 0..1023");
  }
  if (o.poll_groups > kMaxPollGroups) {
    return bad("--poll-groups " + std::to_string(o.poll_groups) + " is not auto or 1.." +
               std::to_string(kMaxPollGroups));
  }
  if (o.poll_groups > 1 && o.cpu >= 0) {
    return bad("--cpu " + std::to_string(o.cpu) + " pins one thread: with --poll-groups " +
               std::to_string(o.poll_groups) +
               " give --cpu auto (group i on the i-th CPU) or none");
  }
  if (o.stall_warn_ms != 0 && (o.stall_warn_ms < 10 || o.stall_warn_ms > 3600000)) {
    return bad("--stall-warn-ms " + std::to_string(o.stall_warn_ms) +
               " is not 0 (off) or 10..3600000");
  }
  if (o.busy_poll_us > 1000000) {
    return bad("--busy-poll-us " + std::to_string(o.busy_poll_us) + " is above 1000000 (1 s)");
  }
  const std::vector<PortOptions> ports = port_list(o);
  if (ports.size() > 32) {
    return bad(std::to_string(ports.size()) + " ports: at most 32 are served");
  }
  for (size_t i = 0; i < ports.size(); ++i) {
    const PortOptions& p = ports[i];
    // Checked here, before any device is opened, so a typo is named as the option it came from
    // rather than surfacing later as an rdma_cm error. Port 0 picks an ephemeral port.
    const std::string where = o.ports.empty() ? "" : "port " + std::to_string(p.portid) + ": ";
    if (auto port = verbs::parse_port(p.trsvcid); !port.ok()) {
      return bad(where + "--trsvcid: " + port.status().message());
    }
    if (p.traddr.empty()) continue;  // missing: named below, after every bad value
    if (auto addr = verbs::SocketAddress::parse(p.traddr, uint16_t{0}); !addr.ok()) {
      return bad(where + "--traddr: " + addr.status().message());
    }
    if (p.inline_data_size < -1) {
      return bad(where + "--inline-data-size " + std::to_string(p.inline_data_size) +
                 " (use -1 for one page, 0 for off, or a byte count)");
    }
    for (size_t j = 0; j < i; ++j) {
      if (ports[j].portid == p.portid) return bad(where + "portid is given twice");
      // Two listeners cannot bind one address and service (trsvcid 0 picks a free one).
      if (ports[j].traddr == p.traddr && ports[j].trsvcid == p.trsvcid && p.trsvcid != "0") {
        return bad(where + p.traddr + ":" + p.trsvcid + " is already port " +
                   std::to_string(ports[j].portid) + "'s address");
      }
    }
    for (const std::string& nqn : p.subsystems) {
      bool known = o.subsystems.empty() ? nqn == o.subnqn : false;
      for (const SubsystemOptions& s : o.subsystems) known = known || s.nqn == nqn;
      if (!known) return bad(where + "links subsystem " + nqn + ", which is not configured");
    }
  }
  if (o.subsystems.empty()) {
    if (o.subnqn.empty() || o.subnqn.size() > 223) {
      return bad("--nqn must be 1..223 bytes, got " + std::to_string(o.subnqn.size()));
    }
    if (!o.file_path.empty() && o.ram_size != 0) {
      return bad("give exactly one namespace backing: --file PATH or --ram-size BYTES");
    }
    if (o.file_path.empty() && o.file_size != 0) return bad("--size needs --file");
    if (o.file_path.empty() && !o.more_file_paths.empty()) {
      return bad("a RAM namespace cannot be followed by --file namespaces");
    }
  }
  for (size_t i = 0; i < o.subsystems.size(); ++i) {
    std::string where = "subsystem " + o.subsystems[i].nqn;
    NVMF_RETURN_IF_ERROR(validate_subsystem(o.subsystems[i], where));
    for (size_t j = 0; j < i; ++j) {
      if (o.subsystems[j].nqn == o.subsystems[i].nqn) return bad(where + " is given twice");
    }
  }
  if (!valid_lba_size(o.lba_size)) {
    return bad("--lba-size " + std::to_string(o.lba_size) + " is not 512 or 4096");
  }
  // Sizes the user gives must be whole LBAs (an existing file of another size is rounded down,
  // as nvmet's file backend does).
  for (auto [value, name] : {std::pair{o.ram_size, "--ram-size"}, {o.file_size, "--size"}}) {
    if (value != 0 && value < o.lba_size) {
      return bad(std::string(name) + " " + std::to_string(value) +
                 " is smaller than one LBA (--lba-size " + std::to_string(o.lba_size) + ")");
    }
    if (value % o.lba_size != 0) {
      return bad(std::string(name) + " " + std::to_string(value) +
                 " is not a whole number of LBAs (--lba-size " + std::to_string(o.lba_size) + ")");
    }
  }
  if (o.inline_data_size < -1) {
    return bad("--inline-data-size " + std::to_string(o.inline_data_size) +
               " (use -1 for one page, 0 for off, or a byte count)");
  }
  if (o.max_queue_size < 2 || o.max_queue_size > 1024) {
    return bad("--queue-size " + std::to_string(o.max_queue_size) + " is not in 2..1024");
  }
  if (o.max_io_queues < 1 || o.max_io_queues > 64) {
    return bad("--max-io-queues " + std::to_string(o.max_io_queues) + " is not in 1..64");
  }
  if (o.mdts < 1 || o.mdts > 8) return bad("mdts " + std::to_string(o.mdts) + " is not in 1..8");
  if (o.max_pending_connections < 1 || o.max_pending_connections > 65535) {
    return bad("--max-pending-connections " + std::to_string(o.max_pending_connections) +
               " is not in 1..65535");
  }
  if (o.max_pending_connections_per_peer < 1 || o.max_pending_connections_per_peer > 65535) {
    return bad("--max-pending-connections-per-peer " +
               std::to_string(o.max_pending_connections_per_peer) + " is not in 1..65535");
  }
  if (o.num_shared_buffers > 65535) {
    return bad("--num-shared-buffers " + std::to_string(o.num_shared_buffers) +
               " is not in 0..65535");
  }
  if (o.max_srq_depth < 16 || o.max_srq_depth > 65535) {
    return bad("--max-srq-depth " + std::to_string(o.max_srq_depth) + " is not in 16..65535");
  }
  if (o.max_rdma_read_depth < 1 || o.max_rdma_read_depth > 255) {
    return bad("--max-rdma-read-depth " + std::to_string(o.max_rdma_read_depth) +
               " is not in 1..255");
  }
  if (o.ack_timeout > 31) {
    return bad("--ack-timeout " + std::to_string(o.ack_timeout) + " is not in 0..31");
  }
  if (o.send_stall_timeout_ms < 100 || o.send_stall_timeout_ms > 3600000) {
    return bad("--send-stall-timeout-ms " + std::to_string(o.send_stall_timeout_ms) +
               " is not in 100..3600000");
  }
  if (o.connect_timeout_ms < 100 || o.connect_timeout_ms > 3600000) {
    return bad("--connect-timeout-ms " + std::to_string(o.connect_timeout_ms) +
               " is not in 100..3600000");
  }
  for (auto [value, name] : {std::pair{o.max_controllers, "--max-controllers"},
                             {o.max_controllers_per_host, "--max-controllers-per-host"}}) {
    if (value < 1 || value > 0xFFEF) {
      return bad(std::string(name) + " " + std::to_string(value) + " is not in 1..65519");
    }
  }
  // What is missing comes last: a bad value given anywhere on the command line is the user's
  // first mistake and is named first, whatever else is missing.
  for (const PortOptions& p : ports) {
    if (!p.traddr.empty()) continue;
    return bad((o.ports.empty() ? "" : "port " + std::to_string(p.portid) + ": ") +
               "--traddr is required");
  }
  if (o.subsystems.empty() && o.file_path.empty() && o.ram_size == 0) {
    return bad("give exactly one namespace backing: --file PATH or --ram-size BYTES");
  }
  return ok_status();
}

Target::Target() = default;

Target::~Target() {
  rpc_server_.reset();  // its thread calls into everything below
  groups_.clear();
  loop_.reset();  // queues first: they detach from controllers owned by the subsystems
  ports_.clear();
  subsystems_.clear();
  retired_subsystems_.clear();
  discovery_.reset();
}

Result<std::unique_ptr<Target>> Target::create(const TargetOptions& given) {
  NVMF_RETURN_IF_ERROR(validate_options(given));
  std::unique_ptr<Target> t(new Target());
  // From here on poll_groups is the number of groups that run (never kPollGroupsAuto).
  t->poll_groups_ = choose_poll_groups(given, allowed_cpu_count());
  TargetOptions options = given;
  options.poll_groups = t->poll_groups_.groups;
  t->registry_ = std::make_unique<StatsRegistry>();
  t->statuses_ = std::make_unique<StatusCounters>();
  const SubsystemConfig common = subsystem_defaults(options);
  SubsystemConfig disc = common;
  disc.nqn = proto::kDiscoveryNqn;
  disc.discovery = true;
  t->discovery_ = std::make_unique<Subsystem>(disc, *t->registry_);
  const std::vector<PortOptions> port_specs = port_list(options);
  for (const PortOptions& spec : port_specs) t->ports_.push_back(t->make_port(spec));
  t->regroup_ports();
  std::vector<Port*> group;
  for (const auto& port : t->ports_) group.push_back(port.get());
  const std::vector<SubsystemOptions> specs = subsystem_list(options);
  // File and block-device I/O needs an engine per poll group: when a file namespace is
  // configured, or may be added by the control socket.
  for (const SubsystemOptions& spec : specs) {
    NVMF_RETURN_IF_ERROR(validate_subsystem(spec, "subsystem " + spec.nqn));
    const std::vector<NamespaceOptions> listed = namespace_list(spec);
    const bool files = std::any_of(listed.begin(), listed.end(),
                                   [](const NamespaceOptions& n) { return !n.file_path.empty(); });
    if ((!files && options.rpc_socket.empty()) || t->io_engine_ != nullptr) continue;
    NVMF_ASSIGN_OR_RETURN(
        t->io_engine_, IoEngine::create(options.io_engine, IoEngine::kDefaultDepth, options.uring));
    NVMF_LOG(INFO, "target") << "file and block-device I/O through " << t->io_engine_->name();
    if (options.uring.iopoll && std::string_view(t->io_engine_->name()) != "io_uring") {
      NVMF_LOG(WARN, "target") << "--uring-iopoll on does nothing with the "
                               << t->io_engine_->name()
                               << " engine: every operation completes by interrupt";
    }
  }
  for (const SubsystemOptions& spec : specs) {
    const SubsystemConfig cfg = subsystem_config(spec, options);
    std::vector<SubsystemNamespace> served;
    for (const NamespaceOptions& n : namespace_list(spec)) {
      NVMF_ASSIGN_OR_RETURN(auto ns, open_namespace(n, options, t->io_engine_.get()));
      served.push_back(
          {n.nsid, ns.get(), n.nguid.value_or(std::array<uint8_t, 16>{}), n.uuid, n.anagrpid});
      NVMF_LOG(INFO, "target") << "subsystem " << cfg.nqn << ": namespace " << n.nsid << " on "
                               << ns->describe() << ", " << ns->num_lbas() << " LBAs of "
                               << ns->lba_size() << " bytes";
      t->namespaces_.push_back(std::move(ns));
    }
    if (served.empty()) NVMF_LOG(INFO, "target") << "subsystem " << cfg.nqn << ": no namespace";
    auto sub = std::make_unique<Subsystem>(cfg, std::move(served), *t->registry_);
    for (size_t i = 0; i < port_specs.size(); ++i) {
      const std::vector<std::string>& links = port_specs[i].subsystems;
      if (links.empty() || std::find(links.begin(), links.end(), cfg.nqn) != links.end()) {
        t->ports_[i]->link(*sub);
      }
    }
    NVMF_LOG(INFO, "target") << "subsystem " << cfg.nqn << ": "
                             << (cfg.allow_any_host ? "any host"
                                                    : std::to_string(cfg.allowed_hosts.size()) +
                                                          " allowed host(s)");
    t->subsystems_.push_back(std::move(sub));
  }
  NegotiationStats pending;
  pending.configured_inline_data_size = options.inline_data_size;
  pending.mdts = common.mdts;
  pending.max_transfer_bytes = common.max_transfer_bytes();
  t->registry_->set_negotiation(pending);
  PortLimits limits;
  limits.max_io_queues = options.max_io_queues;
  limits.admin_queue_size = common.admin_queue_size;
  limits.io_queue_size = common.io_queue_size;
  limits.mdts = common.mdts;
  limits.aerl = common.aerl;
  // in_capsule_data_size: resolved per port by the event loop from its configured value.
  for (auto& port : t->ports_) port->set_limits(limits);
  NVMF_ASSIGN_OR_RETURN(t->loop_,
                        EventLoop::create(options, *t->statuses_, t->io_engine_.get(), group));
  std::vector<EventLoop*> loops{t->loop_.get()};
  for (size_t g = 1; g < options.poll_groups; ++g) {
    IoEngine* engine = nullptr;
    if (t->io_engine_ != nullptr) {  // io_uring is one thread's: each group has its own
      NVMF_ASSIGN_OR_RETURN(
          auto own, IoEngine::create(options.io_engine, IoEngine::kDefaultDepth, options.uring));
      engine = own.get();
      t->group_engines_.push_back(std::move(own));
    }
    t->group_statuses_.push_back(std::make_unique<StatusCounters>());
    NVMF_ASSIGN_OR_RETURN(auto loop,
                          EventLoop::create(options, *t->group_statuses_.back(), engine, group, g));
    loops.push_back(loop.get());
    t->groups_.push_back(std::move(loop));
  }
  t->loop_->set_groups(loops);
  // "2 poll groups (auto: 2 CPUs; --poll event; 128 shared buffers and 2048 SRQ receives each
  // per device)"
  const PollGroupShares shares = poll_group_shares(options, options.poll_groups);
  NVMF_LOG(INFO, "target") << options.poll_groups
                           << (options.poll_groups == 1 ? " poll group (" : " poll groups (")
                           << t->poll_groups_.reason << "; --poll "
                           << poll_mode_name(options.poll_mode) << "; "
                           << (options.num_shared_buffers == 0
                                   ? std::string("per-slot data buffers")
                                   : std::to_string(shares.shared_buffers) + " shared buffers")
                           << (options.srq
                                   ? " and " + std::to_string(shares.srq_depth) + " SRQ receives"
                                   : std::string())
                           << (options.poll_groups == 1 ? " per device)" : " each per device)");
  // The floors of poll_group_shares() at work: more registered memory than the options say.
  if (options.num_shared_buffers > 0 && options.num_shared_buffers < options.poll_groups) {
    NVMF_LOG(WARN, "target") << "--num-shared-buffers " << options.num_shared_buffers << " is "
                             << "fewer than the " << options.poll_groups << " poll groups: each "
                             << "gets 1 (a command's data needs one), "
                             << shares.total_shared_buffers << " per device in all";
  }
  if (options.srq && (options.max_srq_depth + options.poll_groups - 1) / options.poll_groups <
                         kMinSrqDepthPerGroup) {
    NVMF_LOG(WARN, "target") << "--max-srq-depth " << options.max_srq_depth << " over "
                             << options.poll_groups << " poll groups is below "
                             << kMinSrqDepthPerGroup << " receives a group: each gets "
                             << shares.srq_depth << ", " << shares.total_srq_depth
                             << " per device in all";
  }
  for (size_t i = 0; i < t->ports_.size(); ++i) {
    t->ports_[i]->set_trsvcid(std::to_string(t->loop_->port(i)));
  }
  t->options_ = options;
  if (!options.rpc_socket.empty()) {
    t->rpc_methods_ = std::make_unique<RpcDispatcher>();
    t->add_rpc_methods(*t->rpc_methods_);
    RpcServerOptions rpc;
    rpc.path = options.rpc_socket;
    NVMF_ASSIGN_OR_RETURN(t->rpc_server_, RpcServer::start(rpc, *t->rpc_methods_));
    NVMF_LOG(INFO, "target") << "control socket " << options.rpc_socket
                             << " (JSON-RPC 2.0; nvmf-target rpc -s PATH rpc_get_methods)";
  }
  return t;
}

std::string Target::rpc_socket_path() const {
  return rpc_server_ != nullptr ? rpc_server_->path() : std::string();
}

Status Target::run() {
  std::vector<Status> results(groups_.size());
  std::vector<std::thread> threads;
  threads.reserve(groups_.size());
  for (size_t i = 0; i < groups_.size(); ++i) {
    threads.emplace_back([this, i, &results] {
      results[i] = groups_[i]->run();
      if (!results[i].ok()) loop_->stop();  // one group failed: the target stops
    });
  }
  Status st = loop_->run();
  for (auto& g : groups_) g->stop();
  for (auto& th : threads) th.join();
  for (Status& r : results) {
    if (st.ok() && !r.ok()) st = r;
  }
  return st;
}

void Target::stop() {
  loop_->stop();
  for (auto& g : groups_) g->stop();
}

TargetStats Target::stats() const {
  std::vector<const StatusCounters*> all{statuses_.get()};
  for (const auto& s : group_statuses_) all.push_back(s.get());
  TargetStats s = registry_->snapshot(all);
  // Group 0 has io_engine_, group g > 0 group_engines_[g - 1] (both or neither exist).
  std::vector<const IoEngine*> engines{io_engine_.get()};
  for (const auto& e : group_engines_) engines.push_back(e.get());
  for (uint32_t g = 0; g < engines.size(); ++g) {
    const IoEngine* e = engines[g];
    if (e == nullptr) continue;
    s.io_engines.push_back({g, e->name(), e->describe(), e->setup_flags(), e->fixed_buffers(),
                            e->fixed_operations(), e->iopoll(), e->polled_operations()});
  }
  return s;
}

const PollGroupChoice& Target::poll_groups() const { return poll_groups_; }

uint16_t Target::port() const { return loop_->port(0); }

std::string Target::listen_address() const { return loop_->listen_address(0); }

size_t Target::port_count() const { return ports_.size(); }

uint16_t Target::port(size_t index) const { return loop_->port(index); }

std::string Target::listen_address(size_t index) const { return loop_->listen_address(index); }

Status Target::close_port(size_t index) { return loop_->close_listener(index); }

bool Target::quiesce_poll_groups(std::chrono::milliseconds timeout) {
  struct Barrier {
    std::mutex mutex;
    std::condition_variable done;
    size_t left = 0;
  };
  // Shared with the groups' tasks: one that runs after a timeout finds it still there.
  auto barrier = std::make_shared<Barrier>();
  barrier->left = 1 + groups_.size();
  auto passed = [barrier] {
    std::lock_guard lock(barrier->mutex);
    if (--barrier->left == 0) barrier->done.notify_all();
  };
  loop_->at_next_round(passed);
  for (auto& g : groups_) g->at_next_round(passed);
  std::unique_lock lock(barrier->mutex);
  return barrier->done.wait_for(lock, timeout, [&] { return barrier->left == 0; });
}

void Target::free_subsystem(std::unique_ptr<Subsystem> subsystem) {
  if (subsystem != nullptr) retired_subsystems_.push_back(std::move(subsystem));
  // This one and any left by earlier calls: freed once no queue is bound to it. The last queue
  // may still be inside DrainCounter::release() when the count reads 0: the poll groups pass a
  // round first (a queue is destroyed within one).
  std::vector<std::unique_ptr<Subsystem>> idle;
  for (auto it = retired_subsystems_.begin(); it != retired_subsystems_.end();) {
    Subsystem& s = **it;
    const bool newest = it + 1 == retired_subsystems_.end() && s.queues().count() != 0;
    if (!s.queues().wait_idle(std::chrono::milliseconds(newest ? 5000 : 0))) {
      if (newest) {
        NVMF_LOG(WARN, "target") << "subsystem " << s.config().nqn << ": " << s.queues().count()
                                 << " queue(s) still bound 5 s after its deletion; freed later";
      }
      ++it;
      continue;
    }
    idle.push_back(std::move(*it));
    it = retired_subsystems_.erase(it);
  }
  if (idle.empty()) return;
  if (!quiesce_poll_groups(std::chrono::seconds(10))) {
    for (auto& s : idle) retired_subsystems_.push_back(std::move(s));  // a later call tries again
    return;
  }
  for (auto& s : idle) {
    std::vector<const Namespace*> owned;
    for (const SubsystemNamespace& n : s->namespaces()) owned.push_back(n.ns);
    {
      ControlLock lock(control_mutex());
      s.reset();
    }
    for (const Namespace* ns : owned) close_namespace(ns);
  }
}

void Target::close_namespace(const Namespace* ns) {
  auto it = std::find_if(namespaces_.begin(), namespaces_.end(),
                         [&](const auto& owned) { return owned.get() == ns; });
  if (it != namespaces_.end()) {
    retired_namespaces_.push_back(std::move(*it));
    namespaces_.erase(it);
  }
  // This one and any left by earlier calls: closed once their last operation completed and the
  // poll groups passed a round (the last completion may still be inside io_finished()).
  std::vector<std::unique_ptr<Namespace>> idle;
  for (auto r = retired_namespaces_.begin(); r != retired_namespaces_.end();) {
    if ((*r)->wait_io_idle(std::chrono::milliseconds(r->get() == ns ? 5000 : 0))) {
      idle.push_back(std::move(*r));
      r = retired_namespaces_.erase(r);
      continue;
    }
    if (r->get() == ns) {
      NVMF_LOG(WARN, "target") << "namespace on " << ns->describe() << ": " << ns->io_in_flight()
                               << " backend operation(s) still in flight 5 s after its removal; "
                                  "closed when they complete";
    }
    ++r;
  }
  if (idle.empty()) return;
  if (!quiesce_poll_groups(std::chrono::seconds(10))) {
    for (auto& n : idle) retired_namespaces_.push_back(std::move(n));  // a later call tries again
  }
}

}  // namespace nvmf::target
