// SPDX-License-Identifier: BSD-3-Clause
// StallWatch: when a stall starts, when progress or an empty send queue ends it.
#include "target/stall_watch.h"

#include <gtest/gtest.h>

namespace nvmf::target {
namespace {

using Clock = StallWatch::Clock;
using std::chrono::seconds;

TEST(StallWatchTest, NothingOutstandingIsNoStall) {
  StallWatch w;
  const Clock::time_point t0{};
  EXPECT_FALSE(w.observe(0, 0, t0).has_value());
  EXPECT_FALSE(w.observe(0, 5, t0 + seconds(60)).has_value());
}

TEST(StallWatchTest, AStallStartsAtTheFirstLookWithoutProgressAndLasts) {
  StallWatch w;
  const Clock::time_point t0{};
  EXPECT_EQ(w.observe(3, 10, t0), t0);
  EXPECT_EQ(w.observe(3, 10, t0 + seconds(5)), t0);
  EXPECT_EQ(w.observe(7, 10, t0 + seconds(40)), t0) << "more work posted is no progress";
}

TEST(StallWatchTest, ACompletionStartsANewStallAndAnEmptyQueueEndsIt) {
  StallWatch w;
  const Clock::time_point t0{};
  EXPECT_EQ(w.observe(2, 1, t0), t0);
  EXPECT_EQ(w.observe(2, 2, t0 + seconds(4)), t0 + seconds(4));
  EXPECT_EQ(w.observe(2, 2, t0 + seconds(9)), t0 + seconds(4));
  EXPECT_FALSE(w.observe(0, 4, t0 + seconds(10)).has_value());
  EXPECT_EQ(w.observe(1, 4, t0 + seconds(11)), t0 + seconds(11))
      << "work posted after an empty queue: a fresh start, not the old stall";
}

}  // namespace
}  // namespace nvmf::target
