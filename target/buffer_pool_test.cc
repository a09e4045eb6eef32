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

TEST(ChunkListTest, WaitersClaimFreeChunksBeforeNewcomers) {
  std::vector<uint8_t> mem(2 * 4096);
  ChunkList list(mem.data(), 2, 4096);
  EXPECT_TRUE(list.unclaimed());
  std::vector<std::pair<int, uint32_t>> order;
  RecordingOwner q(1, &order);
  ChunkWaiter w1, w2, stray;
  EXPECT_FALSE(list.wait(stray)) << "a waiter belongs to a queue";
  w1.owner = w2.owner = &q;
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
  EXPECT_EQ(q.pool_waiters(), 0u);
  EXPECT_EQ(list.active_owners(), 0u);
}

// Waiters are served in arrival order whatever queue they belong to while every waiting queue
// holds its share: a queue that queued many commands first does not take every freed chunk
// ahead of another queue's later, single one, and one that withdrew (torn down) is skipped.
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
  EXPECT_EQ(list.active_owners(), 3u);
  list.withdraw(wc);
  EXPECT_EQ(list.active_owners(), 2u) << "queue 3 was torn down";
  EXPECT_EQ(list.share(), 1u) << "3 chunks over 2 queues";
  EXPECT_EQ(list.serve(), 0u) << "no chunk free";
  ASSERT_TRUE(list.put(held[0]));
  ASSERT_TRUE(list.put(held[1]));
  EXPECT_EQ(list.serve(), 2u);
  ASSERT_TRUE(list.put(held[2]));
  EXPECT_EQ(list.serve(), 1u);
  // Queue 1's first waiter is the oldest; then queue 1 holds its share (1) and queue 2's
  // waiter, under its share, goes before queue 1's second.
  const std::vector<std::pair<int, uint32_t>> want = {{1, 0}, {2, 7}, {1, 1}};
  EXPECT_EQ(order, want);
  EXPECT_EQ(list.waiting(), 1u) << "queue 1's third command waits for the next chunk";
  EXPECT_EQ(list.free_count(), 0u);
  EXPECT_EQ(a.pool_chunks_held(), 2u);
  EXPECT_EQ(b.pool_chunks_held(), 1u);
}

// A queue alone may take every chunk (nothing is held back from it); a QD1 queue that comes
// beside a queue holding the whole pool with 6 more commands waiting gets the first chunk
// that comes back, not the 7th, and once every queue is gone the counts are back to 0.
TEST(ChunkListTest, AQueueUnderItsShareGoesBeforeTheBacklogOfAQueueOverIt) {
  constexpr uint32_t kChunks = 4;
  std::vector<uint8_t> mem(kChunks * 4096);
  ChunkList list(mem.data(), kChunks, 4096);
  std::vector<std::pair<int, uint32_t>> order;
  RecordingOwner hog(1, &order), victim(2, &order);
  std::vector<uint8_t*> hog_chunks;
  for (uint32_t i = 0; i < kChunks; ++i) {
    ASSERT_TRUE(list.unclaimed());
    hog_chunks.push_back(list.take(hog));
    ASSERT_NE(hog_chunks.back(), nullptr);
  }
  EXPECT_EQ(list.active_owners(), 1u);
  EXPECT_EQ(list.share(), kChunks) << "a lone queue's share is the whole pool";
  ChunkWaiter backlog[6];
  for (uint32_t i = 0; i < 6; ++i) {
    backlog[i].owner = &hog;
    backlog[i].slot = i;
    ASSERT_TRUE(list.wait(backlog[i]));
  }
  ChunkWaiter v;
  v.owner = &victim;
  v.slot = 42;
  ASSERT_TRUE(list.wait(v));
  EXPECT_EQ(list.share(), kChunks / 2);
  ASSERT_TRUE(list.give(hog_chunks.back(), hog));
  hog_chunks.pop_back();
  EXPECT_EQ(list.serve(), 1u);
  ASSERT_EQ(order.size(), 1u);
  EXPECT_EQ(order[0], std::make_pair(2, 42u)) << "the victim's one command, not backlog[0]";
  EXPECT_EQ(victim.pool_chunks_held(), 1u);
  // The hog, at 3 of 4 (over its share of 2), still gets what comes back while the victim
  // holds its one and waits for nothing: the pool is never idle while anyone waits.
  ASSERT_TRUE(list.give(hog_chunks.back(), hog));
  hog_chunks.pop_back();
  EXPECT_EQ(list.serve(), 1u);
  EXPECT_EQ(order.back(), std::make_pair(1, 0u));
  EXPECT_FALSE(list.give(mem.data() + 4096 * 3 + 1, hog)) << "not a chunk";
  for (auto& w : backlog) list.withdraw(w);
  EXPECT_EQ(list.active_owners(), 2u);
  EXPECT_EQ(hog.pool_waiters(), 0u);
  EXPECT_EQ(hog.pool_chunks_held(), 3u);
}

// Withdrawing from the middle of a queue's waiters and emptying a queue's FIFO keep the others'
// order; a queue that waits again after its FIFO emptied is served by its new arrival time.
TEST(ChunkListTest, WithdrawnWaitersAndRequeuedQueuesKeepArrivalOrder) {
  std::vector<uint8_t> mem(2 * 4096);
  ChunkList list(mem.data(), 2, 4096);
  std::vector<uint8_t*> held = {list.get(), list.get()};
  std::vector<std::pair<int, uint32_t>> order;
  RecordingOwner a(1, &order), b(2, &order);
  ChunkWaiter wa[3], wb[2];
  for (uint32_t i = 0; i < 3; ++i) wa[i] = ChunkWaiter{&a, i};
  for (uint32_t i = 0; i < 2; ++i) wb[i] = ChunkWaiter{&b, 10 + i};
  ASSERT_TRUE(list.wait(wa[0]));
  ASSERT_TRUE(list.wait(wb[0]));
  ASSERT_TRUE(list.wait(wa[1]));
  ASSERT_TRUE(list.wait(wa[2]));
  list.withdraw(wa[1]);  // the middle of queue 1's FIFO
  list.withdraw(wb[0]);  // queue 2's only waiter: it leaves the list of waiting queues
  EXPECT_EQ(list.waiting(), 2u);
  EXPECT_EQ(list.active_owners(), 1u);
  ASSERT_TRUE(list.wait(wb[1]));  // queue 2 waits again, after queue 1's two
  EXPECT_EQ(b.pool_waiters(), 1u);
  ASSERT_TRUE(list.put(held[0]));
  ASSERT_TRUE(list.put(held[1]));
  EXPECT_EQ(list.serve(), 2u);
  // Share 1 (2 chunks, 2 queues): queue 1's oldest first, then queue 2, under its share, before
  // queue 1's second.
  const std::vector<std::pair<int, uint32_t>> want = {{1, 0}, {2, 11}};
  EXPECT_EQ(order, want);
  EXPECT_EQ(list.waiting(), 1u);
  EXPECT_EQ(a.pool_waiters(), 1u) << "wa[2] still waits";
  list.withdraw(wa[2]);
  EXPECT_EQ(list.waiting(), 0u);
  EXPECT_EQ(list.serve(), 0u);
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
