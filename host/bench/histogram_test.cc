// SPDX-License-Identifier: BSD-3-Clause
// Tests of the log-linear latency histogram: bucket layout, exact moments, percentiles.
#include "host/bench/histogram.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace nvmf::host {
namespace {

TEST(LatencyHistogram, BucketsAreContiguousAndCoverEveryValue) {
  EXPECT_EQ(LatencyHistogram::bucket_index(0), 0u);
  EXPECT_EQ(LatencyHistogram::bucket_index(127), 127u);
  EXPECT_EQ(LatencyHistogram::bucket_index(128), 128u);
  EXPECT_EQ(LatencyHistogram::bucket_index(129), 128u);  // width 2 from 128
  EXPECT_EQ(LatencyHistogram::bucket_index(130), 129u);
  EXPECT_EQ(LatencyHistogram::bucket_index(255), 191u);
  EXPECT_EQ(LatencyHistogram::bucket_index(256), 192u);
  EXPECT_EQ(LatencyHistogram::bucket_index(UINT64_MAX), LatencyHistogram::kBuckets - 1);
  for (size_t i = 0; i + 1 < LatencyHistogram::kBuckets; ++i) {
    ASSERT_EQ(LatencyHistogram::bucket_high(i) + 1, LatencyHistogram::bucket_low(i + 1)) << i;
    ASSERT_EQ(LatencyHistogram::bucket_index(LatencyHistogram::bucket_low(i)), i);
    ASSERT_EQ(LatencyHistogram::bucket_index(LatencyHistogram::bucket_high(i)), i);
  }
  EXPECT_EQ(LatencyHistogram::bucket_high(LatencyHistogram::kBuckets - 1), UINT64_MAX);
}

TEST(LatencyHistogram, BucketWidthIsAtMostOneSixtyFourthOfItsValue) {
  for (size_t i = 2 * LatencyHistogram::kSub; i < LatencyHistogram::kBuckets; ++i) {
    uint64_t low = LatencyHistogram::bucket_low(i);
    uint64_t width = LatencyHistogram::bucket_high(i) - low + 1;
    ASSERT_LE(width * 64, low) << i;
  }
}

TEST(LatencyHistogram, EmptyReportsZeros) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.mean(), 0);
  EXPECT_EQ(h.stddev(), 0);
  EXPECT_EQ(h.percentile(50), 0u);
}

TEST(LatencyHistogram, ExactMomentsOfKnownSamples) {
  LatencyHistogram h;
  for (uint64_t v : {2000u, 4000u, 4000u, 4000u, 5000u, 5000u, 7000u, 9000u}) h.record(v);
  EXPECT_EQ(h.count(), 8u);
  EXPECT_EQ(h.min(), 2000u);
  EXPECT_EQ(h.max(), 9000u);
  EXPECT_DOUBLE_EQ(h.mean(), 5000.0);
  // Sum of squared deviations 32e6; sample stddev sqrt(32e6 / 7).
  EXPECT_NEAR(h.stddev(), std::sqrt(32e6 / 7), 1e-6);
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 100; ++v) h.record(v);
  EXPECT_EQ(h.percentile(50), 50u);
  EXPECT_EQ(h.percentile(90), 90u);
  EXPECT_EQ(h.percentile(99), 99u);
  EXPECT_EQ(h.percentile(100), 100u);
  EXPECT_EQ(h.percentile(0.001), 1u);
}

TEST(LatencyHistogram, PercentilesWithinBucketErrorOfTheTrueRank) {
  // 100000 uniform samples in [100 us, 1100 us): the true p-th percentile is 100 us + p * 10 us.
  LatencyHistogram h;
  std::mt19937_64 rng(7);
  std::vector<uint64_t> all;
  for (int i = 0; i < 100000; ++i) {
    uint64_t v = 100000 + rng() % 1000000;
    h.record(v);
    all.push_back(v);
  }
  std::sort(all.begin(), all.end());
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    uint64_t truth = all[static_cast<size_t>(std::ceil(p / 100 * all.size())) - 1];
    uint64_t got = h.percentile(p);
    EXPECT_NEAR(static_cast<double>(got), static_cast<double>(truth), truth / 128.0 + 1) << p;
  }
}

TEST(LatencyHistogram, PercentileIsClampedToMinAndMax) {
  LatencyHistogram h;
  h.record(1000003);  // alone in a bucket 8192 wide: the midpoint would exceed it
  EXPECT_EQ(h.percentile(50), 1000003u);
  EXPECT_EQ(h.percentile(99.99), 1000003u);
}

TEST(LatencyHistogram, MergeEqualsRecordingEverythingInOne) {
  LatencyHistogram a, b, all;
  for (uint64_t v = 1000; v < 50000; v += 7) {
    ((v / 7) % 3 == 0 ? a : b).record(v);
    all.record(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_NEAR(a.mean(), all.mean(), 1e-6);
  EXPECT_NEAR(a.stddev(), all.stddev(), 1e-6);
  for (double p : {1.0, 50.0, 99.9}) EXPECT_EQ(a.percentile(p), all.percentile(p));
  LatencyHistogram empty;
  a.merge(empty);
  EXPECT_EQ(a.count(), all.count());
  empty.merge(all);
  EXPECT_EQ(empty.percentile(50), all.percentile(50));
}

TEST(LatencyHistogram, ResetForgetsEverything) {
  LatencyHistogram h;
  h.record(5);
  h.reset();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.percentile(50), 0u);
}

}  // namespace
}  // namespace nvmf::host
