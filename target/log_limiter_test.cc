// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for LogLimiter: a burst of lines a second per key, with the count of lines refused.
#include "target/log_limiter.h"

#include <gtest/gtest.h>

#include <chrono>

namespace nvmf::target {
namespace {

using std::chrono::milliseconds;

TEST(LogLimiter, OneLinePerIntervalPerKeyWithTheCountRefused) {
  LogLimiter limiter;  // 1 s
  const LogLimiter::Clock::time_point t0 = LogLimiter::Clock::now();
  uint64_t suppressed = 99;
  EXPECT_TRUE(limiter.allow("cm reject 6", t0, &suppressed));
  EXPECT_EQ(suppressed, 0u);
  for (int i = 1; i <= 5; ++i)
    EXPECT_FALSE(limiter.allow("cm reject 6", t0 + milliseconds(100 * i)));
  // Another key is independent.
  EXPECT_TRUE(limiter.allow("connect refused 0x4182", t0 + milliseconds(500)));
  EXPECT_FALSE(limiter.allow("cm reject 6", t0 + milliseconds(999)));
  EXPECT_TRUE(limiter.allow("cm reject 6", t0 + milliseconds(1000), &suppressed));
  EXPECT_EQ(suppressed, 6u);
  EXPECT_FALSE(limiter.allow("cm reject 6", t0 + milliseconds(1500)));
  EXPECT_TRUE(limiter.allow("cm reject 6", t0 + milliseconds(2000), &suppressed));
  EXPECT_EQ(suppressed, 1u);
}

TEST(LogLimiter, BurstLinesPerIntervalThenTheCountRefused) {
  LogLimiter limiter(std::chrono::seconds(1), 3);
  const LogLimiter::Clock::time_point t0 = LogLimiter::Clock::now();
  uint64_t suppressed = 99;
  EXPECT_TRUE(limiter.allow("accepted", t0, &suppressed));
  EXPECT_EQ(suppressed, 0u);
  EXPECT_TRUE(limiter.allow("accepted", t0 + milliseconds(10)));
  EXPECT_TRUE(limiter.allow("accepted", t0 + milliseconds(20)));
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(limiter.allow("accepted", t0 + milliseconds(30 + i)));
  EXPECT_TRUE(limiter.allow("disconnected", t0 + milliseconds(500)));  // its own window
  EXPECT_FALSE(limiter.allow("accepted", t0 + milliseconds(999)));
  // The window opened by the first line ends 1 s later: 3 more, the first with the count.
  EXPECT_TRUE(limiter.allow("accepted", t0 + milliseconds(1000), &suppressed));
  EXPECT_EQ(suppressed, 101u);
  EXPECT_TRUE(limiter.allow("accepted", t0 + milliseconds(1001), &suppressed));
  EXPECT_EQ(suppressed, 0u);
  EXPECT_TRUE(limiter.allow("accepted", t0 + milliseconds(1002)));
  EXPECT_FALSE(limiter.allow("accepted", t0 + milliseconds(1003)));
}

TEST(LogLimiter, ConnectionLimiterAllowsItsBurstInOneSecond) {
  LogLimiter& limiter = connection_log_limiter();
  const LogLimiter::Clock::time_point t0 = LogLimiter::Clock::now() + std::chrono::hours(1);
  int allowed = 0;
  for (int i = 0; i < 1000; ++i) allowed += limiter.allow("test key", t0 + milliseconds(i % 900));
  EXPECT_EQ(allowed, static_cast<int>(kConnectionLogBurst));
  EXPECT_GE(kConnectionLogBurst, 9u * 3);  // an admin and 8 I/O queues from each of 3 hosts
}

TEST(LogLimiter, SuppressedNoteSaysHowMany) {
  EXPECT_EQ(suppressed_note(0), "");
  EXPECT_EQ(suppressed_note(3), " (3 more like it since the last such line not logged)");
}

}  // namespace
}  // namespace nvmf::target
