// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of StatsRegistry: per-queue and per-controller counters, live and after teardown.
#include "target/stats_registry.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace nvmf::target {
namespace {

QueueStats queue_info(uint16_t qid) {
  QueueStats q;
  q.qid = qid;
  q.queue_size = 32;
  q.peer = "10.0.0.2:" + std::to_string(4000 + qid);
  return q;
}

TEST(StatsRegistryTest, PerQueueAndPerControllerCountersFollowTheWritesPaths) {
  StatsRegistry reg;
  StatusCounters statuses;
  QueueCounters admin, io;
  reg.add_queue(&admin, queue_info(0));
  reg.add_queue(&io, queue_info(1));
  reg.add_controller(1, "nqn.host");
  reg.set_queue_controller(&admin, 1);
  reg.set_queue_controller(&io, 1);
  io.writes_in_capsule.add(2);
  io.writes_in_capsule_bytes.add(12288);
  io.writes_rdma_read.add();
  io.writes_rdma_read_bytes.add(32768);

  TargetStats s = reg.snapshot(statuses);
  ASSERT_EQ(s.queues.size(), 2u);
  ASSERT_EQ(s.controllers.size(), 1u);
  EXPECT_EQ(s.controllers[0].io_queues, 1u);
  EXPECT_EQ(s.controllers[0].counters.writes_in_capsule, 2u);
  EXPECT_EQ(s.controllers[0].counters.writes_rdma_read_bytes, 32768u);
  EXPECT_EQ(s.totals.writes_in_capsule_bytes, 12288u);
  EXPECT_TRUE(s.freed_queues.empty());
  EXPECT_TRUE(s.freed_controllers.empty());

  // The admin queue goes first and frees the controller while the I/O queue is still live: the
  // freed controller keeps the I/O queue's counts.
  reg.remove_queue(&admin);
  reg.remove_controller(1);
  reg.remove_queue(&io);
  s = reg.snapshot(statuses);
  EXPECT_TRUE(s.queues.empty());
  EXPECT_TRUE(s.controllers.empty());
  ASSERT_EQ(s.freed_controllers.size(), 1u);
  EXPECT_EQ(s.freed_controllers[0].cntlid, 1u);
  EXPECT_EQ(s.freed_controllers[0].hostnqn, "nqn.host");
  EXPECT_EQ(s.freed_controllers[0].counters.writes_in_capsule, 2u);
  EXPECT_EQ(s.freed_controllers[0].counters.writes_rdma_read, 1u);
  ASSERT_EQ(s.freed_queues.size(), 2u);
  EXPECT_EQ(s.freed_queues[0].qid, 0u);
  EXPECT_EQ(s.freed_queues[1].qid, 1u);
  EXPECT_EQ(s.freed_queues[1].cntlid, 1u);
  EXPECT_EQ(s.freed_queues[1].counters.writes_in_capsule_bytes, 12288u);
  EXPECT_EQ(s.totals.writes_in_capsule, 2u) << "totals keep freed queues";
  EXPECT_EQ(s.controllers_freed, 1u);
  EXPECT_EQ(s.disconnections, 2u);
}

TEST(StatsRegistryTest, KeepsOnlyTheMostRecentFreed) {
  StatsRegistry reg;
  StatusCounters statuses;
  std::vector<std::unique_ptr<QueueCounters>> qs;
  for (uint16_t i = 0; i < kFreedStatsKept + 5; ++i) {
    qs.push_back(std::make_unique<QueueCounters>());
    reg.add_queue(qs.back().get(), queue_info(i));
    reg.add_controller(i, "nqn.host");
    reg.remove_controller(i);
    reg.remove_queue(qs.back().get());
  }
  TargetStats s = reg.snapshot(statuses);
  ASSERT_EQ(s.freed_queues.size(), kFreedStatsKept);
  ASSERT_EQ(s.freed_controllers.size(), kFreedStatsKept);
  EXPECT_EQ(s.freed_queues.front().qid, 5u) << "oldest dropped first";
  EXPECT_EQ(s.freed_controllers.back().cntlid, kFreedStatsKept + 4);
  EXPECT_EQ(s.controllers_freed, kFreedStatsKept + 5);
}

// Inline send: each queue's outcome and response counters, live and after teardown.
QueueStats inline_info(uint16_t qid, bool fallback) {
  QueueStats q = queue_info(qid);
  q.requested_max_inline_data = fallback ? 4096 : 16;
  q.granted_max_inline_data = 16;
  q.usable_max_inline_data = fallback ? 0 : 16;
  q.inline_fallback = fallback;
  return q;
}

TEST(StatsRegistryTest, LiveQueueShowsItsResponseCounters) {
  StatsRegistry reg;
  StatusCounters statuses;
  QueueCounters counters;
  reg.add_queue(&counters, inline_info(1, false));
  counters.responses_inline.add(5);
  counters.responses_by_reference.add(2);
  TargetStats s = reg.snapshot(statuses);
  ASSERT_EQ(s.queues.size(), 1u);
  EXPECT_EQ(s.queues[0].counters.responses_inline, 5u);
  EXPECT_EQ(s.queues[0].counters.responses_by_reference, 2u);
  EXPECT_EQ(s.queues[0].usable_max_inline_data, 16u);
  EXPECT_EQ(s.totals.responses_inline, 5u);
  EXPECT_EQ(s.totals.responses_by_reference, 2u);
  reg.remove_queue(&counters);
}

TEST(StatsRegistryTest, FreedQueueKeepsItsInlineSendOutcomeAndResponseCounters) {
  StatsRegistry reg;
  StatusCounters statuses;
  QueueCounters admin, io;
  reg.add_queue(&admin, inline_info(0, false));
  reg.add_queue(&io, inline_info(1, true));
  admin.responses_inline.add(3);
  io.responses_by_reference.add(7);
  reg.remove_queue(&admin);
  reg.remove_queue(&io);
  TargetStats s = reg.snapshot(statuses);
  ASSERT_EQ(s.freed_queues.size(), 2u);
  EXPECT_FALSE(s.freed_queues[0].inline_fallback);
  EXPECT_EQ(s.freed_queues[0].counters.responses_inline, 3u);
  EXPECT_EQ(s.freed_queues[0].counters.responses_by_reference, 0u);
  EXPECT_TRUE(s.freed_queues[1].inline_fallback);
  EXPECT_EQ(s.freed_queues[1].requested_max_inline_data, 4096u);
  EXPECT_EQ(s.freed_queues[1].granted_max_inline_data, 16u);
  EXPECT_EQ(s.freed_queues[1].usable_max_inline_data, 0u);
  EXPECT_EQ(s.freed_queues[1].counters.responses_inline, 0u);
  EXPECT_EQ(s.freed_queues[1].counters.responses_by_reference, 7u);
  EXPECT_EQ(s.totals.responses_inline, 3u) << "totals keep freed queues";
  EXPECT_EQ(s.totals.responses_by_reference, 7u);
}

// Registered memory and posted receives: what queues add at set-up and give back at teardown,
// with the peak kept for the report written at exit.
TEST(StatsRegistry, ResourcesAddUpAndKeepTheirPeak) {
  StatsRegistry reg;
  StatusCounters statuses;
  reg.add_resources(4096 + 8192, 3, 1);  // a queue before its Connect
  reg.add_resources(16 << 20, 1, 127);   // ... after it: data buffers, 127 receives
  reg.add_resources(8192, 2, 32);        // another queue
  reg.add_resources(-(4096 + 8192 + (16 << 20)), -4, -128);  // the first one torn down
  TargetStats s = reg.snapshot(statuses);
  EXPECT_EQ(s.resources.mr_bytes, 8192u);
  EXPECT_EQ(s.resources.mrs, 2u);
  EXPECT_EQ(s.resources.posted_receives, 32u);
  EXPECT_EQ(s.resources.mr_bytes_peak, 4096u + 8192u + (16u << 20) + 8192u);
  EXPECT_EQ(s.resources.posted_receives_peak, 160u);
}

}  // namespace
}  // namespace nvmf::target
