// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of host/slot_table: CID matching and slot reuse rules.
#include "host/slot_table.h"

#include <gtest/gtest.h>

namespace nvmf::host {
namespace {

proto::Cqe response(uint16_t cid, uint32_t dw0 = 0) {
  proto::Cqe c{};
  c.cid = cid;
  c.dw0 = dw0;
  return c;
}

TEST(SlotTable, HandsOutLowSlotsFirstAndRunsOut) {
  SlotTable t(3);
  EXPECT_EQ(*t.acquire(), 0);
  EXPECT_EQ(*t.acquire(), 1);
  EXPECT_EQ(*t.acquire(), 2);
  EXPECT_FALSE(t.acquire().has_value());
  EXPECT_EQ(t.free_count(), 0);
}

TEST(SlotTable, NeedsBothResponseAndSendCompletion) {
  SlotTable t(2);
  uint16_t s = *t.acquire();
  EXPECT_TRUE(t.on_response(response(s, 42)));  // the response may come first
  EXPECT_FALSE(t.done(s));
  EXPECT_TRUE(t.on_send_complete(s));
  EXPECT_TRUE(t.done(s));
  EXPECT_EQ(t.release(s).dw0, 42u);
  EXPECT_EQ(t.free_count(), 2);
}

TEST(SlotTable, RejectsUnknownAndDuplicateCids) {
  SlotTable t(2);
  EXPECT_FALSE(t.on_response(response(0)));  // not in flight
  EXPECT_FALSE(t.on_response(response(7)));  // out of range
  uint16_t s = *t.acquire();
  EXPECT_TRUE(t.on_response(response(s)));
  EXPECT_FALSE(t.on_response(response(s)));  // answered twice
  EXPECT_TRUE(t.on_send_complete(s));
  EXPECT_FALSE(t.on_send_complete(s));
  EXPECT_FALSE(t.on_send_complete(1));  // never acquired
}

TEST(SlotTable, AbandonedSlotIsReused) {
  SlotTable t(1);
  uint16_t s = *t.acquire();
  t.abandon(s);
  EXPECT_EQ(*t.acquire(), s);
  EXPECT_FALSE(t.done(s));  // state reset on acquire
}

// Found by host_response_fuzzer: a released slot still read as done(), so a caller that asked
// again could release it twice, putting it on the free list twice (handed out to two commands,
// and the list written past its end). Released, abandoned again or out of range: nothing moves.
TEST(SlotTable, AReleasedSlotIsNotDoneAndCannotBeFreedTwice) {
  SlotTable t(2);
  uint16_t s = *t.acquire();
  ASSERT_TRUE(t.on_send_complete(s));
  ASSERT_TRUE(t.on_response(response(s, 9)));
  ASSERT_TRUE(t.done(s));
  EXPECT_EQ(t.release(s).dw0, 9u);
  EXPECT_FALSE(t.done(s)) << "released";
  EXPECT_EQ(t.release(s).dw0, 0u) << "a second release changes nothing";
  t.abandon(s);
  t.abandon(7);
  EXPECT_EQ(t.free_count(), 2);
  uint16_t a = *t.acquire();
  uint16_t b = *t.acquire();
  EXPECT_NE(a, b) << "one slot handed out twice";
  EXPECT_FALSE(t.acquire().has_value());
  EXPECT_FALSE(t.done(9)) << "out of range";
}

}  // namespace
}  // namespace nvmf::host
