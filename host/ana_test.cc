// SPDX-License-Identifier: BSD-3-Clause
// The ANA log page as the host decodes it: what a well-formed log gives, and each malformed
// one refused with the fault named.
#include "host/ana.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "common/nvme_status.h"
#include "host/log_reads.h"

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

// Serves Get Log Page 0Ch windows of `log` (zeros past its end), recording each offset.
class AnaLogChannel : public CommandChannel {
 public:
  Result<proto::Cqe> run(const proto::Sqe& sqe, std::span<const uint8_t>, std::span<uint8_t> in,
                         bool) override {
    EXPECT_EQ(sqe.opcode, proto::kAdminGetLogPage);
    EXPECT_EQ(sqe.cdw10 & 0xFFu, proto::kLogAna);
    EXPECT_EQ(sqe.cdw10 & (1u << 15), 0u) << "RAE 0: the read enables the next ANA notice";
    const uint64_t offset = (uint64_t{sqe.cdw13} << 32) | sqe.cdw12;
    offsets.push_back(offset);
    EXPECT_EQ(in.size(), ((sqe.cdw10 >> 16) + 1) * 4u);
    EXPECT_LE(in.size(), 4096u);
    for (size_t i = 0; i < in.size(); ++i) {
      in[i] = offset + i < log.size() ? log[offset + i] : 0;
    }
    if (on_read) on_read();
    proto::Cqe c{};
    c.status = status;
    return c;
  }
  std::vector<uint8_t> log;
  std::vector<uint64_t> offsets;
  std::function<void()> on_read;
  uint16_t status = 0;
};

proto::IdentifyController ana_identify(uint32_t mnan) {
  proto::IdentifyController id{};
  id.anagrpmax = 128;
  id.nanagrpid = 128;
  id.nn = mnan;
  id.mnan = mnan;
  return id;
}

TEST(AnaLogRead, ASmallLogIsOneWindow) {
  AnaLogChannel ch;
  ch.log = log_of(4, {{1, proto::kAnaOptimized, {1}}, {2, proto::kAnaNonOptimized, {2, 3}}});
  auto log = read_ana_log(ch, ana_identify(1024));
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  EXPECT_EQ(ch.offsets, (std::vector<uint64_t>{0}));
  EXPECT_EQ(log->change_count, 4u);
  ASSERT_NE(log->group_of_nsid(3), nullptr);
  EXPECT_EQ(log->group_of_nsid(3)->state, proto::kAnaNonOptimized);
}

// 2000 NSIDs in one group: 8 KiB of log, read in windows of 4096 bytes at the offsets the
// descriptors need, then the header again to see that the change count held still.
TEST(AnaLogRead, ALargeLogIsReadInWindowsAndCheckedForChange) {
  AnaLogChannel ch;
  std::vector<uint32_t> many(2000);
  for (uint32_t i = 0; i < many.size(); ++i) many[i] = i + 1;
  ch.log = log_of(9, {{1, proto::kAnaOptimized, many}, {2, proto::kAnaInaccessible, {5000}}});
  auto log = read_ana_log(ch, ana_identify(8192));
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  EXPECT_EQ(ch.offsets, (std::vector<uint64_t>{0, 4096, 0}));
  ASSERT_EQ(log->groups.size(), 2u);
  EXPECT_EQ(log->groups[0].nsids.size(), 2000u);
  EXPECT_EQ(log->group_of_nsid(5000)->grpid, 2u);

  // The log changes between the windows: read again, the new one kept.
  AnaLogChannel moving;
  moving.log = ch.log;
  int reads = 0;
  moving.on_read = [&] {
    if (++reads == 2) moving.log = log_of(10, {{1, proto::kAnaChange, many}});
  };
  auto again = read_ana_log(moving, ana_identify(8192));
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->change_count, 10u);
  EXPECT_EQ(again->groups.size(), 1u);
}

// A descriptor claiming more NSIDs than Identify's MNAN allows is not followed past the size
// Linux would read, and an error status names the command.
TEST(AnaLogRead, HostileSizesAndErrorStatusesAreRefused) {
  AnaLogChannel ch;
  ch.log = log_of(1, {{1, proto::kAnaOptimized, {1}}});
  const uint32_t huge = 0x40000000;
  std::memcpy(ch.log.data() + 16 + 4, &huge, 4);
  auto log = read_ana_log(ch, ana_identify(32));
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("above the"), std::string::npos)
      << log.status().to_string();
  EXPECT_EQ(ch.offsets.size(), 1u);

  AnaLogChannel refusing;
  refusing.log = log_of(1, {});
  refusing.status = generic_status(proto::kScInvalidField);
  auto refused = read_ana_log(refusing, ana_identify(32));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().to_string().find("Get Log Page 0Ch at offset 0"), std::string::npos)
      << refused.status().to_string();
}

}  // namespace
}  // namespace nvmf::host
