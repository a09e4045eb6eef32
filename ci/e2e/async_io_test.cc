// SPDX-License-Identifier: BSD-3-Clause
// End to end over soft-RoCE, in process: the host library's asynchronous API (host/io_queue.h).
// Four I/O queues on four threads each keep 32 commands in flight (4 KiB writes, each read back
// and compared once written) against a file namespace, while the target is stopped and started
// again on the same port: every command completes, with success (fast_io_fail_tmo off: commands
// are held until the reconnect), no read differs from what was written, and the IoQueues are the
// same objects before and after.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ci/e2e/e2e_options.h"
#include "ci/e2e/running_target.h"
#include "ci/e2e/rxe_env.h"
#include "host/controller.h"
#include "host/io_queue.h"
#include "target/target.h"

namespace nvmf::e2e {
namespace {

constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:e2e-async";
constexpr uint32_t kQueues = 4;
constexpr uint32_t kDepth = 32;
constexpr uint32_t kBlock = 4096;
constexpr uint64_t kRegionBlocks = 512;  // 2 MiB per queue
constexpr uint64_t kNamespaceBytes = 16ull << 20;

uint64_t word(uint64_t seed, uint64_t i) {
  uint64_t x = seed + i * 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// One thread's queue: kDepth slots, each writing its next block then reading it back.
struct Worker {
  host::IoQueue* q = nullptr;
  uint32_t index = 0;
  uint8_t* mem = nullptr;  // kDepth x 2 blocks: write data, read data
  uint32_t lkey = 0, rkey = 0;
  std::atomic<uint64_t> verified{0};
  std::atomic<bool> stop{false};
  uint64_t failures = 0;     // completions with an error status
  uint64_t mismatches = 0;   // read back different from what was written
  uint64_t resubmitted = 0;  // completions of commands sent again on a new association
  std::string first_error;

  struct Slot {
    Worker* w;
    uint32_t j;
    uint64_t block;
    uint64_t version;
    bool reading;
  };
  Slot slots[kDepth];
  uint64_t next_version = 1;

  uint8_t* wbuf(uint32_t j) { return mem + static_cast<size_t>(j) * 2 * kBlock; }
  uint8_t* rbuf(uint32_t j) { return wbuf(j) + kBlock; }
  uint64_t lba(const Slot& s) const { return (index * kRegionBlocks + s.block) * (kBlock / 512); }

  Status write(Slot& s) {
    s.reading = false;
    s.version = next_version++;
    auto* p = reinterpret_cast<uint64_t*>(wbuf(s.j));
    for (uint32_t i = 0; i < kBlock / 8; ++i) p[i] = word(s.version ^ (s.block << 32), i);
    host::DataSegment d{wbuf(s.j), kBlock, lkey, rkey};
    return q->submit_write(lba(s), std::span<const host::DataSegment>(&d, 1), done, &s);
  }
  Status read(Slot& s) {
    s.reading = true;
    std::memset(rbuf(s.j), 0, kBlock);
    return q->submit_read(lba(s), host::DataSegment{rbuf(s.j), kBlock, lkey, rkey}, done, &s);
  }
  static void done(void* arg, const host::IoCompletion& c) {
    auto& s = *static_cast<Slot*>(arg);
    Worker& w = *s.w;
    if (c.resubmissions > 0) ++w.resubmitted;
    if (c.status != 0) {
      if (w.failures++ == 0) w.first_error = "status " + std::to_string(c.status);
      return;
    }
    Status st;
    if (!s.reading) {
      st = w.read(s);
    } else {
      if (std::memcmp(w.rbuf(s.j), w.wbuf(s.j), kBlock) != 0) ++w.mismatches;
      w.verified.fetch_add(1, std::memory_order_relaxed);
      if (w.stop.load(std::memory_order_relaxed)) return;
      s.block = (s.block + kDepth) % kRegionBlocks;
      st = w.write(s);
    }
    if (!st.ok() && w.failures++ == 0) w.first_error = st.to_string();
  }

  void run() {
    for (uint32_t j = 0; j < kDepth; ++j) {
      slots[j] = Slot{this, j, j, 0, false};
      Status st = write(slots[j]);
      if (!st.ok() && failures++ == 0) first_error = st.to_string();
    }
    // Once asked to stop, what is in flight has 30 s to complete: a command never completed
    // fails the test instead of hanging it.
    std::chrono::steady_clock::time_point give_up = std::chrono::steady_clock::time_point::max();
    while (q->outstanding() > 0) {
      if (give_up == std::chrono::steady_clock::time_point::max() && stop.load()) {
        give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      }
      if (std::chrono::steady_clock::now() >= give_up) {
        ++failures;
        first_error = std::to_string(q->outstanding()) + " commands never completed";
        return;
      }
      Result<int> ran = q->process_completions();
      if (!ran.ok()) {
        first_error = ran.status().to_string();
        return;
      }
      if (*ran == 0) q->wait(std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
    }
  }
};

class AsyncIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NVMF_REQUIRE_RXE(env_);
    path_ = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") +
            "/async_io_test.img";
    topts_ = ram_target_options(*env_, kNqn, 0);
    topts_.ram_size = 0;
    topts_.file_path = path_;
    topts_.file_size = kNamespaceBytes;
    target_ = RunningTarget::start(topts_);
    ASSERT_NE(target_, nullptr);
    topts_.trsvcid = std::to_string((*target_)->port());  // the restart comes back on it
  }
  void TearDown() override {
    target_.reset();
    if (!path_.empty()) ::unlink(path_.c_str());
  }

  // Waits up to `limit` until the controller reported state `want` (on_state_change).
  bool state_becomes(const std::string& want, std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(m_);
    return cv_.wait_for(lock, limit, [&] { return seen_.find(want) != std::string::npos; });
  }
  // Waits until every worker verified at least `n` blocks (a bound of `limit`).
  static bool all_verified(Worker* w, uint64_t n, std::chrono::seconds limit) {
    auto end = std::chrono::steady_clock::now() + limit;
    for (;;) {
      bool all = true;
      for (uint32_t i = 0; i < kQueues; ++i) {
        all = all && w[i].verified.load(std::memory_order_relaxed) >= n;
      }
      if (all) return true;
      if (std::chrono::steady_clock::now() >= end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  std::optional<RxeEnv> env_;
  target::TargetOptions topts_;
  std::unique_ptr<RunningTarget> target_;
  std::string path_;
  std::mutex m_;
  std::condition_variable cv_;
  std::string seen_;  // the states reported, in order
};

TEST_F(AsyncIoTest, FourQueuesOnFourThreadsKeepVerifiedIoThroughATargetRestart) {
  host::HostOptions hopts = host_options_for(*env_, (*target_)->port(), kNqn, kDepth + 1);
  hopts.num_io_queues = kQueues;
  hopts.ctrl_loss_tmo_s = 60;
  hopts.reconnect_delay_s = 1;
  hopts.fast_io_fail_tmo_s = -1;  // hold every command until the reconnect
  hopts.timeout_ms = 5000;
  hopts.on_state_change = [this](const char* state) {
    std::lock_guard<std::mutex> lock(m_);
    seen_ += std::string(state) + " ";
    cv_.notify_all();
  };
  auto c = host::Controller::connect(hopts);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  host::Controller& ctrl = **c;
  ASSERT_EQ(ctrl.num_io_queues(), kQueues);
  auto mem = ctrl.allocate_buffer(static_cast<size_t>(kQueues) * kDepth * 2 * kBlock);
  ASSERT_TRUE(mem.ok()) << mem.status().to_string();

  Worker w[kQueues];
  host::IoQueue* before[kQueues];
  for (uint32_t i = 0; i < kQueues; ++i) {
    auto q = ctrl.io_queue(i);
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    before[i] = *q;
    w[i].q = *q;
    w[i].index = i;
    w[i].mem = mem->data() + static_cast<size_t>(i) * kDepth * 2 * kBlock;
    w[i].lkey = mem->lkey();
    w[i].rkey = mem->rkey();
  }
  EXPECT_EQ(ctrl.io_queue(kQueues).status().code(), StatusCode::kInvalidArgument);
  // The synchronous calls go through io_queue(0) (before its worker thread takes it).
  EXPECT_TRUE(ctrl.flush().ok());
  EXPECT_EQ(ctrl.stats().flushes, 1u);
  EXPECT_EQ(before[0]->stats().submitted, 1u) << "the flush went through io_queue(0)";

  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < kQueues; ++i) threads.emplace_back([&w, i] { w[i].run(); });
  const auto stop_all = [&] {
    for (auto& x : w) x.stop.store(true);
    for (auto& t : threads) t.join();
  };
  if (!all_verified(w, 100, std::chrono::seconds(60))) {
    stop_all();
    FAIL() << "no verified I/O on every queue within 60 s";
  }

  target_.reset();  // stopped: every queue disconnected
  const bool lost = state_becomes("connecting", std::chrono::seconds(30));
  target_ = RunningTarget::start(topts_);
  const bool live = state_becomes("live", std::chrono::seconds(60));
  uint64_t at_restart[kQueues];
  for (uint32_t i = 0; i < kQueues; ++i) at_restart[i] = w[i].verified.load();
  bool after = true;
  for (uint32_t i = 0; i < kQueues && after; ++i) {
    after = all_verified(w, at_restart[i] + 100, std::chrono::seconds(60));
  }
  stop_all();

  EXPECT_TRUE(lost) << "states: " << seen_;
  EXPECT_TRUE(live) << "states: " << seen_;
  EXPECT_TRUE(after) << "verified I/O did not go on after the reconnect";
  host::RecoveryStats r = ctrl.recovery_stats();
  EXPECT_EQ(r.losses, 1u);
  EXPECT_EQ(r.reconnects, 1u);
  uint64_t resubmitted = 0;
  for (uint32_t i = 0; i < kQueues; ++i) {
    SCOPED_TRACE("queue " + std::to_string(i));
    EXPECT_EQ(w[i].failures, 0u) << w[i].first_error;
    EXPECT_EQ(w[i].mismatches, 0u);
    EXPECT_EQ(w[i].q->outstanding(), 0u);
    auto q = ctrl.io_queue(i);
    ASSERT_TRUE(q.ok());
    EXPECT_EQ(*q, before[i]) << "the same IoQueue across the reconnect";
    EXPECT_EQ(w[i].q->link_state(), host::LinkState::kLive);
    resubmitted += w[i].resubmitted;
  }
  // The target stopped with commands in flight on every queue: they were sent again.
  EXPECT_GT(resubmitted, 0u);
  EXPECT_TRUE(ctrl.disconnect().ok());
}

}  // namespace
}  // namespace nvmf::e2e
