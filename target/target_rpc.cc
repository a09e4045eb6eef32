// SPDX-License-Identifier: BSD-3-Clause
// The control socket's methods (docs/target.md "Control socket"): SPDK's names and parameters
// where SPDK has the method, answers in SPDK's shape with this target's fields added.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "common/id_text.h"
#include "common/log.h"
#include "common/wire_text.h"
#include "proto/discovery.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"
#include "target/control_lock.h"
#include "target/namespace.h"
#include "target/port.h"
#include "target/rpc.h"
#include "target/saved_config.h"
#include "target/stats_json.h"
#include "target/subsystem.h"
#include "target/target.h"

namespace nvmf::target {
namespace {

using json = nlohmann::json;

// SPDK's listen address object.
json address_json(const DiscoveryAddress& a) {
  return {{"trtype", "RDMA"},
          {"adrfam", a.adrfam == proto::kAdrfamIpv6 ? "IPv6" : "IPv4"},
          {"traddr", a.traddr},
          {"trsvcid", a.trsvcid}};
}

// "10.0.0.2:51234" (or "[fe80::1]:51234") as SPDK's peer address object.
json peer_json(const std::string& peer) {
  const size_t colon = peer.rfind(':');
  std::string addr = colon == std::string::npos ? peer : peer.substr(0, colon);
  const std::string port = colon == std::string::npos ? "" : peer.substr(colon + 1);
  if (addr.size() >= 2 && addr.front() == '[' && addr.back() == ']') {
    addr = addr.substr(1, addr.size() - 2);
  }
  return {{"trtype", "RDMA"},
          {"adrfam", addr.find(':') != std::string::npos ? "IPv6" : "IPv4"},
          {"traddr", escape_wire_text(addr)},
          {"trsvcid", escape_wire_text(port)}};
}

[[noreturn]] void no_subsystem(const std::string& nqn) {
  throw RpcError{
      RpcErrorCode::kInvalidParams,
      "\"nqn\": no subsystem " + json(nqn).dump(-1, ' ', false, json::error_handler_t::replace)};
}

}  // namespace

void Target::add_rpc_methods(RpcDispatcher& d) {
  d.add("rpc_get_methods", [&d](const json& params) {
    rpc_only_keys(params, {"current"});
    return json(d.methods());
  });

  // Every subsystem, the discovery subsystem first, as SPDK lists them.
  d.add("nvmf_get_subsystems", [this](const json& params) {
    rpc_only_keys(params, {"tgt_name"});
    ControlLock lock(control_mutex());  // hosts and namespaces may change under it otherwise
    json out = json::array();
    auto listeners = [this](const Subsystem* s) {
      json list = json::array();
      for (const auto& port : ports_) {
        const auto& linked = port->subsystems();
        if (s == nullptr || std::find(linked.begin(), linked.end(), s) != linked.end()) {
          list.push_back(address_json(port->address()));
        }
      }
      return list;
    };
    out.push_back({{"nqn", proto::kDiscoveryNqn},
                   {"subtype", "Discovery"},
                   {"listen_addresses", listeners(nullptr)},
                   {"allow_any_host", true},
                   {"hosts", json::array()}});
    for (const auto& s : subsystems_) {
      const SubsystemConfig& c = s->config();
      json hosts = json::array();
      for (const auto& h : c.allowed_hosts) hosts.push_back({{"nqn", h}});
      json namespaces = json::array();
      for (const SubsystemNamespace& n : s->namespaces()) {
        json ns = {{"nsid", n.nsid},
                   {"name", n.ns->file_backed() ? n.ns->path() : "ram"},
                   {"block_size", n.ns->lba_size()},
                   {"num_blocks", n.ns->num_lbas()},
                   {"size_bytes", n.ns->size_bytes()},
                   {"nguid", hex_text(n.nguid)}};
        if (n.ns->file_backed()) ns["path"] = n.ns->path();
        if (n.uuid) ns["uuid"] = uuid_text(*n.uuid);
        namespaces.push_back(std::move(ns));
      }
      out.push_back({{"nqn", c.nqn},
                     {"subtype", "NVMe"},
                     {"listen_addresses", listeners(s.get())},
                     {"allow_any_host", c.allow_any_host},
                     {"hosts", hosts},
                     {"serial_number", s->serial()},
                     {"model_number", c.model},
                     {"min_cntlid", c.cntlid_min},
                     {"max_cntlid", c.cntlid_max},
                     {"namespaces", namespaces}});
    }
    return out;
  });

  // The --json report, live, with SPDK's per-poll-group view in front.
  d.add("nvmf_get_stats", [this](const json& params) {
    rpc_only_keys(params, {"tgt_name"});
    json out = stats_report(*this, options_);
    const TargetStats s = stats();
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> per_group;  // admin, I/O queues now
    for (uint32_t g = 0; g < poll_groups_.groups; ++g) per_group[g] = {0, 0};
    for (const QueueStats& q : s.queues) {
      auto& [admin, io] = per_group[q.group];
      ++(q.qid == 0 ? admin : io);
    }
    json groups = json::array();
    for (const auto& [g, counts] : per_group) {
      groups.push_back({{"name", "nvmf_tgt_poll_group_" + std::to_string(g)},
                        {"group", g},
                        {"current_admin_qpairs", counts.first},
                        {"current_io_qpairs", counts.second}});
    }
    out["poll_groups"] = std::move(groups);
    out["poll_group_count"] = poll_groups_.groups;
    return out;
  });

  auto find = [this](const json& params) -> Subsystem& {
    const std::string nqn = rpc_string(params, "nqn");
    for (const auto& s : subsystems_) {
      if (s->config().nqn == nqn) return *s;
    }
    no_subsystem(nqn);
  };
  // The Discovery Log Page of every port linking `s` changed: GENCTR moves, and the discovery
  // controllers that asked for it get a Discovery Log Page Change notice (nvmet sends it to
  // every discovery controller the same way).
  auto log_changed = [this](const Subsystem& s) {
    for (const auto& port : ports_) {
      const auto& linked = port->subsystems();
      if (std::find(linked.begin(), linked.end(), &s) != linked.end()) port->log_changed();
    }
    discovery_->post_event(proto::aen_dw0(proto::kAenTypeNotice, proto::kAenInfoDiscoveryLogChange,
                                          proto::kLogDiscovery),
                           proto::kAecDiscoveryLogChange);
  };
  auto host_param = [](const json& params) {
    const std::string host = rpc_string(params, "host");
    if (host.empty() || host.size() > proto::kNqnMaxLength || !is_safe_wire_text(host)) {
      throw RpcError{RpcErrorCode::kInvalidParams, "\"host\": an NQN of 1.." +
                                                       std::to_string(proto::kNqnMaxLength) +
                                                       " bytes of printable UTF-8"};
    }
    return host;
  };

  // nvmet: a link under allowed_hosts; SPDK: nvmf_subsystem_add_host. New Connects of `host`
  // are admitted; nothing else changes.
  d.add("nvmf_subsystem_add_host", [find, log_changed, host_param](const json& params) {
    rpc_only_keys(params, {"nqn", "host", "tgt_name"});
    const std::string host = host_param(params);
    ControlLock lock(control_mutex());
    Subsystem& s = find(params);
    if (!s.add_host(host)) {
      throw RpcError{RpcErrorCode::kInvalidParams, "\"host\": " + host + " is allowed already"};
    }
    log_changed(s);
    NVMF_LOG(INFO, "target") << "control socket: host " << host << " allowed on " << s.config().nqn;
    return json(true);
  });

  // SPDK's nvmf_subsystem_remove_host: `host` is no longer allowed, and its controllers are
  // freed and all their queues disconnected now.
  d.add("nvmf_subsystem_remove_host", [find, log_changed, host_param](const json& params) {
    rpc_only_keys(params, {"nqn", "host", "tgt_name"});
    const std::string host = host_param(params);
    ControlLock lock(control_mutex());
    Subsystem& s = find(params);
    if (!s.remove_host(host, "host removed from the subsystem by the control socket")) {
      throw RpcError{RpcErrorCode::kInvalidParams, "\"host\": " + host + " is not allowed"};
    }
    log_changed(s);
    NVMF_LOG(INFO, "target") << "control socket: host " << host << " removed from "
                             << s.config().nqn;
    return json(true);
  });

  // nvmet's attr_allow_any_host; SPDK's nvmf_subsystem_allow_any_host. Checked at Connect:
  // connected hosts stay.
  d.add("nvmf_subsystem_allow_any_host", [find, log_changed](const json& params) {
    rpc_only_keys(params, {"nqn", "allow_any_host", "tgt_name"});
    const json& allow = rpc_param(params, "allow_any_host");
    if (!allow.is_boolean()) {
      throw RpcError{RpcErrorCode::kInvalidParams, "\"allow_any_host\" must be true or false"};
    }
    ControlLock lock(control_mutex());
    Subsystem& s = find(params);
    s.set_allow_any_host(allow.get<bool>());
    log_changed(s);
    return json(true);
  });

  // SPDK's nvmf_subsystem_add_ns, with `path` (a file or block device, as nvmetcli's
  // device.path) or `ram_size` where SPDK names a bdev: opened, then published to the poll groups
  // at once; hosts get a Namespace Attribute Changed notice and find it in the Changed
  // Namespace List. Returns the NSID.
  d.add("nvmf_subsystem_add_ns", [this, find](const json& params) {
    rpc_only_keys(params, {"nqn", "namespace", "tgt_name"});
    const json& spec = rpc_param(params, "namespace");
    if (!spec.is_object()) {
      throw RpcError{RpcErrorCode::kInvalidParams, "\"namespace\" must be an object"};
    }
    rpc_only_keys(spec, {"nsid", "path", "size", "ram_size", "nguid", "uuid", "buffered_io"});
    SubsystemNamespace n;
    n.nsid =
        spec.contains("nsid") ? static_cast<uint32_t>(rpc_uint(spec, "nsid", 1, 0xFFFFFFFE)) : 0;
    for (const char* key : {"nguid", "uuid"}) {
      if (!spec.contains(key)) continue;
      auto id = parse_id_text(rpc_string(spec, key));
      if (!id.ok()) {
        throw RpcError{RpcErrorCode::kInvalidParams,
                       "\"" + std::string(key) + "\": " + id.status().message()};
      }
      if (std::string_view(key) == "nguid") {
        n.nguid = *id;
      } else {
        n.uuid = *id;
      }
    }
    const bool has_path = spec.contains("path");
    if (has_path == spec.contains("ram_size")) {
      throw RpcError{RpcErrorCode::kInvalidParams,
                     "give exactly one of \"path\" (a file or block device) and \"ram_size\""};
    }
    const uint32_t lba = options_.lba_size;
    auto whole_lbas = [lba](const json& obj, const char* key) -> uint64_t {
      const uint64_t bytes = rpc_uint(obj, key, lba, uint64_t{1} << 62);
      if (bytes % lba != 0) {
        throw RpcError{RpcErrorCode::kInvalidParams, "\"" + std::string(key) +
                                                         "\": not a whole number of LBAs of " +
                                                         std::to_string(lba) + " bytes"};
      }
      return bytes;
    };
    Result<std::unique_ptr<Namespace>> opened = Status::internal("not opened");
    if (has_path) {
      const std::string path = rpc_string(spec, "path");
      if (path.empty() || path.find('\0') != std::string::npos) {
        throw RpcError{RpcErrorCode::kInvalidParams, "\"path\": a file or block device path"};
      }
      FileBackingOptions backing;
      backing.direct = options_.direct_io;
      if (spec.contains("buffered_io")) {
        const json& b = spec["buffered_io"];
        if (!b.is_boolean()) {
          throw RpcError{RpcErrorCode::kInvalidParams, "\"buffered_io\" must be true or false"};
        }
        backing.direct = !b.get<bool>();
      }
      const uint64_t size = spec.contains("size") ? whole_lbas(spec, "size") : 0;
      opened = Namespace::open_file(path, size, lba, *io_engine_, backing);
    } else {
      if (spec.contains("size") || spec.contains("buffered_io")) {
        throw RpcError{RpcErrorCode::kInvalidParams,
                       "\"size\" and \"buffered_io\" go with \"path\" (a RAM namespace has "
                       "\"ram_size\")"};
      }
      opened = Namespace::create_ram(whole_lbas(spec, "ram_size"), lba);
    }
    if (!opened.ok()) throw RpcError{RpcErrorCode::kInvalidParams, opened.status().message()};
    std::unique_ptr<Namespace> ns = std::move(*opened);
    n.ns = ns.get();
    ControlLock lock(control_mutex());
    Subsystem& sub = find(params);
    Result<uint32_t> nsid = sub.add_namespace(n);
    if (!nsid.ok()) {
      throw RpcError{RpcErrorCode::kInvalidParams, "\"nsid\": " + nsid.status().message()};
    }
    NVMF_LOG(INFO, "target") << "control socket: subsystem " << sub.config().nqn << ": namespace "
                             << *nsid << " added on " << ns->describe() << ", " << ns->num_lbas()
                             << " LBAs of " << ns->lba_size() << " bytes";
    namespaces_.push_back(std::move(ns));
    return json(*nsid);
  });

  // SPDK's nvmf_subsystem_remove_ns: hosts are told at once; the file is closed once no poll
  // group can reach it and its last backend operation completed (commands still on their way
  // to it fail with Invalid Namespace).
  d.add("nvmf_subsystem_remove_ns", [this, find](const json& params) {
    rpc_only_keys(params, {"nqn", "nsid", "tgt_name"});
    const auto nsid = static_cast<uint32_t>(rpc_uint(params, "nsid", 1, 0xFFFFFFFE));
    Subsystem* sub = nullptr;
    Namespace* ns = nullptr;
    {
      ControlLock lock(control_mutex());
      sub = &find(params);
      Result<Namespace*> removed = sub->remove_namespace(nsid);
      if (!removed.ok()) {
        throw RpcError{RpcErrorCode::kInvalidParams, "\"nsid\": " + removed.status().message()};
      }
      ns = *removed;
      NVMF_LOG(INFO, "target") << "control socket: subsystem " << sub->config().nqn
                               << ": namespace " << nsid << " removed (" << ns->describe() << ")";
    }
    const bool quiet = quiesce_poll_groups(std::chrono::seconds(10));
    if (!quiet) {
      // A group that never comes back to the top of its loop may still read the old table:
      // keep everything (a leak, never a use after free).
      NVMF_LOG(WARN, "target") << "namespace " << nsid
                               << ": a poll group did not pass a round within 10 s; its "
                                  "storage stays open";
      return json(true);
    }
    {
      ControlLock lock(control_mutex());
      sub->retire_tables();
    }
    close_namespace(ns);
    return json(true);
  });

  // A new size (nvmet: a namespace's revalidate_size; SPDK sends the same notice when a bdev
  // is resized). `size` in bytes for a RAM namespace or to extend a file; none: a file's or
  // block device's size is read again. Returns the new size in bytes.
  d.add("nvmf_subsystem_resize_ns", [this, find](const json& params) {
    rpc_only_keys(params, {"nqn", "nsid", "size", "tgt_name"});
    const auto nsid = static_cast<uint32_t>(rpc_uint(params, "nsid", 1, 0xFFFFFFFE));
    const uint64_t size =
        params.contains("size") ? rpc_uint(params, "size", 1, uint64_t{1} << 62) : 0;
    Namespace* ns = nullptr;
    uint64_t before = 0;
    Result<uint64_t> after = uint64_t{0};
    {
      ControlLock lock(control_mutex());
      Subsystem& sub = find(params);
      const SubsystemNamespace* n = sub.find_namespace(nsid);
      if (n == nullptr) {
        throw RpcError{RpcErrorCode::kInvalidParams,
                       "\"nsid\": NSID " + std::to_string(nsid) + " is not active"};
      }
      ns = n->ns;
      before = ns->size_bytes();
      after = ns->resize(size);
      if (!after.ok()) throw RpcError{RpcErrorCode::kInvalidParams, after.status().message()};
      if (*after != before) sub.namespace_changed(nsid);
      NVMF_LOG(INFO, "target") << "control socket: subsystem " << sub.config().nqn << ": namespace "
                               << nsid << " resized from " << before << " to " << *after
                               << " bytes";
    }
    // Shrunk RAM: its tail goes back to the kernel once no group can still be copying there.
    if (*after < before && quiesce_poll_groups(std::chrono::seconds(10))) {
      ns->release_beyond_size();
    }
    return json(*after);
  });

  // SPDK's save_config, in nvmetcli's format: what `nvmf-target --config` reads back to serve
  // the same ports, subsystems, hosts and namespaces (same NSIDs, NGUIDs, UUIDs and serial).
  d.add("save_config", [this](const json& params) {
    rpc_only_keys(params, {});
    ControlLock lock(control_mutex());
    std::vector<PortOptions> ports;
    for (const auto& port : ports_) {
      if (!port->enabled()) continue;
      const DiscoveryAddress& a = port->address();
      PortOptions p;
      p.portid = a.portid;
      p.traddr = a.traddr;
      p.trsvcid = a.trsvcid;
      p.treq = a.treq & proto::kTreqSecureChannelMask;
      p.inline_data_size = port->configured_inline_data_size();
      for (const Subsystem* s : port->subsystems()) p.subsystems.push_back(s->config().nqn);
      ports.push_back(std::move(p));
    }
    std::vector<SubsystemOptions> subsystems;
    for (const auto& sub : subsystems_) {
      const SubsystemConfig& c = sub->config();
      SubsystemOptions s;
      s.nqn = c.nqn;
      s.allow_any_host = c.allow_any_host;
      s.allowed_hosts = c.allowed_hosts;
      s.serial = sub->serial();
      s.model = c.model;
      s.firmware = c.firmware;
      s.version = c.version;
      s.cntlid_min = c.cntlid_min;
      s.cntlid_max = c.cntlid_max;
      if (c.max_io_queues < options_.max_io_queues) s.qid_max = c.max_io_queues;
      bool first = true;
      for (const SubsystemNamespace& n : sub->namespaces()) {
        NamespaceOptions o;
        o.nsid = n.nsid;
        if (n.ns->file_backed()) {
          o.file_path = n.ns->path();
          o.direct_io = n.ns->direct();
        } else {
          o.ram_size = n.ns->size_bytes();
        }
        o.nguid = n.nguid;
        o.uuid = n.uuid;
        if (!first) {
          s.more_namespaces.push_back(std::move(o));
          continue;
        }
        first = false;
        s.nsid = o.nsid;
        s.file_path = o.file_path;
        s.ram_size = o.ram_size;
        s.direct_io = o.direct_io;
        s.nguid = o.nguid;
        s.uuid = o.uuid;
      }
      subsystems.push_back(std::move(s));
    }
    return nvmet_config_json(ports, subsystems);
  });

  d.add("nvmf_subsystem_get_controllers", [this, find](const json& params) {
    rpc_only_keys(params, {"nqn", "tgt_name"});
    const Subsystem& sub = find(params);  // the list of subsystems is fixed at start
    json out = json::array();
    for (const ControllerStats& c : stats().controllers) {
      if (c.subnqn != sub.config().nqn) continue;
      out.push_back({{"cntlid", c.cntlid},
                     {"hostnqn", escape_wire_text(c.hostnqn)},
                     {"num_io_qpairs", c.io_queues},
                     {"ready", c.ready}});
    }
    return out;
  });

  d.add("nvmf_subsystem_get_qpairs", [this, find](const json& params) {
    rpc_only_keys(params, {"nqn", "tgt_name"});
    const Subsystem& sub = find(params);
    const TargetStats s = stats();
    std::set<uint16_t> cntlids;
    for (const ControllerStats& c : s.controllers) {
      if (c.subnqn == sub.config().nqn) cntlids.insert(c.cntlid);
    }
    json out = json::array();
    for (const QueueStats& q : s.queues) {
      if (cntlids.count(q.cntlid) == 0) continue;
      out.push_back({{"cntlid", q.cntlid},
                     {"qid", q.qid},
                     {"state", "active"},
                     {"peer_address", peer_json(q.peer)},
                     {"queue_size", q.queue_size},
                     {"group", q.group},
                     {"commands", q.counters.commands},
                     {"request_states", request_states_json(q.counters)}});
    }
    return out;
  });
}

}  // namespace nvmf::target
