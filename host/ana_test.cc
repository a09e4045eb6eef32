// SPDX-License-Identifier: BSD-3-Clause
// The ANA log page as the host decodes it: what a well-formed log gives, and each malformed
// one refused with the fault named.
#include "host/ana.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace nvmf::host {
namespace {

// A log: header (change count, NGRPS), then each group's descriptor and NSIDs.
struct Group {
  uint32_t grpid;
  uint8_t state;
  std::vector<uint32_t> nsids;
  uint64_t chgcnt = 0;
};
std::vector<uint8_t> log_of(uint64_t chgcnt, const std::vector<Group>& groups,
                            uint16_t ngrps_override = 0xFFFF) {
  std::vector<uint8_t> out(16);
  std::memcpy(out.data(), &chgcnt, 8);
  uint16_t n = ngrps_override != 0xFFFF ? ngrps_override : static_cast<uint16_t>(groups.size());
  std::memcpy(out.data() + 8, &n, 2);
  for (const Group& g : groups) {
    std::vector<uint8_t> d(32);
    auto nn = static_cast<uint32_t>(g.nsids.size());
    std::memcpy(d.data(), &g.grpid, 4);
    std::memcpy(d.data() + 4, &nn, 4);
    std::memcpy(d.data() + 8, &g.chgcnt, 8);
    d[16] = g.state;
    out.insert(out.end(), d.begin(), d.end());
    for (uint32_t nsid : g.nsids) {
      out.resize(out.size() + 4);
      std::memcpy(out.data() + out.size() - 4, &nsid, 4);
    }
  }
  return out;
}

TEST(AnaLogDecode, GroupsStatesAndNsidsWithTrailingZerosIgnored) {
  std::vector<uint8_t> b =
      log_of(7, {{1, proto::kAnaOptimized, {1, 3}, 2}, {5, proto::kAnaInaccessible, {2}}});
  b.resize(b.size() + 4096);  // what a read of the log's largest size returns
  auto log = decode_ana_log(b, 128);
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  EXPECT_EQ(log->change_count, 7u);
  ASSERT_EQ(log->groups.size(), 2u);
  EXPECT_EQ(log->groups[0].change_count, 2u);
  EXPECT_EQ(log->groups[0].nsids, (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(log->groups[1].state, proto::kAnaInaccessible);
  ASSERT_NE(log->group_of_nsid(2), nullptr);
  EXPECT_EQ(log->group_of_nsid(2)->grpid, 5u);
  EXPECT_EQ(log->group_of_nsid(9), nullptr);
  EXPECT_EQ(ana_state_text(proto::kAnaNonOptimized), "non-optimized");
  EXPECT_EQ(ana_state_text(0x05), "state 05h");
}

TEST(AnaLogDecode, EachMalformedLogIsRefusedNamingTheFault) {
  const std::pair<std::vector<uint8_t>, std::string> cases[] = {
      {std::vector<uint8_t>(8), "shorter than its 16-byte header"},
      {log_of(1, {}, 129), "129 groups, above ANAGRPMAX 128"},
      {log_of(1, {{1, proto::kAnaOptimized, {}}}, 2), "descriptor 1: past the end"},
      {log_of(1, {{0, proto::kAnaOptimized, {}}}), "group ID 0 not in 1..128"},
      {log_of(1, {{129, proto::kAnaOptimized, {}}}), "group ID 129 not in 1..128"},
      {log_of(1, {{2, proto::kAnaOptimized, {}}, {2, proto::kAnaOptimized, {}}}),
       "group 2 listed twice"},
      {log_of(1, {{2, 0x00, {}}}), "group 2 in state 00h"},
      {log_of(1, {{2, 0x05, {}}}), "group 2 in state 05h"},
      {log_of(1, {{1, proto::kAnaOptimized, {1}}, {2, proto::kAnaOptimized, {1}}}),
       "NSID 1 listed in two groups"},
      {log_of(1, {{1, proto::kAnaOptimized, {0}}}), "descriptor 0: NSID 0"},
  };
  for (const auto& [bytes, want] : cases) {
    auto log = decode_ana_log(bytes, 128);
    ASSERT_FALSE(log.ok()) << want;
    EXPECT_NE(log.status().message().find(want), std::string::npos) << log.status().message();
  }
  // NNSIDS beyond the bytes read.
  std::vector<uint8_t> b = log_of(1, {{1, proto::kAnaOptimized, {1, 2}}});
  b.resize(b.size() - 4);
  auto log = decode_ana_log(b, 128);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("2 NSIDs past the end"), std::string::npos);
}

TEST(AnaLogDecode, SizedAsLinuxReadsIt) {
  proto::IdentifyController id{};
  id.nanagrpid = 128;
  id.nn = 1024;
  EXPECT_EQ(ana_log_bytes(id), 16u + 128 * 32 + 1024 * 4);
  id.mnan = 32;
  EXPECT_EQ(ana_log_bytes(id), 16u + 128 * 32 + 32 * 4);
}

}  // namespace
}  // namespace nvmf::host
