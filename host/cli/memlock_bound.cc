// SPDX-License-Identifier: BSD-3-Clause
// host_memlock_bytes(): nvmf-host's registered-memory lower bound (host/queue.cc,
// host/bench/bench.cc).
#include "host/cli/memlock_bound.h"

#include <algorithm>

namespace nvmf::host {
namespace {

constexpr uint64_t kSqeBytes = 64;
constexpr uint64_t kCqeBytes = 16;
constexpr uint64_t kSetupBytes = 4096;  // host/queue.cc kBounceBytes
constexpr uint64_t kAdminEntries = 32;  // host/commands.h kAdminQueueSize

// Queue::register_buffers: SQEs of the N - 1 slots, N CQE receives, the setup-data page.
uint64_t queue_bytes(uint64_t entries) {
  return (entries - 1) * kSqeBytes + entries * kCqeBytes + kSetupBytes;
}

}  // namespace

uint64_t host_memlock_bytes(uint32_t queue_size, uint32_t bench_jobs, uint32_t bench_iodepth,
                            const std::vector<uint32_t>& bench_bs) {
  uint64_t bytes = queue_bytes(kAdminEntries) + queue_bytes(std::max<uint32_t>(queue_size, 2));
  if (bench_jobs > 0 && !bench_bs.empty()) {
    const uint64_t max_bs = *std::max_element(bench_bs.begin(), bench_bs.end());
    bytes += uint64_t{bench_jobs} * bench_iodepth * max_bs;
  }
  return bytes;
}

}  // namespace nvmf::host
