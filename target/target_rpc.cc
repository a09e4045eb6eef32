// SPDX-License-Identifier: BSD-3-Clause
// The control socket's methods (docs/target.md "Control socket"): SPDK's names and parameters
// where SPDK has the method, answers in SPDK's shape with this target's fields added.
#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "common/id_text.h"
#include "common/log.h"
#include "common/wire_text.h"
#include "proto/discovery.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"
#include "target/config.h"
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
                   {"nguid", hex_text(n.nguid)},
                   {"anagrpid", n.anagrpid}};
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
    const TargetStats s = stats();
    json out = stats_report(*this, options_, s);
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
  auto log_changed = [this](const Subsystem& s) { discovery_log_changed(s); };
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
    rpc_only_keys(spec,
                  {"nsid", "path", "size", "ram_size", "nguid", "uuid", "buffered_io", "anagrpid"});
    NamespaceOptions n;
    if (spec.contains("anagrpid")) {
      n.anagrpid = static_cast<uint32_t>(rpc_uint(spec, "anagrpid", 1, kMaxAnaGroups));
    }
    n.nsid =
        spec.contains("nsid") ? static_cast<uint32_t>(rpc_uint(spec, "nsid", 1, 0xFFFFFFFE)) : 0;
    for (const char* key : {"nguid", "uuid"}) {
      if (!spec.contains(key)) continue;
      auto id = parse_id_text(rpc_string(spec, key));
      if (!id.ok()) {
        throw RpcError{RpcErrorCode::kInvalidParams,
                       "\"" + std::string(key) + "\": " + id.status().message()};
      }
      (std::string_view(key) == "nguid" ? n.nguid : n.uuid) = *id;
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
    if (has_path) {
      n.file_path = rpc_string(spec, "path");
      if (n.file_path.empty() || n.file_path.find('\0') != std::string::npos) {
        throw RpcError{RpcErrorCode::kInvalidParams, "\"path\": a file or block device path"};
      }
      if (spec.contains("buffered_io")) {
        const json& b = spec["buffered_io"];
        if (!b.is_boolean()) {
          throw RpcError{RpcErrorCode::kInvalidParams, "\"buffered_io\" must be true or false"};
        }
        n.direct_io = !b.get<bool>();
      }
      if (spec.contains("size")) n.file_size = whole_lbas(spec, "size");
    } else {
      if (spec.contains("size") || spec.contains("buffered_io")) {
        throw RpcError{RpcErrorCode::kInvalidParams,
                       "\"size\" and \"buffered_io\" go with \"path\" (a RAM namespace has "
                       "\"ram_size\")"};
      }
      n.ram_size = whole_lbas(spec, "ram_size");
    }
    Result<uint32_t> nsid = add_namespace(find(params), n);
    if (!nsid.ok()) {
      const bool nsid_error = nsid.status().message().rfind("NSID ", 0) == 0;
      throw RpcError{RpcErrorCode::kInvalidParams,
                     (nsid_error ? "\"nsid\": " : "") + nsid.status().message()};
    }
    return json(*nsid);
  });

  // SPDK's nvmf_subsystem_remove_ns: hosts are told at once; the file is closed once no poll
  // group can reach it and its last backend operation completed (commands still on their way
  // to it fail with Invalid Namespace).
  d.add("nvmf_subsystem_remove_ns", [this, find](const json& params) {
    rpc_only_keys(params, {"nqn", "nsid", "tgt_name"});
    const auto nsid = static_cast<uint32_t>(rpc_uint(params, "nsid", 1, 0xFFFFFFFE));
    if (Status st = remove_namespace(find(params), nsid); !st.ok()) {
      throw RpcError{RpcErrorCode::kInvalidParams, "\"nsid\": " + st.message()};
    }
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

  // SPDK's listen address object: its traddr and trsvcid (default 4420).
  auto listen_address = [](const json& params) {
    const json& a = rpc_param(params, "listen_address");
    if (!a.is_object()) {
      throw RpcError{RpcErrorCode::kInvalidParams, "\"listen_address\" must be an object"};
    }
    rpc_only_keys(a, {"trtype", "adrfam", "traddr", "trsvcid"});
    if (a.contains("trtype")) {
      std::string t = rpc_string(a, "trtype");
      std::transform(t.begin(), t.end(), t.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (t != "rdma") {
        throw RpcError{RpcErrorCode::kInvalidParams,
                       "\"listen_address.trtype\": only RDMA is served"};
      }
    }
    return std::pair{rpc_string(a, "traddr"),
                     a.contains("trsvcid") ? rpc_string(a, "trsvcid") : std::string("4420")};
  };
  // The enabled port listening there; null when there is none. ports_ changes on this thread.
  auto port_at = [this](const std::pair<std::string, std::string>& at) -> Port* {
    for (const auto& port : ports_) {
      const DiscoveryAddress& pa = port->address();
      if (port->enabled() && pa.traddr == at.first && pa.trsvcid == at.second) return port.get();
    }
    return nullptr;
  };

  // SPDK's nvmf_create_subsystem (nvmet: mkdir subsystems/NQN): no namespace, no port, no
  // host allowed unless `allow_any_host` (SPDK's and nvmet's default is false).
  d.add("nvmf_create_subsystem", [this](const json& params) {
    rpc_only_keys(params, {"nqn", "serial_number", "model_number", "allow_any_host", "min_cntlid",
                           "max_cntlid", "tgt_name"});
    SubsystemConfig cfg = subsystem_defaults(options_);
    cfg.nqn = rpc_string(params, "nqn");
    if (cfg.nqn.empty() || cfg.nqn.size() > proto::kNqnMaxLength || !is_safe_wire_text(cfg.nqn) ||
        cfg.nqn == proto::kDiscoveryNqn) {
      throw RpcError{RpcErrorCode::kInvalidParams,
                     "\"nqn\": an NQN of 1.." + std::to_string(proto::kNqnMaxLength) +
                         " bytes of printable UTF-8, not the discovery NQN"};
    }
    cfg.allow_any_host = false;
    if (params.contains("allow_any_host")) {
      if (!params["allow_any_host"].is_boolean()) {
        throw RpcError{RpcErrorCode::kInvalidParams, "\"allow_any_host\" must be true or false"};
      }
      cfg.allow_any_host = params["allow_any_host"].get<bool>();
    }
    for (auto [key, max, field] : {std::tuple{"serial_number", size_t{20}, &cfg.serial},
                                   std::tuple{"model_number", size_t{40}, &cfg.model}}) {
      if (!params.contains(key)) continue;
      *field = rpc_string(params, key);
      if (field->empty() || field->size() > max ||
          !std::all_of(field->begin(), field->end(),
                       [](char c) { return c >= 0x20 && c < 0x7F; })) {
        throw RpcError{RpcErrorCode::kInvalidParams, "\"" + std::string(key) + "\": 1.." +
                                                         std::to_string(max) +
                                                         " printable ASCII characters"};
      }
    }
    cfg.cntlid_min = static_cast<uint16_t>(
        params.contains("min_cntlid") ? rpc_uint(params, "min_cntlid", 1, 0xFFEF) : 1);
    cfg.cntlid_max = static_cast<uint16_t>(
        params.contains("max_cntlid") ? rpc_uint(params, "max_cntlid", 1, 0xFFEF) : 0xFFEF);
    if (cfg.cntlid_min > cfg.cntlid_max) {
      throw RpcError{RpcErrorCode::kInvalidParams, "\"min_cntlid\" is above \"max_cntlid\""};
    }
    if (Status st = create_subsystem(cfg); !st.ok()) {
      throw RpcError{RpcErrorCode::kInvalidParams, "\"nqn\": " + st.message()};
    }
    return json(true);
  });

  // SPDK's nvmf_delete_subsystem: unlinked from every port (hosts' discovery logs change), its
  // controllers freed and their queues disconnected; freed, and its namespaces closed, once no
  // queue is bound to it.
  d.add("nvmf_delete_subsystem", [this, find](const json& params) {
    rpc_only_keys(params, {"nqn", "tgt_name"});
    delete_subsystem(find(params));
    return json(true);
  });

  // SPDK's nvmf_subsystem_add_listener (nvmet: a link under ports/N/subsystems): the subsystem
  // is served on that port from now on, and the port's discovery log lists it. An address no
  // port has gets a new port (the next portid), listening from now on.
  d.add("nvmf_subsystem_add_listener",
        [this, find, listen_address, port_at, log_changed](const json& params) {
          rpc_only_keys(params, {"nqn", "listen_address", "tgt_name", "secure_channel"});
          if (params.contains("secure_channel") && params["secure_channel"] != false) {
            throw RpcError{RpcErrorCode::kInvalidParams, "\"secure_channel\": no TLS over RDMA"};
          }
          Subsystem& s = find(params);
          const auto at = listen_address(params);
          Port* port = port_at(at);
          if (port == nullptr) {
            PortOptions spec;
            spec.traddr = at.first;
            spec.trsvcid = at.second;
            spec.inline_data_size = options_.inline_data_size;
            spec.portid = 1;
            for (const auto& p : ports_) {
              spec.portid = std::max<uint16_t>(spec.portid, p->address().portid + 1);
            }
            Result<Port*> added = add_port(spec);
            if (!added.ok()) {
              throw RpcError{RpcErrorCode::kInvalidParams,
                             "\"listen_address\": " + added.status().message()};
            }
            port = *added;
          }
          ControlLock lock(control_mutex());
          if (port->linked(s)) {
            throw RpcError{RpcErrorCode::kInvalidParams,
                           "\"listen_address\": " + s.config().nqn + " is served there already"};
          }
          port->link(s);
          log_changed(s);
          NVMF_LOG(INFO, "target") << "control socket: subsystem " << s.config().nqn << " on port "
                                   << port->address().portid;
          return json(true);
        });

  // SPDK's nvmf_subsystem_remove_listener: no longer served on that port; the controllers whose
  // admin queue came in there are freed and their queues disconnected (nvmet_port_del_ctrls). A
  // port the control socket added stops listening with its last subsystem (as nvmet disables
  // a port when its last link goes).
  d.add("nvmf_subsystem_remove_listener", [this, find, listen_address, port_at,
                                           log_changed](const json& params) {
    rpc_only_keys(params, {"nqn", "listen_address", "tgt_name"});
    Subsystem& s = find(params);
    const auto at = listen_address(params);
    Port* port = port_at(at);
    if (port == nullptr) {
      throw RpcError{RpcErrorCode::kInvalidParams,
                     "\"listen_address\": no port of this target listens on " +
                         json(at.first + ":" + at.second)
                             .dump(-1, ' ', false, json::error_handler_t::replace)};
    }
    bool close = false;
    {
      ControlLock lock(control_mutex());
      log_changed(s);  // before the unlink: this port's GENCTR moves too
      if (!port->unlink(s)) {
        throw RpcError{RpcErrorCode::kInvalidParams,
                       "\"listen_address\": " + s.config().nqn + " is not served there"};
      }
      s.disconnect_port(port, "listener removed by the control socket");
      NVMF_LOG(INFO, "target") << "control socket: subsystem " << s.config().nqn << " off port "
                               << port->address().portid;
      close = port->subsystems().empty() &&
              std::find(added_ports_.begin(), added_ports_.end(), port) != added_ports_.end();
    }
    if (close) {
      for (size_t i = 0; i < ports_.size(); ++i) {
        if (ports_[i].get() != port) continue;
        if (Status st = close_port(i); !st.ok()) {
          NVMF_LOG(WARN, "target") << "port " << port->address().portid << ": " << st.to_string();
        }
      }
      added_ports_.erase(std::find(added_ports_.begin(), added_ports_.end(), port));
    }
    return json(true);
  });

  // SPDK's nvmf_subsystem_listener_set_ana_state (nvmet: ports/N/ana_groups/G/ana_state): the
  // ANA state of group `anagrpid` (every group the subsystem has there when absent) as that
  // listener presents the subsystem; its controllers there get an ANA Change notice and read
  // the new state in the ANA log page; I/O of an inaccessible, lost or changing group gets the
  // ANA path status on that port only. `ana_state`: SPDK's names (optimized, non_optimized,
  // inaccessible, persistent_loss, change) or nvmetcli's (with a hyphen).
  d.add("nvmf_subsystem_listener_set_ana_state", [this, find, listen_address,
                                                  port_at](const json& params) {
    rpc_only_keys(params, {"nqn", "listen_address", "ana_state", "anagrpid", "tgt_name"});
    Subsystem& s = find(params);
    const auto at = listen_address(params);
    const std::string name = rpc_string(params, "ana_state");
    const std::optional<AnaState> state = parse_ana_state(name);
    if (!state) {
      throw RpcError{RpcErrorCode::kInvalidParams,
                     "\"ana_state\": optimized, non_optimized, inaccessible, "
                     "persistent_loss or change"};
    }
    std::vector<uint32_t> groups;
    if (params.contains("anagrpid")) {
      groups.push_back(static_cast<uint32_t>(rpc_uint(params, "anagrpid", 1, kMaxAnaGroups)));
    }
    ControlLock lock(control_mutex());
    Port* port = port_at(at);
    std::shared_ptr<const AnaStates> states = port != nullptr ? port->ana_states(s) : nullptr;
    if (states == nullptr) {
      throw RpcError{RpcErrorCode::kInvalidParams,
                     "\"listen_address\": " + s.config().nqn + " is not served on " +
                         json(at.first + ":" + at.second)
                             .dump(-1, ' ', false, json::error_handler_t::replace)};
    }
    if (groups.empty()) {
      for (uint32_t g = 1; g <= kMaxAnaGroups; ++g) {
        const bool used = std::any_of(s.namespaces().begin(), s.namespaces().end(),
                                      [g](const SubsystemNamespace& n) { return n.anagrpid == g; });
        if (used || states->reported(g)) groups.push_back(g);
      }
    }
    size_t changed = 0;
    for (uint32_t g : groups) changed += port->set_ana_state(&s, g, *state);
    NVMF_LOG(INFO, "target") << "control socket: subsystem " << s.config().nqn << " on port "
                             << port->address().portid << ": ANA group"
                             << (groups.size() == 1 ? " " + std::to_string(groups[0]) : "s") << " "
                             << ana_state_name(*state) << (changed == 0 ? " (unchanged)" : "");
    return json(true);
  });

  // SPDK's nvmf_subsystem_get_listeners: each listener of the subsystem with the ANA state of
  // every group it reports there (group 1, groups set, groups of a namespace).
  d.add("nvmf_subsystem_get_listeners", [this, find](const json& params) {
    rpc_only_keys(params, {"nqn", "tgt_name"});
    const Subsystem& s = find(params);
    ControlLock lock(control_mutex());
    json out = json::array();
    for (const auto& port : ports_) {
      std::shared_ptr<const AnaStates> states = port->ana_states(s);
      if (!port->enabled() || states == nullptr) continue;
      json groups = json::array();
      for (uint32_t g = 1; g <= kMaxAnaGroups; ++g) {
        const bool used = std::any_of(s.namespaces().begin(), s.namespaces().end(),
                                      [g](const SubsystemNamespace& n) { return n.anagrpid == g; });
        if (!used && !states->reported(g)) continue;
        std::string state(ana_state_name(states->state(g)));
        std::replace(state.begin(), state.end(), '-', '_');  // SPDK's spelling
        groups.push_back({{"ana_group", g}, {"ana_state", state}});
      }
      out.push_back({{"address", address_json(port->address())}, {"ana_states", groups}});
    }
    return out;
  });

  // nvmetcli restore on a running target: the file (as --config reads it) applied by difference.
  // Subsystems, namespaces, allowed hosts and port links that differ are changed with the same
  // effects as the methods above; what is the same is not touched (hosts connected to it keep
  // their queues). A port new in the file listens (as nvmf_subsystem_add_listener's new ports);
  // a running port missing from it stops listening and its queues go (Target::close_port). A
  // port readdressed or given another inline_data_size, or a subsystem's identity (serial,
  // model, firmware, version, cntlid range, qid_max) changed, is refused before anything is
  // applied (a restart does that).
  d.add("load_config", [this](const json& params) {
    rpc_only_keys(params, {"path"});
    const std::string path = rpc_string(params, "path");
    auto loaded = load_nvmet_config(path, options_);
    if (!loaded.ok()) throw RpcError{RpcErrorCode::kInvalidParams, loaded.status().message()};
    const TargetOptions& want = loaded->options;
    auto refuse = [](const std::string& why) {
      throw RpcError{RpcErrorCode::kInvalidParams, why + " (a restart with the file does that)"};
    };
    // The plan: checked whole before anything changes.
    std::vector<std::pair<Port*, const PortOptions*>> port_plan;
    std::vector<const PortOptions*> new_ports;
    std::vector<Port*> gone_ports;
    const std::vector<PortOptions> wanted_ports = port_list(want);
    {
      ControlLock lock(control_mutex());
      for (const PortOptions& w : wanted_ports) {
        Port* found = nullptr;
        for (const auto& port : ports_) {
          if (port->enabled() && port->address().portid == w.portid) found = port.get();
        }
        const std::string where = "port " + std::to_string(w.portid);
        if (found == nullptr) {
          for (const auto& port : ports_) {
            const DiscoveryAddress& a = port->address();
            if (port->enabled() && a.traddr == w.traddr && a.trsvcid == w.trsvcid) {
              refuse(where + ": " + w.traddr + ":" + w.trsvcid + " is port " +
                     std::to_string(a.portid) + "'s address");
            }
          }
          new_ports.push_back(&w);
          continue;
        }
        const DiscoveryAddress& a = found->address();
        if (a.traddr != w.traddr || (w.trsvcid != "0" && a.trsvcid != w.trsvcid)) {
          refuse(where + ": its address differs from the running port's " + a.traddr + ":" +
                 a.trsvcid);
        }
        if (found->configured_inline_data_size() != w.inline_data_size) {
          refuse(where + ": inline_data_size differs from the running port's");
        }
        port_plan.emplace_back(found, &w);
      }
      for (const auto& port : ports_) {
        const bool kept = std::any_of(port_plan.begin(), port_plan.end(),
                                      [&](const auto& p) { return p.first == port.get(); });
        if (port->enabled() && !kept) gone_ports.push_back(port.get());
      }
      for (const SubsystemOptions& w : want.subsystems) {
        const Subsystem* s = subsystem_named(w.nqn);
        if (s == nullptr) continue;
        const SubsystemConfig& c = s->config();
        const uint16_t qid_max =
            w.qid_max != 0 ? std::min(w.qid_max, options_.max_io_queues) : options_.max_io_queues;
        const bool same = (w.serial.empty() || w.serial == s->serial()) &&
                          (w.model.empty() || w.model == c.model) &&
                          (w.firmware.empty() || w.firmware == c.firmware) &&
                          (w.version == 0 || w.version == c.version) &&
                          w.cntlid_min == c.cntlid_min && w.cntlid_max == c.cntlid_max &&
                          qid_max == c.max_io_queues;
        if (!same) {
          refuse("subsystem " + w.nqn +
                 ": serial, model, firmware, version, cntlid range or qid_max differ from the "
                 "running subsystem's");
        }
      }
    }
    json report = {{"ports_added", json::array()},        {"ports_removed", json::array()},
                   {"subsystems_created", json::array()}, {"subsystems_deleted", json::array()},
                   {"namespaces_added", json::array()},   {"namespaces_removed", json::array()},
                   {"hosts_added", json::array()},        {"hosts_removed", json::array()},
                   {"listeners_added", json::array()},    {"listeners_removed", json::array()}};
    auto failed = [&report](const std::string& what, const Status& st) {
      throw RpcError{RpcErrorCode::kInvalidParams,
                     what + ": " + st.message() + "; applied before it: " + report.dump()};
    };
    for (const SubsystemOptions& w : want.subsystems) {
      if (subsystem_named(w.nqn) != nullptr) continue;
      SubsystemConfig cfg = subsystem_config(w, options_);
      cfg.allowed_hosts.clear();  // added below, each reported
      if (Status st = create_subsystem(cfg); !st.ok()) failed("subsystem " + w.nqn, st);
      report["subsystems_created"].push_back(w.nqn);
    }
    for (const SubsystemOptions& w : want.subsystems) {
      Subsystem& s = *subsystem_named(w.nqn);
      const std::vector<NamespaceOptions> wanted = namespace_list(w);
      auto same = [](const SubsystemNamespace& have, const NamespaceOptions& n) {
        const bool backing = n.file_path.empty()
                                 ? !have.ns->file_backed() &&
                                       have.ns->size_bytes() ==
                                           n.ram_size / have.ns->lba_size() * have.ns->lba_size()
                                 : have.ns->file_backed() && have.ns->path() == n.file_path;
        return backing && (!n.nguid || *n.nguid == have.nguid) && n.uuid == have.uuid;
      };
      std::vector<uint32_t> remove;
      std::vector<const NamespaceOptions*> add;
      bool regrouped = false;
      {
        ControlLock lock(control_mutex());
        for (const SubsystemNamespace& have : s.namespaces()) {
          auto it = std::find_if(wanted.begin(), wanted.end(),
                                 [&](const NamespaceOptions& n) { return n.nsid == have.nsid; });
          if (it == wanted.end() || !same(have, *it)) {
            remove.push_back(have.nsid);
          } else if (it->anagrpid != have.anagrpid) {
            // Another ANA group only: moved in place, as nvmet's ana_grpid (its data and the
            // commands on their way to it stay).
            if (Status st = s.set_namespace_group(have.nsid, it->anagrpid); !st.ok()) {
              failed(w.nqn, st);
            }
            ana_membership_changed(s);
            regrouped = true;
            report["namespace_groups_changed"].push_back(
                {{"nqn", w.nqn}, {"nsid", have.nsid}, {"anagrpid", it->anagrpid}});
          }
        }
        for (const NamespaceOptions& n : wanted) {
          const SubsystemNamespace* have = s.find_namespace(n.nsid);
          if (have == nullptr || !same(*have, n)) add.push_back(&n);
        }
      }
      if (regrouped && quiesce_poll_groups(std::chrono::seconds(10))) {
        ControlLock lock(control_mutex());
        s.retire_tables();  // the tables the new groups replaced
      }
      for (uint32_t nsid : remove) {
        if (Status st = remove_namespace(s, nsid); !st.ok()) failed(w.nqn, st);
        report["namespaces_removed"].push_back({{"nqn", w.nqn}, {"nsid", nsid}});
      }
      for (const NamespaceOptions* n : add) {
        if (Result<uint32_t> r = add_namespace(s, *n); !r.ok()) failed(w.nqn, r.status());
        report["namespaces_added"].push_back({{"nqn", w.nqn}, {"nsid", n->nsid}});
      }
      ControlLock lock(control_mutex());
      const std::vector<std::string> had = s.config().allowed_hosts;
      bool hosts_changed = false;
      for (const std::string& h : w.allowed_hosts) {
        if (!s.add_host(h)) continue;
        hosts_changed = true;
        report["hosts_added"].push_back({{"nqn", w.nqn}, {"host", h}});
      }
      for (const std::string& h : had) {
        if (std::find(w.allowed_hosts.begin(), w.allowed_hosts.end(), h) != w.allowed_hosts.end()) {
          continue;
        }
        s.remove_host(h, "host removed from the subsystem by load_config");
        hosts_changed = true;
        report["hosts_removed"].push_back({{"nqn", w.nqn}, {"host", h}});
      }
      if (s.config().allow_any_host != w.allow_any_host) {
        s.set_allow_any_host(w.allow_any_host);
        hosts_changed = true;
      }
      if (hosts_changed) discovery_log_changed(s);
    }
    for (const PortOptions* w : new_ports) {
      Result<Port*> added = add_port(*w);
      if (!added.ok()) failed("port " + std::to_string(w->portid), added.status());
      port_plan.emplace_back(*added, w);
      report["ports_added"].push_back(w->portid);
    }
    {
      ControlLock lock(control_mutex());
      for (auto [port, w] : port_plan) {
        const std::vector<std::string>& links = w->subsystems;
        auto linked_in_file = [&](const std::string& nqn) {
          return links.empty() || std::find(links.begin(), links.end(), nqn) != links.end();
        };
        const json where = {{"portid", port->address().portid}};
        // The file's ANA states: each group it lists in its state, each other group the port
        // reports optimized (as a start from the file would have it), on the port and on every
        // subsystem linked to it (a state nvmf_subsystem_listener_set_ana_state gave one
        // subsystem included).
        std::array<std::optional<AnaState>, kMaxAnaGroups + 1> file_state{};
        for (uint32_t g = 1; g <= kMaxAnaGroups; ++g) {
          if (port->ana_defaults().reported(g)) file_state[g] = AnaState::kOptimized;
        }
        for (const auto& [grpid, state] : w->ana_groups) file_state[grpid] = state;
        for (uint32_t g = 1; g <= kMaxAnaGroups; ++g) {
          if (!file_state[g]) continue;
          bool same =
              port->ana_defaults().reported(g) && port->ana_defaults().state(g) == *file_state[g];
          for (const Subsystem* linked : port->subsystems()) {
            std::shared_ptr<const AnaStates> st = port->ana_states(*linked);
            same = same && st != nullptr && st->state(g) == *file_state[g];
          }
          if (same) continue;
          (void)port->set_ana_state(nullptr, g, *file_state[g]);
          report["ana_states_changed"].push_back({{"portid", where["portid"]},
                                                  {"grpid", g},
                                                  {"state", ana_state_name(*file_state[g])}});
        }
        for (const SubsystemOptions& sw : want.subsystems) {
          Subsystem& s = *subsystem_named(sw.nqn);
          if (!linked_in_file(sw.nqn) || port->linked(s)) continue;
          port->link(s);
          discovery_log_changed(s);
          report["listeners_added"].push_back({{"nqn", sw.nqn}, {"portid", where["portid"]}});
        }
        const std::vector<Subsystem*> now = port->subsystems();
        for (Subsystem* s : now) {
          const std::string& nqn = s->config().nqn;
          const bool kept = linked_in_file(nqn) &&
                            std::any_of(want.subsystems.begin(), want.subsystems.end(),
                                        [&](const SubsystemOptions& o) { return o.nqn == nqn; });
          if (kept) continue;
          discovery_log_changed(*s);
          port->unlink(*s);
          s->disconnect_port(port, "listener removed by load_config");
          report["listeners_removed"].push_back({{"nqn", nqn}, {"portid", where["portid"]}});
        }
      }
    }
    std::vector<Subsystem*> gone;
    for (const auto& s : subsystems_) {
      const std::string& nqn = s->config().nqn;
      if (std::none_of(want.subsystems.begin(), want.subsystems.end(),
                       [&](const SubsystemOptions& o) { return o.nqn == nqn; })) {
        gone.push_back(s.get());
      }
    }
    for (Subsystem* s : gone) {
      report["subsystems_deleted"].push_back(s->config().nqn);
      delete_subsystem(*s);
    }
    for (Port* port : gone_ports) {
      {
        ControlLock lock(control_mutex());
        const std::vector<Subsystem*> linked = port->subsystems();
        for (Subsystem* s : linked) {
          discovery_log_changed(*s);
          port->unlink(*s);
        }
      }
      for (size_t i = 0; i < ports_.size(); ++i) {
        if (ports_[i].get() != port) continue;
        if (Status st = close_port(i); !st.ok()) failed("port", st);
      }
      report["ports_removed"].push_back(port->address().portid);
    }
    // DH-HMAC-CHAP keys: the file's replace the running ones, each host's from its next
    // AUTH_Negotiate on (queues already authenticated stay so). The report names the hosts whose
    // key was added, changed or removed, never a secret.
    {
      ControlLock lock(control_mutex());
      auto same = [](const HostKey& a, const HostKey& b) {
        return a.key.format() == b.key.format() && a.hash == b.hash && a.dhgroup == b.dhgroup &&
               a.ctrl_key.has_value() == b.ctrl_key.has_value() &&
               (!a.ctrl_key || a.ctrl_key->format() == b.ctrl_key->format());
      };
      std::set<std::string> changed;
      for (const auto& [nqn, k] : want.host_keys) {
        auto it = options_.host_keys.find(nqn);
        if (it == options_.host_keys.end() || !same(it->second, k)) changed.insert(nqn);
      }
      for (const auto& [nqn, k] : options_.host_keys) {
        if (!want.host_keys.contains(nqn)) changed.insert(nqn);
      }
      if (!changed.empty()) {
        options_.host_keys = want.host_keys;
        auto keys =
            want.host_keys.empty() ? nullptr : std::make_shared<const HostKeys>(want.host_keys);
        for (const auto& s : subsystems_) s->set_host_keys(keys);
        for (const std::string& nqn : changed) {
          report["dhchap_keys_changed"].push_back(escape_wire_text(nqn));
        }
      }
    }
    for (const std::string& w : loaded->warnings) NVMF_LOG(WARN, "target") << path << ": " << w;
    NVMF_LOG(INFO, "target") << "control socket: load_config " << path << ": " << report.dump();
    return report;
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
      // The port's ANA states (nvmetcli's ana_groups); a state set for one subsystem only
      // (nvmf_subsystem_listener_set_ana_state) has no place in nvmetcli's format.
      for (uint32_t g = 1; g <= kMaxAnaGroups; ++g) {
        if (port->ana_defaults().reported(g)) {
          p.ana_groups.emplace_back(g, port->ana_defaults().state(g));
        }
      }
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
      std::vector<NamespaceOptions> list;
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
        o.anagrpid = n.anagrpid;
        list.push_back(std::move(o));
      }
      set_namespace_list(s, std::move(list));
      subsystems.push_back(std::move(s));
    }
    return nvmet_config_json(ports, subsystems, &options_.host_keys);
  });

  d.add("nvmf_subsystem_get_controllers", [this, find](const json& params) {
    rpc_only_keys(params, {"nqn", "tgt_name"});
    const Subsystem& sub = find(params);  // subsystems_ changes on this thread only
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
