// SPDX-License-Identifier: BSD-3-Clause
// KeepAliveSchedule with an injected clock: the period is the interval whatever the Keep
// Alive's round trip (the heartbeat used to run late by one round trip per period).
#include "host/keep_alive_schedule.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace nvmf::host {
namespace {

using std::chrono::milliseconds;
using Clock = KeepAliveSchedule::Clock;

// Runs `rounds` Keep Alives, each taking `round_trip` from its deadline, and returns the time
// each one was sent, in milliseconds after `start`.
std::vector<int64_t> send_times(milliseconds interval, milliseconds round_trip, int rounds) {
  const Clock::time_point start{};  // the injected clock: time points from 0
  KeepAliveSchedule s(interval, start);
  std::vector<int64_t> sent;
  for (int i = 0; i < rounds; ++i) {
    Clock::time_point now = s.deadline();  // the thread wakes at the deadline and sends
    sent.push_back(std::chrono::duration_cast<milliseconds>(now - start).count());
    s.advance(now + round_trip);  // the Keep Alive completes one round trip later
  }
  return sent;
}

TEST(KeepAliveScheduleTest, PeriodIsTheIntervalWhateverTheRoundTrip) {
  // KATO 60 s: every 30 s. A 1.5 s round trip used to make it every 31.5 s.
  for (int rtt_ms : {0, 1, 300, 1500, 29999}) {
    std::vector<int64_t> sent = send_times(milliseconds(30000), milliseconds(rtt_ms), 10);
    ASSERT_EQ(sent.size(), 10u);
    for (size_t i = 0; i < sent.size(); ++i) {
      EXPECT_EQ(sent[i], 30000 * static_cast<int64_t>(i + 1)) << "rtt " << rtt_ms << " round " << i;
    }
  }
}

TEST(KeepAliveScheduleTest, RoundTripLongerThanTheIntervalSendsAtOnceWithoutBurst) {
  const Clock::time_point start{};
  KeepAliveSchedule s(milliseconds(500), start);
  EXPECT_EQ(s.deadline(), start + milliseconds(500));
  // The first Keep Alive takes 1200 ms (a timeout, a slow emulator): the deadline at 1000 ms has
  // passed when it completes at 1700 ms, so the next is due at once, at 1700 ms, not at 1000.
  s.advance(start + milliseconds(1700));
  EXPECT_EQ(s.deadline(), start + milliseconds(1700));
  EXPECT_EQ(s.overruns(), 1u);
  // Then the schedule goes on every 500 ms from there.
  s.advance(start + milliseconds(1710));
  EXPECT_EQ(s.deadline(), start + milliseconds(2200));
  s.advance(start + milliseconds(2200));  // finishing exactly at the next deadline is on time
  EXPECT_EQ(s.deadline(), start + milliseconds(2700));
  EXPECT_EQ(s.overruns(), 1u);
}

TEST(KeepAliveScheduleTest, FirstDeadlineIsOneIntervalAfterStart) {
  const Clock::time_point start = Clock::time_point{} + milliseconds(12345);
  KeepAliveSchedule s(milliseconds(2500), start);
  EXPECT_EQ(s.deadline(), start + milliseconds(2500));
  EXPECT_EQ(s.interval(), milliseconds(2500));
  EXPECT_EQ(s.overruns(), 0u);
}

}  // namespace
}  // namespace nvmf::host
