// SPDX-License-Identifier: BSD-3-Clause
// In-capsule data through the two binaries as separate processes: `write --segments N`
// scattered writes, the negotiation in `identify --json` / `write --json`, and the target's
// --json report (effective size, clamp warning, write counts by path).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ci/e2e/cli_harness.h"
#include "ci/e2e/rxe_env.h"

namespace nvmf::e2e {
namespace {

constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:cli-in-capsule";

class CliInCapsuleTest : public CliFixture {
 protected:
  CliInCapsuleTest() : CliFixture(kNqn) {}
};

// Writes `size` random bytes (seeded) to `path`.
void make_file(const std::string& path, size_t size, uint32_t seed) {
  std::vector<char> data(size);
  std::mt19937 rng(seed);
  for (auto& c : data) c = static_cast<char>(rng());
  std::ofstream(path, std::ios::binary).write(data.data(), data.size());
}

nlohmann::json json_file(const std::string& path) {
  std::string text = slurp(path);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << path << " is not JSON:\n" << text;
  return j;
}

TEST_F(CliInCapsuleTest, SegmentedWritesGoInCapsuleAndReadBack) {
  const std::string dir = tmpdir();
  const std::string report = dir + "/target-16k.json";
  int port = start_target({"--ram-size", "4m", "--inline-data-size", "16384", "--json", report});
  ASSERT_GT(port, 0);

  ASSERT_EQ(run(host("identify", port, "--json > " + dir + "/id-16k.json")), 0);
  nlohmann::json neg = json_file(dir + "/id-16k.json")["negotiation"];
  EXPECT_EQ(neg["ioccsz"], 1028) << neg.dump(2);
  EXPECT_EQ(neg["in_capsule_data_size"], 16384) << neg.dump(2);
  EXPECT_EQ(neg["in_capsule_enabled"], true) << neg.dump(2);
  EXPECT_EQ(neg["max_in_capsule_segments"], 4) << neg.dump(2);
  EXPECT_EQ(neg["in_capsule_why_off"], "") << neg.dump(2);

  // 12 KiB + 512 in pieces of 2133, 4266 and 6401 bytes: one in-capsule command, 3 data SGEs.
  const std::string small = dir + "/small.bin", small_back = dir + "/small.back";
  make_file(small, 12800, 1);
  ASSERT_EQ(run(host("write", port,
                     "--data '" + small + "' --segments 3 --json " + dir + "/w-small.json 2> " +
                         dir + "/w-small.log")),
            0)
      << slurp(dir + "/w-small.log");
  nlohmann::json w = json_file(dir + "/w-small.json");
  EXPECT_EQ(w["segments"], 3) << w.dump(2);
  EXPECT_EQ(w["stats"]["writes_in_capsule"], 1) << w.dump(2);
  EXPECT_EQ(w["stats"]["writes_keyed"], 0) << w.dump(2);
  EXPECT_EQ(w["negotiation"]["in_capsule_data_size"], 16384) << w.dump(2);

  // 40000 bytes (padded to 40448) at 1 MiB in 4 pieces of 4044, 8089, 12134 and 16181 bytes:
  // too big for one capsule. Planned: keyed 3584 | in-capsule 16384 (460 + 8089 + 7835) |
  // keyed 4096 | in-capsule 16384 (203 + 16181): the LBAs that straddle pieces go in-capsule.
  const std::string big = dir + "/big.bin", big_back = dir + "/big.back";
  make_file(big, 40000, 2);
  ASSERT_EQ(run(host("write", port,
                     "--data '" + big + "' --offset 1m --segments 4 --json " + dir +
                         "/w-big.json 2> " + dir + "/w-big.log")),
            0)
      << slurp(dir + "/w-big.log");
  w = json_file(dir + "/w-big.json");
  EXPECT_EQ(w["stats"]["writes_in_capsule"], 2) << w.dump(2);
  EXPECT_EQ(w["stats"]["bytes_in_capsule"], 32768) << w.dump(2);
  EXPECT_EQ(w["stats"]["writes_keyed"], 2) << w.dump(2);
  EXPECT_EQ(w["stats"]["bytes_keyed"], 7680) << w.dump(2);

  ASSERT_EQ(run(host("read", port, "--data '" + small_back + "' --length 12800")), 0);
  ASSERT_EQ(run(host("read", port, "--data '" + big_back + "' --offset 1m --length 40000")), 0);
  ASSERT_EQ(stop_target(), 0) << slurp(target_log_);
  EXPECT_EQ(sha256(small_back), sha256(small));
  EXPECT_EQ(sha256(big_back), sha256(big));

  nlohmann::json t = json_file(report);
  EXPECT_EQ(t["in_capsule_data_size"], 16384) << t.dump(2);
  EXPECT_EQ(t["ioccsz"], 1028) << t.dump(2);
  EXPECT_TRUE(t["negotiation_warnings"].empty()) << t.dump(2);
  EXPECT_EQ(t["writes"]["in_capsule"], 3) << t.dump(2);
  EXPECT_EQ(t["writes"]["in_capsule_bytes"], 12800 + 32768) << t.dump(2);
  EXPECT_EQ(t["writes"]["rdma_read"], 2) << t.dump(2);
  EXPECT_EQ(t["writes"]["rdma_read_bytes"], 7680) << t.dump(2);
  // Each CLI run was its own controller: the big write's controller and its I/O queue carry
  // exactly its two in-capsule and two RDMA READ writes; the sums match the totals.
  for (const char* level : {"per_controller", "per_queue"}) {
    uint64_t in_capsule = 0, rdma_read = 0;
    int big = 0;
    for (const auto& e : t[level]) {
      if (std::string(level) == "per_queue" && e["qid"] == 0) {
        EXPECT_EQ(e["writes"]["in_capsule"], 0) << e.dump();
        continue;
      }
      in_capsule += e["writes"]["in_capsule"].get<uint64_t>();
      rdma_read += e["writes"]["rdma_read"].get<uint64_t>();
      if (e["writes"]["in_capsule"] == 2 && e["writes"]["rdma_read"] == 2 &&
          e["writes"]["in_capsule_bytes"] == 32768) {
        ++big;
      }
    }
    EXPECT_EQ(in_capsule, 3u) << level << ": " << t[level].dump(2);
    EXPECT_EQ(rdma_read, 2u) << level << ": " << t[level].dump(2);
    EXPECT_EQ(big, 1) << level << ": " << t[level].dump(2);
  }
}

TEST_F(CliInCapsuleTest, InCapsuleOffSaysWhyAndRefusesUnalignedPieces) {
  const std::string dir = tmpdir();
  int port = start_target({"--ram-size", "4m", "--inline-data-size", "0"});
  ASSERT_GT(port, 0);
  ASSERT_EQ(run(host("identify", port, "--json > " + dir + "/id-0.json")), 0);
  nlohmann::json neg = json_file(dir + "/id-0.json")["negotiation"];
  EXPECT_EQ(neg["ioccsz"], 4) << neg.dump(2);
  EXPECT_EQ(neg["in_capsule_data_size"], 0) << neg.dump(2);
  EXPECT_EQ(neg["in_capsule_enabled"], false) << neg.dump(2);
  EXPECT_EQ(neg["in_capsule_why_off"], "target SGLS bit 20 clear") << neg.dump(2);

  const std::string file = dir + "/off.bin", back = dir + "/off.back";
  make_file(file, 12800, 3);
  // Pieces of 2133, 4266 and 6401 bytes: the LBA at byte 2048 straddles pieces 0 and 1, and no
  // keyed descriptor (MSDBD 1) can carry it: refused, naming why.
  const std::string log = dir + "/off-3.log";
  EXPECT_EQ(run(host("write", port, "--data '" + file + "' --segments 3 2> " + log)), 1);
  EXPECT_NE(slurp(log).find("ends inside the LBA at byte 2048"), std::string::npos) << slurp(log);
  EXPECT_NE(slurp(log).find("in-capsule data is off"), std::string::npos) << slurp(log);
  // One piece goes keyed and lands.
  ASSERT_EQ(run(host("write", port, "--data '" + file + "' --json " + dir + "/w-off.json")), 0);
  nlohmann::json w = json_file(dir + "/w-off.json");
  EXPECT_EQ(w["stats"]["writes_keyed"], 1) << w.dump(2);
  EXPECT_EQ(w["stats"]["writes_in_capsule"], 0) << w.dump(2);
  ASSERT_EQ(run(host("read", port, "--data '" + back + "' --length 12800")), 0);
  EXPECT_EQ(sha256(back), sha256(file));
  EXPECT_EQ(stop_target(), 0) << slurp(target_log_);
}

TEST_F(CliInCapsuleTest, TooLargeInlineDataSizeIsClampedWithAWarningNamingBoth) {
  const std::string report = tmpdir() + "/target-64k.json";
  int port = start_target({"--ram-size", "1m", "--inline-data-size", "65536", "--json", report});
  ASSERT_GT(port, 0);
  ASSERT_EQ(run(host("identify", port, "--json > " + tmpdir() + "/id-64k.json")), 0);
  EXPECT_EQ(json_file(tmpdir() + "/id-64k.json")["negotiation"]["ioccsz"], 1028);
  ASSERT_EQ(stop_target(), 0) << slurp(target_log_);
  nlohmann::json t = json_file(report);
  EXPECT_EQ(t["configured_inline_data_size"], 65536) << t.dump(2);
  EXPECT_EQ(t["in_capsule_data_size"], 16384) << t.dump(2);
  ASSERT_EQ(t["negotiation_warnings"].size(), 1u) << t.dump(2);
  const std::string warning = t["negotiation_warnings"][0];
  EXPECT_NE(warning.find("65536"), std::string::npos) << warning;
  EXPECT_NE(warning.find("16384"), std::string::npos) << warning;
  EXPECT_NE(slurp(target_log_).find(warning), std::string::npos) << "the warning is logged too:\n"
                                                                 << slurp(target_log_);
}

}  // namespace
}  // namespace nvmf::e2e
