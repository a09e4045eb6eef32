// SPDX-License-Identifier: BSD-3-Clause
// Log-linear latency histogram; see histogram.h.
#include "host/bench/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace nvmf::host {

size_t LatencyHistogram::bucket_index(uint64_t ns) {
  if (ns < 2 * kSub) return static_cast<size_t>(ns);
  int msb = 63 - std::countl_zero(ns);
  int shift = msb - kSubBits;  // >= 1
  return static_cast<size_t>(shift + 1) * kSub + static_cast<size_t>((ns >> shift) - kSub);
}

uint64_t LatencyHistogram::bucket_low(size_t index) {
  if (index < 2 * kSub) return index;
  size_t shift = index / kSub - 1;
  return (kSub + index % kSub) << shift;
}

uint64_t LatencyHistogram::bucket_high(size_t index) {
  if (index < 2 * kSub) return index;
  size_t shift = index / kSub - 1;
  return bucket_low(index) + ((1ull << shift) - 1);
}

void LatencyHistogram::record(uint64_t ns) {
  ++buckets_[bucket_index(ns)];
  ++count_;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
  double x = static_cast<double>(ns);
  double delta = x - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (x - mean_);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  double na = static_cast<double>(count_), nb = static_cast<double>(other.count_);
  double delta = other.mean_ - mean_;
  double n = na + nb;
  mean_ += delta * nb / n;
  m2_ += other.m2_ + delta * delta * na * nb / n;
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void LatencyHistogram::reset() { *this = LatencyHistogram(); }

double LatencyHistogram::stddev() const {
  if (count_ < 2) return 0;
  return std::sqrt(m2_ / static_cast<double>(count_ - 1));
}

uint64_t LatencyHistogram::percentile(double percent) const {
  if (count_ == 0) return 0;
  double want = std::ceil(percent / 100.0 * static_cast<double>(count_));
  uint64_t rank = std::clamp<uint64_t>(static_cast<uint64_t>(want), 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      uint64_t low = bucket_low(i), high = bucket_high(i);
      return std::clamp(low + (high - low) / 2, min(), max_);
    }
  }
  return max_;
}

}  // namespace nvmf::host
