// SPDX-License-Identifier: BSD-3-Clause
// Poll groups (--poll-groups 2 in every test here, whatever NVMF_E2E_POLL_GROUPS
// says): what only holds across groups. The pending-Connect limit (--max-pending-connections)
// counts every group's connections exactly, and removing a port destroys its queues in every
// group before Target::close_port returns. In-process: the ASan + UBSan pass runs it too
// (a queue of a removed port used after its group freed it would be reported there).
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ci/e2e/e2e_options.h"
#include "ci/e2e/raw_cm.h"
#include "ci/e2e/running_target.h"
#include "ci/e2e/rxe_env.h"
#include "common/nvme_status.h"
#include "host/commands.h"
#include "host/controller.h"
#include "host/raw/raw_queue.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"
#include "proto/rdma_cm.h"
#include "target/target.h"

namespace nvmf::e2e {
namespace {

constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:poll-groups";
constexpr char kHostNqn[] = "nqn.2014-08.org.nvmexpress:uuid:poll-groups-host";
constexpr int kTimeoutMs = 30000;  // a bound against hangs, never asserted as a duration

class PollGroupsTest : public ::testing::Test {
 protected:
  void SetUp() override { NVMF_REQUIRE_RXE(env_); }
  void TearDown() override { target_.reset(); }

  target::TargetOptions options() {
    target::TargetOptions o = ram_target_options(*env_, kNqn, 16 << 20);
    o.poll_groups = 2;
    return o;
  }
  void start(const target::TargetOptions& o) {
    target_ = RunningTarget::start(o);
    ASSERT_NE(target_, nullptr);
  }
  // A raw admin queue (qid 0, 32 entries) to port `index` whose CM request was accepted; null
  // with a test failure otherwise.
  std::unique_ptr<host::RawQueue> raw(size_t index = 0) {
    host::RawQueueParams p;
    p.traddr = env_->target_addr;
    p.trsvcid = std::to_string((*target_)->port(index));
    p.host_traddr = env_->host_addr;
    p.timeout_ms = kTimeoutMs;
    auto q = host::RawQueue::create(p);
    EXPECT_TRUE(q.ok()) << q.status().to_string();
    if (!q.ok()) return nullptr;
    Status opened = (*q)->open(0, 31);
    EXPECT_TRUE(opened.ok()) << opened.to_string();
    if (!opened.ok()) return nullptr;
    return std::move(*q);
  }
  // A CM request for an admin queue that the target must reject with NO_RSC.
  void expect_refused() {
    proto::CmRequestPrivateData priv = host::cm_request_private_data(0, 32);
    auto rej =
        raw_connect_expect_reject(*env_, (*target_)->port(), &priv, sizeof(priv), 1, 1, kTimeoutMs);
    ASSERT_TRUE(rej.ok()) << rej.status().to_string();
    EXPECT_EQ(rej->sts, proto::kCmRejectNoResources);
  }
  // Admin Connect (data in-capsule) on `q`; its status.
  static uint16_t admin_connect(host::RawQueue& q) {
    host::ConnectSpec c;
    c.qid = 0;
    c.sqsize = 31;
    c.cntlid = proto::kAdminQueueCntlid;
    c.hostid = host::random_host_id();
    c.subnqn = kNqn;
    c.hostnqn = kHostNqn;
    auto cqe = q.run_connect(c, true, kTimeoutMs);
    EXPECT_TRUE(cqe.ok()) << cqe.status().to_string();
    return cqe.ok() ? status_without_phase(cqe->status) : uint16_t{0xFFFF};
  }
  // The poll groups of the live queues without a controller yet (CNTLID 0xFFFF), one per queue.
  std::multiset<uint32_t> unconnected_groups() {
    std::multiset<uint32_t> out;
    for (const auto& q : (*target_)->stats().queues) {
      if (q.cntlid == 0xFFFF) out.insert(q.group);
    }
    return out;
  }
  // Waits up to 10 s for the target to have torn down `n` queues in all.
  bool wait_disconnections(uint64_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while ((*target_)->stats().disconnections < n) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }

  std::optional<RxeEnv> env_;
  std::unique_ptr<RunningTarget> target_;
};

// Four connections without a Connect, two in each group, fill a limit of 4: the fifth is
// refused. A Connect on a group-1 queue gives its place back before its response, so a
// connection opened as soon as the host has the CQE is accepted; the next one is refused again.
// A queue the host closes gives its place back too. Before, the listener added the other
// groups' counts as published at the end of their rounds and could admit one too many or too few.
TEST_F(PollGroupsTest, PendingConnectionLimitIsExactAcrossGroups) {
  target::TargetOptions o = options();
  o.max_pending_connections = 4;
  o.connect_timeout_ms = 120000;  // no deadline during the test
  start(o);
  std::vector<std::unique_ptr<host::RawQueue>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(raw());
    ASSERT_NE(idle.back(), nullptr) << i;
  }
  EXPECT_EQ(unconnected_groups(), (std::multiset<uint32_t>{0, 0, 1, 1}))
      << "admin queues alternate between the groups";
  expect_refused();
  // idle[1] is in group 1 (the second admin queue).
  ASSERT_EQ(admin_connect(*idle[1]), kStatusSuccess);
  auto after_connect = raw();
  ASSERT_NE(after_connect, nullptr) << "the Connect gave its place back";
  expect_refused();
  // The host closes a pending queue (group 0): its place comes back once the target saw it.
  const uint64_t torn_down = (*target_)->stats().disconnections;
  idle[0].reset();
  ASSERT_TRUE(wait_disconnections(torn_down + 1));
  auto after_close = raw();
  ASSERT_NE(after_close, nullptr);
  expect_refused();
  EXPECT_EQ(unconnected_groups().size(), 4u);
  EXPECT_GE((*target_)->stats().connections_rejected, 3u);
}

// Two ports; a host on each with two I/O queues, so that each host has queues in both poll
// groups. Removing port 1 (Target::close_port) returns once every queue that came in on it,
// in either group, is destroyed: the stats show none of them at once, its controller is freed,
// and the host on port 2 goes on reading and writing.
TEST_F(PollGroupsTest, PortRemovalDestroysItsQueuesInEveryGroup) {
  target::TargetOptions o = options();
  target::PortOptions a;
  a.portid = 1;
  a.traddr = env_->target_addr;
  a.trsvcid = "0";
  target::PortOptions b = a;
  b.portid = 2;
  o.ports = {a, b};
  start(o);
  ASSERT_EQ((*target_)->port_count(), 2u);
  auto connect_to = [&](size_t index) {
    host::HostOptions h = host_options_for(*env_, (*target_)->port(index), kNqn, 32);
    h.hostnqn = kHostNqn;
    h.num_io_queues = 2;
    h.timeout_ms = kTimeoutMs;
    return host::Controller::connect(h);
  };
  auto gone = connect_to(0);
  ASSERT_TRUE(gone.ok()) << gone.status().to_string();
  auto stays = connect_to(1);
  ASSERT_TRUE(stays.ok()) << stays.status().to_string();
  const uint16_t gone_cntlid = (*gone)->negotiation().cntlid;
  const uint16_t stays_cntlid = (*stays)->negotiation().cntlid;
  ASSERT_NE(gone_cntlid, stays_cntlid);
  std::set<uint32_t> gone_groups, stays_groups;
  for (const auto& q : (*target_)->stats().queues) {
    if (q.cntlid == gone_cntlid) gone_groups.insert(q.group);
    if (q.cntlid == stays_cntlid) stays_groups.insert(q.group);
  }
  ASSERT_EQ(gone_groups, (std::set<uint32_t>{0, 1})) << "port 1's queues in both groups";
  ASSERT_EQ(stays_groups, (std::set<uint32_t>{0, 1})) << "port 2's queues in both groups";

  std::vector<uint8_t> out(64 * 1024), in(64 * 1024);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 11 + 1);
  auto io_works = [&](host::Controller& c, uint64_t lba) {
    auto wmr = c.register_buffer(out.data(), out.size());
    auto rmr = c.register_buffer(in.data(), in.size());
    if (!wmr.ok() || !rmr.ok()) return false;
    std::fill(in.begin(), in.end(), 0);
    if (!c.write(lba, std::span<const host::DataSegment>(std::array{host::segment_of(*wmr)}))
             .ok()) {
      return false;
    }
    return c.read(lba, host::segment_of(*rmr)).ok() && in == out;
  };
  ASSERT_TRUE(io_works(**gone, 0));
  ASSERT_TRUE(io_works(**stays, 256));

  ASSERT_TRUE((*target_)->close_port(0).ok());
  const auto stats = (*target_)->stats();
  size_t left = 0, kept = 0;
  for (const auto& q : stats.queues) {
    if (q.cntlid == gone_cntlid || q.cntlid == 0xFFFF) ++left;
    if (q.cntlid == stays_cntlid) ++kept;
  }
  EXPECT_EQ(left, 0u) << "a queue of the removed port survived close_port";
  EXPECT_EQ(kept, 3u) << "port 2's admin queue and two I/O queues";
  ASSERT_EQ(stats.controllers.size(), 1u);
  EXPECT_EQ(stats.controllers[0].cntlid, stays_cntlid);
  EXPECT_TRUE(io_works(**stays, 512)) << "port 2's host is served on";
  EXPECT_FALSE(io_works(**gone, 768)) << "port 1's host lost its association (ctrl_loss_tmo 0)";
  EXPECT_TRUE((*stays)->disconnect().ok());
}

}  // namespace
}  // namespace nvmf::e2e
