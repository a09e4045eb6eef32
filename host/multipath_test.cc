// SPDX-License-Identifier: BSD-3-Clause
// Multipath's choices over fake paths: ANA state order, numa and round-robin, a call answered
// with an ANA path status or on a lost path sent again elsewhere without an error, the wait for
// a path in transition bounded by ANATT, a lost path used again once reconnected.
#include "host/multipath.h"

#include <gtest/gtest.h>

#include <deque>
#include <functional>

#include "common/nvme_status.h"

namespace nvmf::host {
namespace {

using std::chrono::milliseconds;

Status ana_status(uint8_t sc) {
  return Status::nvme_error(make_status(proto::kSctPath, sc, false), "ANA");
}

class FakePath : public PathIo {
 public:
  FakePath(std::string name, uint8_t state) : name_(std::move(name)), state_(state) {}
  Status write(uint64_t, std::span<const DataSegment>) override { return next(); }
  Status read(uint64_t, const DataSegment&) override { return next(); }
  Status flush() override { return next(); }
  bool live() const override { return live_.load(); }
  uint8_t ana_state() const override { return state_.load(); }
  Status refresh_ana() override {
    ++refreshes;
    if (on_refresh) on_refresh();
    return ok_status();
  }
  Status reconnect(bool* permanent) override {
    ++reconnect_calls;
    *permanent = give_up.load();
    if (!reconnect_ok.load()) {
      return Status::nvme_error(make_status(proto::kSctPath, proto::kScHostPathingError),
                                "still down");
    }
    live_ = true;
    return ok_status();
  }
  std::string name() const override { return name_; }

  Status next() {
    ++calls;
    if (answers.empty()) return ok_status();
    Status st = answers.front();
    answers.pop_front();
    // A Controller whose call failed on the transport is no longer live (state connecting).
    if (Controller::is_transport_error(st)) live_ = false;
    return st;
  }

  std::string name_;
  std::atomic<uint8_t> state_;
  std::atomic<bool> live_{true};
  std::atomic<bool> reconnect_ok{false};
  std::atomic<bool> give_up{false};
  std::atomic<int> reconnect_calls{0};
  std::deque<Status> answers;  // what the next calls return (then ok)
  std::function<void()> on_refresh;
  int calls = 0;
  int refreshes = 0;
};

struct Rig {
  explicit Rig(std::vector<uint8_t> states, IoPolicy policy = IoPolicy::kNuma,
               Multipath::Timing timing = {milliseconds(10000), milliseconds(-1)}) {
    std::vector<std::unique_ptr<PathIo>> io;
    for (size_t i = 0; i < states.size(); ++i) {
      auto p = std::make_unique<FakePath>("10.0.0.1:442" + std::to_string(i), states[i]);
      paths.push_back(p.get());
      io.push_back(std::move(p));
    }
    events = std::make_shared<PathEvents>();
    mp = std::make_unique<Multipath>(std::move(io), policy, timing, events);
  }
  std::vector<uint64_t> writes() const {
    std::vector<uint64_t> out;
    for (const PathStats& s : mp->path_stats()) out.push_back(s.writes);
    return out;
  }
  Status write() { return mp->write(0, {}); }

  std::vector<FakePath*> paths;
  std::shared_ptr<PathEvents> events;
  std::unique_ptr<Multipath> mp;
};

TEST(Multipath, OptimizedPathsFirstNonOptimizedOnlyWithoutThem) {
  Rig r({proto::kAnaNonOptimized, proto::kAnaOptimized});
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(r.write().ok());
  EXPECT_EQ(r.writes(), (std::vector<uint64_t>{0, 3}));
  r.paths[1]->state_ = proto::kAnaInaccessible;
  ASSERT_TRUE(r.write().ok());
  EXPECT_EQ(r.writes(), (std::vector<uint64_t>{1, 3}));
  auto stats = r.mp->path_stats();
  EXPECT_EQ(stats[0].ana_state, "non-optimized");
  EXPECT_EQ(stats[1].ana_state, "inaccessible");
  EXPECT_EQ(stats[1].path, "10.0.0.1:4421");
}

TEST(Multipath, NumaKeepsToTheFirstRoundRobinTakesTurns) {
  Rig numa({proto::kAnaOptimized, proto::kAnaOptimized, proto::kAnaNonOptimized});
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(numa.write().ok());
  EXPECT_EQ(numa.writes(), (std::vector<uint64_t>{4, 0, 0}));
  Rig rr({proto::kAnaOptimized, proto::kAnaOptimized, proto::kAnaNonOptimized},
         IoPolicy::kRoundRobin);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(rr.write().ok());
  EXPECT_EQ(rr.writes(), (std::vector<uint64_t>{2, 2, 0}));
  EXPECT_EQ(parse_iopolicy("round-robin").value(), IoPolicy::kRoundRobin);
  EXPECT_EQ(parse_iopolicy("queue-depth").status().message(),
            "--iopolicy 'queue-depth' is not one of numa, round-robin");
}

// Inaccessible (and persistent loss, transition) answers: the path's log is read again, the
// call goes to the other path, the caller sees success.
TEST(Multipath, AnAnaPathStatusIsSentAgainOnAnotherPath) {
  for (uint8_t sc :
       {proto::kScAnaInaccessible, proto::kScAnaPersistentLoss, proto::kScAnaTransition}) {
    Rig r({proto::kAnaOptimized, proto::kAnaNonOptimized});
    r.paths[0]->answers.push_back(ana_status(sc));
    r.paths[0]->on_refresh = [&] { r.paths[0]->state_ = proto::kAnaInaccessible; };
    ASSERT_TRUE(r.write().ok()) << int{sc};
    EXPECT_EQ(r.paths[0]->refreshes, 1);
    auto stats = r.mp->path_stats();
    EXPECT_EQ(stats[0].ana_errors, 1u);
    EXPECT_EQ(stats[0].writes, 0u);
    EXPECT_EQ(stats[1].writes, 1u);
  }
}

// A path in transition: the call waits for an ANA event, at most ANATT.
TEST(Multipath, APathInTransitionIsAwaitedUpToAnatt) {
  Rig r({proto::kAnaChange}, IoPolicy::kNuma, {milliseconds(5000), milliseconds(-1)});
  std::thread event([&] {
    r.paths[0]->state_ = proto::kAnaOptimized;
    r.events->notify();
  });
  Status st = r.write();
  event.join();
  EXPECT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(r.writes(), (std::vector<uint64_t>{1}));

  Rig stuck({proto::kAnaChange}, IoPolicy::kNuma, {milliseconds(50), milliseconds(-1)});
  auto start = std::chrono::steady_clock::now();
  Status late = stuck.write();
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(50));
  ASSERT_TRUE(late.nvme_status().has_value());
  EXPECT_EQ(*late.nvme_status() & 0x7FF,
            make_status(proto::kSctPath, proto::kScHostPathingError, false));
  EXPECT_EQ(stuck.paths[0]->calls, 0);
}

// A path whose call failed on the transport is left to the path thread: the call moves on at
// once; once reconnected the path is used again (numa: it is the first).
TEST(Multipath, ALostPathIsLeftWhileItReconnectsAndUsedAgainAfter) {
  Rig r({proto::kAnaOptimized, proto::kAnaOptimized});
  r.paths[0]->answers.push_back(Status::unavailable("the target disconnected"));
  const uint64_t seen = r.events->generation();
  ASSERT_TRUE(r.write().ok());
  EXPECT_EQ(r.writes(), (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(r.mp->path_stats()[0].path_errors, 1u);
  EXPECT_FALSE(r.mp->path_stats()[0].live);
  r.paths[0]->reconnect_ok = true;
  ASSERT_TRUE(r.events->wait_change(seen, std::chrono::steady_clock::now() + milliseconds(5000)));
  ASSERT_TRUE(r.write().ok());
  EXPECT_EQ(r.writes(), (std::vector<uint64_t>{1, 1}));
  EXPECT_EQ(r.mp->path_stats()[0].reconnects, 1u);
}

// Every path lost: the call waits for a reconnect up to fast_io_fail_tmo, then fails with the
// last path's error; the command's own NVMe errors are never retried.
TEST(Multipath, EveryPathLostFailsAfterTheHoldAndCommandErrorsAreReturned) {
  Rig r({proto::kAnaOptimized}, IoPolicy::kNuma, {milliseconds(10000), milliseconds(50)});
  const Status lost = Status::nvme_error(
      make_status(proto::kSctPath, proto::kScControllerPathingError, false), "controller freed");
  r.paths[0]->answers.push_back(lost);
  Status st = r.write();
  ASSERT_TRUE(st.nvme_status().has_value());
  EXPECT_EQ(*st.nvme_status(), *lost.nvme_status());
  EXPECT_EQ(r.paths[0]->calls, 1);

  Rig plain({proto::kAnaOptimized, proto::kAnaOptimized});
  plain.paths[0]->answers.push_back(
      Status::nvme_error(generic_status(proto::kScLbaOutOfRange), "LBA Out of Range"));
  Status out = plain.write();
  ASSERT_TRUE(out.nvme_status().has_value());
  EXPECT_EQ(status_sc(*out.nvme_status()), proto::kScLbaOutOfRange);
  EXPECT_EQ(plain.writes(), (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(plain.paths[1]->calls, 0);
}

}  // namespace
}  // namespace nvmf::host
