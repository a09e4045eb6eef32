// SPDX-License-Identifier: BSD-3-Clause
// End to end over soft-RoCE: the command capsule (host) and the response capsule (target)
// posted with IBV_SEND_INLINE by default, and by reference after the inline-send fallback or
// with inline send turned off, with every byte verified and the counters proving each path.
//
// rxe (Debian 6.1 and 7.3) grants max_inline_data up to 512 and refuses 1024 and more with
// EINVAL, so a request of 4096 drives the real fallback; it answers a request of 0 with 16.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ci/e2e/cli_harness.h"
#include "ci/e2e/e2e_options.h"
#include "ci/e2e/running_target.h"
#include "ci/e2e/rxe_env.h"
#include "common/log.h"
#include "host/controller.h"
#include "target/target.h"

namespace nvmf::e2e {
namespace {

constexpr uint64_t kRamBytes = 16ull << 20;
constexpr uint32_t kLbaSize = 512;
constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:inline-send";
// Larger than any size rxe grants (512): the first QP create fails with EINVAL.
constexpr uint32_t kRefusedSize = 4096;

// What one I/O round did, by the host's counts.
struct IoRound {
  uint64_t commands = 0;            // NVM commands posted
  uint64_t with_in_capsule = 0;     // of which carry in-capsule data
  uint64_t without_in_capsule = 0;  // keyed writes, reads, the flush
};

class InlineSendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NVMF_REQUIRE_RXE(env_);
    set_log_sink([this](std::string_view line) {
      std::lock_guard lock(log_mutex_);
      log_lines_.emplace_back(line);
    });
  }
  void TearDown() override {
    if (ctrl_) {
      Status s = ctrl_->disconnect();
      EXPECT_TRUE(s.ok()) << s.to_string();
      ctrl_.reset();
    }
    target_.reset();
    set_log_sink(nullptr);
  }

  // Starts the target asking `target_max_inline_data`, connects the host asking
  // `host_max_inline_data`, one I/O queue.
  void connect(uint32_t host_max_inline_data, uint32_t target_max_inline_data) {
    target::TargetOptions topts = ram_target_options(*env_, kNqn, kRamBytes, kLbaSize);
    topts.requested_max_inline_data = target_max_inline_data;
    target_ = RunningTarget::start(topts);
    ASSERT_NE(target_, nullptr);
    host::HostOptions hopts = host_options_for(*env_, (*target_)->port(), kNqn, 32);
    hopts.requested_max_inline_data = host_max_inline_data;
    auto ctrl = host::Controller::connect(hopts);
    ASSERT_TRUE(ctrl.ok()) << ctrl.status().to_string();
    ctrl_ = std::move(*ctrl);
  }

  // Writes 24 in-capsule commands (4 KiB each, in-capsule data on) and one 64 KiB keyed write
  // (RDMA READ by the target), reads all of it back 4 KiB per command, compares every byte,
  // flushes. About 70 NVM commands.
  IoRound write_read_verify(uint32_t seed) {
    IoRound round;
    const host::Negotiation n = ctrl_->negotiation();
    EXPECT_TRUE(n.in_capsule_enabled) << n.in_capsule_why_off;
    constexpr size_t kSmall = 4096, kSmallCount = 24, kBig = 64 << 10;
    const size_t total = kSmall * kSmallCount + kBig;
    std::vector<uint8_t> out(total), in(total, 0);
    std::mt19937 rng(seed);
    for (auto& b : out) b = static_cast<uint8_t>(rng());
    auto out_mr = ctrl_->register_buffer(out.data(), out.size());
    auto in_mr = ctrl_->register_buffer(in.data(), in.size());
    EXPECT_TRUE(out_mr.ok() && in_mr.ok());
    if (!out_mr.ok() || !in_mr.ok()) return round;
    const uint64_t slba = 8 + seed % 64;
    for (size_t i = 0; i < kSmallCount; ++i) {
      host::DataSegment seg = host::segment_of(*out_mr, i * kSmall, kSmall);
      Status w = ctrl_->write(slba + i * kSmall / kLbaSize, std::span(&seg, 1));
      EXPECT_TRUE(w.ok()) << w.to_string();
    }
    round.with_in_capsule += kSmallCount;
    const uint64_t big_commands = (kBig + n.max_command_bytes - 1) / n.max_command_bytes;
    host::DataSegment big = host::segment_of(*out_mr, kSmall * kSmallCount, kBig);
    Status w = ctrl_->write(slba + kSmall * kSmallCount / kLbaSize, std::span(&big, 1));
    EXPECT_TRUE(w.ok()) << w.to_string();
    round.without_in_capsule += big_commands;
    for (size_t off = 0; off < total; off += kSmall) {
      Status r = ctrl_->read(slba + off / kLbaSize, host::segment_of(*in_mr, off, kSmall));
      EXPECT_TRUE(r.ok()) << r.to_string();
      ++round.without_in_capsule;
    }
    EXPECT_EQ(0, std::memcmp(out.data(), in.data(), total)) << "data read back differs";
    Status f = ctrl_->flush();
    EXPECT_TRUE(f.ok()) << f.to_string();
    ++round.without_in_capsule;
    round.commands = round.with_in_capsule + round.without_in_capsule;
    return round;
  }

  // Log lines of the fallback WARN (common/verbs/queue_pair.cc) asking `size`.
  std::vector<std::string> fallback_lines(uint32_t size) {
    std::lock_guard lock(log_mutex_);
    std::vector<std::string> out;
    const std::string asked = "with max_inline_data " + std::to_string(size) + " failed";
    for (const auto& l : log_lines_) {
      if (l.find("rdma_create_qp on ") != std::string::npos && l.find(asked) != std::string::npos &&
          l.find("retried without inline send") != std::string::npos) {
        out.push_back(l);
      }
    }
    return out;
  }

  // Records what the provider granted on each host and target QP into the XML result
  // (e.g. host_qid1_granted=80): rxe's answers are worth knowing, not only our decisions.
  void record_grants() {
    for (const auto& q : ctrl_->negotiation().queues) {
      RecordProperty("host_qid" + std::to_string(q.qid) + "_granted", static_cast<int>(q.granted));
    }
    for (const auto& q : (*target_)->stats().queues) {
      RecordProperty("target_qid" + std::to_string(q.qid) + "_granted",
                     static_cast<int>(q.granted_max_inline_data));
    }
  }

  std::optional<RxeEnv> env_;
  std::unique_ptr<RunningTarget> target_;
  std::unique_ptr<host::Controller> ctrl_;
  std::mutex log_mutex_;
  std::vector<std::string> log_lines_;
};

TEST_F(InlineSendTest, DefaultPostsEveryCapsuleWithoutDataAndEveryResponseInline) {
  ASSERT_NO_FATAL_FAILURE(connect(host::HostOptions{}.requested_max_inline_data,
                                  target::TargetOptions{}.requested_max_inline_data));
  record_grants();
  const host::Negotiation n = ctrl_->negotiation();
  ASSERT_EQ(n.queues.size(), 2u);  // admin + one I/O queue
  for (const auto& q : n.queues) {
    EXPECT_EQ(q.requested, 64u) << "qid " << q.qid;
    EXPECT_GE(q.granted, 64u) << "qid " << q.qid;
    EXPECT_EQ(q.usable, 64u) << "qid " << q.qid;
    EXPECT_FALSE(q.fallback) << "qid " << q.qid;
  }
  EXPECT_GE(n.min_granted_max_inline_data, 64u);
  const host::HostStats before = ctrl_->stats();
  const IoRound round = write_read_verify(1);
  const host::HostStats after = ctrl_->stats();
  EXPECT_EQ(after.capsules_inline - before.capsules_inline, round.without_in_capsule);
  EXPECT_EQ(after.capsules_with_in_capsule_data - before.capsules_with_in_capsule_data,
            round.with_in_capsule);
  // By reference only what carries in-capsule data, setup commands included.
  EXPECT_EQ(after.capsules_by_reference, after.capsules_with_in_capsule_data);
  EXPECT_GT(after.capsules_inline, round.without_in_capsule) << "setup commands go inline too";

  target::TargetStats t = (*target_)->stats();
  ASSERT_EQ(t.queues.size(), 2u);
  for (const auto& q : t.queues) {
    EXPECT_EQ(q.requested_max_inline_data, 16u);
    EXPECT_GE(q.granted_max_inline_data, 16u);
    EXPECT_EQ(q.usable_max_inline_data, 16u);
    EXPECT_FALSE(q.inline_fallback);
    EXPECT_EQ(q.counters.responses_by_reference, 0u) << "qid " << q.qid;
    EXPECT_EQ(q.counters.responses_inline, q.counters.commands) << "qid " << q.qid;
  }
  EXPECT_EQ(t.inline_send_fallbacks, 0u);
  EXPECT_EQ(t.totals.responses_by_reference, 0u);
  EXPECT_EQ(t.totals.responses_inline, after.capsules_inline + after.capsules_by_reference);
  EXPECT_TRUE(fallback_lines(64).empty());
}

TEST_F(InlineSendTest, HostFallbackPostsEveryCapsuleByReference) {
  ASSERT_NO_FATAL_FAILURE(connect(kRefusedSize, target::TargetOptions{}.requested_max_inline_data));
  record_grants();
  const host::Negotiation n = ctrl_->negotiation();
  ASSERT_EQ(n.queues.size(), 2u);
  for (const auto& q : n.queues) {
    EXPECT_EQ(q.requested, kRefusedSize);
    EXPECT_TRUE(q.fallback) << "qid " << q.qid << ": rxe must refuse " << kRefusedSize;
    EXPECT_EQ(q.usable, 0u) << "qid " << q.qid << " (granted " << q.granted << ")";
  }
  // One WARN per QP, naming the device.
  const std::vector<std::string> warns = fallback_lines(kRefusedSize);
  EXPECT_EQ(warns.size(), 2u);
  for (const auto& l : warns) {
    EXPECT_NE(l.find(" W verbs: rdma_create_qp on "), std::string::npos) << l;
    const size_t at = l.find(" on ") + 4;
    EXPECT_NE(l.substr(at, l.find(' ', at) - at), "") << "device name missing: " << l;
  }
  const IoRound round = write_read_verify(2);
  const host::HostStats s = ctrl_->stats();
  EXPECT_EQ(s.capsules_inline, 0u);
  EXPECT_GT(s.capsules_by_reference, round.commands);  // setup commands too
  // Capsules without data went by reference too (with inline send they would have been inline).
  EXPECT_GE(s.capsules_by_reference - s.capsules_with_in_capsule_data, round.without_in_capsule);
  EXPECT_GE(s.capsules_with_in_capsule_data, round.with_in_capsule);
  // The target side is untouched: its responses still go inline.
  target::TargetStats t = (*target_)->stats();
  EXPECT_EQ(t.inline_send_fallbacks, 0u);
  EXPECT_EQ(t.totals.responses_by_reference, 0u);
  EXPECT_EQ(t.totals.responses_inline, s.capsules_by_reference);
}

TEST_F(InlineSendTest, TargetFallbackPostsEveryResponseByReference) {
  ASSERT_NO_FATAL_FAILURE(connect(host::HostOptions{}.requested_max_inline_data, kRefusedSize));
  record_grants();
  const IoRound round = write_read_verify(3);
  const host::HostStats h = ctrl_->stats();
  target::TargetStats t = (*target_)->stats();
  ASSERT_EQ(t.queues.size(), 2u);
  for (const auto& q : t.queues) {
    EXPECT_EQ(q.requested_max_inline_data, kRefusedSize);
    EXPECT_TRUE(q.inline_fallback) << "qid " << q.qid;
    EXPECT_EQ(q.usable_max_inline_data, 0u) << "granted " << q.granted_max_inline_data;
    EXPECT_EQ(q.counters.responses_inline, 0u) << "qid " << q.qid;
    EXPECT_EQ(q.counters.responses_by_reference, q.counters.commands) << "qid " << q.qid;
  }
  EXPECT_EQ(t.inline_send_fallbacks, 2u);
  EXPECT_EQ(t.totals.responses_inline, 0u);
  EXPECT_EQ(t.totals.responses_by_reference, h.capsules_inline + h.capsules_by_reference);
  EXPECT_GE(t.totals.responses_by_reference, round.commands);
  EXPECT_EQ(fallback_lines(kRefusedSize).size(), 2u);
  // The host side is untouched.
  EXPECT_EQ(h.capsules_by_reference, h.capsules_with_in_capsule_data);
  EXPECT_GT(h.capsules_inline, 0u);
}

TEST_F(InlineSendTest, BothFallBackAndEveryByteStillVerifies) {
  ASSERT_NO_FATAL_FAILURE(connect(kRefusedSize, kRefusedSize));
  record_grants();
  const IoRound round = write_read_verify(4);
  const host::HostStats h = ctrl_->stats();
  const target::TargetStats t = (*target_)->stats();
  EXPECT_EQ(h.capsules_inline, 0u);
  EXPECT_EQ(t.totals.responses_inline, 0u);
  EXPECT_EQ(t.totals.responses_by_reference, h.capsules_by_reference);
  EXPECT_GE(h.capsules_by_reference, round.commands);
  EXPECT_EQ(fallback_lines(kRefusedSize).size(), 4u);  // two QPs on each side
}

// 0 turns inline send off, although rxe grants 16 for a request of 0 (enough for a CQE).
TEST_F(InlineSendTest, ZeroNeverPostsInlineOnEitherSide) {
  ASSERT_NO_FATAL_FAILURE(connect(0, 0));
  record_grants();
  ASSERT_EQ(ctrl_->negotiation().queues.size(), 2u);  // admin + one I/O queue
  for (const auto& q : ctrl_->negotiation().queues) {
    EXPECT_FALSE(q.fallback);
    EXPECT_EQ(q.usable, 0u) << "qid " << q.qid << " granted " << q.granted;
  }
  write_read_verify(5);
  const host::HostStats h = ctrl_->stats();
  const target::TargetStats t = (*target_)->stats();
  EXPECT_EQ(h.capsules_inline, 0u);
  EXPECT_GT(h.capsules_by_reference, 0u);
  ASSERT_EQ(t.queues.size(), 2u);
  for (const auto& q : t.queues) {
    EXPECT_FALSE(q.inline_fallback);
    EXPECT_EQ(q.usable_max_inline_data, 0u) << "granted " << q.granted_max_inline_data;
  }
  EXPECT_EQ(t.totals.responses_inline, 0u);
  EXPECT_EQ(t.totals.responses_by_reference, h.capsules_by_reference);
  EXPECT_TRUE(fallback_lines(0).empty());
}

// A ceiling below one SQE (granted or asked): commands go by reference, responses still fit.
TEST_F(InlineSendTest, CeilingBelowOneSqeKeepsCommandsByReference) {
  ASSERT_NO_FATAL_FAILURE(connect(32, 16));
  record_grants();
  ASSERT_EQ(ctrl_->negotiation().queues.size(), 2u);
  for (const auto& q : ctrl_->negotiation().queues) {
    EXPECT_FALSE(q.fallback);
    EXPECT_EQ(q.usable, 32u) << "granted " << q.granted;
  }
  write_read_verify(6);
  const host::HostStats h = ctrl_->stats();
  EXPECT_EQ(h.capsules_inline, 0u);
  EXPECT_EQ(((*target_)->stats().totals.responses_by_reference), 0u);
}

// ---------------------------------------------------------------- the two binaries, as users --

class InlineSendCliTest : public CliFixture {
 protected:
  InlineSendCliTest() : CliFixture(kNqn) {}
};

// Both knobs on the command line at a size rxe refuses: both sides log the fallback naming the
// device, report it per queue, post nothing inline, and the file still reads back identical.
TEST_F(InlineSendCliTest, MaxInlineDataKnobsDriveTheFallbackOnBothSides) {
  const std::string input = tmpdir() + "/input.bin";
  const std::string readback = tmpdir() + "/readback.bin";
  const std::string report = tmpdir() + "/target.json";
  const size_t size = (192u << 10) + 300;  // in-capsule and keyed commands, a padded tail
  std::string data(size, '\0');
  std::mt19937 rng(7);
  for (auto& c : data) c = static_cast<char>(rng());
  std::ofstream(input, std::ios::binary).write(data.data(), data.size());
  const std::string knob = "--max-inline-data " + std::to_string(kRefusedSize);
  int port = start_target(
      {"--ram-size", "4m", "--json", report, "--max-inline-data", std::to_string(kRefusedSize)});
  ASSERT_GT(port, 0);
  const std::string wlog = tmpdir() + "/write.log", wjson = tmpdir() + "/write.json";
  ASSERT_EQ(run(host("write", port,
                     knob + " --data '" + input + "' --json '" + wjson + "' 2> '" + wlog + "'")),
            0)
      << slurp(wlog);
  const std::string rlog = tmpdir() + "/read.log", rjson = tmpdir() + "/read.json";
  ASSERT_EQ(run(host("read", port,
                     knob + " --data '" + readback + "' --length " + std::to_string(size) +
                         " --json '" + rjson + "' 2> '" + rlog + "'")),
            0)
      << slurp(rlog);
  const std::string ijson = tmpdir() + "/identify.json";
  ASSERT_EQ(run(host("identify", port, knob + " --json > '" + ijson + "' 2>/dev/null")), 0);
  ASSERT_EQ(stop_target(), 0) << slurp(target_log_);
  EXPECT_EQ(slurp(readback), data) << "every byte must verify";

  // Host: the WARN names the device; every queue fell back; nothing went inline.
  EXPECT_NE(slurp(wlog).find("rdma_create_qp on "), std::string::npos) << slurp(wlog);
  EXPECT_NE(slurp(wlog).find("retried without inline send"), std::string::npos) << slurp(wlog);
  for (const std::string& path : {wjson, rjson}) {
    nlohmann::json j = nlohmann::json::parse(slurp(path));
    EXPECT_EQ(j["stats"]["capsules_inline"], 0) << j.dump(2);
    EXPECT_GT(j["stats"]["capsules_by_reference"].get<uint64_t>(), 0u) << j.dump(2);
    ASSERT_EQ(j["negotiation"]["queues"].size(), 2u) << j.dump(2);
    for (const auto& q : j["negotiation"]["queues"]) {
      EXPECT_EQ(q["inline_fallback"], true) << q.dump();
      EXPECT_EQ(q["usable_max_inline_data"], 0) << q.dump();
      EXPECT_EQ(q["requested_max_inline_data"], kRefusedSize) << q.dump();
    }
  }
  nlohmann::json id = nlohmann::json::parse(slurp(ijson));
  ASSERT_EQ(id["negotiation"]["queues"].size(), 2u) << id.dump(2);
  for (const auto& q : id["negotiation"]["queues"]) EXPECT_EQ(q["inline_fallback"], true);

  // Target: the WARN names the device; each queue reports the fallback; no response inline.
  EXPECT_NE(slurp(target_log_).find("rdma_create_qp on "), std::string::npos) << slurp(target_log_);
  nlohmann::json t = nlohmann::json::parse(slurp(report));
  EXPECT_EQ(t["requested_max_inline_data"], kRefusedSize);
  EXPECT_EQ(t["inline_send_fallbacks"], 6) << "admin + I/O queue of three host runs";
  EXPECT_EQ(t["responses"]["inline"], 0) << t.dump(2);
  EXPECT_EQ(t["responses"]["by_reference"], t["commands"]) << t.dump(2);
  ASSERT_EQ(t["per_queue"].size(), 6u) << t.dump(2);
  for (const auto& q : t["per_queue"]) {
    EXPECT_EQ(q["inline_fallback"], true) << q.dump();
    EXPECT_EQ(q["usable_max_inline_data"], 0) << q.dump();
    EXPECT_EQ(q["responses_inline"], 0) << q.dump();
    EXPECT_EQ(q["responses_by_reference"], q["commands"]) << q.dump();
  }
}

// The defaults on the command line: inline on both sides, the old target option name still works.
TEST_F(InlineSendCliTest, DefaultsPostInlineAndTheOldTargetOptionNameStillWorks) {
  const std::string report = tmpdir() + "/target.json";
  int port =
      start_target({"--ram-size", "4m", "--json", report, "--requested-max-inline-data", "16"});
  ASSERT_GT(port, 0);
  const std::string rjson = tmpdir() + "/read.json";
  ASSERT_EQ(run(host("read", port, "--data /dev/null --length 64k --json '" + rjson + "'")), 0);
  ASSERT_EQ(stop_target(), 0) << slurp(target_log_);
  nlohmann::json r = nlohmann::json::parse(slurp(rjson));
  EXPECT_GT(r["stats"]["capsules_inline"].get<uint64_t>(), 0u) << r.dump(2);
  EXPECT_EQ(r["stats"]["capsules_by_reference"], r["stats"]["capsules_with_in_capsule_data"])
      << r.dump(2);
  ASSERT_EQ(r["negotiation"]["queues"].size(), 2u) << r.dump(2);
  for (const auto& q : r["negotiation"]["queues"]) {
    EXPECT_EQ(q["inline_fallback"], false) << q.dump();
    EXPECT_EQ(q["usable_max_inline_data"], 64) << q.dump();
  }
  nlohmann::json t = nlohmann::json::parse(slurp(report));
  EXPECT_EQ(t["requested_max_inline_data"], 16);
  EXPECT_EQ(t["inline_send_fallbacks"], 0);
  EXPECT_EQ(t["responses"]["by_reference"], 0) << t.dump(2);
  EXPECT_EQ(t["responses"]["inline"], t["commands"]) << t.dump(2);
}

}  // namespace
}  // namespace nvmf::e2e
