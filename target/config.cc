// SPDX-License-Identifier: BSD-3-Clause
// nvmetcli config.json reader.
#include "target/config.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "common/dhchap.h"
#include "common/id_text.h"
#include "common/wire_text.h"
#include "proto/discovery.h"
#include "proto/fabrics.h"
#include "target/discovery.h"

namespace nvmf::target {
namespace {

using nlohmann::json;

Status bad(const std::string& path, const std::string& what) {
  return Status::invalid_argument(path + ": " + what);
}

// A value as it appears in a message: compact JSON, at most kShownBytes (longer ends in "...").
// Values are at most kMaxJsonDepth deep (parse_nvmet_config), so dump() cannot recurse far.
constexpr size_t kShownBytes = 64;
std::string shown(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kShownBytes) text = text.substr(0, kShownBytes - 3) + "...";
  return text;
}

// Where the parser is in the document, kept from nlohmann's parser callback events so that an
// error the parser throws (number overflow) or one we raise (nesting too deep) names the key.
class JsonPath {
 public:
  // Thrown from the callback to stop parsing a document nested deeper than kMaxJsonDepth.
  struct TooDeep {
    std::string path;
  };

  // The parser callback: `depth` is the number of enclosing objects and arrays.
  bool on_event(int depth, json::parse_event_t event, const json& parsed) {
    auto d = static_cast<size_t>(depth);
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        count_element(d);
        if (d >= kMaxJsonDepth) throw TooDeep{path()};
        frames_.resize(d);
        frames_.push_back(Frame{event == json::parse_event_t::array_start, -1, {}});
        break;
      case json::parse_event_t::key:
        if (d >= 1 && d <= frames_.size() && parsed.is_string()) {
          frames_[d - 1].key = parsed.get<std::string>();
        }
        break;
      case json::parse_event_t::value:
        count_element(d);
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames_.resize(std::min(frames_.size(), d));
        break;
    }
    return true;
  }

  // "ports[0].param.inline_data_size": at most kPathFrames levels, then "...".
  std::string path() const {
    std::string out;
    for (size_t i = 0; i < frames_.size() && i < kPathFrames; ++i) {
      const Frame& f = frames_[i];
      if (f.array) {
        if (f.index >= 0) out += "[" + std::to_string(f.index) + "]";
      } else if (!f.key.empty()) {
        out += (out.empty() ? "" : ".") + escape_wire_text(f.key);
      }
    }
    if (frames_.size() > kPathFrames) out += "...";
    return out.empty() ? "(top level)" : out;
  }

 private:
  struct Frame {
    bool array;
    long index;       // arrays: the element being parsed
    std::string key;  // objects: the last key seen
  };
  static constexpr size_t kPathFrames = 8;

  void count_element(size_t depth) {
    if (depth >= 1 && depth <= frames_.size() && frames_[depth - 1].array) {
      ++frames_[depth - 1].index;
    }
  }

  std::vector<Frame> frames_;
};

// Every key of `obj` must be in `known` (or `ignored`, which adds a warning); else an error.
Status check_keys(const json& obj, const std::string& path,
                  std::initializer_list<const char*> known,
                  std::initializer_list<std::pair<const char*, const char*>> ignored,
                  std::vector<std::string>* warnings) {
  for (const auto& [key, value] : obj.items()) {
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (ok) continue;
    for (const auto& [k, why] : ignored) {
      if (key == k) {
        warnings->push_back(path + "." + key + " " + shown(value) + " ignored: " + why);
        ok = true;
      }
    }
    if (!ok) return bad(path + "." + key, "unknown or unsupported key");
  }
  return ok_status();
}

Result<const json*> object_at(const json& parent, const std::string& path, const char* key,
                              bool required) {
  auto it = parent.find(key);
  if (it == parent.end()) {
    if (required) return bad(path + "." + key, "missing");
    return static_cast<const json*>(nullptr);
  }
  if (!it->is_object()) return bad(path + "." + key, shown(*it) + " is not an object");
  return &*it;
}

Result<const json*> array_at(const json& parent, const std::string& path, const char* key) {
  auto it = parent.find(key);
  if (it == parent.end()) return static_cast<const json*>(nullptr);
  if (!it->is_array()) return bad(path + "." + key, shown(*it) + " is not a list");
  return &*it;
}

Result<std::string> string_of(const json& v, const std::string& path) {
  if (!v.is_string()) return bad(path, shown(v) + " is not a string");
  return v.get<std::string>();
}

// A JSON number or a decimal string (nvmetcli saves attributes as strings). An unsigned JSON
// number above INT64_MAX is out of range, never wrapped to a negative one; a number beyond 64
// bits (which the parser keeps as a float) or a decimal string beyond int64 is out of range too.
Result<int64_t> integer_of(const json& v, const std::string& path, int64_t lo, int64_t hi) {
  const std::string range = " is not in " + std::to_string(lo) + ".." + std::to_string(hi);
  int64_t n = 0;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return bad(path, shown(v) + range);
    n = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    n = v.get<int64_t>();
  } else if (v.is_number_float()) {
    return bad(path, shown(v) + " is not an integer" +
                         (std::abs(v.get<double>()) >= 9.2e18 ? " (beyond 64 bits)" : ""));
  } else if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec == std::errc::result_out_of_range) return bad(path, shown(v) + range);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
      return bad(path, shown(v) + " is not an integer");
    }
  } else {
    return bad(path, shown(v) + " is not an integer");
  }
  if (n < lo || n > hi) return bad(path, shown(v) + range);
  return n;
}

Result<bool> flag_of(const json& v, const std::string& path) {
  NVMF_ASSIGN_OR_RETURN(int64_t n, integer_of(v, path, 0, 1));
  return n == 1;
}

// "1.3" / "1.3.0" / "2.0" to VS (MJR << 16 | MNR << 8 | TER).
Result<uint32_t> version_of(const json& v, const std::string& path) {
  NVMF_ASSIGN_OR_RETURN(std::string s, string_of(v, path));
  unsigned parts[3] = {0, 0, 0};
  int n = 0;
  std::stringstream in(s);
  std::string piece;
  while (std::getline(in, piece, '.')) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), value);
    if (n == 3 || piece.empty() || ec != std::errc() || end != piece.data() + piece.size() ||
        value > 255) {
      return bad(path, shown(v) + " is not a version like \"1.3\"");
    }
    parts[n++] = value;
  }
  if (n < 2 || parts[0] == 0) return bad(path, shown(v) + " is not a version like \"1.3\"");
  return (parts[0] << 16) | (parts[1] << 8) | parts[2];
}

Status parse_addr(const json& addr, const std::string& path, TargetOptions& o,
                  std::vector<std::string>* warnings) {
  NVMF_RETURN_IF_ERROR(check_keys(
      addr, path, {"trtype", "adrfam", "traddr", "trsvcid", "treq", "tsas"}, {}, warnings));
  auto trtype = addr.find("trtype");
  if (trtype == addr.end()) return bad(path + ".trtype", "missing");
  NVMF_ASSIGN_OR_RETURN(std::string t, string_of(*trtype, path + ".trtype"));
  if (t != "rdma") return bad(path + ".trtype", shown(*trtype) + ": only \"rdma\" is served");
  auto traddr = addr.find("traddr");
  if (traddr == addr.end()) return bad(path + ".traddr", "missing");
  NVMF_ASSIGN_OR_RETURN(o.traddr, string_of(*traddr, path + ".traddr"));
  if (o.traddr.empty() || o.traddr.size() >= proto::kTraddrFieldLength) {
    return bad(path + ".traddr", shown(*traddr) + " must be 1..255 characters");
  }
  if (auto it = addr.find("adrfam"); it != addr.end()) {
    NVMF_ASSIGN_OR_RETURN(std::string a, string_of(*it, path + ".adrfam"));
    uint8_t want = a == "ipv4" ? proto::kAdrfamIpv4 : a == "ipv6" ? proto::kAdrfamIpv6 : 0;
    if (want == 0) return bad(path + ".adrfam", shown(*it) + ": only \"ipv4\" and \"ipv6\"");
    if (want != adrfam_for(o.traddr)) {
      return bad(path + ".adrfam", shown(*it) + " does not match traddr \"" + o.traddr + "\"");
    }
  }
  if (auto it = addr.find("trsvcid"); it != addr.end()) {
    NVMF_ASSIGN_OR_RETURN(int64_t port, integer_of(*it, path + ".trsvcid", 0, 65535));
    o.trsvcid = std::to_string(port);
  }
  if (auto it = addr.find("treq"); it != addr.end()) {
    NVMF_ASSIGN_OR_RETURN(std::string treq, string_of(*it, path + ".treq"));
    if (treq == "not specified") {
      o.treq = proto::kTreqNotSpecified;
    } else if (treq == "not required") {
      o.treq = proto::kTreqNotRequired;
    } else if (treq == "required") {
      return bad(path + ".treq", "\"required\": a secure channel (TLS) is not supported");
    } else {
      return bad(path + ".treq",
                 shown(*it) + ": use \"not specified\", \"not required\" or \"required\"");
    }
  }
  if (auto it = addr.find("tsas"); it != addr.end()) {
    NVMF_ASSIGN_OR_RETURN(std::string tsas, string_of(*it, path + ".tsas"));
    if (tsas != "none" && tsas != "not specified") {
      return bad(path + ".tsas", shown(*it) + ": only \"none\" or \"not specified\" (no TLS)");
    }
  }
  return ok_status();
}

Status parse_param(const json& param, const std::string& path, TargetOptions& o,
                   std::vector<std::string>* warnings) {
  for (const auto& [key, value] : param.items()) {
    std::string p = path + "." + key;
    if (key == "inline_data_size") {
      NVMF_ASSIGN_OR_RETURN(int64_t n, integer_of(value, p, -1, INT32_MAX));
      o.inline_data_size = static_cast<int32_t>(n);
    } else if (key == "max_queue_size") {
      NVMF_ASSIGN_OR_RETURN(int64_t n, integer_of(value, p, 2, 1024));
      o.max_queue_size = static_cast<uint32_t>(n);
    } else if (key == "pi_enable") {
      NVMF_ASSIGN_OR_RETURN(bool pi, flag_of(value, p));
      if (pi) return bad(p, shown(value) + ": protection information is not supported");
    } else {
      warnings->push_back(p + " " + shown(value) +
                          " ignored: nvmf-target has no such port parameter");
    }
  }
  return ok_status();
}

Status parse_attr(const json& attr, const std::string& path, SubsystemOptions& s,
                  std::vector<std::string>* warnings) {
  for (const auto& [key, value] : attr.items()) {
    std::string p = path + "." + key;
    if (key == "allow_any_host") {
      NVMF_ASSIGN_OR_RETURN(s.allow_any_host, flag_of(value, p));
    } else if (key == "serial" || key == "model" || key == "firmware") {
      NVMF_ASSIGN_OR_RETURN(std::string text, string_of(value, p));
      size_t max = key == "serial" ? 20 : key == "model" ? 40 : 8;
      if (text.size() > max) {
        return bad(p, shown(value) + " is longer than " + std::to_string(max) + " characters");
      }
      (key == "serial" ? s.serial : key == "model" ? s.model : s.firmware) = text;
    } else if (key == "version") {
      NVMF_ASSIGN_OR_RETURN(s.version, version_of(value, p));
    } else if (key == "cntlid_min" || key == "cntlid_max") {
      NVMF_ASSIGN_OR_RETURN(int64_t n, integer_of(value, p, 1, 0xFFEF));
      (key == "cntlid_min" ? s.cntlid_min : s.cntlid_max) = static_cast<uint16_t>(n);
    } else if (key == "pi_enable") {
      NVMF_ASSIGN_OR_RETURN(bool pi, flag_of(value, p));
      if (pi) return bad(p, shown(value) + ": protection information is not supported");
    } else if (key == "qid_max") {
      // nvmet's attr_qid_max: the highest I/O qid of a controller; --max-io-queues caps it.
      NVMF_ASSIGN_OR_RETURN(int64_t n, integer_of(value, p, 1, 65535));
      s.qid_max = static_cast<uint16_t>(n);
    } else if (key == "ieee_oui") {
      warnings->push_back(p + " " + shown(value) + " ignored: Identify IEEE OUI is reported as 0");
    } else {
      return bad(p, "unknown or unsupported subsystem attribute");
    }
  }
  if (s.cntlid_min > s.cntlid_max) {
    return bad(path + ".cntlid_min", std::to_string(s.cntlid_min) + " is above cntlid_max " +
                                         std::to_string(s.cntlid_max));
  }
  return ok_status();
}

// nvmetcli's ports[].ana_groups: [{"grpid": N, "ana": {"state": "optimized"}}], each group
// once, 1..kMaxAnaGroups.
Status parse_ana_groups(const json& list, const std::string& path, PortOptions& po,
                        std::vector<std::string>* warnings) {
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = path + ".ana_groups[" + std::to_string(i) + "]";
    const json& g = list[i];
    if (!g.is_object()) return bad(p, shown(g) + " is not an object");
    NVMF_RETURN_IF_ERROR(check_keys(g, p, {"grpid", "ana"}, {}, warnings));
    auto id = g.find("grpid");
    if (id == g.end()) return bad(p + ".grpid", "missing");
    NVMF_ASSIGN_OR_RETURN(int64_t grpid, integer_of(*id, p + ".grpid", 1, kMaxAnaGroups));
    for (const auto& [earlier, state] : po.ana_groups) {
      if (earlier == grpid) return bad(p + ".grpid", std::to_string(grpid) + " is given twice");
    }
    AnaState state = AnaState::kOptimized;
    NVMF_ASSIGN_OR_RETURN(const json* ana, object_at(g, p, "ana", false));
    if (ana != nullptr) {
      NVMF_RETURN_IF_ERROR(check_keys(*ana, p + ".ana", {"state"}, {}, warnings));
      if (auto it = ana->find("state"); it != ana->end()) {
        NVMF_ASSIGN_OR_RETURN(std::string name, string_of(*it, p + ".ana.state"));
        std::optional<AnaState> parsed = parse_ana_state(name);
        if (!parsed) {
          return bad(
              p + ".ana.state",
              shown(*it) +
                  " is not optimized, non-optimized, inaccessible, persistent-loss or change");
        }
        state = *parsed;
      }
    }
    po.ana_groups.emplace_back(static_cast<uint32_t>(grpid), state);
  }
  return ok_status();
}

Status parse_namespaces(const json& list, const std::string& path, SubsystemOptions& s,
                        std::vector<std::string>* warnings) {
  bool have = false;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string p = path + "[" + std::to_string(i) + "]";
    const json& ns = list[i];
    if (!ns.is_object()) return bad(p, shown(ns) + " is not an object");
    NVMF_RETURN_IF_ERROR(
        check_keys(ns, p, {"nsid", "enable", "device", "buffered_io", "ana", "ana_grpid"},
                   // Current nvmetcli saves the namespace's "ana" and "resv" attribute groups.
                   {{"resv", "nvmf-target does not implement reservations"}}, warnings));
    auto nsid_it = ns.find("nsid");
    if (nsid_it == ns.end()) return bad(p + ".nsid", "missing");
    NVMF_ASSIGN_OR_RETURN(int64_t nsid, integer_of(*nsid_it, p + ".nsid", 1, 0xFFFFFFFE));
    bool enabled = true;
    if (auto it = ns.find("enable"); it != ns.end()) {
      NVMF_ASSIGN_OR_RETURN(enabled, flag_of(*it, p + ".enable"));
    }
    std::optional<bool> buffered;
    if (auto it = ns.find("buffered_io"); it != ns.end()) {
      NVMF_ASSIGN_OR_RETURN(bool b, flag_of(*it, p + ".buffered_io"));
      buffered = b;
    }
    if (!enabled) {
      warnings->push_back(p + " (nsid " + std::to_string(nsid) +
                          ") has enable 0: not served, as nvmet");
      continue;
    }
    // The first enabled namespace fills the subsystem's own fields, the others more_namespaces.
    NamespaceOptions n;
    n.nsid = static_cast<uint32_t>(nsid);
    if (have && n.nsid == s.nsid) return bad(p + ".nsid", std::to_string(nsid) + " is given twice");
    for (const auto& other : s.more_namespaces) {
      if (other.nsid == n.nsid) return bad(p + ".nsid", std::to_string(nsid) + " is given twice");
    }
    NVMF_ASSIGN_OR_RETURN(const json* device, object_at(ns, p, "device", true));
    std::string dp = p + ".device";
    NVMF_RETURN_IF_ERROR(check_keys(
        *device, dp, {"path", "nguid", "uuid", "ram_size"},
        {{"p2pmem", "peer-to-peer memory is not used: data goes through host memory"}}, warnings));
    auto path_it = device->find("path");
    auto ram_it = device->find("ram_size");
    if (ram_it != device->end()) {
      // nvmf-target's own key (save_config writes it): a RAM namespace of that many bytes.
      if (path_it != device->end()) return bad(dp + ".ram_size", "given with a path");
      NVMF_ASSIGN_OR_RETURN(int64_t bytes, integer_of(*ram_it, dp + ".ram_size", 1, INT64_MAX));
      n.ram_size = static_cast<uint64_t>(bytes);
    } else {
      if (path_it == device->end()) return bad(dp + ".path", "missing");
      NVMF_ASSIGN_OR_RETURN(n.file_path, string_of(*path_it, dp + ".path"));
      if (n.file_path.empty()) return bad(dp + ".path", "is empty");
    }
    if (buffered) n.direct_io = !*buffered;
    // The ANA group: nvmetcli's "ana" attribute group ({"grpid": N}), or the "ana_grpid" of
    // older nvmetcli versions.
    if (auto it = ns.find("ana_grpid"); it != ns.end()) {
      NVMF_ASSIGN_OR_RETURN(int64_t g, integer_of(*it, p + ".ana_grpid", 1, kMaxAnaGroups));
      n.anagrpid = static_cast<uint32_t>(g);
    }
    NVMF_ASSIGN_OR_RETURN(const json* ana, object_at(ns, p, "ana", false));
    if (ana != nullptr) {
      NVMF_RETURN_IF_ERROR(check_keys(*ana, p + ".ana", {"grpid"}, {}, warnings));
      if (auto it = ana->find("grpid"); it != ana->end()) {
        NVMF_ASSIGN_OR_RETURN(int64_t g, integer_of(*it, p + ".ana.grpid", 1, kMaxAnaGroups));
        if (ns.contains("ana_grpid") && n.anagrpid != g) {
          warnings->push_back(p + ".ana_grpid " + std::to_string(n.anagrpid) +
                              " ignored: ana.grpid " + std::to_string(g) + " is used");
        }
        n.anagrpid = static_cast<uint32_t>(g);
      }
    }
    for (const char* key : {"nguid", "uuid"}) {
      auto it = device->find(key);
      if (it == device->end()) continue;
      NVMF_ASSIGN_OR_RETURN(std::string text, string_of(*it, dp + "." + key));
      auto id = parse_id_text(text);
      if (!id.ok()) return bad(dp + "." + key, shown(*it) + " is not 16 bytes of hex");
      (std::string_view(key) == "nguid" ? n.nguid : n.uuid) = *id;
    }
    if (!have) {
      s.nsid = n.nsid;
      s.file_path = n.file_path;
      s.ram_size = n.ram_size;
      s.direct_io = n.direct_io;
      s.nguid = n.nguid;
      s.uuid = n.uuid;
      s.anagrpid = n.anagrpid;
    } else {
      s.more_namespaces.push_back(std::move(n));
    }
    have = true;
  }
  if (!have) warnings->push_back(path + ": no enabled namespace (the subsystem has none)");
  return ok_status();
}

Result<SubsystemOptions> parse_subsystem(const json& sub, const std::string& path,
                                         const std::set<std::string>& hosts,
                                         std::vector<std::string>* warnings) {
  if (!sub.is_object()) return bad(path, shown(sub) + " is not an object");
  NVMF_RETURN_IF_ERROR(
      check_keys(sub, path, {"nqn", "attr", "allowed_hosts", "namespaces"}, {}, warnings));
  SubsystemOptions s;
  auto nqn = sub.find("nqn");
  if (nqn == sub.end()) return bad(path + ".nqn", "missing");
  NVMF_ASSIGN_OR_RETURN(s.nqn, string_of(*nqn, path + ".nqn"));
  if (s.nqn.empty() || s.nqn.size() > proto::kNqnMaxLength) {
    return bad(path + ".nqn", shown(*nqn) + " must be 1..223 bytes");
  }
  if (s.nqn == proto::kDiscoveryNqn) {
    return bad(path + ".nqn", shown(*nqn) + " is the discovery NQN, served by every port");
  }
  NVMF_ASSIGN_OR_RETURN(const json* attr, object_at(sub, path, "attr", false));
  if (attr != nullptr) NVMF_RETURN_IF_ERROR(parse_attr(*attr, path + ".attr", s, warnings));
  NVMF_ASSIGN_OR_RETURN(const json* allowed, array_at(sub, path, "allowed_hosts"));
  if (allowed != nullptr) {
    for (size_t i = 0; i < allowed->size(); ++i) {
      std::string p = path + ".allowed_hosts[" + std::to_string(i) + "]";
      NVMF_ASSIGN_OR_RETURN(std::string h, string_of((*allowed)[i], p));
      if (hosts.count(h) == 0) return bad(p, "\"" + h + "\" is not in the top-level hosts list");
      s.allowed_hosts.push_back(h);
    }
  }
  NVMF_ASSIGN_OR_RETURN(const json* namespaces, array_at(sub, path, "namespaces"));
  if (namespaces == nullptr) return bad(path + ".namespaces", "missing");
  NVMF_RETURN_IF_ERROR(parse_namespaces(*namespaces, path + ".namespaces", s, warnings));
  return s;
}

}  // namespace

namespace {
// A host entry's DH-HMAC-CHAP keys: nvmetcli's "dhchap" attribute group, {"key", "ctrl_key",
// "hash", "dhgroup"}, nvmet's configfs host files dhchap_key, dhchap_ctrl_key, dhchap_hash and
// dhchap_dhgroup. An empty key, as nvmetcli saves a host without one, means none. Errors name
// the key and what is wrong, never a secret's text.
Result<std::optional<HostKey>> host_key_of(const json& host, const std::string& hp,
                                           std::vector<std::string>* warnings) {
  auto group_it = host.find("dhchap");
  if (group_it == host.end()) return std::optional<HostKey>();
  const json& h = *group_it;
  const std::string p = hp + ".dhchap";
  if (!h.is_object()) return bad(p, "is not an object");
  NVMF_RETURN_IF_ERROR(check_keys(h, p, {"key", "ctrl_key", "hash", "dhgroup"}, {}, warnings));
  auto text_at = [&](const char* k) -> Result<std::string> {
    auto it = h.find(k);
    if (it == h.end()) return std::string();
    if (!it->is_string()) return bad(p + "." + k, "is not a string");
    return it->get<std::string>();
  };
  NVMF_ASSIGN_OR_RETURN(std::string key_text, text_at("key"));
  NVMF_ASSIGN_OR_RETURN(std::string ctrl_text, text_at("ctrl_key"));
  NVMF_ASSIGN_OR_RETURN(std::string hash_text, text_at("hash"));
  NVMF_ASSIGN_OR_RETURN(std::string group_text, text_at("dhgroup"));
  if (key_text.empty()) {
    if (!ctrl_text.empty()) return bad(p + ".ctrl_key", "given without a key");
    return std::optional<HostKey>();
  }
  HostKey key;
  auto secret = dhchap::Secret::parse(key_text);
  dhchap::cleanse(key_text.data(), key_text.size());
  if (!secret.ok()) return bad(p + ".key", secret.status().message());
  key.key = std::move(*secret);
  if (!ctrl_text.empty()) {
    auto ctrl = dhchap::Secret::parse(ctrl_text);
    dhchap::cleanse(ctrl_text.data(), ctrl_text.size());
    if (!ctrl.ok()) return bad(p + ".ctrl_key", ctrl.status().message());
    key.ctrl_key = std::move(*ctrl);
  }
  if (!hash_text.empty()) {
    auto hash = dhchap::parse_hash(hash_text);
    if (!hash) {
      return bad(p + ".hash", shown(h.at("hash")) + ": hmac(sha256), hmac(sha384) or hmac(sha512)");
    }
    key.hash = *hash;
  }
  if (!group_text.empty()) {
    auto group = dhchap::parse_dhgroup(group_text);
    if (!group) {
      return bad(p + ".dhgroup", shown(h.at("dhgroup")) + ": null or ffdhe2048 ... ffdhe8192");
    }
    key.dhgroup = *group;
  }
  return std::optional<HostKey>(std::move(key));
}
}  // namespace

Result<NvmetConfig> parse_nvmet_config(std::string_view json_text, const TargetOptions& base) {
  // nlohmann's parser is iterative, but dump() and our walk are not: refuse deep documents as
  // the parser meets them. Its own errors (syntax, a number overflowing a double) and ours name
  // where they happened; the text it quotes is escaped (it may hold any bytes).
  json root;
  JsonPath where;
  try {
    root = json::parse(json_text, [&where](int depth, json::parse_event_t event, json& parsed) {
      return where.on_event(depth, event, parsed);
    });
  } catch (const JsonPath::TooDeep& e) {
    return bad(e.path, "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  } catch (const json::parse_error& e) {
    // Without nlohmann's "; last read: '...'": the text it quotes may be part of a secret.
    std::string what = e.what();
    if (size_t at = what.find("; last read"); at != std::string::npos) what.erase(at);
    return Status::invalid_argument("not valid JSON: " + escape_wire_text(what));
  } catch (const json::exception& e) {  // out_of_range 406: a number beyond a double (1e999)
    return bad(where.path(), escape_wire_text(e.what()));
  }
  if (!root.is_object()) return bad("(top level)", "is not an object");
  NvmetConfig out;
  out.options = base;
  TargetOptions& o = out.options;
  auto* warnings = &out.warnings;
  NVMF_RETURN_IF_ERROR(check_keys(root, "", {"hosts", "ports", "subsystems"}, {}, warnings));

  std::set<std::string> hosts;
  // The file's hosts are the keys: a host the file lists without one, or does not list, has none.
  o.host_keys.clear();
  NVMF_ASSIGN_OR_RETURN(const json* host_list, array_at(root, "", "hosts"));
  if (host_list != nullptr) {
    for (size_t i = 0; i < host_list->size(); ++i) {
      std::string p = "hosts[" + std::to_string(i) + "]";
      const json& h = (*host_list)[i];
      if (!h.is_object()) return bad(p, shown(h) + " is not an object");
      NVMF_RETURN_IF_ERROR(check_keys(h, p, {"nqn", "dhchap"}, {}, warnings));
      auto nqn = h.find("nqn");
      if (nqn == h.end()) return bad(p + ".nqn", "missing");
      NVMF_ASSIGN_OR_RETURN(std::string n, string_of(*nqn, p + ".nqn"));
      if (n.empty() || n.size() > proto::kNqnMaxLength) {
        return bad(p + ".nqn", shown(*nqn) + " must be 1..223 bytes");
      }
      hosts.insert(n);
      NVMF_ASSIGN_OR_RETURN(std::optional<HostKey> key, host_key_of(h, p, warnings));
      if (key) o.host_keys[n] = std::move(*key);
    }
  }

  NVMF_ASSIGN_OR_RETURN(const json* ports, array_at(root, "", "ports"));
  if (ports == nullptr || ports->empty()) return bad("ports", "no port given");
  if (ports->size() > kMaxConfigPorts) {
    return bad("ports", std::to_string(ports->size()) + " ports: at most " +
                            std::to_string(kMaxConfigPorts) + " are served");
  }
  // Each port: its address, its in-capsule size, its links. The first port's fields also fill
  // the single-port fields of TargetOptions (what --traddr and friends set).
  std::vector<std::string> linked;  // every linked NQN once, in order of first link
  std::vector<PortOptions> port_options;
  for (size_t pi = 0; pi < ports->size(); ++pi) {
    const std::string pp = "ports[" + std::to_string(pi) + "]";
    const json& port = (*ports)[pi];
    if (!port.is_object()) return bad(pp, shown(port) + " is not an object");
    NVMF_RETURN_IF_ERROR(
        check_keys(port, pp, {"portid", "addr", "param", "referrals", "subsystems", "ana_groups"},
                   {}, warnings));
    TargetOptions one = base;  // parse_addr/parse_param fill the single-port fields
    if (auto it = port.find("portid"); it != port.end()) {
      NVMF_ASSIGN_OR_RETURN(int64_t id, integer_of(*it, pp + ".portid", 0, 65535));
      one.portid = static_cast<uint16_t>(id);
    }
    NVMF_ASSIGN_OR_RETURN(const json* addr, object_at(port, pp, "addr", true));
    NVMF_RETURN_IF_ERROR(parse_addr(*addr, pp + ".addr", one, warnings));
    NVMF_ASSIGN_OR_RETURN(const json* param, object_at(port, pp, "param", false));
    if (param != nullptr) NVMF_RETURN_IF_ERROR(parse_param(*param, pp + ".param", one, warnings));
    NVMF_ASSIGN_OR_RETURN(const json* referrals, array_at(port, pp, "referrals"));
    if (referrals != nullptr && !referrals->empty()) {
      return bad(pp + ".referrals", "referrals to other discovery services are not supported");
    }
    PortOptions po;
    po.portid = one.portid;
    po.traddr = one.traddr;
    po.trsvcid = one.trsvcid;
    po.treq = one.treq;
    po.inline_data_size = one.inline_data_size;
    NVMF_ASSIGN_OR_RETURN(const json* groups, array_at(port, pp, "ana_groups"));
    if (groups != nullptr) NVMF_RETURN_IF_ERROR(parse_ana_groups(*groups, pp, po, warnings));
    for (const PortOptions& earlier : port_options) {
      if (earlier.portid == po.portid) {
        return bad(pp + ".portid", std::to_string(po.portid) + " is given twice");
      }
      if (earlier.traddr == po.traddr && earlier.trsvcid == po.trsvcid && po.trsvcid != "0") {
        return bad(pp + ".addr", po.traddr + ":" + po.trsvcid + " is already port " +
                                     std::to_string(earlier.portid) + "'s address");
      }
    }
    if (pi == 0) {
      o.portid = one.portid;
      o.traddr = one.traddr;
      o.trsvcid = one.trsvcid;
      o.treq = one.treq;
      o.inline_data_size = one.inline_data_size;
      o.max_queue_size = one.max_queue_size;
    } else if (one.max_queue_size != o.max_queue_size) {
      return bad(pp + ".param.max_queue_size",
                 std::to_string(one.max_queue_size) + " differs from ports[0]'s " +
                     std::to_string(o.max_queue_size) + ": nvmf-target has one queue size limit");
    }
    NVMF_ASSIGN_OR_RETURN(const json* links, array_at(port, pp, "subsystems"));
    if (links != nullptr) {
      for (size_t i = 0; i < links->size(); ++i) {
        const std::string lp = pp + ".subsystems[" + std::to_string(i) + "]";
        NVMF_ASSIGN_OR_RETURN(std::string n, string_of((*links)[i], lp));
        if (std::find(po.subsystems.begin(), po.subsystems.end(), n) != po.subsystems.end()) {
          return bad(lp, "\"" + n + "\" is linked twice");
        }
        po.subsystems.push_back(n);
        if (std::find(linked.begin(), linked.end(), n) == linked.end()) linked.push_back(n);
      }
    }
    if (po.subsystems.empty()) return bad(pp + ".subsystems", "no subsystem linked to the port");
    port_options.push_back(std::move(po));
  }
  o.ports = port_options;

  NVMF_ASSIGN_OR_RETURN(const json* subs, array_at(root, "", "subsystems"));
  std::vector<SubsystemOptions> defined;
  if (subs != nullptr) {
    for (size_t i = 0; i < subs->size(); ++i) {
      std::string p = "subsystems[" + std::to_string(i) + "]";
      const json& sub = (*subs)[i];
      bool is_linked = false;
      if (sub.is_object() && sub.contains("nqn") && sub["nqn"].is_string()) {
        for (const auto& l : linked) is_linked = is_linked || l == sub["nqn"].get<std::string>();
      }
      NVMF_ASSIGN_OR_RETURN(SubsystemOptions s, parse_subsystem(sub, p, hosts, warnings));
      for (const auto& d : defined) {
        if (d.nqn == s.nqn) return bad(p + ".nqn", "\"" + s.nqn + "\" is defined twice");
      }
      if (!is_linked) {
        warnings->push_back(p + " \"" + s.nqn + "\" is linked to no port: not served, as nvmet");
      }
      defined.push_back(std::move(s));
    }
  }
  o.subsystems.clear();
  for (const std::string& nqn : linked) {
    const SubsystemOptions* found = nullptr;
    for (const auto& d : defined) found = d.nqn == nqn ? &d : found;
    if (found == nullptr) {
      for (size_t pi = 0; pi < port_options.size(); ++pi) {
        const auto& links = port_options[pi].subsystems;
        auto at = std::find(links.begin(), links.end(), nqn);
        if (at == links.end()) continue;
        return bad("ports[" + std::to_string(pi) + "].subsystems[" +
                       std::to_string(at - links.begin()) + "]",
                   "\"" + nqn + "\" is not in the subsystems list");
      }
    }
    o.subsystems.push_back(*found);
  }
  return out;
}

Result<NvmetConfig> load_nvmet_config(const std::string& path, const TargetOptions& base) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::from_errno("open", errno, path);
  std::string text;
  char chunk[65536];
  while (in.read(chunk, sizeof(chunk)) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxConfigBytes) {
      return Status::invalid_argument(path + ": larger than " + std::to_string(kMaxConfigBytes) +
                                      " bytes; nvmetcli's files are a few KiB");
    }
  }
  if (in.bad()) return Status::from_errno("read", errno, path);
  auto config = parse_nvmet_config(text, base);
  if (!config.ok()) return Status::invalid_argument(path + ": " + config.status().message());
  return config;
}

}  // namespace nvmf::target
