// SPDX-License-Identifier: BSD-3-Clause
// The request state table, the per-state counters and the credit / FIFO bookkeeping that make a
// request wait in order for a queue resource.
#include "target/request_state.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "target/counters.h"
#include "target/credits.h"
#include "target/stats_registry.h"

namespace nvmf::target {
namespace {

using S = RequestState;

std::vector<S> all_states() {
  std::vector<S> v;
  for (size_t i = 0; i < kRequestStateCount; ++i) v.push_back(static_cast<S>(i));
  return v;
}

TEST(RequestStateTest, NamesAreDistinctAndKnown) {
  std::set<std::string> names;
  for (S s : all_states()) {
    std::string n(request_state_name(s));
    EXPECT_NE(n, "unknown") << static_cast<int>(s);
    names.insert(n);
  }
  EXPECT_EQ(names.size(), kRequestStateCount);
  EXPECT_EQ(request_state_name(S::kWaitingForReadCredit), "waiting_for_read_credit");
  EXPECT_EQ(request_state_name(S::kTransferringToHost), "transferring_to_host");
}

// Exactly the moves of the picture in request_state.h, nothing else.
TEST(RequestStateTest, TheTableHasExactlyTheDocumentedMoves) {
  const std::set<std::pair<S, S>> allowed = {
      {S::kDone, S::kNew},
      // The processor's decisions, from new, ready to execute and executing.
      {S::kNew, S::kWaitingForReadCredit},
      {S::kNew, S::kExecuting},
      {S::kNew, S::kHeld},
      {S::kNew, S::kReadyToComplete},
      {S::kNew, S::kWaitingForBuffer},
      {S::kWaitingForBuffer, S::kWaitingForReadCredit},
      {S::kWaitingForBuffer, S::kExecuting},
      {S::kWaitingForBuffer, S::kHeld},
      {S::kWaitingForBuffer, S::kReadyToComplete},
      {S::kReadyToExecute, S::kWaitingForReadCredit},
      {S::kReadyToExecute, S::kExecuting},
      {S::kReadyToExecute, S::kHeld},
      {S::kReadyToExecute, S::kReadyToComplete},
      {S::kExecuting, S::kWaitingForReadCredit},
      {S::kExecuting, S::kExecuting},
      {S::kExecuting, S::kHeld},
      {S::kExecuting, S::kReadyToComplete},
      {S::kWaitingForReadCredit, S::kTransferringFromHost},
      {S::kTransferringFromHost, S::kReadyToExecute},
      {S::kHeld, S::kReadyToComplete},
      {S::kReadyToComplete, S::kTransferringToHost},
      {S::kReadyToComplete, S::kCompleting},
      {S::kTransferringToHost, S::kDone},
      {S::kCompleting, S::kDone},
  };
  for (S from : all_states()) {
    for (S to : all_states()) {
      EXPECT_EQ(transition_allowed(from, to), allowed.count({from, to}) == 1)
          << request_state_name(from) << " -> " << request_state_name(to);
    }
  }
}

TEST(RequestStateTest, NoRequestSkipsItsTransferOrItsResponse) {
  // A READ cannot be posted before its credit was granted, a response cannot be reused as a
  // free slot before its SEND completed, and a held AER cannot be freed without a response.
  EXPECT_FALSE(transition_allowed(S::kNew, S::kTransferringFromHost));
  EXPECT_FALSE(transition_allowed(S::kNew, S::kCompleting));
  EXPECT_FALSE(transition_allowed(S::kReadyToComplete, S::kDone));
  EXPECT_FALSE(transition_allowed(S::kHeld, S::kDone));
  EXPECT_FALSE(transition_allowed(S::kDone, S::kDone));
  EXPECT_FALSE(transition_allowed(S::kTransferringFromHost, S::kReadyToComplete));
  EXPECT_FALSE(transition_allowed(S::kDone, S::kWaitingForBuffer)) << "only a command waits";
  EXPECT_FALSE(transition_allowed(S::kWaitingForBuffer, S::kDone));
}

TEST(RequestStateTest, CountMoveKeepsLevelsAndEntries) {
  QueueCounters c;
  c.state_now[static_cast<size_t>(S::kDone)].add(4);  // four free slots
  c.count_move(S::kDone, S::kNew);
  c.count_move(S::kNew, S::kWaitingForReadCredit);
  c.count_move(S::kDone, S::kNew);
  CounterSnapshot s = c.snapshot();
  EXPECT_EQ(s.state_now[static_cast<size_t>(S::kDone)], 2u);
  EXPECT_EQ(s.state_now[static_cast<size_t>(S::kNew)], 1u);
  EXPECT_EQ(s.state_now[static_cast<size_t>(S::kWaitingForReadCredit)], 1u);
  EXPECT_EQ(s.state_entered[static_cast<size_t>(S::kNew)], 2u);
  EXPECT_EQ(s.state_entered[static_cast<size_t>(S::kWaitingForReadCredit)], 1u);
  EXPECT_EQ(s.state_entered[static_cast<size_t>(S::kDone)], 0u);
}

TEST(RequestStateTest, FreedQueuesKeepTheirLevelsButTotalsDoNot) {
  StatsRegistry reg;
  StatusCounters statuses;
  QueueCounters c;
  c.state_now[static_cast<size_t>(S::kDone)].add(3);
  c.count_move(S::kDone, S::kNew);
  c.count_move(S::kNew, S::kExecuting);
  c.rdma_reads_in_flight_max.set(7);
  c.rdma_read_waits.add(2);
  QueueStats info;
  info.qid = 1;
  reg.add_queue(&c, info);
  EXPECT_EQ(reg.snapshot(statuses).totals.state_now[static_cast<size_t>(S::kExecuting)], 1u);
  reg.remove_queue(&c);
  TargetStats t = reg.snapshot(statuses);
  ASSERT_EQ(t.freed_queues.size(), 1u);
  EXPECT_EQ(t.freed_queues[0].counters.state_now[static_cast<size_t>(S::kExecuting)], 1u);
  EXPECT_EQ(t.totals.state_now[static_cast<size_t>(S::kExecuting)], 0u);
  EXPECT_EQ(t.totals.state_entered[static_cast<size_t>(S::kExecuting)], 1u);
  EXPECT_EQ(t.totals.rdma_reads_in_flight_max, 7u);
  EXPECT_EQ(t.totals.rdma_read_waits, 2u);
}

TEST(RequestStateTest, SnapshotSumTakesTheHighestReadDepthSeen) {
  CounterSnapshot a, b;
  a.rdma_reads_in_flight_max = 4;
  a.rdma_read_waits = 10;
  b.rdma_reads_in_flight_max = 16;
  b.rdma_read_waits = 1;
  a += b;
  EXPECT_EQ(a.rdma_reads_in_flight_max, 16u);
  EXPECT_EQ(a.rdma_read_waits, 11u);
}

TEST(CreditsTest, TakeUpToTheLimitThenRefuse) {
  Credits c;
  c.set_limit(4);
  EXPECT_TRUE(c.take(3));
  EXPECT_FALSE(c.take(2)) << "3 + 2 > 4";
  EXPECT_EQ(c.in_use(), 3u);
  EXPECT_TRUE(c.take(1));
  EXPECT_FALSE(c.available(1));
  c.give_back(2);
  EXPECT_EQ(c.in_use(), 2u);
  EXPECT_TRUE(c.available(2));
  EXPECT_EQ(c.high_water(), 4u);
}

TEST(CreditsTest, GivingBackMoreThanInUseStopsAtZero) {
  Credits c;
  c.set_limit(2);
  ASSERT_TRUE(c.take(1));
  c.give_back(5);
  EXPECT_EQ(c.in_use(), 0u);
  EXPECT_TRUE(c.take(2));
  EXPECT_FALSE(c.take(1));
}

TEST(CreditsTest, ZeroLimitRefusesEverything) {
  Credits c;
  EXPECT_FALSE(c.take(1));
  EXPECT_EQ(c.high_water(), 0u);
}

TEST(SlotFifoTest, FirstInFirstOutAcrossTheWrap) {
  SlotFifo f;
  f.reset(3);
  EXPECT_TRUE(f.empty());
  EXPECT_TRUE(f.push(7));
  EXPECT_TRUE(f.push(8));
  EXPECT_TRUE(f.push(9));
  EXPECT_FALSE(f.push(10)) << "full at capacity";
  EXPECT_EQ(f.front(), 7u);
  f.pop();
  EXPECT_TRUE(f.push(10));  // wraps
  std::vector<uint32_t> out;
  while (!f.empty()) {
    out.push_back(f.front());
    f.pop();
  }
  EXPECT_EQ(out, (std::vector<uint32_t>{8, 9, 10}));
  f.reset(2);
  EXPECT_EQ(f.size(), 0u);
}

}  // namespace
}  // namespace nvmf::target
