// SPDX-License-Identifier: BSD-3-Clause
// The shared buffer pool's free list: chunk addresses, exhaustion, give-back checks and the
// waiters' claim on free chunks. (The registered mapping needs a device: ci/e2e covers it.)
#include "target/buffer_pool.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

namespace nvmf::target {
namespace {

TEST(ChunkListTest, HandsOutEveryChunkOnceThenNone) {
  std::vector<uint8_t> mem(4 * 8192);
  ChunkList list(mem.data(), 4, 8192);
  std::set<uint8_t*> seen;
  for (int i = 0; i < 4; ++i) {
    uint8_t* c = list.get();
    ASSERT_NE(c, nullptr);
    EXPECT_EQ((c - mem.data()) % 8192, 0);
    EXPECT_LT(c, mem.data() + mem.size());
    seen.insert(c);
  }
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_EQ(list.get(), nullptr) << "exhausted: the caller waits";
  EXPECT_EQ(list.free_count(), 0u);
  EXPECT_EQ(list.high_water(), 4u);
  EXPECT_EQ(list.get(), nullptr);
}

TEST(ChunkListTest, FirstChunkFirstAndReuseOfTheLastGivenBack) {
  std::vector<uint8_t> mem(3 * 4096);
  ChunkList list(mem.data(), 3, 4096);
  uint8_t* a = list.get();
  EXPECT_EQ(a, mem.data());
  uint8_t* b = list.get();
  EXPECT_EQ(b, mem.data() + 4096);
  ASSERT_TRUE(list.put(a));
  EXPECT_EQ(list.get(), a) << "the warmest chunk again";
  EXPECT_EQ(list.in_use(), 2u);
}

TEST(ChunkListTest, RefusesForeignMisalignedAndDoubleGiveBacks) {
  std::vector<uint8_t> mem(2 * 4096);
  ChunkList list(mem.data(), 2, 4096);
  uint8_t* a = list.get();
  EXPECT_FALSE(list.put(a + 1)) << "not a chunk start";
  EXPECT_FALSE(list.put(mem.data() + 2 * 4096)) << "past the end";
  uint8_t other = 0;
  EXPECT_FALSE(list.put(&other < mem.data() ? &other : mem.data() - 4096 + 0)) << "foreign";
  EXPECT_FALSE(list.put(mem.data() + 4096)) << "never handed out";
  EXPECT_TRUE(list.put(a));
  EXPECT_FALSE(list.put(a)) << "given back twice";
  EXPECT_EQ(list.free_count(), 2u);
}

TEST(ChunkListTest, WaitersClaimFreeChunksBeforeNewcomers) {
  std::vector<uint8_t> mem(2 * 4096);
  ChunkList list(mem.data(), 2, 4096);
  EXPECT_TRUE(list.unclaimed());
  ChunkWaiter w1, w2;
  ASSERT_TRUE(list.wait(w1));
  ASSERT_TRUE(list.wait(w2));
  EXPECT_EQ(list.waiting(), 2u);
  EXPECT_FALSE(list.unclaimed()) << "two free, two waiting: nothing for a newcomer";
  list.withdraw(w2);
  EXPECT_EQ(list.waiting(), 1u);
  EXPECT_TRUE(list.unclaimed());
  ASSERT_NE(list.get(), nullptr);
  EXPECT_FALSE(list.unclaimed());
  list.withdraw(w1);
  list.withdraw(w1);  // no longer linked: nothing happens
  EXPECT_EQ(list.waiting(), 0u);
}

// Records the order in which its commands got their chunks.
struct RecordingOwner : ChunkWaiterOwner {
  RecordingOwner(int id, std::vector<std::pair<int, uint32_t>>* order) : id(id), order(order) {}
  void chunk_ready(uint32_t slot, uint8_t* chunk) override {
    EXPECT_NE(chunk, nullptr);
    order->emplace_back(id, slot);
  }
  int id;
  std::vector<std::pair<int, uint32_t>>* order;
};

// Waiters are served in arrival order whatever queue they belong to: a queue that queued many
// commands first does not take every freed chunk ahead of another queue's later, single one
// beyond its turn, and one that withdrew (torn down) is skipped.
TEST(ChunkListTest, WaitersAreServedInArrivalOrderAcrossQueues) {
  std::vector<uint8_t> mem(3 * 4096);
  ChunkList list(mem.data(), 3, 4096);
  std::vector<uint8_t*> held = {list.get(), list.get(), list.get()};
  std::vector<std::pair<int, uint32_t>> order;
  RecordingOwner a(1, &order), b(2, &order), c(3, &order);
  ChunkWaiter wa[3], wb, wc;
  for (uint32_t i = 0; i < 3; ++i) {
    wa[i].owner = &a;
    wa[i].slot = i;
  }
  wb.owner = &b;
  wb.slot = 7;
  wc.owner = &c;
  wc.slot = 9;
  ASSERT_TRUE(list.wait(wa[0]));
  ASSERT_TRUE(list.wait(wa[1]));
  ASSERT_TRUE(list.wait(wb));
  ASSERT_TRUE(list.wait(wc));
  ASSERT_TRUE(list.wait(wa[2]));
  EXPECT_FALSE(list.wait(wb)) << "already waiting";
  list.withdraw(wc);
  EXPECT_EQ(list.serve(), 0u) << "no chunk free";
  ASSERT_TRUE(list.put(held[0]));
  ASSERT_TRUE(list.put(held[1]));
  EXPECT_EQ(list.serve(), 2u);
  ASSERT_TRUE(list.put(held[2]));
  EXPECT_EQ(list.serve(), 1u);
  const std::vector<std::pair<int, uint32_t>> want = {{1, 0}, {1, 1}, {2, 7}};
  EXPECT_EQ(order, want);
  EXPECT_EQ(list.waiting(), 1u) << "queue 1's third command waits for the next chunk";
  EXPECT_EQ(list.free_count(), 0u);
}

// The --json report's "resources" counts come from these gauges: a chunk held shows, a refused
// give-back (double or foreign) does not move them.
TEST(ChunkListTest, GaugesFollowChunksHeldAndTheirPeak) {
  std::vector<uint8_t> mem(4 * 4096);
  ChunkList list(mem.data(), 4, 4096);
  SharedBufferGauges g;
  list.set_gauges(&g);
  EXPECT_EQ(g.chunks.get(), 4u);
  uint8_t* a = list.get();
  uint8_t* b = list.get();
  uint8_t* c = list.get();
  ASSERT_TRUE(a != nullptr && b != nullptr && c != nullptr);
  EXPECT_EQ(g.in_use.get(), 3u);
  EXPECT_TRUE(list.put(b));
  EXPECT_FALSE(list.put(b));
  EXPECT_FALSE(list.put(mem.data() + 1));
  EXPECT_EQ(g.in_use.get(), 2u);
  EXPECT_EQ(g.in_use_peak.get(), 3u);
  EXPECT_TRUE(list.put(a));
  EXPECT_TRUE(list.put(c));
  EXPECT_EQ(g.in_use.get(), 0u);
  EXPECT_EQ(g.in_use_peak.get(), 3u);
}

}  // namespace
}  // namespace nvmf::target
