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

}  // namespace
}  // namespace nvmf::target
