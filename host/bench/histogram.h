// SPDX-License-Identifier: BSD-3-Clause
// LatencyHistogram: completion latencies in ns kept in log-linear buckets (bounded memory, like
// fio's), with exact count, min, max, mean and standard deviation, and bucketed percentiles.
#ifndef NVMF_HOST_BENCH_HISTOGRAM_H_
#define NVMF_HOST_BENCH_HISTOGRAM_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace nvmf::host {

// Values below 2 * kSub ns get one bucket each; above, every power of two [2^k, 2^(k+1)) is cut
// into kSub equal buckets. A bucket's width is at most 1/kSub of its lower bound, so a
// percentile (reported at the bucket's midpoint) is within 1/(2 * kSub) = 0.8 % of a real
// sample. fio uses the same shape (FIO_IO_U_PLAT_BITS 6). 3776 counters (30 KiB) cover all of
// uint64_t; record() allocates nothing and takes a few nanoseconds.
class LatencyHistogram {
 public:
  static constexpr int kSubBits = 6;
  static constexpr uint64_t kSub = 1ull << kSubBits;  // 64 buckets per power of two
  static constexpr size_t kBuckets = (64 - kSubBits + 1) * kSub;

  // Bucket of a value in ns, and the range [bucket_low(i), bucket_high(i)] of bucket i.
  static size_t bucket_index(uint64_t ns);
  static uint64_t bucket_low(size_t index);
  static uint64_t bucket_high(size_t index);

  // Adds one sample (ns). No allocation.
  void record(uint64_t ns);
  // Adds every sample of `other` (exact count/min/max/mean/stddev: parallel Welford merge).
  void merge(const LatencyHistogram& other);
  // Forgets every sample.
  void reset();

  uint64_t count() const { return count_; }                // samples recorded
  uint64_t min() const { return count_ == 0 ? 0 : min_; }  // ns, exact; 0 when empty
  uint64_t max() const { return max_; }                    // ns, exact
  double mean() const { return mean_; }                    // ns, exact (up to double rounding)
  // Sample standard deviation in ns (n - 1 in the denominator, as fio); 0 below two samples.
  double stddev() const;
  // The value in ns at or below which `percent` % (0 < percent <= 100) of the samples lie:
  // the midpoint of the bucket holding the sample of rank ceil(percent / 100 * count), clamped
  // to [min, max]. 0 when empty.
  uint64_t percentile(double percent) const;

 private:
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  double mean_ = 0;
  double m2_ = 0;  // sum of squared deviations from the mean (Welford)
};

}  // namespace nvmf::host

#endif  // NVMF_HOST_BENCH_HISTOGRAM_H_
