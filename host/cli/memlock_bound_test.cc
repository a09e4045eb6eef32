// SPDX-License-Identifier: BSD-3-Clause
// host_memlock_bytes() against the buffers host/queue.cc and host/bench/bench.cc register.
#include "host/cli/memlock_bound.h"

#include <gtest/gtest.h>

namespace nvmf::host {
namespace {

constexpr uint64_t kAdmin = 31 * 64 + 32 * 16 + 4096;

TEST(HostMemlockBytes, QueuesOnly) {
  EXPECT_EQ(host_memlock_bytes(128, 0, 0, {}), kAdmin + 127 * 64 + 128 * 16 + 4096);
  EXPECT_EQ(host_memlock_bytes(128, 4, 32, {}), host_memlock_bytes(128, 0, 0, {}));
}

TEST(HostMemlockBytes, BenchBuffersPerJobAtTheLargestBlockSize) {
  const uint64_t queues = host_memlock_bytes(33, 0, 0, {});
  EXPECT_EQ(host_memlock_bytes(33, 8, 32, {4096, 131072, 65536}), queues + 8ull * 32 * 131072);
}

}  // namespace
}  // namespace nvmf::host
