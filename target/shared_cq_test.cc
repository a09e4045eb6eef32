// SPDX-License-Identifier: BSD-3-Clause
#include "target/shared_cq.h"

#include <gtest/gtest.h>

#include <vector>

namespace nvmf::target {
namespace {

TEST(SharedCq, AQueueJoinsTheFirstCqWithRoomElseANewOne) {
  EXPECT_EQ(pick_shared_cq({}, 256), 0u) << "no CQ yet: make one";
  std::vector<int> free = {255, 300, 1000};
  EXPECT_EQ(pick_shared_cq(free, 256), 1u) << "the first with room, not the roomiest";
  EXPECT_EQ(pick_shared_cq(free, 300), 1u) << "exactly enough is enough";
  EXPECT_EQ(pick_shared_cq(free, 301), 2u);
  EXPECT_EQ(pick_shared_cq(free, 1001), 3u) << "none has room: a new one";
  std::vector<int> broken = {-1, 0, 512};
  EXPECT_EQ(pick_shared_cq(broken, 0), 1u) << "a broken CQ (-1) takes nobody, even needing 0";
  EXPECT_EQ(pick_shared_cq(broken, 1), 2u);
}

// The promise per queue: every send work request it may post, plus its receives without an
// SRQ (with one, the SRQ's depth is promised once per CQ instead).
TEST(SharedCq, AQueueNeedsItsSendsAndWithoutAnSrqItsReceives) {
  // 128-entry I/O queue: 2 send WRs per slot (READ or WRITE, then SEND).
  EXPECT_EQ(shared_cq_need(256, 128, /*srq=*/true), 256);
  EXPECT_EQ(shared_cq_need(256, 128, /*srq=*/false), 384);
  // Admin queue of 32 with AERL + 1 = 5 held slots.
  EXPECT_EQ(shared_cq_need(2 * (32 + 5), 32, true), 74);
  // How many 128-entry I/O queues one rxe-sized CQ holds next to a 2048-receive SRQ.
  EXPECT_EQ((kSharedCqEntries - 2048) / shared_cq_need(256, 128, true), 119);
}

// An SRQ deeper than a CQ can keep room for next to 4096 entries of queues is clamped to it.
TEST(SharedCq, TheSrqDepthLeavesRoomForQueues) {
  EXPECT_EQ(max_srq_depth_for_cq(32767), 28671u) << "rxe";
  EXPECT_EQ(max_srq_depth_for_cq(4194303), 28671u) << "mlx5's max_cqe: capped at 32767 entries";
  EXPECT_EQ(max_srq_depth_for_cq(8192), 4096u);
  EXPECT_EQ(max_srq_depth_for_cq(4096), 0u) << "no room at all";
}

// A new CQ: the SRQ's share plus room for 16 queues of 128 entries, within the device's limit.
TEST(SharedCq, AFirstCqKeepsTheSrqAndRoomForSixteenQueues) {
  EXPECT_EQ(shared_cq_first_size(4096, 256, 32767), 4096 + 4096);
  EXPECT_EQ(shared_cq_first_size(0, 384, 32767), 4096) << "no SRQ: room only";
  EXPECT_EQ(shared_cq_first_size(2048, 5000, 32767), 2048 + 5000) << "one queue needing more";
  EXPECT_EQ(shared_cq_first_size(30000, 256, 32767), 32767) << "capped at the limit";
  EXPECT_EQ(shared_cq_first_size(4096, 256, 6000), 6000) << "a device with a small max_cqe";
}

// A CQ with no room for a queue doubles until it has, up to the limit; when even the limit is
// not enough it stays as it is and the queue gets a new CQ.
TEST(SharedCq, ACqWithoutRoomDoublesUpToTheLimit) {
  EXPECT_EQ(shared_cq_grown_size(8192, 300, 256, 32767), 8192) << "room enough: unchanged";
  EXPECT_EQ(shared_cq_grown_size(8192, 100, 256, 32767), 16384);
  EXPECT_EQ(shared_cq_grown_size(8192, 0, 9000, 32767), 32767) << "8192 -> 16384 -> capped";
  EXPECT_EQ(shared_cq_grown_size(8192, 0, 8192, 32767), 16384) << "exactly enough after one";
  EXPECT_EQ(shared_cq_grown_size(32767, 10, 256, 32767), 32767) << "at the limit: a new CQ";
  EXPECT_EQ(shared_cq_grown_size(30000, 0, 2768, 32767), 30000) << "the limit is 1 short";
  EXPECT_EQ(shared_cq_grown_size(30000, 0, 2767, 32767), 32767) << "the limit is just enough";
}

}  // namespace
}  // namespace nvmf::target
