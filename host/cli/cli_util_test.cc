// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of host/cli_util: size parsing, LBA alignment, padding, buffer sizing, JSON.
#include "host/cli/cli_util.h"

#include <gtest/gtest.h>

namespace nvmf::host {
namespace {

TEST(ParseSize, Accepts) {
  EXPECT_EQ(*parse_size("0", "--offset"), 0u);
  EXPECT_EQ(*parse_size("4096", "--offset"), 4096u);
  EXPECT_EQ(*parse_size("0x1000", "--offset"), 4096u);
  EXPECT_EQ(*parse_size("4k", "--offset"), 4096u);
  EXPECT_EQ(*parse_size("4K", "--offset"), 4096u);
  EXPECT_EQ(*parse_size("4KiB", "--offset"), 4096u);
  EXPECT_EQ(*parse_size("2M", "--length"), 2u << 20);
  EXPECT_EQ(*parse_size("1g", "--length"), 1u << 30);
}

TEST(ParseSize, RejectsWithTheOptionNamed) {
  for (const char* bad :
       {"", "-1", "abc", "12q", "4kb", "0x", "0x10k", "99999999999999999999", "20000000000G"}) {
    auto r = parse_size(bad, "--length");
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find("--length"), std::string::npos) << bad;
  }
}

TEST(LbaAlignment, Offsets) {
  EXPECT_TRUE(check_lba_aligned(0, 512, "--offset").ok());
  EXPECT_TRUE(check_lba_aligned(8192, 4096, "--offset").ok());
  Status st = check_lba_aligned(100, 512, "--offset");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "--offset 100 is not a multiple of the LBA size 512");
}

TEST(Padding, Math) {
  EXPECT_EQ(round_up_to_lba(1, 512), 512u);
  EXPECT_EQ(round_up_to_lba(512, 512), 512u);
  EXPECT_EQ(round_up_to_lba(513, 512), 1024u);
  EXPECT_EQ(padding_bytes(1000, 512), 24u);
  EXPECT_EQ(padding_bytes(4096, 4096), 0u);
  EXPECT_EQ(padding_bytes(4097, 4096), 4095u);
}

TEST(CliBuffer, Sizing) {
  EXPECT_EQ(cli_buffer_bytes(1000, 512), 1024u);
  EXPECT_EQ(cli_buffer_bytes(1 << 20, 512), 1u << 20);
  EXPECT_EQ(cli_buffer_bytes(100ull << 20, 512), kMaxCliBufferBytes);
  EXPECT_EQ(cli_buffer_bytes(100ull << 20, 4096, 10000), 8192u);
  EXPECT_EQ(cli_buffer_bytes(1, 4096, 100), 4096u);
}

TEST(Json, NegotiationAndStats) {
  Negotiation n;
  n.ioccsz = 260;
  n.in_capsule_data_size = 4096;
  n.in_capsule_enabled = true;
  n.queues = {{0, 64, 80, false, 64, 5, 0, 0, 19}, {1, 4096, 16, true, 0, 0, 9, 4, 14}};
  n.min_granted_max_inline_data = 0;
  auto j = negotiation_json(n);
  EXPECT_EQ(j["ioccsz"], 260);
  EXPECT_EQ(j["in_capsule_data_size"], 4096);
  EXPECT_EQ(j["queues"][0]["qid"], 0);
  EXPECT_EQ(j["queues"][0]["requested_max_inline_data"], 64);
  EXPECT_EQ(j["queues"][0]["granted_max_inline_data"], 80);
  EXPECT_EQ(j["queues"][0]["usable_max_inline_data"], 64);
  EXPECT_EQ(j["queues"][0]["inline_fallback"], false);
  EXPECT_EQ(j["queues"][0]["capsules_inline"], 5);
  EXPECT_EQ(j["queues"][1]["inline_fallback"], true);
  EXPECT_EQ(j["queues"][1]["granted_max_inline_data"], 16);
  EXPECT_EQ(j["queues"][1]["usable_max_inline_data"], 0);
  EXPECT_EQ(j["queues"][1]["capsules_inline"], 0);
  EXPECT_EQ(j["queues"][1]["capsules_by_reference"], 9);
  EXPECT_EQ(j["queues"][1]["capsules_with_in_capsule_data"], 4);
  EXPECT_EQ(j["queues"][0]["ack_timeout"], 19);
  EXPECT_EQ(j["queues"][1]["ack_timeout"], 14);
  EXPECT_EQ(j["min_granted_max_inline_data"], 0);
  HostStats s;
  s.writes_in_capsule = 3;
  s.capsules_inline = 7;
  s.capsules_by_reference = 4;
  s.capsules_with_in_capsule_data = 3;
  EXPECT_EQ(stats_json(s)["writes_in_capsule"], 3);
  EXPECT_EQ(stats_json(s)["capsules_inline"], 7);
  EXPECT_EQ(stats_json(s)["capsules_by_reference"], 4);
  EXPECT_EQ(stats_json(s)["capsules_with_in_capsule_data"], 3);
}

TEST(Json, Identify) {
  proto::IdentifyController id{};
  std::memcpy(id.sn, "SN1                 ", 20);
  id.kas = 1;
  id.cntrltype = 1;  // I/O controller: compared with nvme id-ctrl by the interop suite
  NamespaceInfo ns;
  ns.nsze = 8;
  ns.lba_size = 512;
  auto j = identify_json(id, ns, Negotiation{});
  EXPECT_EQ(j["controller"]["sn"], "SN1");
  EXPECT_EQ(j["controller"]["kas"], 1);
  EXPECT_EQ(j["controller"]["cntrltype"], 1);
  EXPECT_EQ(j["namespace"]["size_bytes"], 4096);
  EXPECT_TRUE(j.contains("negotiation"));
}

TEST(RecoveryJson, StateNamesAndNvmeCliDefaults) {
  HostOptions o;  // nvme-cli / Linux defaults: 10 s, 600 s, off
  RecoveryStats r;
  r.losses = 2;
  r.reconnects = 1;
  r.longest_outage_ms = 1234;
  r.last_loss = "UNAVAILABLE: queue 1: the target disconnected";
  nlohmann::json j = recovery_json(ControllerState::kConnecting, r, o);
  EXPECT_EQ(j["state"], "connecting");
  EXPECT_EQ(j["reconnect_delay"], 10);
  EXPECT_EQ(j["ctrl_loss_tmo"], 600);
  EXPECT_EQ(j["fast_io_fail_tmo"], -1);
  EXPECT_EQ(j["losses"], 2);
  EXPECT_EQ(j["reconnects"], 1);
  EXPECT_EQ(j["longest_outage_ms"], 1234);
  EXPECT_EQ(j["last_loss"], r.last_loss);
  EXPECT_EQ(j["failovers"], 0);
  EXPECT_EQ(j["resets"], 0);
  EXPECT_STREQ(controller_state_name(ControllerState::kNew), "new");
  EXPECT_STREQ(controller_state_name(ControllerState::kLive), "live");
  EXPECT_STREQ(controller_state_name(ControllerState::kResetting), "resetting");
  EXPECT_STREQ(controller_state_name(ControllerState::kDeleting), "deleting");
}

// Failover paths: -a and -s lists pair up, a single value goes with every other value.
TEST(PathLists, PairOrShareAndKeepTheFirstInTraddr) {
  HostOptions o;
  o.traddr = "10.0.0.1,10.0.0.2";
  o.trsvcid = "4420";
  ASSERT_TRUE(split_path_lists(o).ok());
  EXPECT_EQ(o.traddr, "10.0.0.1");
  EXPECT_EQ(o.trsvcid, "4420");
  ASSERT_EQ(o.failover_paths.size(), 1u);
  EXPECT_EQ(o.failover_paths[0], (TransportPath{"10.0.0.2", "4420"}));

  HostOptions s;
  s.traddr = "10.0.0.1";
  s.trsvcid = "4420,4421,4422";
  ASSERT_TRUE(split_path_lists(s).ok());
  ASSERT_EQ(transport_paths(s).size(), 3u);
  EXPECT_EQ(transport_paths(s)[2], (TransportPath{"10.0.0.1", "4422"}));
  EXPECT_TRUE(check_connection_options(s).ok());

  HostOptions pair;
  pair.traddr = "10.0.0.1,10.0.0.2";
  pair.trsvcid = "4420,4421";
  ASSERT_TRUE(split_path_lists(pair).ok());
  EXPECT_EQ(pair.failover_paths[0], (TransportPath{"10.0.0.2", "4421"}));

  HostOptions one;  // no comma: no failover path, nothing changed
  one.traddr = "10.0.0.1";
  ASSERT_TRUE(split_path_lists(one).ok());
  EXPECT_EQ(one.traddr, "10.0.0.1");
  EXPECT_TRUE(one.failover_paths.empty());

  nlohmann::json j = recovery_json(ControllerState::kLive, RecoveryStats{}, pair);
  EXPECT_EQ(j["paths"], nlohmann::json::array({"10.0.0.1:4420", "10.0.0.2:4421"}));
}

TEST(PathLists, BadListsAreRefusedNamingWhy) {
  auto error = [](std::string a, std::string s) {
    HostOptions o;
    o.traddr = std::move(a);
    o.trsvcid = std::move(s);
    Status st = split_path_lists(o);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    return st.message();
  };
  EXPECT_NE(error("10.0.0.1,10.0.0.2", "1,2,3").find("2 addresses and --trsvcid 3 services"),
            std::string::npos);
  EXPECT_NE(error("10.0.0.1,,10.0.0.2", "4420").find("path 2: empty"), std::string::npos);
  EXPECT_NE(error("10.0.0.1", "4420,").find("path 2: empty"), std::string::npos);
  EXPECT_NE(error("10.0.0.1,10.0.0.1", "4420").find("10.0.0.1:4420 is given twice"),
            std::string::npos);
  EXPECT_NE(error("10.0.0.1", "1,2,3,4,5,6,7,8,9").find("9 paths: at most 8"), std::string::npos);
  // Each path is checked as a single one would be.
  HostOptions o;
  o.traddr = "10.0.0.1,host.example";
  ASSERT_TRUE(split_path_lists(o).ok());
  EXPECT_NE(check_connection_options(o).message().find("--traddr"), std::string::npos);
  o.traddr = "10.0.0.1";
  o.trsvcid = "4420,0";
  o.failover_paths.clear();
  ASSERT_TRUE(split_path_lists(o).ok());
  EXPECT_NE(check_connection_options(o).message().find("port 0"), std::string::npos);
}

// Without -a (the CLI names it missing after every bad value) the ports are still checked.
TEST(PathLists, PortsAreCheckedWithoutAnAddress) {
  HostOptions o;  // traddr empty
  o.trsvcid = "4420,4421";
  ASSERT_TRUE(split_path_lists(o).ok());
  EXPECT_EQ(o.trsvcid, "4420");
  ASSERT_EQ(o.failover_paths.size(), 1u);
  EXPECT_EQ(o.failover_paths[0], (TransportPath{"", "4421"}));
  EXPECT_TRUE(check_connection_options(o).ok()) << check_connection_options(o).to_string();
  o.failover_paths.clear();
  o.trsvcid = "4420,abc";
  ASSERT_TRUE(split_path_lists(o).ok());
  EXPECT_EQ(check_connection_options(o).message().rfind("--trsvcid: ", 0), 0u)
      << check_connection_options(o).message();
  o.failover_paths.clear();
  o.trsvcid = "4420,";
  EXPECT_NE(split_path_lists(o).message().find("path 2: empty"), std::string::npos);
}

// The second line of a usage error: the synopsis of the subcommand used, else of nvmf-host.
TEST(HostUsage, SynopsisOfEachSubcommand) {
  int checked = 0;
  for (const char* sub : {"identify", "write", "read", "bench", "discover", "conform", "ublk"}) {
    const std::string u = host_usage(sub);
    EXPECT_EQ(u.rfind("nvmf-host -a ADDR ", 0), 0u) << u;
    EXPECT_NE(u.find(std::string("] ") + sub), std::string::npos) << u;
    EXPECT_NE(u.find(std::string("(try nvmf-host ") + sub + " --help)"), std::string::npos) << u;
    ++checked;
  }
  EXPECT_EQ(checked, 7);
  EXPECT_NE(host_usage("read").find("read -d FILE -l LENGTH"), std::string::npos);
  EXPECT_NE(host_usage("ublk").find("ublk [--dev-id N]"), std::string::npos);
  for (const char* top : {"", "frobnicate"}) {
    EXPECT_EQ(
        host_usage(top),
        "nvmf-host -a ADDR [-n NQN] [OPTIONS] identify|write|read|bench|discover|conform|ublk "
        "[SUBCOMMAND OPTIONS], or nvmf-host gen-dhchap-key (try nvmf-host --help)");
  }
  EXPECT_EQ(host_usage("gen-dhchap-key").rfind("nvmf-host gen-dhchap-key [-s HEX]", 0), 0u);
}

// The same keys as nvme-cli 2.3's gen-dhchap-key prints for these inputs.
TEST(GenDhchapKey, PrintsWhatNvmeCliPrints) {
  const std::string hex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
  auto plain = gen_dhchap_key(hex, 0, 0, "");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:");
  auto sha256 = gen_dhchap_key(hex, 0, 1, "nqn.2014-08.org.nvmexpress:uuid:1");
  ASSERT_TRUE(sha256.ok());
  EXPECT_EQ(*sha256, "DHHC-1:01:a04E0in/h9rGUwyRPirk0EHWZb3S2iivAU0Om4iZUmeoR5Bg:");
  EXPECT_EQ(gen_dhchap_key("", 32, 2, "n").status().message(),
            "--key-length 32 does not match --hmac 2 (48 bytes)");
  EXPECT_FALSE(gen_dhchap_key("", 0, 1, "").ok());  // the transformation needs the NQN
  EXPECT_FALSE(gen_dhchap_key("0011", 32, 0, "").ok());
  auto random64 = gen_dhchap_key("", 64, 0, "");
  ASSERT_TRUE(random64.ok());
  EXPECT_EQ(random64->size(), 103u);
}

TEST(DhchapSecrets, ParsedWipedAndNeverEchoed) {
  std::string host = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
  std::string ctrl;
  DhchapSecrets out;
  ASSERT_TRUE(parse_dhchap_secrets(host, ctrl, out).ok());
  EXPECT_TRUE(host.empty());
  ASSERT_TRUE(out.host.has_value());
  EXPECT_FALSE(out.ctrl.has_value());
  std::string bad = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaS:";
  std::string none;
  DhchapSecrets o2;
  Status st = parse_dhchap_secrets(bad, none, o2);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("-S,--dhchap-secret"), std::string::npos);
  EXPECT_EQ(st.message().find("AAECAwQF"), std::string::npos);
  std::string no_host;
  std::string only_ctrl = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
  DhchapSecrets o3;
  EXPECT_NE(parse_dhchap_secrets(no_host, only_ctrl, o3).message().find("needs -S"),
            std::string::npos);
}

TEST(StatsJson, KeepAliveCounters) {
  HostStats s;
  s.keep_alives = 7;
  s.keep_alive_failures = 1;
  nlohmann::json j = stats_json(s);
  EXPECT_EQ(j["keep_alives"], 7);
  EXPECT_EQ(j["keep_alive_failures"], 1);
}

// A target's Identify strings are bytes from the wire: invalid UTF-8 used to make dump() throw
// (nvmf-host identify --json aborted); they come out escaped, and the JSON parses back.
TEST(Json, IdentifyStringsFromTheWireAreEscaped) {
  proto::IdentifyController id{};
  std::memcpy(id.mn, "evil\xff\x1b[2J\xe2\x80\xa8", 12);
  std::memcpy(id.subnqn, "nqn.\xc3", 5);
  auto j = identify_json(id, NamespaceInfo{}, Negotiation{});
  EXPECT_EQ(j["controller"]["mn"], "evil\\xff\\x1b[2J\\u2028");
  EXPECT_EQ(j["controller"]["subnqn"], "nqn.\\xc3");
  std::string text = j.dump(2);  // throws on invalid UTF-8
  EXPECT_EQ(nlohmann::json::parse(text)["controller"]["mn"], j["controller"]["mn"]);
}

}  // namespace
}  // namespace nvmf::host
