// SPDX-License-Identifier: BSD-3-Clause
#include "target/stall_report.h"

#include <gtest/gtest.h>

namespace nvmf::target {
namespace {

using std::chrono::milliseconds;
using Verdict = IdleWatch::Verdict;

TEST(IdleWatch, ReportsOutstandingCommandsWithoutEventsAfterTheThreshold) {
  IdleWatch w(milliseconds(1000));
  const auto t0 = IdleWatch::Clock::time_point{} + std::chrono::hours(1);
  EXPECT_EQ(w.observe(5, 3, t0), Verdict::kQuiet);
  EXPECT_EQ(w.observe(5, 3, t0 + milliseconds(999)), Verdict::kQuiet);
  EXPECT_EQ(w.observe(5, 3, t0 + milliseconds(1000)), Verdict::kStalled);
  EXPECT_EQ(w.idle(), milliseconds(1000));
  EXPECT_EQ(w.stalls(), 1u);
  // The same stall again at 2 s, 4 s, 8 s of idleness, not at every look.
  EXPECT_EQ(w.observe(5, 3, t0 + milliseconds(1500)), Verdict::kQuiet);
  EXPECT_EQ(w.observe(5, 3, t0 + milliseconds(2000)), Verdict::kStalled);
  EXPECT_EQ(w.observe(5, 3, t0 + milliseconds(3999)), Verdict::kQuiet);
  EXPECT_EQ(w.observe(5, 3, t0 + milliseconds(4000)), Verdict::kStalled);
  EXPECT_EQ(w.observe(5, 3, t0 + milliseconds(8000)), Verdict::kStalled);
  EXPECT_EQ(w.stalls(), 1u);  // one stall, four lines
  // A completion ends it: one kResumed with its length, from the last event.
  EXPECT_EQ(w.observe(6, 3, t0 + milliseconds(8200)), Verdict::kResumed);
  EXPECT_EQ(w.stalled_for(), milliseconds(8200));
  EXPECT_EQ(w.observe(6, 3, t0 + milliseconds(8300)), Verdict::kQuiet);
  // The next stall is counted again, one threshold after the last event.
  EXPECT_EQ(w.observe(6, 3, t0 + milliseconds(9199)), Verdict::kQuiet);
  EXPECT_EQ(w.observe(6, 3, t0 + milliseconds(9200)), Verdict::kStalled);
  EXPECT_EQ(w.stalls(), 2u);
}

TEST(IdleWatch, NothingOutstandingIsNeverAStall) {
  IdleWatch w(milliseconds(100));
  const auto t0 = IdleWatch::Clock::time_point{} + std::chrono::hours(1);
  EXPECT_EQ(w.observe(1, 0, t0), Verdict::kQuiet);
  EXPECT_EQ(w.observe(1, 0, t0 + std::chrono::hours(2)), Verdict::kQuiet);
  // Outstanding from now: the idle time counts from the last look that saw none.
  const auto t1 = t0 + std::chrono::hours(2);
  EXPECT_EQ(w.observe(1, 1, t1 + milliseconds(99)), Verdict::kQuiet);
  EXPECT_EQ(w.observe(1, 1, t1 + milliseconds(100)), Verdict::kStalled);
  EXPECT_EQ(w.stalls(), 1u);
}

TEST(IdleWatch, EventsKeepItQuietAndZeroThresholdTurnsItOff) {
  IdleWatch w(milliseconds(100));
  const auto t0 = IdleWatch::Clock::time_point{} + std::chrono::hours(1);
  for (uint64_t i = 0; i < 100; ++i) {
    EXPECT_EQ(w.observe(i, 32, t0 + milliseconds(60 * i)), Verdict::kQuiet) << i;
  }
  EXPECT_EQ(w.stalls(), 0u);
  IdleWatch off(milliseconds(0));
  EXPECT_FALSE(off.enabled());
  EXPECT_EQ(off.observe(1, 5, t0), Verdict::kQuiet);
  EXPECT_EQ(off.observe(1, 5, t0 + std::chrono::hours(1)), Verdict::kQuiet);
  EXPECT_TRUE(w.enabled());
}

TEST(IdleWatch, LooksAtAQuarterOfTheThresholdAndRepeatsAtMostEveryMinute) {
  EXPECT_EQ(IdleWatch(milliseconds(1000)).check_interval(), milliseconds(250));
  EXPECT_EQ(IdleWatch(milliseconds(12)).check_interval(), milliseconds(10));
  IdleWatch w(milliseconds(40000));
  const auto t0 = IdleWatch::Clock::time_point{} + std::chrono::hours(1);
  EXPECT_EQ(w.observe(1, 1, t0), Verdict::kQuiet);
  EXPECT_EQ(w.observe(1, 1, t0 + milliseconds(40000)), Verdict::kStalled);
  EXPECT_EQ(w.observe(1, 1, t0 + milliseconds(80000)), Verdict::kStalled);
  // 160 s would double the gap to 80 s: capped, the next line is 60 s later.
  EXPECT_EQ(w.observe(1, 1, t0 + milliseconds(139999)), Verdict::kQuiet);
  EXPECT_EQ(w.observe(1, 1, t0 + milliseconds(140000)), Verdict::kStalled);
  EXPECT_EQ(w.observe(1, 1, t0 + milliseconds(200000)), Verdict::kStalled);
}

TEST(DescribeStall, NamesEveryStateAndResourceARequestCanWaitFor) {
  StallSnapshot s;
  s.outstanding = 20;
  s.states[static_cast<size_t>(RequestState::kDone)] = 108;  // free slots: not listed
  s.states[static_cast<size_t>(RequestState::kTransferringFromHost)] = 16;
  s.states[static_cast<size_t>(RequestState::kWaitingForReadCredit)] = 4;
  s.receives_posted = 108;
  s.receive_depth = 128;
  s.send_queue_in_use = 16;
  s.send_queue_depth = 256;
  s.reads_in_flight = 16;
  s.read_depth = 16;
  s.reads_waiting = 4;
  s.shared_pool = true;
  s.pool_free = 236;
  s.pool_chunks = 256;
  s.cq_armed = true;
  s.qp_queried = true;
  s.qp_state = 3;
  s.timeout = 14;
  s.retry_cnt = 7;
  s.rnr_retry = 7;
  s.min_rnr_timer = 12;
  s.max_rd_atomic = 16;
  s.max_dest_rd_atomic = 128;
  EXPECT_EQ(describe_stall(s, milliseconds(1250)),
            "20 commands outstanding, idle for 1250 ms: states waiting_for_read_credit=4 "
            "transferring_from_host=16; receives posted 108 of 128, capsules waiting for a slot "
            "0; send queue 16 of 256 (0 responses waiting); RDMA READs in flight 16 of 16 (4 "
            "waiting); backend operations 0; shared buffers 236 free of 256 (0 waiting); CQ "
            "armed; QP RTS timeout 14 (67 ms) retry_cnt 7 rnr_retry 7 min_rnr_timer 12 "
            "max_rd_atomic 16 max_dest_rd_atomic 128");
  s.shared_pool = false;
  s.qp_queried = false;
  s.cq_armed = false;
  EXPECT_EQ(describe_stall(s, milliseconds(3)).find("shared buffers"), std::string::npos);
  EXPECT_NE(describe_stall(s, milliseconds(3)).find("CQ not armed"), std::string::npos);
  EXPECT_EQ(describe_stall(s, milliseconds(3)).find("QP "), std::string::npos);
}

// With an SRQ the queue posts no receives of its own: the line shows the SRQ's posted receives
// and the capsules the queue holds (a CI stall WARN once showed "receives posted 4294967167 of
// 64": the per-queue count went down for every SRQ receive and wrapped around).
TEST(DescribeStall, WithAnSrqShowsItsReceivesAndTheCapsulesTheQueueHolds) {
  StallSnapshot s;
  s.outstanding = 22;
  s.states[static_cast<size_t>(RequestState::kWaitingForBuffer)] = 19;
  s.states[static_cast<size_t>(RequestState::kCompleting)] = 3;
  s.srq = true;
  s.receives_posted = 4074;
  s.receive_depth = 4096;
  s.capsules_held = 22;
  s.capsule_limit = 64;
  const std::string line = describe_stall(s, milliseconds(1018));
  EXPECT_NE(line.find("states waiting_for_buffer=19 completing=3; SRQ receives posted 4074 of "
                      "4096, capsules held 22 of 64, capsules waiting for a slot 0;"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("; receives posted"), std::string::npos) << line;
}

}  // namespace
TEST(DescribeStall, TheQueueWarnNamesTheOldestTransfer) {
  StallSnapshot s;
  s.outstanding = 2;
  s.states[static_cast<size_t>(RequestState::kTransferringFromHost)] = 2;
  s.transfers = 2;
  s.has_oldest_transfer = true;
  s.oldest_transfer_state = RequestState::kTransferringFromHost;
  s.oldest_transfer_cid = 0x1a;
  s.oldest_transfer_bytes = 65536;
  s.oldest_transfer_age = milliseconds(2100);
  const std::string line = describe_stall(s, milliseconds(2000));
  EXPECT_NE(line.find("; oldest transfer: cid 0x001a in transferring_from_host for 2100 ms (RDMA "
                      "READ of 65536 bytes)"),
            std::string::npos)
      << line;
}

TEST(DescribeTransferStall, NamesTheCommandItsStateAndTheWorkWithoutACompletion) {
  StallSnapshot s;
  s.outstanding = 12;
  s.states[static_cast<size_t>(RequestState::kTransferringFromHost)] = 3;
  s.states[static_cast<size_t>(RequestState::kNew)] = 9;
  s.transfers = 3;
  s.has_oldest_transfer = true;
  s.oldest_transfer_state = RequestState::kTransferringFromHost;
  s.oldest_transfer_cid = 0xbeef;
  s.oldest_transfer_bytes = 65536;
  s.oldest_transfer_age = milliseconds(1250);
  s.receive_depth = 128;
  const std::string line = describe_transfer_stall(s);
  EXPECT_EQ(line.rfind("cid 0xbeef in transferring_from_host for 1250 ms: its RDMA READ of 65536 "
                       "bytes has no work completion yet (3 requests in transfer states); 12 "
                       "commands outstanding: states new=9 transferring_from_host=3; receives "
                       "posted 0 of 128",
                       0),
            0u)
      << line;
  s.oldest_transfer_state = RequestState::kTransferringToHost;
  s.oldest_transfer_bytes = 4096;
  EXPECT_NE(describe_transfer_stall(s).find("its RDMA WRITE of 4096 bytes and response SEND has"),
            std::string::npos);
  s.oldest_transfer_state = RequestState::kCompleting;
  s.oldest_transfer_bytes = 0;
  EXPECT_NE(describe_transfer_stall(s).find("for 1250 ms: its response SEND has no work"),
            std::string::npos);
}

TEST(TransferState, OnlyStatesWithWorkPostedOnTheQp) {
  int n = 0;
  for (size_t i = 0; i < kRequestStateCount; ++i)
    n += is_transfer_state(static_cast<RequestState>(i));
  EXPECT_EQ(n, 3);
  EXPECT_TRUE(is_transfer_state(RequestState::kTransferringFromHost));
  EXPECT_TRUE(is_transfer_state(RequestState::kTransferringToHost));
  EXPECT_TRUE(is_transfer_state(RequestState::kCompleting));
  EXPECT_FALSE(is_transfer_state(RequestState::kWaitingForReadCredit));
  EXPECT_FALSE(is_transfer_state(RequestState::kExecuting));
}

// The watch of the oldest transfer is an IdleWatch fed the oldest request's ticket: other
// requests coming and going around it do not reset it, its own completion does.
TEST(IdleWatch, FedTheOldestTransferTicketItSeesOneStuckRequestAmongBusyOnes) {
  IdleWatch w(milliseconds(1000));
  const auto t0 = IdleWatch::Clock::time_point{} + std::chrono::hours(1);
  // Ticket 7 stays the oldest while newer tickets complete around it (the count moves).
  EXPECT_EQ(w.observe(7, 4, t0), Verdict::kQuiet);
  EXPECT_EQ(w.observe(7, 9, t0 + milliseconds(500)), Verdict::kQuiet);
  EXPECT_EQ(w.observe(7, 2, t0 + milliseconds(1000)), Verdict::kStalled);
  // It completes: the next oldest (ticket 12) starts its own clock.
  EXPECT_EQ(w.observe(12, 1, t0 + milliseconds(1100)), Verdict::kResumed);
  EXPECT_EQ(w.stalled_for(), milliseconds(1100));
  EXPECT_EQ(w.observe(12, 1, t0 + milliseconds(2099)), Verdict::kQuiet);
}

}  // namespace nvmf::target
