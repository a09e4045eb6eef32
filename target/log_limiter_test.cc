// Unit tests for LogLimiter: one line a second per key, with the count of lines refused.
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

TEST(LogLimiter, SuppressedNoteSaysHowMany) {
  EXPECT_EQ(suppressed_note(0), "");
  EXPECT_EQ(suppressed_note(3), " (3 more like it since the last such line not logged)");
}

}  // namespace
}  // namespace nvmf::target
