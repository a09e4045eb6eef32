// SPDX-License-Identifier: BSD-3-Clause
// nvmetcli JSON from the running configuration.
#include "target/saved_config.h"

#include <set>
#include <string>

#include "common/id_text.h"
#include "proto/discovery.h"

namespace nvmf::target {
namespace {

using json = nlohmann::json;

const char* treq_text(uint8_t treq) {
  switch (treq & proto::kTreqSecureChannelMask) {
    case proto::kTreqRequired:
      return "required";
    case proto::kTreqNotRequired:
      return "not required";
    default:
      return "not specified";
  }
}

json namespace_json(const NamespaceOptions& n) {
  json device = json::object();
  if (n.file_path.empty()) {
    device["ram_size"] = n.ram_size;
  } else {
    device["path"] = n.file_path;
  }
  if (n.nguid) device["nguid"] = uuid_text(*n.nguid);
  if (n.uuid) device["uuid"] = uuid_text(*n.uuid);
  json out = {
      {"nsid", n.nsid}, {"enable", 1}, {"device", device}, {"ana", {{"grpid", n.anagrpid}}}};
  if (!n.file_path.empty() && n.direct_io) out["buffered_io"] = *n.direct_io ? 0 : 1;
  return out;
}

}  // namespace

std::string version_text(uint32_t version) {
  std::string out = std::to_string(version >> 16) + "." + std::to_string((version >> 8) & 0xFF);
  if ((version & 0xFF) != 0) out += "." + std::to_string(version & 0xFF);
  return out;
}

json nvmet_config_json(const std::vector<PortOptions>& ports,
                       const std::vector<SubsystemOptions>& subsystems, const HostKeys* keys) {
  std::set<std::string> hosts;
  json subs = json::array();
  for (const SubsystemOptions& s : subsystems) {
    json attr = {{"allow_any_host", s.allow_any_host ? "1" : "0"},
                 {"cntlid_min", std::to_string(s.cntlid_min)},
                 {"cntlid_max", std::to_string(s.cntlid_max)}};
    if (!s.serial.empty()) attr["serial"] = s.serial;
    if (!s.model.empty()) attr["model"] = s.model;
    if (!s.firmware.empty()) attr["firmware"] = s.firmware;
    if (s.version != 0) attr["version"] = version_text(s.version);
    if (s.qid_max != 0) attr["qid_max"] = std::to_string(s.qid_max);
    json allowed = json::array();
    for (const std::string& h : s.allowed_hosts) {
      allowed.push_back(h);
      hosts.insert(h);
    }
    json namespaces = json::array();
    for (const NamespaceOptions& n : namespace_list(s)) namespaces.push_back(namespace_json(n));
    subs.push_back(
        {{"nqn", s.nqn}, {"attr", attr}, {"allowed_hosts", allowed}, {"namespaces", namespaces}});
  }
  json port_list = json::array();
  for (const PortOptions& p : ports) {
    json groups = json::array();
    for (const auto& [grpid, state] : p.ana_groups) {
      groups.push_back(
          {{"grpid", grpid}, {"ana", {{"state", std::string(ana_state_name(state))}}}});
    }
    port_list.push_back({{"portid", p.portid},
                         {"ana_groups", groups},
                         {"addr",
                          {{"trtype", "rdma"},
                           {"adrfam", p.traddr.find(':') != std::string::npos ? "ipv6" : "ipv4"},
                           {"traddr", p.traddr},
                           {"trsvcid", p.trsvcid},
                           {"treq", treq_text(p.treq)}}},
                         {"param", {{"inline_data_size", std::to_string(p.inline_data_size)}}},
                         {"referrals", json::array()},
                         {"subsystems", p.subsystems}});
  }
  if (keys != nullptr) {
    for (const auto& [nqn, key] : *keys) hosts.insert(nqn);
  }
  json host_list = json::array();
  for (const std::string& h : hosts) {
    json entry = {{"nqn", h}};
    if (keys != nullptr) {
      if (auto it = keys->find(h); it != keys->end()) {
        entry["dhchap"] = {
            {"key", it->second.key.format()},
            {"ctrl_key", it->second.ctrl_key ? it->second.ctrl_key->format() : std::string()},
            {"hash", std::string(dhchap::hash_name(it->second.hash))},
            {"dhgroup", std::string(dhchap::dhgroup_name(it->second.dhgroup))}};
      }
    }
    host_list.push_back(std::move(entry));
  }
  return {{"hosts", host_list}, {"ports", port_list}, {"subsystems", subs}};
}

}  // namespace nvmf::target
