// SPDX-License-Identifier: BSD-3-Clause
// End to end over soft-RoCE, in process: the target enforces the Keep Alive Timeout the host
// gave at Connect, like nvmet (whole seconds, KATO rounded up, any command counting as traffic):
// a host that sends Keep Alive in time keeps its controller; one that goes quiet loses it, with
// every queue disconnected, and its next command fails instead of hanging. Both in the event loop's
// sleeping mode (the timer must wake it) and in busy mode. The host library's own keep-alive
// thread (KATO/2) keeps an idle controller alive without the caller doing anything.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
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

constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:e2e-kato";
using std::chrono::milliseconds;

class KeepAliveTest : public ::testing::TestWithParam<target::PollMode> {
 protected:
  void SetUp() override {
    NVMF_REQUIRE_RXE(env_);
    target::TargetOptions topts = ram_target_options(*env_, kNqn, 4ull << 20);
    topts.poll_mode = GetParam();
    target_ = RunningTarget::start(topts);
    ASSERT_NE(target_, nullptr);
  }

  // `send_keep_alive` false: no keep-alive thread, the test decides when Keep Alive goes out.
  std::unique_ptr<host::Controller> connect(uint32_t kato_ms, bool send_keep_alive = false) {
    host::HostOptions hopts = host_options_for(*env_, (*target_)->port(), kNqn, 8);
    hopts.kato_ms = kato_ms;
    hopts.send_keep_alive = send_keep_alive;
    hopts.ctrl_loss_tmo_s = 0;  // about the target's timer: a freed controller stays lost
    hopts.timeout_ms = 5000;
    auto ctrl = host::Controller::connect(hopts);
    EXPECT_TRUE(ctrl.ok()) << ctrl.status().to_string();
    return ctrl.ok() ? std::move(*ctrl) : nullptr;
  }

  Status read_one(host::Controller& c) {
    auto mr = c.register_buffer(buf_.data(), buf_.size());
    if (!mr.ok()) return mr.status();
    return c.read(0, host::segment_of(*mr));
  }

  // Waits up to `limit` for the target to list `n` live controllers.
  bool controllers_become(size_t n, milliseconds limit) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if ((*target_)->stats().controllers.size() == n) return true;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return (*target_)->stats().controllers.size() == n;
  }

  std::optional<RxeEnv> env_;
  std::unique_ptr<RunningTarget> target_;
  std::vector<uint8_t> buf_ = std::vector<uint8_t>(4096);
};

TEST_P(KeepAliveTest, KeepAliveInTimeKeepsTheController) {
  auto c = connect(1000);  // KATO 1 s
  ASSERT_NE(c, nullptr);
  // 3 s, a Keep Alive every 300 ms: three timeouts' worth, never one without a Keep Alive.
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(milliseconds(300));
    Status st = c->keep_alive();
    ASSERT_TRUE(st.ok()) << "Keep Alive " << i << ": " << st.to_string();
  }
  EXPECT_TRUE(read_one(*c).ok());
  EXPECT_EQ((*target_)->stats().controllers.size(), 1u);
  EXPECT_TRUE(c->disconnect().ok());
}

// No command from the caller for three KATOs: the library's thread sends Keep Alive every
// KATO/2 (500 ms), the target keeps the controller, and the next read works.
TEST_P(KeepAliveTest, LibraryKeepAliveThreadKeepsAnIdleController) {
  auto c = connect(1000, /*send_keep_alive=*/true);
  ASSERT_NE(c, nullptr);
  std::this_thread::sleep_for(milliseconds(3200));
  EXPECT_EQ((*target_)->stats().controllers.size(), 1u);
  EXPECT_EQ((*target_)->stats().controllers_freed, 0u);
  Status st = read_one(*c);
  EXPECT_TRUE(st.ok()) << st.to_string();
  const host::HostStats hs = c->stats();
  // 3.2 s / 0.5 s = 6 rounds; at least 4 even when the emulated machine is slow.
  EXPECT_GE(hs.keep_alives, 4u);
  EXPECT_LE(hs.keep_alives, 7u);
  EXPECT_EQ(hs.keep_alive_failures, 0u);
  EXPECT_TRUE(c->disconnect().ok());
  const uint64_t after = c->stats().keep_alives;
  std::this_thread::sleep_for(milliseconds(700));
  EXPECT_EQ(c->stats().keep_alives, after) << "the thread must stop with disconnect()";
}

TEST_P(KeepAliveTest, QuietHostLosesItsControllerAndItsNextCommandFails) {
  // The KATO 0 controller first: under a loaded emulator its connect can take longer than the
  // quiet one's KATO, which must only start running down after the quiet one's read.
  auto no_timer = connect(0);  // KATO 0: no timer, however long it is quiet
  ASSERT_NE(no_timer, nullptr);
  auto quiet = connect(1000);
  ASSERT_NE(quiet, nullptr);
  ASSERT_TRUE(read_one(*quiet).ok());
  EXPECT_EQ((*target_)->stats().controllers.size(), 2u);
  // KATO 1 s and no command since the read: freed 1-2 s later (a timer that runs out over
  // traffic restarts once, CTRATT.TBKAS). Allow 4 s for the emulated machine.
  EXPECT_TRUE(controllers_become(1, milliseconds(4000)))
      << (*target_)->stats().controllers.size() << " controllers still live";
  EXPECT_FALSE(read_one(*quiet).ok()) << "a command on a freed controller must fail";
  const target::TargetStats s = (*target_)->stats();
  ASSERT_EQ(s.controllers.size(), 1u);
  EXPECT_EQ(s.controllers_freed, 1u);
  EXPECT_TRUE(read_one(*no_timer).ok());
  EXPECT_TRUE(no_timer->disconnect().ok());
}

INSTANTIATE_TEST_SUITE_P(Modes, KeepAliveTest,
                         ::testing::Values(target::PollMode::kEvent, target::PollMode::kBusy),
                         [](const auto& info) {
                           return std::string(target::poll_mode_name(info.param));
                         });

}  // namespace
}  // namespace nvmf::e2e
