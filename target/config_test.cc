// SPDX-License-Identifier: BSD-3-Clause
// nvmetcli config.json: a good file, then each unsupported key and each bad value, one by one.
#include "target/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "proto/discovery.h"
#include "target/saved_config.h"

namespace nvmf::target {
namespace {

using nlohmann::json;

constexpr char kHost[] = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";
constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:interop";

// What `nvmetcli save` writes for one rdma port, one subsystem, one null_blk namespace:
// target/testdata/nvmetcli-save.json, which fuzz/make_seeds.py also starts the config fuzzer's
// seeds from.
json good() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  std::ifstream f(std::string(srcdir != nullptr ? srcdir : ".") +
                  "/nvmf_rdma/target/testdata/nvmetcli-save.json");
  EXPECT_TRUE(f.good()) << "target/testdata/nvmetcli-save.json is not in the runfiles";
  return json::parse(f, nullptr, /*allow_exceptions=*/false);
}

Result<NvmetConfig> parse(const json& j) { return parse_nvmet_config(j.dump(), TargetOptions{}); }

// The error message for `j`, which must fail.
std::string error_of(const json& j) {
  auto r = parse(j);
  EXPECT_FALSE(r.ok()) << j.dump();
  return r.ok() ? std::string() : r.status().message();
}

bool has_warning(const NvmetConfig& c, const std::string& part) {
  for (const auto& w : c.warnings) {
    if (w.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(ConfigTest, NvmetcliSavedFileIsUsed) {
  auto r = parse(good());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TargetOptions& o = r->options;
  EXPECT_EQ(o.traddr, "10.99.0.1");
  EXPECT_EQ(o.trsvcid, "4420");
  EXPECT_EQ(o.portid, 1);
  EXPECT_EQ(o.treq, 0);
  EXPECT_EQ(o.inline_data_size, 16384);
  ASSERT_EQ(o.subsystems.size(), 1u);
  const SubsystemOptions& s = o.subsystems[0];
  EXPECT_EQ(s.nqn, kNqn);
  EXPECT_FALSE(s.allow_any_host);
  ASSERT_EQ(s.allowed_hosts.size(), 1u);
  EXPECT_EQ(s.allowed_hosts[0], kHost);
  EXPECT_EQ(s.model, "Linux");
  EXPECT_EQ(s.serial, "d3b07384d113edec");
  EXPECT_EQ(s.version, 0x00010300u);
  EXPECT_EQ(s.cntlid_min, 1);
  EXPECT_EQ(s.cntlid_max, 0xFFEF);
  EXPECT_EQ(s.file_path, "/dev/nullb0");
  ASSERT_TRUE(s.nguid.has_value());
  EXPECT_EQ((*s.nguid)[0], 0);
  ASSERT_TRUE(s.uuid.has_value());
  EXPECT_EQ((*s.uuid)[0], 0x0f);
  EXPECT_EQ((*s.uuid)[15], 0xf0);
  // ANA: the port's group 1 optimized, the namespace in group 1 (nvmetcli's ana_grpid).
  ASSERT_EQ(o.ports.size(), 1u);
  ASSERT_EQ(o.ports[0].ana_groups.size(), 1u);
  EXPECT_EQ(o.ports[0].ana_groups[0].first, 1u);
  EXPECT_EQ(o.ports[0].ana_groups[0].second, AnaState::kOptimized);
  EXPECT_EQ(s.anagrpid, 1u);
  EXPECT_TRUE(r->warnings.empty());
  EXPECT_EQ(s.qid_max, 128);  // nvmet's attr_qid_max, applied at most --max-io-queues
}

TEST(ConfigTest, MinimalFileTakesDefaults) {
  json j = {
      {"ports", {{{"addr", {{"trtype", "rdma"}, {"traddr", "fe80::1"}}}, {"subsystems", {kNqn}}}}},
      {"subsystems",
       {{{"nqn", kNqn}, {"namespaces", {{{"nsid", 1}, {"device", {{"path", "/tmp/x"}}}}}}}}}};
  TargetOptions base;
  base.inline_data_size = 4096;
  auto r = parse_nvmet_config(j.dump(), base);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->options.trsvcid, "4420");
  EXPECT_EQ(r->options.inline_data_size, 4096) << "base kept when param is absent";
  EXPECT_TRUE(r->options.subsystems[0].allow_any_host);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(ConfigTest, InlineDataSizeValues) {
  for (const char* v : {"0", "4096", "16384", "-1"}) {
    json j = good();
    j["ports"][0]["param"]["inline_data_size"] = v;
    auto r = parse(j);
    ASSERT_TRUE(r.ok()) << v;
    EXPECT_EQ(r->options.inline_data_size, std::stoi(v));
  }
}

TEST(ConfigTest, BufferedIoChoosesODirectPerNamespace) {
  json j = good();
  auto absent = parse(j);
  ASSERT_TRUE(absent.ok()) << absent.status().message();
  EXPECT_FALSE(absent->options.subsystems[0].direct_io.has_value()) << "--direct-io decides";
  for (auto [value, direct] : {std::pair{"0", true}, {"1", false}}) {
    j["subsystems"][0]["namespaces"][0]["buffered_io"] = value;
    auto r = parse(j);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_TRUE(r->options.subsystems[0].direct_io.has_value());
    EXPECT_EQ(*r->options.subsystems[0].direct_io, direct) << "buffered_io " << value;
  }
  j["subsystems"][0]["namespaces"][0]["buffered_io"] = "2";
  EXPECT_NE(error_of(j).find("namespaces[0].buffered_io"), std::string::npos);
}

TEST(ConfigTest, SeveralNamespacesPerSubsystem) {
  json j = good();
  json second = {
      {"nsid", 3},
      {"enable", 1},
      {"buffered_io", "0"},
      {"device", {{"path", "/tmp/ns3.img"}, {"uuid", "00112233-4455-6677-8899-aabbccddeeff"}}}};
  j["subsystems"][0]["namespaces"].push_back(second);
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const SubsystemOptions& s = r->options.subsystems[0];
  EXPECT_EQ(s.nsid, 1u);
  EXPECT_EQ(s.file_path, "/dev/nullb0");
  ASSERT_EQ(s.more_namespaces.size(), 1u);
  EXPECT_EQ(s.more_namespaces[0].nsid, 3u);
  EXPECT_EQ(s.more_namespaces[0].file_path, "/tmp/ns3.img");
  EXPECT_EQ(s.more_namespaces[0].direct_io, std::optional<bool>(true));
  ASSERT_TRUE(s.more_namespaces[0].uuid.has_value());
  EXPECT_EQ((*s.more_namespaces[0].uuid)[15], 0xff);
  second["nsid"] = 1;
  j["subsystems"][0]["namespaces"][1] = second;
  EXPECT_NE(error_of(j).find("namespaces[1].nsid: 1 is given twice"), std::string::npos)
      << error_of(j);
}

TEST(ConfigTest, UnknownKeysAreErrorsNamingThePath) {
  struct Case {
    const char* where;
    std::function<void(json&)> edit;
  };
  const Case cases[] = {
      {"frobnicate", [](json& j) { j["frobnicate"] = 1; }},
      {"hosts[0].dhchap_key", [](json& j) { j["hosts"][0]["dhchap_key"] = "DHHC-1:00:x"; }},
      {"ports[0].colour", [](json& j) { j["ports"][0]["colour"] = "red"; }},
      {"ports[0].addr.trflags", [](json& j) { j["ports"][0]["addr"]["trflags"] = "1"; }},
      {"subsystems[0].passthru", [](json& j) { j["subsystems"][0]["passthru"] = json::object(); }},
      {"subsystems[0].attr.frobnicate",
       [](json& j) { j["subsystems"][0]["attr"]["frobnicate"] = "1"; }},
      {"subsystems[0].namespaces[0].p2pmem",
       [](json& j) { j["subsystems"][0]["namespaces"][0]["p2pmem"] = "auto"; }},
  };
  for (const Case& c : cases) {
    json j = good();
    c.edit(j);
    std::string msg = error_of(j);
    EXPECT_NE(msg.find(c.where), std::string::npos) << c.where << " -> " << msg;
    EXPECT_NE(msg.find("unknown or unsupported"), std::string::npos) << msg;
  }
}

TEST(ConfigTest, BadValuesAreErrorsNamingKeyAndValue) {
  struct Case {
    const char* expect;  // a part of the message
    std::function<void(json&)> edit;
  };
  const Case cases[] = {
      {"ports[0].addr.trtype: \"tcp\"", [](json& j) { j["ports"][0]["addr"]["trtype"] = "tcp"; }},
      {"ports[0].addr.adrfam: \"ib\"", [](json& j) { j["ports"][0]["addr"]["adrfam"] = "ib"; }},
      {"ports[0].addr.adrfam: \"ipv6\" does not match",
       [](json& j) { j["ports"][0]["addr"]["adrfam"] = "ipv6"; }},
      {"ports[0].addr.traddr: missing", [](json& j) { j["ports"][0]["addr"].erase("traddr"); }},
      {"ports[0].addr.trsvcid: \"44x\" is not an integer",
       [](json& j) { j["ports"][0]["addr"]["trsvcid"] = "44x"; }},
      {"ports[0].addr.trsvcid: \"70000\" is not in 0..65535",
       [](json& j) { j["ports"][0]["addr"]["trsvcid"] = "70000"; }},
      {"ports[0].addr.treq: \"required\"",
       [](json& j) { j["ports"][0]["addr"]["treq"] = "required"; }},
      {"ports[0].addr.treq: \"maybe\"", [](json& j) { j["ports"][0]["addr"]["treq"] = "maybe"; }},
      {"ports[0].addr.tsas: \"tls1.3\"", [](json& j) { j["ports"][0]["addr"]["tsas"] = "tls1.3"; }},
      {"ports[0].param.inline_data_size: \"-2\"",
       [](json& j) { j["ports"][0]["param"]["inline_data_size"] = "-2"; }},
      {"ports[0].param.inline_data_size: \"big\"",
       [](json& j) { j["ports"][0]["param"]["inline_data_size"] = "big"; }},
      {"ports[0].param.pi_enable: \"1\"",
       [](json& j) { j["ports"][0]["param"]["pi_enable"] = "1"; }},
      {"ports[0].portid: \"x\"", [](json& j) { j["ports"][0]["portid"] = "x"; }},
      {"ports[0].referrals: referrals",
       [](json& j) { j["ports"][0]["referrals"] = json::array({json::object()}); }},
      {"ports[1].portid: 1 is given twice",
       [](json& j) {
         j["ports"].push_back(j["ports"][0]);
         j["ports"][1]["addr"]["trsvcid"] = "4421";
       }},
      {"ports[1].addr: 10.99.0.1:4420 is already port 1's address",
       [](json& j) {
         j["ports"].push_back(j["ports"][0]);
         j["ports"][1]["portid"] = 2;
       }},
      {"ports[1].param.max_queue_size: 64 differs from ports[0]'s 128",
       [](json& j) {
         j["ports"].push_back(j["ports"][0]);
         j["ports"][1]["portid"] = 2;
         j["ports"][1]["addr"]["trsvcid"] = "4421";
         j["ports"][1]["param"]["max_queue_size"] = "64";
       }},
      {"ports[1].subsystems[0]: \"nqn.y\" is not in the subsystems list",
       [](json& j) {
         j["ports"].push_back(j["ports"][0]);
         j["ports"][1]["portid"] = 2;
         j["ports"][1]["addr"]["trsvcid"] = "4421";
         j["ports"][1]["subsystems"][0] = "nqn.y";
       }},
      {"ports[0].subsystems[1]: \"nqn.2024-01.io.nvmf-rdma:interop\" is linked twice",
       [](json& j) { j["ports"][0]["subsystems"].push_back(kNqn); }},
      {"ports: 33 ports: at most 32",
       [](json& j) {
         for (int i = 2; i <= 33; ++i) {
           j["ports"].push_back(j["ports"][0]);
           j["ports"].back()["portid"] = i;
           j["ports"].back()["addr"]["trsvcid"] = std::to_string(4419 + i);
         }
       }},
      {"ports: no port given", [](json& j) { j["ports"] = json::array(); }},
      {"ports[0].subsystems: no subsystem linked",
       [](json& j) { j["ports"][0]["subsystems"] = json::array(); }},
      {"ports[0].subsystems[0]: \"nqn.x\" is not in the subsystems list",
       [](json& j) { j["ports"][0]["subsystems"][0] = "nqn.x"; }},
      {"subsystems[0].nqn: \"nqn.2014-08.org.nvmexpress.discovery\" is the discovery NQN",
       [](json& j) {
         j["subsystems"][0]["nqn"] = "nqn.2014-08.org.nvmexpress.discovery";
         j["ports"][0]["subsystems"][0] = "nqn.2014-08.org.nvmexpress.discovery";
       }},
      {"subsystems[0].attr.allow_any_host: \"yes\"",
       [](json& j) { j["subsystems"][0]["attr"]["allow_any_host"] = "yes"; }},
      {"subsystems[0].attr.allow_any_host: \"2\" is not in 0..1",
       [](json& j) { j["subsystems"][0]["attr"]["allow_any_host"] = "2"; }},
      {"subsystems[0].attr.serial: \"012345678901234567890\" is longer than 20",
       [](json& j) { j["subsystems"][0]["attr"]["serial"] = "012345678901234567890"; }},
      {"subsystems[0].attr.version: \"one\"",
       [](json& j) { j["subsystems"][0]["attr"]["version"] = "one"; }},
      {"subsystems[0].attr.cntlid_min: \"0\" is not in 1..65519",
       [](json& j) { j["subsystems"][0]["attr"]["cntlid_min"] = "0"; }},
      {"subsystems[0].attr.cntlid_min: 9 is above cntlid_max 8",
       [](json& j) {
         j["subsystems"][0]["attr"]["cntlid_min"] = "9";
         j["subsystems"][0]["attr"]["cntlid_max"] = "8";
       }},
      {"subsystems[0].attr.pi_enable: \"1\"",
       [](json& j) { j["subsystems"][0]["attr"]["pi_enable"] = "1"; }},
      {"subsystems[0].allowed_hosts[0]: \"nqn.other\" is not in the top-level hosts list",
       [](json& j) { j["subsystems"][0]["allowed_hosts"][0] = "nqn.other"; }},
      {"subsystems[0].namespaces[0].nsid: 4294967295",
       [](json& j) { j["subsystems"][0]["namespaces"][0]["nsid"] = 0xFFFFFFFFu; }},
      {"subsystems[0].namespaces[0].enable: 3",
       [](json& j) { j["subsystems"][0]["namespaces"][0]["enable"] = 3; }},
      {"subsystems[0].namespaces[0].device.ram_size: given with a path",
       [](json& j) { j["subsystems"][0]["namespaces"][0]["device"]["ram_size"] = 4096; }},
      {"subsystems[0].namespaces[1].nsid: 1 is given twice",
       [](json& j) {
         j["subsystems"][0]["namespaces"].push_back(j["subsystems"][0]["namespaces"][0]);
       }},
      {"subsystems[0].namespaces[0].device.path: missing",
       [](json& j) { j["subsystems"][0]["namespaces"][0]["device"].erase("path"); }},
      {"subsystems[0].namespaces[0].device.nguid: \"zz\" is not 16 bytes of hex",
       [](json& j) { j["subsystems"][0]["namespaces"][0]["device"]["nguid"] = "zz"; }},
      {"subsystems[0].namespaces[0].device.uuid: \"0f1e\" is not 16 bytes of hex",
       [](json& j) { j["subsystems"][0]["namespaces"][0]["device"]["uuid"] = "0f1e"; }},
      {"subsystems[1].nqn: \"nqn.2024-01.io.nvmf-rdma:interop\" is defined twice",
       [](json& j) { j["subsystems"].push_back(j["subsystems"][0]); }},
      {"not valid JSON", [](json&) {}},
  };
  for (const Case& c : cases) {
    std::string msg;
    if (std::string(c.expect) == "not valid JSON") {
      auto r = parse_nvmet_config("{\"ports\": [", TargetOptions{});
      ASSERT_FALSE(r.ok());
      msg = r.status().message();
    } else {
      json j = good();
      c.edit(j);
      msg = error_of(j);
    }
    EXPECT_NE(msg.find(c.expect), std::string::npos) << "want: " << c.expect << "\ngot:  " << msg;
  }
}

TEST(ConfigTest, SafeToIgnoreKeysWarn) {
  json j = good();
  j["ports"][0]["param"]["max_queue_size"] = "64";
  j["ports"][0]["param"]["pi_enable"] = "0";
  j["ports"][0]["param"]["tos"] = "-1";
  j["subsystems"][0]["attr"]["ieee_oui"] = "0x000000";
  json other = j["subsystems"][0];
  other["nqn"] = "nqn.2024-01.io.nvmf-rdma:unlinked";
  j["subsystems"].push_back(other);
  j["subsystems"][0]["namespaces"].push_back(
      {{"nsid", 2}, {"enable", 0}, {"device", {{"path", "/dev/nullb1"}}}});
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->options.max_queue_size, 64u);
  EXPECT_TRUE(has_warning(*r, "ports[0].param.tos"));
  EXPECT_TRUE(has_warning(*r, "subsystems[0].attr.ieee_oui"));
  EXPECT_TRUE(
      has_warning(*r, "subsystems[1] \"nqn.2024-01.io.nvmf-rdma:unlinked\" is linked to no port"));
  EXPECT_TRUE(has_warning(*r, "subsystems[0].namespaces[1] (nsid 2) has enable 0"));
  EXPECT_EQ(r->options.subsystems.size(), 1u) << "only linked subsystems are served";
}

TEST(ConfigTest, SeveralSubsystemsOnThePort) {
  json j = good();
  json second = j["subsystems"][0];
  second["nqn"] = "nqn.2024-01.io.nvmf-rdma:second";
  second["attr"]["allow_any_host"] = "1";
  j["subsystems"].push_back(second);
  j["ports"][0]["subsystems"].push_back("nqn.2024-01.io.nvmf-rdma:second");
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->options.subsystems.size(), 2u);
  EXPECT_EQ(r->options.subsystems[1].nqn, "nqn.2024-01.io.nvmf-rdma:second");
  EXPECT_TRUE(r->options.subsystems[1].allow_any_host);
}

// Two ports (two services on one address here, two addresses below), each
// with its own in-capsule size, each linking its own subsystems; the first port also fills the
// single-port fields.
TEST(ConfigTest, SeveralPortsEachWithItsInCapsuleSizeAndLinks) {
  json j = good();
  j["subsystems"].push_back(j["subsystems"][0]);
  j["subsystems"][1]["nqn"] = "nqn.2024-01.io.nvmf-rdma:second";
  j["ports"].push_back(j["ports"][0]);
  j["ports"][1]["portid"] = "7";
  j["ports"][1]["addr"]["trsvcid"] = "4421";
  j["ports"][1]["param"]["inline_data_size"] = "0";
  j["ports"][1]["subsystems"] =
      json::array({"nqn.2024-01.io.nvmf-rdma:second", "nqn.2024-01.io.nvmf-rdma:interop"});
  j["ports"].push_back(j["ports"][0]);
  j["ports"][2]["portid"] = 9;
  j["ports"][2]["addr"]["traddr"] = "10.99.0.2";
  j["ports"][2]["param"]["inline_data_size"] = "-1";
  auto c = parse(j);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const TargetOptions& o = c->options;
  ASSERT_EQ(o.ports.size(), 3u);
  EXPECT_EQ(o.ports[0].portid, 1);
  EXPECT_EQ(o.ports[0].traddr, "10.99.0.1");
  EXPECT_EQ(o.ports[0].trsvcid, "4420");
  EXPECT_EQ(o.ports[0].inline_data_size, 16384);
  EXPECT_EQ(o.ports[0].subsystems, std::vector<std::string>{kNqn});
  EXPECT_EQ(o.ports[1].portid, 7);
  EXPECT_EQ(o.ports[1].traddr, "10.99.0.1");
  EXPECT_EQ(o.ports[1].trsvcid, "4421");
  EXPECT_EQ(o.ports[1].inline_data_size, 0);
  EXPECT_EQ(o.ports[1].subsystems,
            (std::vector<std::string>{"nqn.2024-01.io.nvmf-rdma:second", kNqn}));
  EXPECT_EQ(o.ports[2].portid, 9);
  EXPECT_EQ(o.ports[2].traddr, "10.99.0.2");
  EXPECT_EQ(o.ports[2].trsvcid, "4420");
  EXPECT_EQ(o.ports[2].inline_data_size, -1);
  // The first port in the single-port fields; every linked subsystem once, first link first.
  EXPECT_EQ(o.traddr, "10.99.0.1");
  EXPECT_EQ(o.portid, 1);
  EXPECT_EQ(o.inline_data_size, 16384);
  ASSERT_EQ(o.subsystems.size(), 2u);
  EXPECT_EQ(o.subsystems[0].nqn, kNqn);
  EXPECT_EQ(o.subsystems[1].nqn, "nqn.2024-01.io.nvmf-rdma:second");
  EXPECT_TRUE(validate_options(o).ok()) << validate_options(o).to_string();
}

// The same checks hold for options built without a file (a test or a library user).
TEST(ConfigTest, PortOptionsAreValidated) {
  TargetOptions o;
  o.ram_size = 1 << 20;
  PortOptions a;
  a.traddr = "10.0.0.1";
  PortOptions b = a;
  b.portid = 2;
  o.ports = {a, b};
  EXPECT_NE(validate_options(o).message().find("10.0.0.1:4420 is already port 1's address"),
            std::string::npos)
      << validate_options(o).to_string();
  o.ports[1].trsvcid = "0";
  EXPECT_TRUE(validate_options(o).ok()) << validate_options(o).to_string();
  o.ports[1].portid = 1;
  EXPECT_NE(validate_options(o).message().find("portid is given twice"), std::string::npos);
  o.ports[1].portid = 2;
  o.ports[1].inline_data_size = -2;
  EXPECT_NE(validate_options(o).message().find("port 2: --inline-data-size -2"), std::string::npos)
      << validate_options(o).to_string();
  o.ports[1].inline_data_size = 0;
  o.ports[1].subsystems = {"nqn.not-here"};
  EXPECT_NE(validate_options(o).message().find("links subsystem nqn.not-here"), std::string::npos);
  o.ports[1].subsystems = {kDefaultSubnqn};
  EXPECT_TRUE(validate_options(o).ok()) << validate_options(o).to_string();
  o.ports[1].traddr = "not-an-address";
  EXPECT_NE(validate_options(o).message().find("port 2: --traddr"), std::string::npos);
  // A missing address is named only when no value is bad.
  o.ports[1].traddr = "";
  EXPECT_EQ(validate_options(o).message(), "port 2: --traddr is required");
  o.lba_size = 1000;
  EXPECT_EQ(validate_options(o).message(), "--lba-size 1000 is not 512 or 4096");
}

// The first mistake named is a bad value, whatever is missing (-a, a namespace backing).
TEST(ConfigTest, BadValuesAreNamedBeforeMissingOptions) {
  TargetOptions o;
  o.lba_size = 7;
  EXPECT_EQ(validate_options(o).message(), "--lba-size 7 is not 512 or 4096");
  o.lba_size = 512;
  o.trsvcid = "abc";
  EXPECT_EQ(validate_options(o).message().rfind("--trsvcid: ", 0), 0u)
      << validate_options(o).message();
  o.trsvcid = "4420";
  o.max_io_queues = 0;
  EXPECT_EQ(validate_options(o).message(), "--max-io-queues 0 is not in 1..64");
  o.max_io_queues = 4;
  EXPECT_EQ(validate_options(o).message(), "--traddr is required");
  o.traddr = "10.0.0.1";
  EXPECT_EQ(validate_options(o).message(),
            "give exactly one namespace backing: --file PATH or --ram-size BYTES");
  o.ram_size = 1 << 20;
  EXPECT_TRUE(validate_options(o).ok()) << validate_options(o).to_string();
}

// save_config's file read back: every port, subsystem, host and namespace as it was, RAM
// namespaces and a subsystem without namespaces included.
TEST(ConfigTest, SavedConfigReadsBackToTheSameOptions) {
  PortOptions p1;
  p1.portid = 1;
  p1.traddr = "10.0.0.1";
  p1.trsvcid = "4420";
  p1.inline_data_size = 16384;
  p1.subsystems = {"nqn.a", "nqn.b"};
  PortOptions p2 = p1;
  p2.portid = 2;
  p2.traddr = "fe80::1";
  p2.trsvcid = "4421";
  p2.treq = proto::kTreqNotRequired;
  p2.inline_data_size = -1;
  p2.subsystems = {"nqn.b"};
  SubsystemOptions a;
  a.nqn = "nqn.a";
  a.allow_any_host = false;
  a.allowed_hosts = {"nqn.host.2", "nqn.host.1"};
  a.serial = "SERIAL01";
  a.model = "model";
  a.firmware = "1.0";
  a.version = 0x00010401;
  a.cntlid_min = 5;
  a.cntlid_max = 90;
  a.qid_max = 2;
  a.nsid = 3;
  a.file_path = "/dev/nullb0";
  a.direct_io = true;
  a.nguid = std::array<uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  NamespaceOptions ram;
  ram.nsid = 7;
  ram.ram_size = 1 << 20;
  ram.uuid = std::array<uint8_t, 16>{0xf0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  NamespaceOptions buffered;
  buffered.nsid = 9;
  buffered.file_path = "/srv/x.img";
  buffered.direct_io = false;
  a.more_namespaces = {ram, buffered};
  SubsystemOptions b;
  b.nqn = "nqn.b";  // no namespace

  const json saved = nvmet_config_json({p1, p2}, {a, b});
  EXPECT_EQ(saved["hosts"], json::parse(R"([{"nqn": "nqn.host.1"}, {"nqn": "nqn.host.2"}])"));
  EXPECT_EQ(saved["subsystems"][0]["attr"]["version"], "1.4.1");
  EXPECT_EQ(saved["subsystems"][0]["namespaces"][0]["device"]["nguid"],
            "01020304-0506-0708-090a-0b0c0d0e0f10");
  EXPECT_EQ(saved["ports"][1]["addr"]["adrfam"], "ipv6");
  auto r = parse(saved);
  ASSERT_TRUE(r.ok()) << r.status().to_string() << "\n" << saved.dump(2);
  EXPECT_TRUE(has_warning(*r, "subsystems[1].namespaces: no enabled namespace"));
  const TargetOptions& o = r->options;
  ASSERT_EQ(o.ports.size(), 2u);
  EXPECT_EQ(o.ports[1].traddr, "fe80::1");
  EXPECT_EQ(o.ports[1].trsvcid, "4421");
  EXPECT_EQ(o.ports[1].treq, proto::kTreqNotRequired);
  EXPECT_EQ(o.ports[0].inline_data_size, 16384);
  EXPECT_EQ(o.ports[1].inline_data_size, -1);
  EXPECT_EQ(o.ports[0].subsystems, p1.subsystems);
  EXPECT_EQ(o.ports[1].subsystems, p2.subsystems);
  ASSERT_EQ(o.subsystems.size(), 2u);
  const SubsystemOptions& ra = o.subsystems[0];
  EXPECT_FALSE(ra.allow_any_host);
  EXPECT_EQ(ra.allowed_hosts, a.allowed_hosts);
  EXPECT_EQ(ra.serial, a.serial);
  EXPECT_EQ(ra.model, a.model);
  EXPECT_EQ(ra.firmware, a.firmware);
  EXPECT_EQ(ra.version, a.version);
  EXPECT_EQ(ra.cntlid_min, 5);
  EXPECT_EQ(ra.cntlid_max, 90);
  EXPECT_EQ(ra.qid_max, 2);
  EXPECT_EQ(ra.nsid, 3u);
  EXPECT_EQ(ra.file_path, "/dev/nullb0");
  EXPECT_EQ(ra.direct_io, std::optional<bool>(true));
  EXPECT_EQ(ra.nguid, a.nguid);
  ASSERT_EQ(ra.more_namespaces.size(), 2u);
  EXPECT_EQ(ra.more_namespaces[0].nsid, 7u);
  EXPECT_EQ(ra.more_namespaces[0].ram_size, 1u << 20);
  EXPECT_TRUE(ra.more_namespaces[0].file_path.empty());
  EXPECT_EQ(ra.more_namespaces[0].uuid, ram.uuid);
  EXPECT_EQ(ra.more_namespaces[1].file_path, "/srv/x.img");
  EXPECT_EQ(ra.more_namespaces[1].direct_io, std::optional<bool>(false));
  const SubsystemOptions& rb = o.subsystems[1];
  EXPECT_EQ(rb.nqn, "nqn.b");
  EXPECT_TRUE(rb.file_path.empty());
  EXPECT_EQ(rb.ram_size, 0u);
  EXPECT_TRUE(rb.more_namespaces.empty());
  EXPECT_TRUE(validate_options(o).ok()) << validate_options(o).to_string();
}

TEST(ConfigTest, MissingFileNamesIt) {
  auto r = load_nvmet_config("/nonexistent/config.json", TargetOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent/config.json"), std::string::npos);
}

// ------------------------------------------------------------------------ hostile JSON --

// The text of good() with `from` replaced by `to` (numbers nlohmann_json cannot hold, nesting
// json objects cannot build, bytes that are not UTF-8).
std::string good_text_with(const std::string& from, const std::string& to) {
  std::string text = good().dump();
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string text_error(const std::string& text) {
  auto r = parse_nvmet_config(text, TargetOptions{});
  EXPECT_FALSE(r.ok()) << text.substr(0, 200);
  return r.ok() ? std::string() : r.status().message();
}

// 2^64 - 1 used to be read as int64 -1 and accepted as inline_data_size -1 (one page).
TEST(ConfigHostileTest, UnsignedAboveInt64IsOutOfRangeNotWrapped) {
  std::string e = text_error(good_text_with(R"("inline_data_size":"16384")",
                                            R"("inline_data_size":18446744073709551615)"));
  EXPECT_NE(e.find("ports[0].param.inline_data_size: 18446744073709551615 is not in -1.."),
            std::string::npos)
      << e;
  e = text_error(good_text_with(R"("portid":1)", R"("portid":9223372036854775808)"));
  EXPECT_NE(e.find("ports[0].portid"), std::string::npos) << e;
  e = text_error(good_text_with(R"("portid":1)", R"("portid":"99999999999999999999")"));
  EXPECT_NE(e.find("ports[0].portid: \"99999999999999999999\" is not in 0..65535"),
            std::string::npos)
      << e;
}

// Beyond 64 bits the parser makes a double: not an integer, named with its key.
TEST(ConfigHostileTest, NumberBeyond64BitsNamesTheKey) {
  std::string e = text_error(good_text_with(R"("portid":1)", R"("portid":18446744073709551617)"));
  EXPECT_NE(e.find("ports[0].portid: 1.8446744073709552e+19 is not an integer (beyond 64 bits)"),
            std::string::npos)
      << e;
}

// 1e999 overflows a double: nlohmann_json throws out_of_range (not parse_error), which used to
// escape parse_nvmet_config and abort nvmf-target.
TEST(ConfigHostileTest, NumberOverflowingADoubleNamesTheKey) {
  std::string e = text_error(good_text_with(R"("portid":1)", R"("portid":1e999)"));
  EXPECT_NE(e.find("ports[0].portid: "), std::string::npos) << e;
  EXPECT_NE(e.find("number overflow"), std::string::npos) << e;
  e = text_error(good_text_with(R"("cntlid_max":"65519")", R"("cntlid_max":-1e999)"));
  EXPECT_NE(e.find("subsystems[0].attr.cntlid_max: "), std::string::npos) << e;
}

// Deep nesting under a key we ignore (and would quote in a warning) or do not know: refused
// while parsing, naming the key. 200000 levels used to overflow the stack in dump().
TEST(ConfigHostileTest, DeepNestingUnderAnyKeyNamesTheKey) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  std::string e =
      text_error(good_text_with(R"("ana_groups":[)", R"("ana_groups":)" + deep + R"(,"x":[)"));
  EXPECT_NE(e.find("ports[0].ana_groups"), std::string::npos) << e;
  EXPECT_NE(e.find("nested deeper than 32 levels"), std::string::npos) << e;
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += R"({"a":)";
  objects += "1" + std::string(100000, '}');
  e = text_error(good_text_with(R"("inline_data_size":"16384",)",
                                R"("frobnicate":)" + objects + R"(,"inline_data_size":"16384",)"));
  EXPECT_NE(e.find("ports[0].param.frobnicate.a.a.a.a...: nested deeper than 32"),
            std::string::npos)
      << e;
  // Nesting within the limit is still read, and an ignored key's value is quoted short.
  json j = good();
  const std::string nested = std::string(20, '[') + "1" + std::string(20, ']');
  j["subsystems"][0]["namespaces"][0]["resv"] = json::parse(nested);
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(has_warning(*r, "subsystems[0].namespaces[0].resv " + nested + " ignored"));
}

// What a current nvmetcli saves for a namespace (its "ana" and "resv" attribute groups, the
// device's p2pmem) loads: the ANA group is used, the others named in one warning each.
TEST(ConfigTest, CurrentNvmetcliNamespaceGroupsLoadWithOneWarningEach) {
  json j = good();
  json& ns = j["subsystems"][0]["namespaces"][0];
  ns["ana"] = {{"grpid", 2}};
  ns["resv"] = {{"enable", 0}};
  ns["device"]["p2pmem"] = "0";
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->options.subsystems[0].file_path, "/dev/nullb0");
  EXPECT_EQ(r->options.subsystems[0].anagrpid, 2u) << "the ana group wins over ana_grpid";
  EXPECT_TRUE(
      has_warning(*r, "subsystems[0].namespaces[0].ana_grpid 1 ignored: ana.grpid 2 is used"));
  EXPECT_TRUE(has_warning(*r, "subsystems[0].namespaces[0].resv {\"enable\":0} ignored"));
  EXPECT_TRUE(has_warning(*r, "subsystems[0].namespaces[0].device.p2pmem \"0\" ignored"));
  EXPECT_EQ(r->warnings.size(), 3u);
}

// ANA groups of a port and a namespace's group: every state name, and each bad value refused
// naming the key.
TEST(ConfigTest, AnaGroupsAndNamespaceGroupsAreReadAndChecked) {
  json j = good();
  j["ports"][0]["ana_groups"] = {{{"grpid", 1}, {"ana", {{"state", "optimized"}}}},
                                 {{"grpid", 2}, {"ana", {{"state", "non-optimized"}}}},
                                 {{"grpid", 3}, {"ana", {{"state", "inaccessible"}}}},
                                 {{"grpid", 4}, {"ana", {{"state", "persistent-loss"}}}},
                                 {{"grpid", 128}, {"ana", {{"state", "change"}}}},
                                 {{"grpid", 5}}};
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& g = r->options.ports[0].ana_groups;
  ASSERT_EQ(g.size(), 6u);
  EXPECT_EQ(g[1], (std::pair<uint32_t, AnaState>{2, AnaState::kNonOptimized}));
  EXPECT_EQ(g[3], (std::pair<uint32_t, AnaState>{4, AnaState::kPersistentLoss}));
  EXPECT_EQ(g[4], (std::pair<uint32_t, AnaState>{128, AnaState::kChange}));
  EXPECT_EQ(g[5], (std::pair<uint32_t, AnaState>{5, AnaState::kOptimized})) << "no ana: optimized";
  const std::pair<json, std::string> bad_groups[] = {
      {{{{"grpid", 0}}}, "ports[0].ana_groups[0].grpid: 0 is not in 1..128"},
      {{{{"grpid", 129}}}, "ports[0].ana_groups[0].grpid: 129 is not in 1..128"},
      {{{{"ana", {{"state", "optimized"}}}}}, "ports[0].ana_groups[0].grpid: missing"},
      {{{{"grpid", 2}}, {{"grpid", 2}}}, "ports[0].ana_groups[1].grpid: 2 is given twice"},
      {{{{"grpid", 2}, {"ana", {{"state", "standby"}}}}},
       "ports[0].ana_groups[0].ana.state: \"standby\" is not optimized, non-optimized, "
       "inaccessible, persistent-loss or change"},
      {{{{"grpid", 2}, {"ana", {{"state", 3}}}}}, "ports[0].ana_groups[0].ana.state"},
      {json{1}, "ports[0].ana_groups[0]: 1 is not an object"},
  };
  for (const auto& [groups, want] : bad_groups) {
    json b = good();
    b["ports"][0]["ana_groups"] = groups;
    EXPECT_NE(error_of(b).find(want), std::string::npos) << error_of(b) << " | " << want;
  }
  for (const json& grpid : {json(0), json(129), json("x")}) {
    json b = good();
    b["subsystems"][0]["namespaces"][0]["ana"] = {{"grpid", grpid}};
    EXPECT_NE(error_of(b).find("subsystems[0].namespaces[0].ana.grpid"), std::string::npos)
        << error_of(b);
    b = good();
    b["subsystems"][0]["namespaces"][0]["ana_grpid"] = grpid;
    EXPECT_NE(error_of(b).find("subsystems[0].namespaces[0].ana_grpid"), std::string::npos)
        << error_of(b);
  }
}

// Each wrong type is an error naming the key, never a type_error exception.
TEST(ConfigHostileTest, WrongTypesNameTheKey) {
  const std::pair<std::function<void(json&)>, std::string> cases[] = {
      {[](json& j) { j["ports"] = json::object(); }, "ports: {} is not a list"},
      {[](json& j) { j["ports"][0]["addr"] = json::array(); },
       "ports[0].addr: [] is not an object"},
      {[](json& j) { j["ports"][0]["addr"]["traddr"] = 5; },
       "ports[0].addr.traddr: 5 is not a string"},
      {[](json& j) { j["ports"][0]["portid"] = true; }, "ports[0].portid: true is not an integer"},
      {[](json& j) { j["ports"][0]["portid"] = 1.5; }, "ports[0].portid: 1.5 is not an integer"},
      {[](json& j) { j["ports"][0]["subsystems"][0] = json::object(); },
       "ports[0].subsystems[0]: {} is not a string"},
      {[](json& j) { j["subsystems"][0]["attr"]["model"] = json::array({1}); },
       "subsystems[0].attr.model: [1] is not a string"},
      {[](json& j) { j["subsystems"][0]["namespaces"][0]["nsid"] = nullptr; },
       "subsystems[0].namespaces[0].nsid: null is not an integer"},
      {[](json& j) { j["hosts"][0] = "nqn"; }, "hosts[0]: \"nqn\" is not an object"},
  };
  for (const auto& [mutate, want] : cases) {
    json j = good();
    mutate(j);
    std::string e = error_of(j);
    EXPECT_NE(e.find(want), std::string::npos) << "want: " << want << "\ngot: " << e;
  }
}

// Bytes that are not UTF-8 are a syntax error; the parser quotes them, escaped in our message.
TEST(ConfigHostileTest, InvalidUtf8IsAnErrorInSafeText) {
  std::string e = text_error(good_text_with(R"("model":"Linux")", "\"model\":\"Li\xff\x1b[2J\""));
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;
  EXPECT_EQ(e.find('\xff'), std::string::npos) << e;
  EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
}

// A long value quoted in a message is cut, so one bad key cannot make a megabyte of error.
TEST(ConfigHostileTest, QuotedValuesAreCut) {
  json j = good();
  j["ports"][0]["addr"]["trtype"] = std::string(100000, 't');
  std::string e = error_of(j);
  EXPECT_LT(e.size(), 200u) << e.size();
  EXPECT_NE(e.find("ports[0].addr.trtype: \"tttt"), std::string::npos) << e;
  EXPECT_NE(e.find("...: only \"rdma\""), std::string::npos) << e;
}

TEST(ConfigHostileTest, FileLargerThanTheLimitIsRefused) {
  std::string path = ::testing::TempDir() + "/big-config.json";
  {
    std::ofstream out(path);
    out << std::string(kMaxConfigBytes + 1, ' ');
  }
  auto r = load_nvmet_config(path, TargetOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("larger than 16777216 bytes"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace nvmf::target

namespace nvmf::target {
namespace {

constexpr char kKey32[] = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";

// nvmetcli (with its "dhchap" host attribute group) saves a host's keys as
// hosts[].dhchap.{key, ctrl_key, hash, dhgroup}.
TEST(ConfigDhchap, ReadsNvmetclisDhchapGroup) {
  json j = good();
  const std::string nqn = j["hosts"][0]["nqn"];
  j["hosts"][0]["dhchap"] = {
      {"key", kKey32}, {"ctrl_key", kKey32}, {"hash", "hmac(sha512)"}, {"dhgroup", "ffdhe8192"}};
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->options.host_keys.count(nqn), 1u);
  const HostKey& k = r->options.host_keys.at(nqn);
  EXPECT_EQ(k.key.format(), kKey32);
  ASSERT_TRUE(k.ctrl_key.has_value());
  EXPECT_EQ(k.hash, dhchap::Hash::kSha512);
  EXPECT_EQ(k.dhgroup, dhchap::DhGroup::kFfdhe8192);
  // nvmetcli writes unset files as empty strings: no key.
  j["hosts"][0]["dhchap"] = {
      {"key", ""}, {"ctrl_key", ""}, {"hash", "hmac(sha256)"}, {"dhgroup", "null"}};
  auto none = parse(j);
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  EXPECT_TRUE(none->options.host_keys.empty());
}

TEST(ConfigDhchap, BadKeysAreNamedWithoutTheirText) {
  std::string bad_crc = kKey32;
  bad_crc[bad_crc.size() - 2] = 'S';
  struct Case {
    json dhchap;
    const char* where;
  };
  const Case cases[] = {
      {{{"key", bad_crc}}, "hosts[0].dhchap.key: DH-HMAC-CHAP secret: the CRC-32"},
      {{{"key", kKey32}, {"ctrl_key", "DHHC-1:09:AAAA:"}}, "hosts[0].dhchap.ctrl_key"},
      {{{"ctrl_key", kKey32}}, "hosts[0].dhchap.ctrl_key: given without a key"},
      {{{"key", kKey32}, {"hash", "hmac(md5)"}}, "hosts[0].dhchap.hash"},
      {{{"key", kKey32}, {"dhgroup", "modp2048"}}, "hosts[0].dhchap.dhgroup"},
      {{{"key", kKey32}, {"colour", "red"}}, "hosts[0].dhchap.colour"},
  };
  for (const Case& c : cases) {
    json j = good();
    j["hosts"][0]["dhchap"] = c.dhchap;
    const std::string msg = error_of(j);
    EXPECT_NE(msg.find(c.where), std::string::npos) << msg;
    EXPECT_EQ(msg.find("AAECAwQF"), std::string::npos) << msg;
  }
}

TEST(ConfigDhchap, AJsonErrorDoesNotQuoteTheText) {
  const std::string text = std::string("{\"hosts\": [{\"nqn\": \"h\", \"dhchap\": {\"key\": ") +
                           "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:}}]}";
  auto r = parse_nvmet_config(text, TargetOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not valid JSON"), std::string::npos);
  EXPECT_EQ(r.status().message().find("AAECAwQF"), std::string::npos) << r.status().message();
}

TEST(ConfigDhchap, TheFilesHostsReplaceTheKeysItIsAppliedTo) {
  TargetOptions base;
  base.host_keys["nqn.gone"].key = *dhchap::Secret::parse(kKey32);
  auto r = parse_nvmet_config(good().dump(), base);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->options.host_keys.empty());
}

TEST(ConfigDhchap, SavedConfigKeepsTheKeys) {
  auto parsed = parse([] {
    json j = good();
    j["hosts"][0]["dhchap"] = {{"key", kKey32}, {"hash", "hmac(sha384)"}, {"dhgroup", "ffdhe3072"}};
    return j;
  }());
  ASSERT_TRUE(parsed.ok());
  const TargetOptions& o = parsed->options;
  const json saved = nvmet_config_json(o.ports, o.subsystems, &o.host_keys);
  auto again = parse_nvmet_config(saved.dump(), TargetOptions{});
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  ASSERT_EQ(again->options.host_keys.size(), 1u);
  const HostKey& k = again->options.host_keys.begin()->second;
  EXPECT_EQ(k.key.format(), kKey32);
  EXPECT_FALSE(k.ctrl_key.has_value());
  EXPECT_EQ(k.hash, dhchap::Hash::kSha384);
  EXPECT_EQ(k.dhgroup, dhchap::DhGroup::kFfdhe3072);
}

}  // namespace
}  // namespace nvmf::target
