// SPDX-License-Identifier: BSD-3-Clause
// End to end over soft-RoCE, in process: the target's three ways of waiting for work
// (TargetOptions::poll_mode, busy_poll_us) serve the same I/O, accept a second controller while
// the first is busy, notice a disconnect, and stop when asked.
//   event, busy_poll_us 0:    arms the CQs and sleeps after 64 empty polls;
//   event, busy_poll_us 1000: keeps polling for 1 ms after each completion, then sleeps;
//   busy:                     never sleeps (the CM channel is read without blocking).
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "ci/e2e/e2e_options.h"
#include "ci/e2e/running_target.h"
#include "ci/e2e/rxe_env.h"
#include "host/controller.h"
#include "target/target.h"

namespace nvmf::e2e {
namespace {

constexpr uint64_t kRamBytes = 16ull << 20;
constexpr uint32_t kLbaSize = 512;
constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:e2e-poll";

struct PollCase {
  target::PollMode mode;
  uint32_t busy_poll_us;
  const char* name;
};

class TargetPollTest : public ::testing::TestWithParam<PollCase> {
 protected:
  void SetUp() override {
    NVMF_REQUIRE_RXE(env_);
    target::TargetOptions topts = ram_target_options(*env_, kNqn, kRamBytes, kLbaSize);
    topts.poll_mode = GetParam().mode;
    topts.busy_poll_us = GetParam().busy_poll_us;
    target_ = RunningTarget::start(topts);
    ASSERT_NE(target_, nullptr);
  }

  std::unique_ptr<host::Controller> connect() {
    host::HostOptions hopts = host_options_for(*env_, (*target_)->port(), kNqn, 16);
    auto ctrl = host::Controller::connect(hopts);
    EXPECT_TRUE(ctrl.ok()) << ctrl.status().to_string();
    return ctrl.ok() ? std::move(*ctrl) : nullptr;
  }

  // Writes `bytes` of random data at `slba` and reads it back; true when it matches.
  static bool round_trip(host::Controller& c, uint64_t slba, uint32_t bytes, uint32_t seed) {
    std::vector<uint8_t> out(bytes), in(bytes, 0);
    std::mt19937 rng(seed);
    for (auto& b : out) b = static_cast<uint8_t>(rng());
    auto out_mr = c.register_buffer(out.data(), out.size());
    auto in_mr = c.register_buffer(in.data(), in.size());
    EXPECT_TRUE(out_mr.ok() && in_mr.ok());
    if (!out_mr.ok() || !in_mr.ok()) return false;
    host::DataSegment seg = host::segment_of(*out_mr);
    Status w = c.write(slba, std::span<const host::DataSegment>(&seg, 1));
    EXPECT_TRUE(w.ok()) << w.to_string();
    Status r = c.read(slba, host::segment_of(*in_mr));
    EXPECT_TRUE(r.ok()) << r.to_string();
    return w.ok() && r.ok() && std::memcmp(out.data(), in.data(), bytes) == 0;
  }

  std::optional<RxeEnv> env_;
  std::unique_ptr<RunningTarget> target_;
};

TEST_P(TargetPollTest, ServesInCapsuleAndKeyedIoAndASecondController) {
  auto first = connect();
  ASSERT_NE(first, nullptr);
  // 100 QD1 round trips of one in-capsule write (2 KiB) and one keyed write (64 KiB) each, so
  // that the loop goes from idle to busy and back many times.
  for (uint32_t i = 0; i < 100; ++i) {
    ASSERT_TRUE(round_trip(*first, i * 8, 2048, i)) << "in-capsule round trip " << i;
  }
  ASSERT_TRUE(round_trip(*first, 4096, 64 * 1024, 7)) << "keyed round trip";

  // A second controller connects while the first one is live; both keep working.
  auto second = connect();
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second->negotiation().cntlid, first->negotiation().cntlid);
  EXPECT_TRUE(round_trip(*second, 8192, 4096, 11));
  EXPECT_TRUE(round_trip(*first, 12288, 4096, 12));

  const target::TargetStats s = (*target_)->stats();
  EXPECT_EQ(s.totals.writes_in_capsule, 100u + 2u);  // the 2 KiB ones, and both 4 KiB ones
  EXPECT_EQ(s.totals.writes_rdma_read, 64u * 1024 / first->negotiation().mdts_bytes +
                                           (64u * 1024 % first->negotiation().mdts_bytes != 0));
  EXPECT_EQ(s.controllers.size(), 2u);

  // A disconnect is noticed without further I/O: the controller is freed.
  ASSERT_TRUE(second->disconnect().ok());
  second.reset();
  bool freed = false;
  for (int i = 0; i < 200 && !freed; ++i) {
    freed = (*target_)->stats().controllers.size() == 1u;
    if (!freed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(freed) << "the target still lists the disconnected controller after 2 s";
  EXPECT_TRUE(round_trip(*first, 16384, 4096, 13));
  ASSERT_TRUE(first->disconnect().ok());
  // TearDown: ~RunningTarget stops the loop (idle, in any mode) and expects run() to return ok.
}

TEST_P(TargetPollTest, StopsWhileAHostIsConnectedAndIdle) {
  auto c = connect();
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(round_trip(*c, 0, 4096, 3));
  target_.reset();  // stop() + join with the host still connected: must not hang
  // The host sees the target's disconnect on its next command: an error, not a hang.
  std::vector<uint8_t> buf(4096);
  auto mr = c->register_buffer(buf.data(), buf.size());
  ASSERT_TRUE(mr.ok());
  EXPECT_FALSE(c->read(0, host::segment_of(*mr)).ok());
}

// TargetOptions::cpu: by default (--cpu none) the event loop thread may run on every CPU the
// process may use; --cpu auto pins it to the one CPU it starts on, so that every work request of
// a QP is posted from one CPU (on soft-RoCE that keeps our QPs' packets in order:
// docs/soft-roce.md).
TEST_P(TargetPollTest, EventLoopIsPinnedToOneCpuWithCpuAuto) {
  cpu_set_t process;
  ASSERT_EQ(::sched_getaffinity(0, sizeof(process), &process), 0);
  ASSERT_GE(CPU_COUNT(&process), 1);
  auto c = connect();
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(round_trip(*c, 0, 4096, 5));  // run() is running: it pinned itself (or not) first
  cpu_set_t loop;
  ASSERT_EQ(::pthread_getaffinity_np(target_->native_thread(), sizeof(loop), &loop), 0);
  EXPECT_EQ(CPU_COUNT(&loop), CPU_COUNT(&process));  // the default: --cpu none
  c.reset();
  target_.reset();

  target::TargetOptions topts = ram_target_options(*env_, kNqn, kRamBytes, kLbaSize);
  topts.poll_mode = GetParam().mode;
  topts.busy_poll_us = GetParam().busy_poll_us;
  topts.cpu = target::kCpuAuto;
  target_ = RunningTarget::start(topts);
  ASSERT_NE(target_, nullptr);
  c = connect();
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(round_trip(*c, 0, 4096, 6));
  ASSERT_EQ(::pthread_getaffinity_np(target_->native_thread(), sizeof(loop), &loop), 0);
  // Pinned to exactly one CPU, one the process may run on. With one allowed CPU the mask is the
  // same as --cpu none's, and these still hold (and are all that can be told).
  EXPECT_EQ(CPU_COUNT(&loop), 1);
  cpu_set_t outside;
  CPU_ZERO(&outside);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &loop) && !CPU_ISSET(cpu, &process)) CPU_SET(cpu, &outside);
  }
  EXPECT_EQ(CPU_COUNT(&outside), 0) << "pinned to a CPU the process may not run on";
}

INSTANTIATE_TEST_SUITE_P(
    Modes, TargetPollTest,
    ::testing::Values(PollCase{target::PollMode::kEvent, 0, "event_sleep_at_once"},
                      PollCase{target::PollMode::kEvent, 1000, "event_1ms_window"},
                      PollCase{target::PollMode::kBusy, 0, "busy"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace nvmf::e2e
