// SPDX-License-Identifier: BSD-3-Clause
// ReceiveTable: which SRQ receives are posted, which queue holds the others; SharedReceiveQueue
// refusing a device without SRQ (no device needed).
#include "target/shared_receive_queue.h"

#include <gtest/gtest.h>

#include <string>

#include "target/credits.h"

namespace nvmf::target {
namespace {

TEST(ReceiveTable, NothingPostedUntilPosted) {
  ReceiveTable t(4);
  EXPECT_EQ(t.count(), 4u);
  EXPECT_EQ(t.posted_now(), 0u);
  EXPECT_FALSE(t.consumed(0, 7)) << "a receive never posted cannot complete";
  for (uint32_t i = 0; i < 4; ++i) EXPECT_TRUE(t.posted(i));
  EXPECT_EQ(t.posted_now(), 4u);
}

TEST(ReceiveTable, ConsumedIsHeldByItsQpUntilPostedAgain) {
  ReceiveTable t(8);
  for (uint32_t i = 0; i < 8; ++i) ASSERT_TRUE(t.posted(i));
  EXPECT_TRUE(t.consumed(3, 17));
  EXPECT_TRUE(t.consumed(5, 17));
  EXPECT_TRUE(t.consumed(6, 42));
  EXPECT_EQ(t.posted_now(), 5u);
  EXPECT_EQ(t.posted_low(), 5u);
  EXPECT_EQ(t.held_by(17), (std::vector<uint32_t>{3, 5}));
  EXPECT_EQ(t.held_by(42), (std::vector<uint32_t>{6}));
  EXPECT_TRUE(t.held_by(99).empty());
  EXPECT_FALSE(t.is_posted(3));
  EXPECT_TRUE(t.posted(3));
  EXPECT_TRUE(t.is_posted(3));
  EXPECT_EQ(t.held_by(17), (std::vector<uint32_t>{5}));
  EXPECT_EQ(t.posted_now(), 6u);
  EXPECT_EQ(t.posted_low(), 5u) << "the low-water mark stays";
}

TEST(ReceiveTable, RefusesDoubleCompletionDoublePostAndBadIndex) {
  ReceiveTable t(2);
  ASSERT_TRUE(t.posted(0));
  EXPECT_FALSE(t.posted(0)) << "posted twice";
  EXPECT_FALSE(t.posted(2)) << "out of range";
  EXPECT_TRUE(t.consumed(0, 1));
  EXPECT_FALSE(t.consumed(0, 1)) << "completed twice";
  EXPECT_FALSE(t.consumed(0, 2)) << "held by another QP";
  EXPECT_FALSE(t.consumed(0xFFFFFFFFu, 1)) << "a corrupt wr_id";
  EXPECT_EQ(t.posted_now(), 0u);
  EXPECT_EQ(t.held_by(1), (std::vector<uint32_t>{0}));
}

// A flooding queue holds at most its limit; the rest of the SRQ stays posted for others. This is
// the accounting RdmaQueue does (Credits recv_held_ + ReceiveTable).
TEST(ReceiveTable, FloodingQueueIsCutAtItsLimitAndGivesEverythingBack) {
  constexpr uint32_t kDepth = 64;
  ReceiveTable t(kDepth);
  for (uint32_t i = 0; i < kDepth; ++i) ASSERT_TRUE(t.posted(i));
  Credits held;
  held.set_limit(1);  // before its Connect is accepted
  uint32_t next = 0;
  ASSERT_TRUE(t.consumed(next++, 5));
  EXPECT_TRUE(held.take(1));
  ASSERT_TRUE(t.consumed(next++, 5));
  EXPECT_FALSE(held.take(1)) << "a second capsule before the Connect's response";
  held.set_limit(16);  // Connect accepted, hsqsize 15
  for (int i = 0; i < 15; ++i) {
    ASSERT_TRUE(t.consumed(next++, 5));
    EXPECT_TRUE(held.take(1));
  }
  ASSERT_TRUE(t.consumed(next++, 5));
  EXPECT_FALSE(held.take(1)) << "capsule 17 with 16 held";
  EXPECT_EQ(t.posted_now(), kDepth - 18);
  // Teardown: everything it holds goes back.
  for (uint32_t i : t.held_by(5)) ASSERT_TRUE(t.posted(i));
  EXPECT_EQ(t.posted_now(), kDepth);
  EXPECT_TRUE(t.held_by(5).empty());
  EXPECT_EQ(t.posted_low(), kDepth - 18);
}

// The fallback to per-queue receives: a device without SRQ, or whose SRQ takes too few SGEs per
// receive, is refused with kUnavailable before any verb is called (the event loop then logs one
// WARN and every queue of the device posts its own receives).
TEST(SharedReceiveQueue, DeviceWithoutSrqIsUnavailable) {
  ibv_device_attr attr{};
  attr.max_srq = 0;
  attr.max_srq_wr = 4096;
  attr.max_srq_sge = 2;
  auto q = SharedReceiveQueue::create(nullptr, attr, 4096, 4096, 4096);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(q.status().to_string().find("max_srq 0"), std::string::npos) << q.status().to_string();
}

TEST(SharedReceiveQueue, TooFewSgesForInCapsuleDataIsUnavailable) {
  ibv_device_attr attr{};
  attr.max_srq = 1;
  attr.max_srq_wr = 4096;
  attr.max_srq_sge = 1;  // the SQE only: no room for the in-capsule area
  auto q = SharedReceiveQueue::create(nullptr, attr, 4096, 16384, 4096);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(q.status().to_string().find("takes 1 SGEs per receive, 2 needed"), std::string::npos)
      << q.status().to_string();
}

}  // namespace
}  // namespace nvmf::target
