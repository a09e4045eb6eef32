// Host recovery end to end over soft-RoCE: nvmf-target runs as its own process on a file and
// is killed with SIGKILL (and restarted on the same port and file); the host library, in this
// process, reconnects with a fresh association after --reconnect-delay, sends the interrupted
// call again and reads back what it wrote; gives up with Host Pathing Error after ctrl-loss-tmo;
// fails I/O early with fast-io-fail-tmo and still reconnects on the next call. Delays of 1 s
// keep the suite short.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "ci/e2e/cli_harness.h"
#include "ci/e2e/e2e_options.h"
#include "common/nvme_status.h"
#include "host/controller.h"

namespace nvmf::e2e {
namespace {

constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:recovery-e2e";
using Clock = std::chrono::steady_clock;

int64_t ms_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

class RecoveryTest : public CliFixture {
 protected:
  RecoveryTest() : CliFixture(kNqn) {}

  void SetUp() override {
    CliFixture::SetUp();
    if (HasFatalFailure() || !env_) return;
    file_ = tmpdir() + "/recovery-ns.img";
    unlink(file_.c_str());
    port_ = start();
    ASSERT_NE(port_, 0);
  }

  // The target on the test's file (16 MiB), on port_ once known.
  int start() {
    return start_target({"--file", file_, "--size", "16m"},
                        port_ == 0 ? "0" : std::to_string(port_));
  }

  // kato_ms 0: no Keep Alive, so only the I/O call itself finds the loss.
  std::unique_ptr<host::Controller> connect(int ctrl_loss_tmo_s, int fast_io_fail_tmo_s = -1,
                                            uint32_t kato_ms = 2000) {
    host::HostOptions o = host_options_for(*env_, static_cast<uint16_t>(port_), kNqn, 16);
    o.reconnect_delay_s = 1;
    o.ctrl_loss_tmo_s = ctrl_loss_tmo_s;
    o.fast_io_fail_tmo_s = fast_io_fail_tmo_s;
    o.kato_ms = kato_ms;
    o.timeout_ms = 3000;
    auto c = host::Controller::connect(o);
    EXPECT_TRUE(c.ok()) << c.status().to_string();
    return c.ok() ? std::move(*c) : nullptr;
  }

  std::string file_;
  int port_ = 0;
  std::vector<uint8_t> out_ = std::vector<uint8_t>(64 * 1024);
  std::vector<uint8_t> in_ = std::vector<uint8_t>(64 * 1024);
};

bool is_host_pathing_error(const Status& st) {
  return st.code() == StatusCode::kNvmeError && st.nvme_status().has_value() &&
         status_sct(*st.nvme_status()) == proto::kSctPath &&
         status_sc(*st.nvme_status()) == proto::kScHostPathingError;
}

// Write, kill -9, restart on the same port and file, read: the read finds the association
// gone, reconnects after reconnect-delay (1 s) and returns the written data.
TEST_F(RecoveryTest, TargetRestartReconnectsAndRetriesTheRead) {
  auto c = connect(30, -1, /*kato_ms=*/0);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->state(), host::ControllerState::kLive);
  for (size_t i = 0; i < out_.size(); ++i) out_[i] = static_cast<uint8_t>(i * 7 + 3);
  auto wmr = c->register_buffer(out_.data(), out_.size());
  auto rmr = c->register_buffer(in_.data(), in_.size());
  ASSERT_TRUE(wmr.ok() && rmr.ok());
  ASSERT_TRUE(c->write(64, std::span<const host::DataSegment>(std::array{wmr->segment()})).ok());
  kill_target();
  ASSERT_EQ(start(), port_);
  Status st = c->read(64, rmr->segment());
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(std::memcmp(in_.data(), out_.data(), in_.size()), 0) << "data lost across restart";
  EXPECT_EQ(c->state(), host::ControllerState::kLive);
  host::RecoveryStats r = c->recovery_stats();
  EXPECT_EQ(r.losses, 1u) << r.last_loss;
  EXPECT_EQ(r.reconnects, 1u);
  EXPECT_EQ(r.retried_transfers, 1u);
  EXPECT_EQ(r.path_errors, 0u);
  // Reconnect within reconnect-delay plus 2 s of the loss.
  EXPECT_GE(r.longest_outage_ms, 1000u);
  EXPECT_LE(r.longest_outage_ms, 3000u);
  EXPECT_FALSE(r.last_loss.empty());
  // The admin queue of the fresh association works too.
  EXPECT_TRUE(c->keep_alive().ok());
  EXPECT_TRUE(c->disconnect().ok());
  EXPECT_EQ(c->state(), host::ControllerState::kDeleting);
}

// The target never comes back: the read fails with Host Pathing Error once ctrl-loss-tmo (3 s)
// has passed, not before, not hanging; the controller is deleted and fails at once afterwards.
TEST_F(RecoveryTest, CtrlLossTimeoutEndsWithHostPathingError) {
  auto c = connect(3, -1, /*kato_ms=*/0);
  ASSERT_NE(c, nullptr);
  auto rmr = c->register_buffer(in_.data(), in_.size());
  ASSERT_TRUE(rmr.ok());
  ASSERT_TRUE(c->read(0, rmr->segment()).ok());
  kill_target();
  Clock::time_point t0 = Clock::now();
  Status st = c->read(0, rmr->segment());
  int64_t took = ms_since(t0);
  EXPECT_TRUE(is_host_pathing_error(st)) << st.to_string();
  EXPECT_NE(st.message().find("ctrl-loss-tmo"), std::string::npos) << st.to_string();
  EXPECT_GE(took, 2500) << st.to_string();
  EXPECT_LE(took, 10000) << st.to_string();
  EXPECT_EQ(c->state(), host::ControllerState::kDeleting);
  host::RecoveryStats r = c->recovery_stats();
  EXPECT_EQ(r.reconnects, 0u);
  EXPECT_GE(r.reconnect_attempts, 1u);
  t0 = Clock::now();
  st = c->read(0, rmr->segment());
  EXPECT_TRUE(is_host_pathing_error(st)) << st.to_string();
  EXPECT_LE(ms_since(t0), 500);
}

// fast-io-fail-tmo 1 s: with the target down the read fails early with Host Pathing Error but
// the controller stays connecting; once the target is back, the next read reconnects.
TEST_F(RecoveryTest, FastIoFailFailsEarlyAndReconnectingGoesOn) {
  auto c = connect(60, 1, /*kato_ms=*/0);
  ASSERT_NE(c, nullptr);
  auto rmr = c->register_buffer(in_.data(), in_.size());
  ASSERT_TRUE(rmr.ok());
  kill_target();
  Clock::time_point t0 = Clock::now();
  Status st = c->read(0, rmr->segment());
  EXPECT_TRUE(is_host_pathing_error(st)) << st.to_string();
  EXPECT_NE(st.message().find("fast-io-fail-tmo"), std::string::npos) << st.to_string();
  EXPECT_LE(ms_since(t0), 8000);
  EXPECT_EQ(c->state(), host::ControllerState::kConnecting);
  ASSERT_EQ(start(), port_);
  // Like an application that retries: calls fail at once until a reconnect attempt is due
  // (every second), then one reconnects.
  t0 = Clock::now();
  int calls = 1;
  do {
    st = c->read(0, rmr->segment());
    ++calls;
    if (!st.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (!st.ok() && is_host_pathing_error(st) && ms_since(t0) < 5000);
  EXPECT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(c->state(), host::ControllerState::kLive);
  EXPECT_EQ(c->recovery_stats().reconnects, 1u);
  EXPECT_EQ(c->recovery_stats().path_errors, static_cast<uint64_t>(calls - 1));
}

// An idle controller: the keep-alive thread notices the lost association (its Keep Alive
// fails), and the next call recovers before sending anything.
TEST_F(RecoveryTest, KeepAliveFailureWhileIdleLeadsToRecovery) {
  auto c = connect(30);
  ASSERT_NE(c, nullptr);
  auto rmr = c->register_buffer(in_.data(), in_.size());
  ASSERT_TRUE(rmr.ok());
  kill_target();
  ASSERT_EQ(start(), port_);
  // KATO 2 s: a Keep Alive every second; within 5 s one has failed.
  Clock::time_point t0 = Clock::now();
  while (c->stats().keep_alive_failures == 0 && ms_since(t0) < 5000) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_GE(c->stats().keep_alive_failures, 1u);
  Status st = c->read(0, rmr->segment());
  EXPECT_TRUE(st.ok()) << st.to_string();
  host::RecoveryStats r = c->recovery_stats();
  EXPECT_EQ(r.losses, 1u);
  EXPECT_EQ(r.reconnects, 1u);
  EXPECT_EQ(r.retried_transfers, 0u) << "the loss was known before the read was sent";
  EXPECT_NE(r.last_loss.find("Keep Alive"), std::string::npos) << r.last_loss;
}

}  // namespace
}  // namespace nvmf::e2e
