// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for what poll groups (target/event_loop.h) rest on without a device: queue
// placement, controller teardown seen from another group, the control lock left to the control
// path, and per-group counters summed.
#include "target/poll_group.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/nvme_status.h"
#include "target/control_lock.h"
#include "target/counters.h"
#include "target/stats_registry.h"
#include "target/subsystem.h"
#include "target/testing/processor_harness.h"

namespace nvmf::target {
namespace {

using namespace nvmf::target::testing;  // NOLINT: the harness vocabulary

constexpr uint16_t kInvalidField = generic_status(proto::kScInvalidField);
constexpr uint16_t kCommandSequenceError = generic_status(proto::kScCommandSequenceError);

// ------------------------------------------------------------------------------ placement --

TEST(PollGroupPlacement, AdminQueueToFewestQueuesIoQueueToFewestIoQueues) {
  std::vector<GroupLoad> loads{{3, 1}, {1, 1}, {2, 0}};
  EXPECT_EQ(least_loaded_group(loads, 0), 1u);  // fewest queues
  EXPECT_EQ(least_loaded_group(loads, 1), 2u);  // fewest I/O queues
  EXPECT_EQ(least_loaded_group(loads, 7), 2u);
}

TEST(PollGroupPlacement, TiesGoToTheLowestIndexAndNoGroupsMeansGroupZero) {
  std::vector<GroupLoad> loads{{2, 1}, {2, 1}};
  EXPECT_EQ(least_loaded_group(loads, 0), 0u);
  EXPECT_EQ(least_loaded_group(loads, 1), 0u);
  // A tie on the count that decides goes by the other one.
  std::vector<GroupLoad> uneven{{3, 1}, {2, 1}};
  EXPECT_EQ(least_loaded_group(uneven, 1), 1u);
  std::vector<GroupLoad> admin_tie{{2, 2}, {2, 1}};
  EXPECT_EQ(least_loaded_group(admin_tie, 0), 1u);
  EXPECT_EQ(least_loaded_group({}, 0), 0u);
}

// Two hosts, each an admin queue then two I/O queues, placed as the listener does (a queue
// counts from its hand-over): each group ends with one admin queue and two I/O queues, and each
// host's two I/O queues are in different groups.
TEST(PollGroupPlacement, TwoHostsSpreadOverTwoGroups) {
  std::vector<GroupLoad> loads(2);
  std::vector<size_t> placed;
  for (int host = 0; host < 2; ++host) {
    for (uint16_t qid = 0; qid <= 2; ++qid) {
      size_t g = least_loaded_group(loads, qid);
      ++loads[g].queues;
      if (qid != 0) ++loads[g].io_queues;
      placed.push_back(g);
    }
  }
  EXPECT_EQ(placed, (std::vector<size_t>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(loads[0].io_queues, 2u);
  EXPECT_EQ(loads[1].io_queues, 2u);
  EXPECT_EQ(loads[0].queues, 3u);
  EXPECT_EQ(loads[1].queues, 3u);
}

// One host with as many I/O queues as groups on an idle target: its admin queue in group 0,
// I/O queue qid in group qid mod n (what --cpu auto's pinning order follows).
TEST(PollGroupPlacement, OneHostsIoQueueQidLandsInGroupQidModN) {
  for (size_t groups : {2u, 3u, 4u, 8u}) {
    std::vector<GroupLoad> loads(groups);
    for (uint16_t qid = 0; qid <= groups; ++qid) {
      const size_t g = least_loaded_group(loads, qid);
      EXPECT_EQ(g, qid % groups) << groups << " groups, qid " << qid;
      ++loads[g].queues;
      if (qid != 0) ++loads[g].io_queues;
    }
  }
}

// ------------------------------------------------------------- controllers across groups --

class CrossGroupTest : public ::testing::Test {
 protected:
  CrossGroupTest() {
    ns_ = std::move(Namespace::create_ram(1 << 20, 512)).value();
    SubsystemConfig cfg;
    cfg.nqn = kNqn;
    cfg.max_io_queues = 4;
    subsys_ = std::make_unique<Subsystem>(cfg, *ns_, registry_);
    subsys_->set_in_capsule_data_size(kInCapsule);
  }
  ~CrossGroupTest() override {
    io_.reset();
    admin_.reset();
    subsys_.reset();
  }
  // Admin queue connected and enabled, then I/O queue 1 connected; `io_owner` false: the I/O
  // queue belongs to another poll group than the thread freeing the controller.
  void connect(bool io_owner) {
    admin_ = std::make_unique<TestQueue>(*subsys_, statuses_, 0, 32);
    ASSERT_EQ(admin_->submit(connect_sqe(0, 31), connect_data(proto::kAdminQueueCntlid)),
              NextStep::kRespond);
    ASSERT_EQ(admin_->status(), kStatusSuccess);
    ASSERT_EQ(admin_->submit(property_set_sqe(proto::kPropCc, kGoodCc)), NextStep::kRespond);
    io_ = std::make_unique<TestQueue>(*subsys_, statuses_, 1, 128);
    io_->link.owner = io_owner;
    ASSERT_EQ(io_->submit(connect_sqe(1, 127), connect_data(1)), NextStep::kRespond);
    ASSERT_EQ(io_->status(), kStatusSuccess);
  }

  std::unique_ptr<Namespace> ns_;
  StatsRegistry registry_;
  StatusCounters statuses_;
  std::unique_ptr<Subsystem> subsys_;
  std::unique_ptr<TestQueue> admin_, io_;
};

// The admin queue goes (its group tears it down): the I/O queue of the other group is asked to
// disconnect and sees no controller, but keeps the Controller object alive until it goes, so
// that its NVM I/O running meanwhile never reads freed memory.
TEST_F(CrossGroupTest, ControllerFreedByAnotherGroupStaysAliveUntilTheQueueGoes) {
  connect(/*io_owner=*/false);
  std::weak_ptr<Controller> weak = subsys_->shared_controller(1);
  ASSERT_FALSE(weak.expired());
  admin_.reset();  // detach: frees controller 1
  EXPECT_EQ(subsys_->find_controller(1), nullptr);
  EXPECT_EQ(io_->link.reasons, std::vector<std::string>{"controller freed"});
  EXPECT_EQ(io_->proc.controller(), nullptr);
  EXPECT_FALSE(weak.expired()) << "the other group's queue still holds it";
  // A command arriving before the teardown: Controller Pathing Error without DNR (the host
  // retries it on another path), not a use after free.
  io_->submit(rw_sqe(proto::kNvmRead, 0, 1, 512));
  EXPECT_EQ(io_->status(), make_status(proto::kSctPath, proto::kScControllerPathingError));
  io_.reset();
  EXPECT_TRUE(weak.expired());
}

// On the queue's own thread the controller is let go at once, as with one poll group.
TEST_F(CrossGroupTest, ControllerFreedOnTheOwnerThreadIsDroppedAtOnce) {
  connect(/*io_owner=*/true);
  std::weak_ptr<Controller> weak = subsys_->shared_controller(1);
  subsys_->free_controller(1, "test");
  EXPECT_TRUE(weak.expired());
  EXPECT_EQ(io_->link.reasons, std::vector<std::string>{"controller freed"});
  EXPECT_EQ(admin_->proc.controller(), nullptr);
}

// Keep-alive expiry (group 0's) frees a controller whose admin queue is in another group: both
// queues are asked to disconnect (through their links, which carry it to their own groups).
TEST_F(CrossGroupTest, KeepAliveExpiryReachesQueuesOfOtherGroups) {
  connect(/*io_owner=*/false);
  admin_->link.owner = false;
  auto deadline = subsys_->find_controller(1)->keep_alive_deadline();
  ASSERT_TRUE(deadline.has_value());
  {
    ControlLock lock(control_mutex());
    // The Connects were traffic: the first expiry restarts the timer, the second frees.
    auto next = subsys_->expire_keep_alives(*deadline);
    ASSERT_TRUE(next.has_value());
    EXPECT_NE(subsys_->find_controller(1), nullptr);
    subsys_->expire_keep_alives(*next);
  }
  EXPECT_EQ(subsys_->find_controller(1), nullptr);
  EXPECT_EQ(admin_->link.reasons, std::vector<std::string>{"keep-alive timer expired"});
  EXPECT_EQ(io_->link.reasons, std::vector<std::string>{"controller freed"});
}

// Traffic seen by an I/O queue of another group (another thread) counts for the keep-alive
// timer group 0 checks: the timer restarts instead of expiring.
TEST_F(CrossGroupTest, TrafficOnAnotherGroupRestartsTheKeepAliveTimer) {
  connect(/*io_owner=*/false);
  auto deadline = subsys_->find_controller(1)->keep_alive_deadline();
  ASSERT_TRUE(deadline.has_value());
  std::thread other([&] {
    io_->submit(rw_sqe(proto::kNvmRead, 0, 1, 512));
    EXPECT_EQ(io_->status(), kStatusSuccess);
  });
  other.join();
  ControlLock lock(control_mutex());
  auto next = subsys_->expire_keep_alives(*deadline);
  EXPECT_NE(subsys_->find_controller(1), nullptr);
  ASSERT_TRUE(next.has_value());
  EXPECT_GT(*next, *deadline);
}

// NVM I/O on a connected I/O queue never takes the control lock: with the lock held by another
// thread (an admin command, a teardown), a read still completes. Were it taken, this would hang
// (and the test time out).
TEST_F(CrossGroupTest, NvmIoDoesNotTakeTheControlLock) {
  connect(/*io_owner=*/true);
  std::atomic<bool> held{false}, done{false};
  std::thread holder([&] {
    ControlLock lock(control_mutex());
    held = true;
    while (!done) std::this_thread::yield();
  });
  while (!held) std::this_thread::yield();
  EXPECT_EQ(io_->submit(rw_sqe(proto::kNvmRead, 0, 8, 4096)), NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(io_->status(), kStatusSuccess);
  done = true;
  holder.join();
}

// The control path does take it: an admin command waits while another thread holds it.
TEST_F(CrossGroupTest, AdminCommandsWaitForTheControlLock) {
  connect(/*io_owner=*/true);
  std::atomic<bool> finished{false};
  std::thread admin_thread;
  {
    ControlLock lock(control_mutex());
    admin_thread = std::thread([&] {
      admin_->submit(identify_sqe(proto::kCnsController));
      finished = true;
    });
    // Whatever the scheduler does, the command cannot finish while the lock is held here.
    for (int i = 0; i < 1000; ++i) std::this_thread::yield();
    EXPECT_FALSE(finished);
  }
  admin_thread.join();
  EXPECT_TRUE(finished);
  EXPECT_EQ(admin_->status(), kStatusSuccess);
}

// ---------------------------------------------------------------------------- counters --

TEST(PollGroupCounters, StatusCountsOfEveryGroupAreSummed) {
  StatusCounters g0, g1;
  g0.add(kInvalidField);
  g0.add(kInvalidField);
  g1.add(kInvalidField);
  g1.add(kCommandSequenceError);
  std::vector<const StatusCounters*> all{&g0, &g1};
  StatsRegistry registry;
  TargetStats s = registry.snapshot(all);
  ASSERT_EQ(s.errors_by_status.size(), 2u);
  uint64_t invalid = 0, sequence = 0;
  for (const StatusCount& c : s.errors_by_status) {  // reported with DNR clear
    if (c.status == generic_status(proto::kScInvalidField, false)) invalid = c.count;
    if (c.status == generic_status(proto::kScCommandSequenceError, false)) sequence = c.count;
  }
  EXPECT_EQ(invalid, 3u);
  EXPECT_EQ(sequence, 1u);
}

TEST(PollGroupCounters, SharedBufferGaugesOfEveryGroupAreSummed) {
  StatsRegistry registry;
  registry.shared_buffers(0).chunks.set(128);
  registry.shared_buffers(0).in_use.set(5);
  registry.shared_buffers(0).in_use_peak.set(9);
  registry.shared_buffers(1).chunks.set(128);
  registry.shared_buffers(1).in_use.set(2);
  registry.shared_buffers(1).in_use_peak.set(4);
  TargetStats s = registry.snapshot(StatusCounters{});
  EXPECT_EQ(s.resources.shared_buffers, 256u);
  EXPECT_EQ(s.resources.shared_buffers_in_use, 7u);
  EXPECT_EQ(s.resources.shared_buffers_in_use_peak, 13u);
  // And reported per group, up to the last group with a pool.
  ASSERT_EQ(s.resources.shared_buffers_by_group.size(), 2u);
  EXPECT_EQ(s.resources.shared_buffers_by_group[0].in_use, 5u);
  EXPECT_EQ(s.resources.shared_buffers_by_group[1].chunks, 128u);
  EXPECT_EQ(s.resources.shared_buffers_by_group[1].in_use, 2u);
  EXPECT_EQ(s.resources.shared_buffers_by_group[1].in_use_peak, 4u);
}

TEST(PollGroupCounters, GroupsWithoutAPoolAfterTheLastAreLeftOut) {
  StatsRegistry registry;
  registry.shared_buffers(1).chunks.set(2);  // group 0 has none yet: still listed (index = group)
  TargetStats s = registry.snapshot(StatusCounters{});
  ASSERT_EQ(s.resources.shared_buffers_by_group.size(), 2u);
  EXPECT_EQ(s.resources.shared_buffers_by_group[0].chunks, 0u);
  EXPECT_EQ(s.resources.shared_buffers_by_group[1].chunks, 2u);
  EXPECT_TRUE(StatsRegistry{}.snapshot(StatusCounters{}).resources.shared_buffers_by_group.empty());
}

// ------------------------------------------------------------ pending-Connect limit --

TEST(PendingConnectionsTest, AdmitsUpToTheLimitAndEachSlotGivesItsPlaceBackOnce) {
  auto pending = std::make_shared<PendingConnections>();
  std::vector<PendingSlot> slots;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(pending->try_admit(3)) << i;
    slots.emplace_back(pending);
  }
  EXPECT_FALSE(pending->try_admit(3));
  EXPECT_EQ(pending->count(), 3u);
  slots[0].release();
  slots[0].release();  // once only
  EXPECT_EQ(pending->count(), 2u);
  PendingSlot moved = std::move(slots[1]);
  EXPECT_FALSE(slots[1].held());  // NOLINT(bugprone-use-after-move): the moved-from state
  EXPECT_EQ(pending->count(), 2u) << "a move gives nothing back";
  slots.clear();  // slots[2] gives its place back; [0] and [1] hold none
  EXPECT_EQ(pending->count(), 1u);
  moved = PendingSlot();  // assigning over a held slot gives it back
  EXPECT_EQ(pending->count(), 0u);
  EXPECT_TRUE(pending->try_admit(1));
  EXPECT_FALSE(pending->try_admit(1));
}

// One peer address holds at most its share: its next CM request is refused while another peer
// is still admitted, and each slot gives its place back to its own peer's count.
TEST(PendingConnectionsTest, OnePeerCannotTakeTheWholeLimit) {
  auto pending = std::make_shared<PendingConnections>();
  std::vector<PendingSlot> attacker;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(pending->try_admit(6, "10.0.0.66", 4)) << i;
    attacker.emplace_back(pending, "10.0.0.66");
  }
  EXPECT_FALSE(pending->try_admit(6, "10.0.0.66", 4)) << "its share is taken";
  EXPECT_EQ(pending->count_for("10.0.0.66"), 4u);
  ASSERT_TRUE(pending->try_admit(6, "10.0.0.2", 4)) << "another peer still gets in";
  PendingSlot victim(pending, "10.0.0.2");
  ASSERT_TRUE(pending->try_admit(6, "10.0.0.3", 4));
  PendingSlot third(pending, "10.0.0.3");
  EXPECT_FALSE(pending->try_admit(6, "10.0.0.4", 4)) << "the limit over all peers";
  EXPECT_EQ(pending->count(), 6u);
  EXPECT_EQ(pending->count_for("10.0.0.4"), 0u) << "a refused peer is not counted";
  attacker[0].release();
  EXPECT_EQ(pending->count_for("10.0.0.66"), 3u);
  EXPECT_EQ(pending->count_for("10.0.0.2"), 1u);
  EXPECT_TRUE(pending->try_admit(6, "10.0.0.4", 4));
  PendingSlot fourth(pending, "10.0.0.4");
  attacker.clear();
  victim.release();
  third.release();
  fourth.release();
  EXPECT_EQ(pending->count(), 0u);
  EXPECT_EQ(pending->count_for("10.0.0.66"), 0u);
}

// The listener admits while other groups' threads give places back: the count never goes past
// the limit and ends at exactly what is still held.
TEST(PendingConnectionsTest, ExactUnderConcurrentReleases) {
  constexpr size_t kLimit = 8;
  constexpr int kRounds = 2000;
  auto pending = std::make_shared<PendingConnections>();
  std::mutex handed_mutex;
  std::vector<PendingSlot> handed;  // to the other "groups"
  std::atomic<bool> done{false};
  std::atomic<size_t> over{0};
  std::vector<std::thread> groups;
  for (int g = 0; g < 2; ++g) {
    groups.emplace_back([&] {
      while (!done.load()) {
        PendingSlot s;
        {
          std::lock_guard lock(handed_mutex);
          if (handed.empty()) continue;
          s = std::move(handed.back());
          handed.pop_back();
        }
        if (pending->count() > kLimit) over.fetch_add(1);
        s.release();
      }
    });
  }
  // Until kRounds were admitted: past the first kLimit, each admit needs a release by another
  // thread first (a refusal yields to them).
  size_t admitted = 0;
  while (admitted < size_t{kRounds}) {
    if (pending->try_admit(kLimit)) {
      ++admitted;
      std::lock_guard lock(handed_mutex);
      handed.emplace_back(pending);
    } else {
      std::this_thread::yield();
    }
    if (pending->count() > kLimit) over.fetch_add(1);
  }
  done.store(true);
  for (auto& t : groups) t.join();
  EXPECT_EQ(over.load(), 0u);
  EXPECT_EQ(pending->count(), handed.size());
  EXPECT_LE(handed.size(), kLimit);
  handed.clear();
  EXPECT_EQ(pending->count(), 0u);
}

}  // namespace
}  // namespace nvmf::target
