// SPDX-License-Identifier: BSD-3-Clause
// End to end over soft-RoCE with a bare RDMA connection instead of the host library: a host
// that floods the admin queue with more capsules than it has entries, and capsules shorter
// than an SQE or longer than the receive buffers. The target must answer every command or tear
// the one queue down, never crash, and keep serving others.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ci/e2e/e2e_options.h"
#include "ci/e2e/running_target.h"
#include "ci/e2e/rxe_env.h"
#include "common/nvme_status.h"
#include "common/sgl.h"
#include "common/status.h"
#include "common/verbs/verbs.h"
#include "host/bench/bench.h"
#include "host/commands.h"
#include "host/controller.h"
#include "host/raw/raw_queue.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"
#include "proto/rdma_cm.h"
#include "target/target.h"

namespace nvmf::e2e {
namespace {

constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:raw-capsule";
constexpr int kTimeoutMs = 30000;  // a bound against hangs, never asserted as a duration
constexpr char kHostNqn[] = "nqn.2014-08.org.nvmexpress:uuid:raw-capsule";

// Every case runs with the shared receive queue (--srq on, the default) and without (per-queue
// receives): the suite the SRQ's receive accounting is checked by.
class RawCapsuleTest : public ::testing::TestWithParam<bool> {
 protected:
  bool srq() const { return GetParam(); }
  void SetUp() override {
    NVMF_REQUIRE_RXE(env_);
    target::TargetOptions topts = ram_target_options(*env_, kNqn, 1 << 20);
    topts.srq = srq();
    target_ = RunningTarget::start(topts);
    ASSERT_NE(target_, nullptr);
    groups_ = (*target_)->poll_groups().groups;
  }
  void TearDown() override {
    target_.reset();  // stops and joins the target, expecting run() to have returned ok
  }
  uint32_t groups_ = 1;  // poll groups that run (auto or NVMF_E2E_POLL_GROUPS): one SRQ each
  // A raw queue (host/raw/raw_queue.h) on the admin queue with CM HSQSIZE `hsqsize`, its admin
  // Connect (SQSIZE hsqsize, data in-capsule, host NQN `hostnqn`) answered with success; else
  // the error, or Internal with the Connect's status. For tests that expect some opens to fail.
  Result<std::unique_ptr<host::RawQueue>> try_admin_queue(uint16_t hsqsize,
                                                          const std::string& hostnqn) {
    host::RawQueueParams p;
    p.traddr = env_->target_addr;
    p.trsvcid = std::to_string((*target_)->port());
    p.host_traddr = env_->host_addr;
    p.timeout_ms = kTimeoutMs;
    auto q = host::RawQueue::create(p);
    if (!q.ok()) return q.status();
    NVMF_RETURN_IF_ERROR((*q)->open(0, hsqsize));
    host::ConnectSpec spec;
    spec.sqsize = hsqsize;
    spec.hostid = host::random_host_id();
    spec.subnqn = kNqn;
    spec.hostnqn = hostnqn;
    auto c = (*q)->run_connect(spec, /*in_capsule=*/true, kTimeoutMs);
    if (!c.ok()) return c.status();
    if (status_without_phase(c->status) != kStatusSuccess) {
      return Status::internal("admin Connect answered " + status_name(c->status));
    }
    return std::move(*q);
  }
  // try_admin_queue() as kHostNqn, any failure a test failure.
  std::unique_ptr<host::RawQueue> admin_queue(uint16_t hsqsize) {
    auto q = try_admin_queue(hsqsize, kHostNqn);
    EXPECT_TRUE(q.ok()) << q.status().to_string();
    return q.ok() ? std::move(*q) : nullptr;
  }
  // A normal host's options for this target.
  host::HostOptions host_options() const {
    host::HostOptions h;
    h.traddr = env_->target_addr;
    h.trsvcid = std::to_string((*target_)->port());
    h.subnqn = kNqn;
    h.host_traddr = env_->host_addr;
    h.timeout_ms = kTimeoutMs;
    return h;
  }
  // A normal host still gets a controller and a working I/O queue.
  void expect_target_still_serves() {
    auto c = host::Controller::connect(host_options());
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_TRUE((*c)->disconnect().ok());
  }

  std::optional<RxeEnv> env_;
  std::unique_ptr<RunningTarget> target_;
};

// 40 Property Gets of CAP posted at once on a 4-entry queue, 10 times the queue.
// Per-queue receives (--srq off): the surplus waits in RNR retry (rnr_retry 7) until the target
// reposts a receive, and every capsule is answered. Some share a CID on purpose: the target
// does not track CIDs, it must answer each capsule.
// Shared receive queue: the surplus lands in the SRQ's receives, so the target counts what the
// queue holds: a fifth capsule held without a response tears the queue down (its QP stopped at
// once); either way every SRQ receive taken goes back, and other hosts are served.
TEST_P(RawCapsuleTest, MoreCommandsThanQueueEntries) {
  constexpr uint16_t kHsqsize = 3;  // 4 entries: the target posts 4 receives
  auto q = admin_queue(kHsqsize);
  ASSERT_NE(q, nullptr);
  constexpr int kFlood = 40;
  static_assert(kFlood <= host::RawQueue::kSlots, "one send slot per capsule");
  for (int i = 0; i < kFlood; ++i) {
    proto::Sqe sqe = host::property_get_sqe(proto::kPropCap, true);
    encode_null_sgl(sqe.dptr);
    sqe.cid = static_cast<uint16_t>(i % 30);
    ASSERT_TRUE(q->send(sqe).ok()) << i;
  }
  if (srq()) {
    // The target cannot tell a capsule sent past SQHD from one sent after its predecessor was
    // answered, so which outcome happens depends on timing: a target that keeps up answers all
    // 40; one that falls behind holds more capsules than the queue has entries and tears the
    // queue down. Either is right; a queue left neither answered nor torn down is not.
    int answered = 0;
    while (answered < kFlood) {
      auto e = q->next_cqe(kTimeoutMs);
      if (!e.ok()) break;
      ++answered;
    }
    const bool torn_down = answered < kFlood && q->wait_disconnected(kTimeoutMs);
    EXPECT_TRUE(answered == kFlood || torn_down) << answered << " of " << kFlood << " answered";
    std::printf("flood: %d of %d answered, %s\n", answered, kFlood,
                torn_down ? "queue torn down" : "queue kept");
    q.reset();
    expect_target_still_serves();
    // Every receive is posted again once nothing runs (the last host disconnected).
    target::TargetStats s = (*target_)->stats();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (s.resources.srq_posted_now != s.resources.srq_receives &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      s = (*target_)->stats();
    }
    // One SRQ per poll group (each opens the device at start-up), each with its share of the
    // default --max-srq-depth 4096.
    EXPECT_EQ(s.resources.srqs, groups_);
    EXPECT_EQ(s.resources.srq_receives, groups_ * ((4096 + groups_ - 1) / groups_));
    EXPECT_EQ(s.resources.srq_posted_now, s.resources.srq_receives);
    EXPECT_LT(s.resources.srq_posted_low, s.resources.srq_receives) << "the flood took some";
    std::printf("SRQ: %llu receives, fewest posted %llu, limit events %llu\n",
                static_cast<unsigned long long>(s.resources.srq_receives),
                static_cast<unsigned long long>(s.resources.srq_posted_low),
                static_cast<unsigned long long>(s.resources.srq_limit_events));
    return;
  }
  std::set<uint16_t> cids;
  for (int i = 0; i < kFlood; ++i) {
    auto e = q->next_cqe(kTimeoutMs);
    ASSERT_TRUE(e.ok()) << "response " << i << ": " << e.status().to_string();
    cids.insert(e->cid);
    EXPECT_EQ(status_without_phase(e->status), kStatusSuccess) << status_name(e->status);
    EXPECT_EQ(e->dw0 & proto::kCapMqesMask, 127u) << "CAP.MQES";
    EXPECT_LT(e->sqhd, kHsqsize + 1) << "SQHD wraps at the queue size";
  }
  EXPECT_EQ(cids.size(), 30u);
  expect_target_still_serves();
}

// Shared CQs (target/shared_cq.h): hostile hosts whose queues complete on the same CQ as a good
// host's must not disturb it. Rounds of 4 raw admin queues (4 entries each, each from its own
// host NQN) each send 64 capsules as fast as they can while a good host runs verified random
// reads and writes (4 KiB and 64 KiB) on 4 I/O queues. Every flooder queue is answered in full
// or torn down (with an SRQ: see MoreCommandsThanQueueEntries; without: RNR retry), the good
// host sees no error and every block reads back, and afterwards every SRQ receive and shared
// buffer is back, every queue gone and the CQs are no more than at start-up (one per group).
TEST_P(RawCapsuleTest, FloodersOnTheSharedCqLeaveAVerifyingHostUndisturbed) {
  const target::ResourceStats idle = (*target_)->stats().resources;
  host::HostOptions h = host_options();
  h.queue_size = 32;
  h.num_io_queues = 4;
  h.ctrl_loss_tmo_s = 0;  // a lost association is a failure here, not something to ride out
  auto ctrl = host::Controller::connect(h);
  ASSERT_TRUE(ctrl.ok()) << ctrl.status().to_string();

  struct Flood {
    bool opened = false;
    bool torn_down = false;
    int answered = 0, sent = 0;
  };
  auto flood_once = [this](int id) {
    Flood r;
    auto q = try_admin_queue(3, "nqn.2014-08.org.nvmexpress:uuid:flooder-" + std::to_string(id));
    if (!q.ok()) return r;
    r.opened = true;
    for (int i = 0; i < 64; ++i) {
      proto::Sqe sqe = host::property_get_sqe(proto::kPropCap, true);
      encode_null_sgl(sqe.dptr);
      sqe.cid = static_cast<uint16_t>(i);
      Status st = (*q)->send(sqe);
      for (int spins = 0; st.code() == StatusCode::kResourceExhausted && spins < 2000; ++spins) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));  // its send slots
        st = (*q)->send(sqe);
      }
      if (!st.ok()) break;
      ++r.sent;
    }
    while (r.answered < r.sent && (*q)->next_cqe(kTimeoutMs).ok()) ++r.answered;
    r.torn_down = r.answered < r.sent && (*q)->wait_disconnected(kTimeoutMs);
    return r;
  };
  std::atomic<bool> done{false};
  int opened = 0, settled = 0, torn = 0;
  std::thread attackers([&] {
    for (int round = 0; round < 30 && !done.load(); ++round) {
      std::vector<Flood> results(4);
      std::vector<std::thread> threads;
      for (int f = 0; f < 4; ++f) {
        threads.emplace_back([&, f, round] { results[f] = flood_once(round * 4 + f); });
      }
      for (std::thread& t : threads) t.join();
      for (const Flood& r : results) {
        opened += r.opened;
        torn += r.torn_down;
        settled += r.opened && (r.torn_down || r.answered == r.sent);
      }
    }
  });
  host::BenchOptions b;
  b.rw = host::RwMode::kRandRw;
  b.bs = {4096, 64 * 1024};
  b.iodepth = 16;
  b.numjobs = 4;
  b.runtime_s = 2;
  b.size = 128 << 10;
  b.verify = true;
  auto report = host::run_bench(**ctrl, b);
  done = true;
  attackers.join();
  std::printf("flooders: %d queues opened, %d torn down, %d settled\n", opened, torn, settled);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_TRUE(report->status.ok()) << report->status.to_string();
  EXPECT_GT(report->verify_checked, 0u);
  EXPECT_EQ(report->verify_errors, 0u) << report->verify_first_error;
  EXPECT_EQ(report->recovery.losses, 0u) << "the good host lost no queue";
  EXPECT_GT(opened, 0) << "the flood happened";
  EXPECT_EQ(settled, opened) << "every flooder queue answered in full or torn down";
  EXPECT_TRUE((*ctrl)->disconnect().ok());
  ctrl->reset();

  target::TargetStats s = (*target_)->stats();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while ((s.resources.srq_posted_now != s.resources.srq_receives ||
          s.resources.shared_buffers_in_use != 0 || !s.queues.empty()) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    s = (*target_)->stats();
  }
  EXPECT_TRUE(s.queues.empty());
  EXPECT_EQ(s.resources.srq_posted_now, s.resources.srq_receives);
  EXPECT_EQ(s.resources.shared_buffers_in_use, 0u);
  EXPECT_EQ(s.resources.cqs, idle.cqs) << "no CQ left behind";
  EXPECT_EQ(s.resources.cq_entries, idle.cq_entries);
}

TEST_P(RawCapsuleTest, CapsuleShorterThanAnSqeTearsOnlyThatQueueDown) {
  auto q = admin_queue(31);
  ASSERT_NE(q, nullptr);
  proto::Sqe s = host::property_get_sqe(proto::kPropCap, true);
  ASSERT_TRUE(q->send_truncated(s, 32).ok());
  EXPECT_TRUE(q->wait_disconnected(kTimeoutMs));
  expect_target_still_serves();
}

TEST_P(RawCapsuleTest, CapsuleLongerThanTheReceiveTearsOnlyThatQueueDown) {
  auto q = admin_queue(31);
  ASSERT_NE(q, nullptr);
  // SQE + 8 KiB: beyond the one-page in-capsule area each receive has.
  proto::Sqe s = host::write_sqe(1, 0, 16);
  encode_in_capsule_sgl(s.dptr, 0, 8192);
  std::vector<uint8_t> data(8192);
  ASSERT_TRUE(q->send(s, data).ok());
  EXPECT_TRUE(q->wait_disconnected(kTimeoutMs));
  expect_target_still_serves();
}

INSTANTIATE_TEST_SUITE_P(Receives, RawCapsuleTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Srq" : "NoSrq";
                         });

}  // namespace
}  // namespace nvmf::e2e
