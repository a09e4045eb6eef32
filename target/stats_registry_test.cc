// Unit tests for StatsRegistry: per-queue inline-send fields and response counters survive the
// queue's teardown (closed_queues, bounded) and add up in the totals.
#include "target/stats_registry.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "target/counters.h"

namespace nvmf::target {
namespace {

QueueStats info(uint16_t qid, bool fallback) {
  QueueStats q;
  q.qid = qid;
  q.queue_size = 32;
  q.peer = "10.99.0.2:5000" + std::to_string(qid);
  q.requested_max_inline_data = fallback ? 4096 : 16;
  q.granted_max_inline_data = 16;
  q.usable_max_inline_data = fallback ? 0 : 16;
  q.inline_fallback = fallback;
  return q;
}

TEST(StatsRegistryTest, LiveQueueShowsItsResponseCounters) {
  StatsRegistry registry;
  StatusCounters statuses;
  QueueCounters counters;
  registry.add_queue(&counters, info(1, false));
  counters.responses_inline.add(5);
  counters.responses_by_reference.add(2);
  TargetStats s = registry.snapshot(statuses);
  ASSERT_EQ(s.queues.size(), 1u);
  EXPECT_EQ(s.queues[0].counters.responses_inline, 5u);
  EXPECT_EQ(s.queues[0].counters.responses_by_reference, 2u);
  EXPECT_EQ(s.queues[0].usable_max_inline_data, 16u);
  EXPECT_EQ(s.totals.responses_inline, 5u);
  EXPECT_EQ(s.totals.responses_by_reference, 2u);
  EXPECT_TRUE(s.closed_queues.empty());
  registry.remove_queue(&counters);
}

TEST(StatsRegistryTest, ClosedQueueKeepsItsInlineSendOutcomeAndCounters) {
  StatsRegistry registry;
  StatusCounters statuses;
  QueueCounters admin, io;
  registry.add_queue(&admin, info(0, false));
  registry.add_queue(&io, info(1, true));
  admin.responses_inline.add(3);
  io.responses_by_reference.add(7);
  registry.remove_queue(&admin);
  registry.remove_queue(&io);
  TargetStats s = registry.snapshot(statuses);
  EXPECT_TRUE(s.queues.empty());
  ASSERT_EQ(s.closed_queues.size(), 2u);
  EXPECT_EQ(s.closed_queues[0].qid, 0);
  EXPECT_FALSE(s.closed_queues[0].inline_fallback);
  EXPECT_EQ(s.closed_queues[0].counters.responses_inline, 3u);
  EXPECT_EQ(s.closed_queues[0].counters.responses_by_reference, 0u);
  EXPECT_EQ(s.closed_queues[1].qid, 1);
  EXPECT_TRUE(s.closed_queues[1].inline_fallback);
  EXPECT_EQ(s.closed_queues[1].requested_max_inline_data, 4096u);
  EXPECT_EQ(s.closed_queues[1].granted_max_inline_data, 16u);
  EXPECT_EQ(s.closed_queues[1].usable_max_inline_data, 0u);
  EXPECT_EQ(s.closed_queues[1].counters.responses_inline, 0u);
  EXPECT_EQ(s.closed_queues[1].counters.responses_by_reference, 7u);
  EXPECT_EQ(s.totals.responses_inline, 3u);
  EXPECT_EQ(s.totals.responses_by_reference, 7u);
  EXPECT_EQ(s.disconnections, 2u);
}

TEST(StatsRegistryTest, ClosedQueuesAreBoundedToTheMostRecent) {
  StatsRegistry registry;
  StatusCounters statuses;
  const size_t n = kMaxClosedQueues + 10;
  std::vector<std::unique_ptr<QueueCounters>> all;
  for (size_t i = 0; i < n; ++i) {
    all.push_back(std::make_unique<QueueCounters>());
    registry.add_queue(all.back().get(), info(static_cast<uint16_t>(i), false));
    all.back()->responses_inline.add(1);
    registry.remove_queue(all.back().get());
  }
  TargetStats s = registry.snapshot(statuses);
  ASSERT_EQ(s.closed_queues.size(), kMaxClosedQueues);
  EXPECT_EQ(s.closed_queues.front().qid, 10);  // the 10 oldest were dropped
  EXPECT_EQ(s.closed_queues.back().qid, n - 1);
  EXPECT_EQ(s.totals.responses_inline, n);  // totals keep every queue
}

}  // namespace
}  // namespace nvmf::target
