// SPDX-License-Identifier: BSD-3-Clause
// IoQueue over a scripted connection (FakeChannel) and association (FakeLink): commands as
// encoded, callbacks, refusals, and recovery (held commands sent again in order on a new
// connection, Host Pathing Error past fast_io_fail_tmo, a silent queue's timeout).
#include "host/io_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/nvme_status.h"
#include "proto/nvme.h"

namespace nvmf::host {
namespace {

constexpr uint32_t kLba = 512;

class FakeChannel : public IoChannel {
 public:
  struct Post {
    proto::Sqe sqe;
    std::vector<Piece> pieces;
    bool deferred = false;  // chained, for post_deferred()
  };
  FakeChannel(uint16_t slots, bool* destroyed = nullptr)
      : busy_(slots), done_(slots), cqe_(slots), destroyed_(destroyed) {
    policy_.enabled = true;
    policy_.max_bytes = 8192;
    policy_.max_segments = 4;
  }
  ~FakeChannel() override {
    if (destroyed_ != nullptr) *destroyed_ = true;
  }

  uint16_t qid() const override { return 1; }
  uint16_t num_slots() const override { return static_cast<uint16_t>(busy_.size()); }
  uint16_t free_slots() const override {
    uint16_t n = 0;
    for (bool b : busy_) n += b ? 0 : 1;
    return n;
  }
  const HostInCapsulePolicy& in_capsule_policy() const override { return policy_; }
  HostInCapsulePolicy& policy() { return policy_; }
  Result<uint16_t> post(const proto::Sqe& sqe, std::span<const Piece> pieces, bool defer) override {
    if (!fail_post.ok()) return fail_post;
    for (uint16_t s = 0; s < busy_.size(); ++s) {
      if (busy_[s]) continue;
      busy_[s] = true;
      done_[s] = false;
      Post p{sqe, std::vector<Piece>(pieces.begin(), pieces.end()), defer};
      p.sqe.cid = s;
      chained += defer ? 1 : 0;
      // Counted as a connection counts its capsules: small ones inline, the rest by reference.
      ++(pieces.empty() ? counters.capsules_inline : counters.capsules_by_reference);
      counters.capsules_with_in_capsule_data += pieces.empty() ? 0 : 1;
      posts.push_back(p);
      return s;
    }
    return Status::resource_exhausted("no free slot");
  }
  QueueCounters capsule_counters() const override { return counters; }
  Status post_deferred() override {
    ++post_deferred_calls;
    if (!fail_post_deferred.ok()) return fail_post_deferred;
    chained = 0;
    return ok_status();
  }
  // As a completion queue: the answers in the order they arrived, at most poll_batch a look.
  Result<int> poll_completions() override {
    if (!fail_poll.ok()) return fail_poll;
    int n = 0;
    while (!arrived_.empty() && n < poll_batch) {
      done_[arrived_.front()] = true;
      arrived_.pop_front();
      ++n;
    }
    ++polls;
    return n;
  }
  bool slot_done(uint16_t slot) const override { return busy_[slot] && done_[slot]; }
  proto::Cqe release_slot(uint16_t slot) override {
    busy_[slot] = done_[slot] = false;
    return cqe_[slot];
  }
  void wait_fds(pollfd fds[2]) const override {
    fds[0] = pollfd{completion_fd, POLLIN, 0};
    fds[1] = pollfd{cm_fd, POLLIN, 0};
  }
  Status after_wait(const pollfd fds[2], Deadline) override {
    ++after_waits;
    if (fds[1].revents != 0) return Status::unavailable("the target disconnected");
    return ok_status();
  }

  // The target answers the command in `slot` (the phase bit set, as on the wire).
  void complete(uint16_t slot, uint16_t status = 0, uint32_t dw0 = 0) {
    cqe_[slot] = proto::Cqe{dw0, 0, 0, 1, slot, static_cast<uint16_t>(status | 1)};
    arrived_.push_back(slot);
  }
  // Every slot in flight answered with success.
  void complete_all() {
    for (uint16_t s = 0; s < busy_.size(); ++s) {
      if (busy_[s] && !done_[s] &&
          std::find(arrived_.begin(), arrived_.end(), s) == arrived_.end()) {
        complete(s);
      }
    }
  }

  std::vector<Post> posts;
  int chained = 0;  // deferred posts not posted yet
  QueueCounters counters;
  int post_deferred_calls = 0;
  Status fail_post_deferred;
  int completion_fd = -1;
  int cm_fd = -1;
  int after_waits = 0;
  Status fail_post;
  Status fail_poll;
  int poll_batch = 1 << 30;  // answers one poll_completions() finds at most
  int polls = 0;

 private:
  std::vector<bool> busy_;
  std::vector<bool> done_;
  std::vector<proto::Cqe> cqe_;
  std::deque<uint16_t> arrived_;  // answered, not yet polled
  HostInCapsulePolicy policy_;
  bool* destroyed_;
};

class FakeLink : public IoQueueLink {
 public:
  const std::atomic<uint64_t>& generation() const override { return gen; }
  Update update(size_t index) override {
    Update u;
    u.generation = gen.load();
    u.state = state;
    auto it = next.find(index);
    if (it != next.end()) {
      u.channel = std::move(it->second);
      next.erase(it);
    }
    return u;
  }
  void report_loss(size_t index, uint64_t generation, const Status& why) override {
    losses.push_back({index, generation, why.to_string()});
  }
  void wait_for_change(uint64_t, Deadline) override {}
  void count_resubmission(size_t) override { ++resubmissions; }
  void channel_dropped(size_t, const IoChannel&) override { ++dropped; }

  // The association went down (through any queue): reconnecting.
  void lose() {
    state = LinkState::kReconnecting;
    gen.fetch_add(1);
  }
  // A new association: queue 0's new connection.
  void reconnect(std::unique_ptr<IoChannel> ch) {
    next[0] = std::move(ch);
    state = LinkState::kLive;
    gen.fetch_add(1);
  }
  void set(LinkState s) {
    state = s;
    gen.fetch_add(1);
  }

  struct Loss {
    size_t index;
    uint64_t generation;
    std::string why;
  };
  std::atomic<uint64_t> gen{7};
  LinkState state = LinkState::kLive;
  std::map<size_t, std::unique_ptr<IoChannel>> next;
  std::vector<Loss> losses;
  uint64_t resubmissions = 0;
  int dropped = 0;
};

// What the callbacks saw, in order.
struct Seen {
  std::vector<IoCompletion> completions;
  std::vector<uint64_t> tags;
};
struct Tagged {
  Seen* seen;
  uint64_t tag;
};
void record(void* arg, const IoCompletion& c) {
  auto* t = static_cast<Tagged*>(arg);
  t->seen->completions.push_back(c);
  t->seen->tags.push_back(t->tag);
}

class IoQueueTest : public ::testing::Test {
 protected:
  IoQueueTest() : data_(1 << 20) {
    for (size_t i = 0; i < 64; ++i) tags_[i] = Tagged{&seen_, i};
  }
  IoQueue::Params params(uint16_t depth = 0) {
    IoQueue::Params p;
    p.nsid = 3;
    p.depth = depth;
    p.limits.lba_size = kLba;
    p.limits.max_command_bytes = 128 * 1024;
    p.limits.in_capsule.enabled = true;
    p.limits.in_capsule.max_bytes = 8192;
    p.limits.in_capsule.max_segments = 4;
    return p;
  }
  // Builds the queue over a new FakeChannel of `slots` slots; channel() points at it.
  void make(uint16_t slots, uint16_t depth = 0) {
    auto ch = std::make_unique<FakeChannel>(slots, &destroyed_);
    ch_ = ch.get();
    q_ = std::make_unique<IoQueue>(params(depth), link_, std::move(ch));
  }
  DataSegment seg(size_t offset, size_t length) {
    return DataSegment{data_.data() + offset, length, 0x11, 0x22};
  }
  Status write(uint64_t slba, size_t bytes, uint64_t tag) {
    DataSegment s = seg(slba * kLba % (data_.size() - bytes), bytes);
    return q_->submit_write(slba, std::span<const DataSegment>(&s, 1), record, &tags_[tag]);
  }
  // Runs process_completions() until `n` callbacks ran in all (at most 100 calls).
  void reap(size_t n) {
    for (int i = 0; i < 100 && seen_.completions.size() < n; ++i) {
      ASSERT_TRUE(q_->process_completions().ok());
    }
    ASSERT_EQ(seen_.completions.size(), n);
  }

  std::vector<uint8_t> data_;
  FakeLink link_;
  FakeChannel* ch_ = nullptr;
  bool destroyed_ = false;
  std::unique_ptr<IoQueue> q_;
  Seen seen_;
  Tagged tags_[64];
};

TEST_F(IoQueueTest, WritesGoInCapsuleOrKeyedAndEachCallbackRunsOnce) {
  make(8);
  ASSERT_TRUE(write(10, 4096, 1).ok());       // fits the 8192 bytes in-capsule
  ASSERT_TRUE(write(20, 64 * 1024, 2).ok());  // does not: keyed
  ASSERT_EQ(ch_->posts.size(), 2u);
  const FakeChannel::Post& in = ch_->posts[0];
  EXPECT_EQ(in.sqe.opcode, proto::kNvmWrite);
  EXPECT_EQ(in.sqe.nsid, 3u);
  EXPECT_EQ(in.sqe.cdw10, 10u);
  EXPECT_EQ(in.sqe.cdw12, 4096u / kLba - 1);
  EXPECT_EQ(in.sqe.dptr.id, 0x01);  // SGL Data Block, subtype Offset: in-capsule
  ASSERT_EQ(in.pieces.size(), 1u);
  EXPECT_EQ(in.pieces[0].length, 4096u);
  EXPECT_EQ(in.pieces[0].lkey, 0x11u);
  const FakeChannel::Post& keyed = ch_->posts[1];
  EXPECT_EQ(keyed.sqe.dptr.id, 0x40);  // Keyed SGL Data Block
  EXPECT_EQ(keyed.sqe.dptr.keyed_length(), 64u * 1024);
  EXPECT_EQ(uint32_t{keyed.sqe.dptr.keyed.key}, 0x22u);
  EXPECT_TRUE(keyed.pieces.empty());
  EXPECT_EQ(q_->outstanding(), 2u);

  ch_->complete(1, 0, 0xAB);
  reap(1);
  EXPECT_EQ(seen_.tags[0], 2u);
  EXPECT_EQ(seen_.completions[0].status, 0);  // the phase bit is not part of the status
  EXPECT_EQ(seen_.completions[0].dw0, 0xABu);
  ch_->complete(0);
  reap(2);
  EXPECT_EQ(seen_.tags[1], 1u);
  ASSERT_TRUE(q_->process_completions().ok());
  EXPECT_EQ(seen_.completions.size(), 2u) << "no callback runs twice";
  EXPECT_EQ(q_->outstanding(), 0u);
  EXPECT_EQ(q_->stats().submitted, 2u);
  EXPECT_EQ(q_->stats().completed, 2u);
}

// A completion queue hands out a batch of answers per look, and the event that wakes a sleeper
// comes only for answers that arrive after it was armed: one process_completions() must take
// every answer there is, else wait() sleeps beside answers already there.
TEST_F(IoQueueTest, OneCallTakesEveryAnswerWhateverThePollBatch) {
  make(32);
  ch_->poll_batch = 3;
  for (uint64_t i = 0; i < 20; ++i) ASSERT_TRUE(write(i, kLba, i).ok());
  ch_->complete_all();
  const int polls_before = ch_->polls;
  Result<int> ran = q_->process_completions();
  ASSERT_TRUE(ran.ok());
  EXPECT_EQ(*ran, 20);
  EXPECT_EQ(q_->outstanding(), 0u);
  EXPECT_EQ(ch_->polls - polls_before, 8);  // 7 batches of up to 3, then an empty look
}

TEST_F(IoQueueTest, ReadsAreKeyedAndCarryFua) {
  make(8);
  DataSegment d = seg(0, 8192);
  ASSERT_TRUE(q_->submit_read(0x1'0000'0005ull, d, record, &tags_[0], /*fua=*/true).ok());
  ASSERT_EQ(ch_->posts.size(), 1u);
  const proto::Sqe& s = ch_->posts[0].sqe;
  EXPECT_EQ(s.opcode, proto::kNvmRead);
  EXPECT_EQ(s.cdw10, 5u);
  EXPECT_EQ(s.cdw11, 1u);
  EXPECT_EQ(s.cdw12, proto::kRwFua | (8192u / kLba - 1));
  EXPECT_EQ(s.dptr.id, 0x40);
  EXPECT_EQ(s.dptr.addr, reinterpret_cast<uint64_t>(data_.data()));
  EXPECT_TRUE(ch_->posts[0].pieces.empty());
}

TEST_F(IoQueueTest, FlushWriteZeroesAndDeallocateAreEncoded) {
  make(8);
  ASSERT_TRUE(q_->submit_flush(record, &tags_[0]).ok());
  ASSERT_TRUE(q_->submit_write_zeroes(100, 65536, record, &tags_[1]).ok());
  auto* ranges = reinterpret_cast<proto::DsmRange*>(data_.data());
  ranges[0] = proto::DsmRange{0, 8, 16};
  ranges[1] = proto::DsmRange{0, 8, 64};
  ASSERT_TRUE(q_->submit_deallocate(seg(0, 4096), 2, record, &tags_[2]).ok());
  ASSERT_EQ(ch_->posts.size(), 3u);
  EXPECT_EQ(ch_->posts[0].sqe.opcode, proto::kNvmFlush);
  EXPECT_EQ(ch_->posts[0].sqe.nsid, 3u);
  EXPECT_TRUE(ch_->posts[0].pieces.empty());
  EXPECT_EQ(ch_->posts[1].sqe.opcode, proto::kNvmWriteZeroes);
  EXPECT_EQ(ch_->posts[1].sqe.cdw10, 100u);
  EXPECT_EQ(ch_->posts[1].sqe.cdw12, 65535u);
  const FakeChannel::Post& dsm = ch_->posts[2];
  EXPECT_EQ(dsm.sqe.opcode, proto::kNvmDatasetManagement);
  EXPECT_EQ(dsm.sqe.cdw10, 1u);  // NR is 0-based
  EXPECT_EQ(dsm.sqe.cdw11, proto::kDsmAttributeDeallocate);
  ASSERT_EQ(dsm.pieces.size(), 1u);  // 32 bytes of ranges: in-capsule
  EXPECT_EQ(dsm.pieces[0].length, 32u);
  EXPECT_EQ(dsm.sqe.dptr.unkeyed.length, 32u);
}

TEST_F(IoQueueTest, RefusesWhatOneCommandCannotCarryWithoutACallback) {
  make(2);
  DataSegment odd = seg(0, 1000);
  EXPECT_EQ(q_->submit_read(0, odd, record, &tags_[0]).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(write(0, 256 * 1024, 0).code(), StatusCode::kInvalidArgument);  // > 128 KiB
  // Two segments of 64 KiB: too big in-capsule, and a keyed SGL describes one piece.
  DataSegment two[2] = {seg(0, 65536), seg(131072, 65536)};
  EXPECT_EQ(q_->submit_write(0, two, record, &tags_[0]).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(q_->submit_write_zeroes(0, 65537, record, &tags_[0]).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(q_->submit_write_zeroes(0, 0, record, &tags_[0]).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(q_->submit_deallocate(seg(0, 8192), 0, record, &tags_[0]).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(q_->submit_deallocate(seg(0, 8192), 257, record, &tags_[0]).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(q_->submit_deallocate(seg(0, 16), 2, record, &tags_[0]).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(write(0, 512, 1).ok());
  ASSERT_TRUE(write(1, 512, 2).ok());
  EXPECT_EQ(write(2, 512, 3).code(), StatusCode::kResourceExhausted);  // depth 2
  EXPECT_EQ(ch_->posts.size(), 2u);
  ASSERT_TRUE(q_->process_completions().ok());
  EXPECT_TRUE(seen_.completions.empty());
}

TEST_F(IoQueueTest, AnNvmeErrorReachesTheCallbackAsItCame) {
  make(4);
  ASSERT_TRUE(write(5, 4096, 0).ok());
  const uint16_t lba_range = make_status(proto::kSctGeneric, proto::kScLbaOutOfRange, true);
  ch_->complete(0, lba_range);
  reap(1);
  EXPECT_EQ(seen_.completions[0].status, lba_range);
  EXPECT_TRUE(link_.losses.empty()) << "an NVMe status is the command's, not the connection's";
}

// A callback that submits the next read until `left` reads have been done.
struct Chain {
  IoQueue* q;
  DataSegment d;
  int left;
  int done = 0;
};
void chain_next(void* arg, const IoCompletion&) {
  auto* c = static_cast<Chain*>(arg);
  ++c->done;
  if (--c->left > 0) {
    ASSERT_TRUE(c->q->submit_read(c->done, c->d, chain_next, c).ok());
  }
}

TEST_F(IoQueueTest, ACallbackMaySubmitOnItsQueue) {
  make(4, /*depth=*/1);
  ASSERT_EQ(q_->depth(), 1u);
  Chain c{q_.get(), seg(0, 512), 5};
  ASSERT_TRUE(q_->submit_read(0, c.d, chain_next, &c).ok());
  for (int i = 0; i < 5; ++i) {
    ch_->complete_all();
    ASSERT_TRUE(q_->process_completions().ok());
  }
  EXPECT_EQ(c.done, 5);
  EXPECT_EQ(ch_->posts.size(), 5u);
  EXPECT_EQ(ch_->posts[4].sqe.cdw10, 4u);
  EXPECT_EQ(q_->outstanding(), 0u);
}

TEST_F(IoQueueTest, ALostConnectionHoldsCommandsAndSendsThemAgainInOrder) {
  make(8);
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(write(100 + i, 4096, i).ok());
  ch_->complete(1);  // the second one answered before the loss: not sent again
  ch_->fail_poll = Status::io("work completion error: transport retry counter exceeded");
  ASSERT_TRUE(q_->process_completions().ok());
  EXPECT_TRUE(destroyed_) << "the failed connection is dropped";
  ASSERT_EQ(link_.losses.size(), 1u);
  EXPECT_EQ(link_.losses[0].index, 0u);
  EXPECT_EQ(link_.losses[0].generation, 7u);
  EXPECT_NE(link_.losses[0].why.find("retry counter"), std::string::npos);
  EXPECT_TRUE(seen_.completions.empty());
  EXPECT_EQ(q_->link_state(), LinkState::kReconnecting);
  EXPECT_EQ(q_->outstanding(), 3u);
  // Accepted while reconnecting: held behind the others.
  ASSERT_TRUE(write(103, 4096, 3).ok());
  link_.lose();
  ASSERT_TRUE(q_->process_completions().ok());
  EXPECT_TRUE(seen_.completions.empty());

  auto next = std::make_unique<FakeChannel>(8);
  FakeChannel* ch2 = next.get();
  link_.reconnect(std::move(next));
  ASSERT_TRUE(q_->process_completions().ok());
  EXPECT_EQ(q_->link_state(), LinkState::kLive);
  ASSERT_EQ(ch2->posts.size(), 4u);
  const uint32_t want[4] = {100, 101, 102, 103};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(ch2->posts[i].sqe.cdw10, want[i]) << i;
    ASSERT_EQ(ch2->posts[i].pieces.size(), 1u);
    EXPECT_EQ(ch2->posts[i].pieces[0].addr,
              reinterpret_cast<uint64_t>(data_.data()) + want[i] * kLba % (data_.size() - 4096));
  }
  ch2->complete_all();
  reap(4);
  EXPECT_EQ(seen_.completions[0].resubmissions + seen_.completions[1].resubmissions +
                seen_.completions[2].resubmissions + seen_.completions[3].resubmissions,
            3u);
  EXPECT_EQ(q_->stats().resubmitted, 3u);
  EXPECT_EQ(link_.resubmissions, 3u) << "each resubmission told to the link";
  EXPECT_EQ(q_->stats().losses, 1u);
}

// stats().capsules counts every connection the queue had: a dropped one's capsules stay counted
// and the one in use adds its own.
TEST_F(IoQueueTest, CapsuleCountersAddUpOverConnections) {
  make(8);
  ASSERT_TRUE(write(100, 4096, 0).ok());  // in-capsule data: by reference
  DataSegment big = seg(0, 64 * 1024);    // keyed: the bare SQE
  ASSERT_TRUE(q_->submit_write(200, std::span<const DataSegment>(&big, 1), record, &tags_[1]).ok());
  EXPECT_EQ(q_->stats().capsules.capsules_by_reference, 1u);
  EXPECT_EQ(q_->stats().capsules.capsules_inline, 1u);
  EXPECT_EQ(q_->stats().capsules.capsules_with_in_capsule_data, 1u);
  ch_->fail_poll = Status::io("work completion error");
  ASSERT_TRUE(q_->process_completions().ok());
  ASSERT_TRUE(destroyed_);
  EXPECT_EQ(q_->stats().capsules.capsules_by_reference, 1u) << "the dropped connection's count";
  auto next = std::make_unique<FakeChannel>(8);
  FakeChannel* ch2 = next.get();
  link_.reconnect(std::move(next));
  ASSERT_TRUE(q_->process_completions().ok());
  ASSERT_EQ(ch2->posts.size(), 2u);
  EXPECT_EQ(q_->stats().capsules.capsules_by_reference, 2u);
  EXPECT_EQ(q_->stats().capsules.capsules_inline, 2u);
  EXPECT_EQ(q_->stats().capsules.capsules_with_in_capsule_data, 2u);
  ch2->complete_all();
  reap(2);
}

// Passthrough: the SQE as given (CID aside, SGL1 untouched), the in-capsule segments after it;
// lost with its connection it is aborted, not sent again, while a write beside it is.
TEST_F(IoQueueTest, APassthroughGoesAsGivenAndIsNeverSentTwice) {
  make(8);
  proto::Sqe raw{};
  raw.opcode = proto::kNvmWrite;
  raw.nsid = 9;  // not the queue's namespace: nothing is rewritten
  raw.cdw10 = 77;
  std::memset(&raw.dptr, 0xA5, sizeof(raw.dptr));
  const DataSegment pieces[2] = {seg(0, 512), seg(4096, 1024)};
  ASSERT_TRUE(q_->submit_raw(raw, pieces, record, &tags_[1]).ok());
  ASSERT_TRUE(write(40, 4096, 2).ok());
  ASSERT_EQ(ch_->posts.size(), 2u);
  const FakeChannel::Post& p = ch_->posts[0];
  EXPECT_EQ(p.sqe.nsid, 9u);
  EXPECT_EQ(p.sqe.cdw10, 77u);
  EXPECT_EQ(std::memcmp(&p.sqe.dptr, &raw.dptr, sizeof(raw.dptr)), 0) << "SGL1 as given";
  ASSERT_EQ(p.pieces.size(), 2u);
  EXPECT_EQ(p.pieces[1].addr, reinterpret_cast<uint64_t>(data_.data()) + 4096);
  EXPECT_EQ(p.pieces[1].length, 1024u);

  ch_->fail_poll = Status::unavailable("the target disconnected");
  ASSERT_TRUE(q_->process_completions().ok());
  reap(1);
  EXPECT_EQ(seen_.tags[0], 1u);
  EXPECT_EQ(seen_.completions[0].status,
            make_status(proto::kSctPath, proto::kScCommandAbortedByHost));
  EXPECT_EQ(seen_.completions[0].resubmissions, 0u);
  EXPECT_EQ(q_->stats().aborted, 1u);
  // Submitted while reconnecting: never sent yet, so it goes on the new connection.
  ASSERT_TRUE(q_->submit_raw(raw, {}, record, &tags_[3]).ok());
  auto next = std::make_unique<FakeChannel>(8);
  FakeChannel* ch2 = next.get();
  link_.reconnect(std::move(next));
  ASSERT_TRUE(q_->process_completions().ok());
  ASSERT_EQ(ch2->posts.size(), 2u) << "the write again and the new passthrough; not the lost one";
  EXPECT_EQ(ch2->posts[0].sqe.cdw10, 40u);
  EXPECT_EQ(ch2->posts[1].sqe.cdw10, 77u);
  EXPECT_TRUE(ch2->posts[1].pieces.empty());
  ch2->complete_all();
  reap(3);
  EXPECT_EQ(seen_.completions[1].status, 0);
  EXPECT_EQ(seen_.completions[2].status, 0);
  EXPECT_EQ(link_.resubmissions, 1u);

  const DataSegment five[5] = {seg(0, 512), seg(512, 512), seg(1024, 512), seg(1536, 512),
                               seg(2048, 512)};
  Status st = q_->submit_raw(raw, five, record, &tags_[4]);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
}

// A command planned by the caller (how Controller::write() cuts a transfer) goes as planned;
// what is not one command's plan for the queue's limits is refused without a callback.
TEST_F(IoQueueTest, APlannedWriteCommandGoesAsPlanned) {
  make(8);
  const DataSegment two[2] = {seg(0, 1024), seg(8192, 2048)};
  TransferCursor cursor;
  auto plan = next_write_command(two, cursor, params().limits);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->path, WritePath::kInCapsule);
  ASSERT_TRUE(q_->submit_write_command(50, *plan, record, &tags_[1], /*fua=*/true).ok());
  ASSERT_EQ(ch_->posts.size(), 1u);
  EXPECT_EQ(ch_->posts[0].sqe.cdw10, 50u);
  EXPECT_EQ(ch_->posts[0].sqe.cdw12 & proto::kRwNlbMask, 3u * 1024 / kLba - 1);
  EXPECT_NE(ch_->posts[0].sqe.cdw12 & proto::kRwFua, 0u);
  ASSERT_EQ(ch_->posts[0].pieces.size(), 2u);
  EXPECT_EQ(ch_->posts[0].pieces[1].addr, reinterpret_cast<uint64_t>(data_.data()) + 8192);

  CommandPlan bad = *plan;
  bad.bytes = 1000;  // not whole LBAs
  EXPECT_EQ(q_->submit_write_command(51, bad, record, &tags_[2]).code(),
            StatusCode::kInvalidArgument);
  bad = *plan;
  bad.num_pieces = 0;
  EXPECT_EQ(q_->submit_write_command(52, bad, record, &tags_[2]).code(),
            StatusCode::kInvalidArgument);
  bad.num_pieces = 1;
  bad.bytes = 256 * 1024;  // above max_command_bytes
  EXPECT_EQ(q_->submit_write_command(53, bad, record, &tags_[2]).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ch_->posts.size(), 1u);
  ch_->complete_all();
  reap(1);
}

TEST_F(IoQueueTest, AnotherQueuesLossTakesThisConnectionDownToo) {
  make(8);
  ASSERT_TRUE(write(1, 4096, 0).ok());
  link_.lose();  // the admin queue or another I/O queue failed
  ASSERT_TRUE(q_->process_completions().ok());
  EXPECT_TRUE(destroyed_);
  EXPECT_TRUE(link_.losses.empty()) << "nothing to report: the link knows";
  auto next = std::make_unique<FakeChannel>(8);
  FakeChannel* ch2 = next.get();
  link_.reconnect(std::move(next));
  ASSERT_TRUE(q_->process_completions().ok());
  ASSERT_EQ(ch2->posts.size(), 1u);
  ch2->complete_all();
  reap(1);
  EXPECT_EQ(seen_.completions[0].status, 0);
  EXPECT_EQ(seen_.completions[0].resubmissions, 1u);
}

TEST_F(IoQueueTest, PastFastIoFailHeldCommandsFailWithHostPathingError) {
  make(8);
  ASSERT_TRUE(write(1, 4096, 0).ok());
  ASSERT_TRUE(write(2, 4096, 1).ok());
  ch_->fail_poll = Status::unavailable("the target disconnected");
  ASSERT_TRUE(q_->process_completions().ok());
  link_.set(LinkState::kFailFast);
  reap(2);
  const uint16_t path_error = make_status(proto::kSctPath, proto::kScHostPathingError);
  EXPECT_EQ(seen_.completions[0].status, path_error);
  EXPECT_EQ(seen_.completions[1].status, path_error);
  EXPECT_EQ(seen_.tags[0], 0u);
  Status refused = write(3, 4096, 2);
  EXPECT_EQ(refused.code(), StatusCode::kNvmeError);
  ASSERT_TRUE(refused.nvme_status().has_value());
  EXPECT_EQ(*refused.nvme_status(), path_error);
  EXPECT_EQ(q_->stats().path_failures, 2u);
  // Reconnected after all: commands are taken again.
  link_.reconnect(std::make_unique<FakeChannel>(8));
  EXPECT_TRUE(write(3, 4096, 2).ok());
}

TEST_F(IoQueueTest, DeletedControllerFailsWhatWasInFlight) {
  make(8);
  ASSERT_TRUE(write(1, 4096, 0).ok());
  link_.set(LinkState::kDeleted);
  reap(1);
  EXPECT_EQ(seen_.completions[0].status, make_status(proto::kSctPath, proto::kScHostPathingError));
  EXPECT_TRUE(destroyed_);
  EXPECT_EQ(q_->submit_flush(record, &tags_[1]).code(), StatusCode::kNvmeError);
}

TEST_F(IoQueueTest, NoCompletionWithinTheCommandTimeoutIsALoss) {
  auto ch = std::make_unique<FakeChannel>(4, &destroyed_);
  IoQueue::Params p = params();
  p.command_timeout = std::chrono::milliseconds(0);
  q_ = std::make_unique<IoQueue>(p, link_, std::move(ch));
  ASSERT_TRUE(write(1, 512, 0).ok());
  for (int i = 0; i < 1000 && link_.losses.empty(); ++i) {
    ASSERT_TRUE(q_->process_completions().ok());
  }
  ASSERT_EQ(link_.losses.size(), 1u);
  EXPECT_NE(link_.losses[0].why.find("no completion within 0 ms"), std::string::npos);
  EXPECT_TRUE(destroyed_);
  EXPECT_EQ(q_->outstanding(), 1u) << "held for the next association";
}

TEST_F(IoQueueTest, HeldCommandsWaitForSlotsOnASmallerQueue) {
  make(8);
  for (uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(write(i, 512, i).ok());
  ch_->fail_poll = Status::io("lost");
  ASSERT_TRUE(q_->process_completions().ok());
  auto next = std::make_unique<FakeChannel>(2);
  FakeChannel* ch2 = next.get();
  link_.reconnect(std::move(next));
  ASSERT_TRUE(q_->process_completions().ok());
  ASSERT_EQ(ch2->posts.size(), 2u);
  ch2->complete(0);
  ASSERT_TRUE(q_->process_completions().ok());
  ASSERT_EQ(ch2->posts.size(), 3u);
  EXPECT_EQ(ch2->posts[2].sqe.cdw10, 2u);
  ch2->complete_all();
  ASSERT_TRUE(q_->process_completions().ok());
  ch2->complete_all();
  reap(4);
  EXPECT_EQ(seen_.tags, (std::vector<uint64_t>{0, 1, 2, 3}));
}

TEST_F(IoQueueTest, AFailedPostIsALossAndTheCommandIsHeldInItsPlace) {
  make(8);
  ASSERT_TRUE(write(1, 512, 0).ok());
  ch_->fail_post = Status::io("ibv_post_send: Invalid argument");
  ASSERT_TRUE(write(2, 512, 1).ok()) << "accepted: recovery sends it";
  ASSERT_EQ(link_.losses.size(), 1u);
  auto next = std::make_unique<FakeChannel>(8);
  FakeChannel* ch2 = next.get();
  link_.reconnect(std::move(next));
  ASSERT_TRUE(q_->process_completions().ok());
  ASSERT_EQ(ch2->posts.size(), 2u);
  EXPECT_EQ(ch2->posts[0].sqe.cdw10, 1u);
  EXPECT_EQ(ch2->posts[1].sqe.cdw10, 2u);
}

TEST_F(IoQueueTest, ProcessCompletionsRunsAtMostMaxCallbacks) {
  make(8);
  for (uint64_t i = 0; i < 5; ++i) ASSERT_TRUE(write(i, 512, i).ok());
  ch_->complete_all();
  Result<int> ran = q_->process_completions(2);
  ASSERT_TRUE(ran.ok());
  EXPECT_EQ(*ran, 2);
  ran = q_->process_completions(0);
  ASSERT_TRUE(ran.ok());
  EXPECT_EQ(*ran, 3);
}

// delay_cmd_submit: the capsules of several submit calls are chained and go out together at the
// next process_completions() (SPDK's delay_cmd_submit); a failure to post them is a loss.
TEST_F(IoQueueTest, DelayedSubmissionsGoOutTogetherAtTheNextPoll) {
  auto ch = std::make_unique<FakeChannel>(8);
  ch_ = ch.get();
  IoQueue::Params p = params();
  p.delay_cmd_submit = true;
  q_ = std::make_unique<IoQueue>(p, link_, std::move(ch));
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(write(200 + i, 4096, i).ok());
  ASSERT_EQ(ch_->posts.size(), 3u);
  EXPECT_TRUE(ch_->posts[0].deferred && ch_->posts[2].deferred);
  EXPECT_EQ(ch_->chained, 3);
  EXPECT_EQ(ch_->post_deferred_calls, 0) << "nothing on the wire before a poll";
  ASSERT_TRUE(q_->process_completions().ok());
  EXPECT_EQ(ch_->post_deferred_calls, 1);
  EXPECT_EQ(ch_->chained, 0);
  ASSERT_TRUE(q_->process_completions().ok());
  EXPECT_EQ(ch_->post_deferred_calls, 1) << "no empty post";
  ch_->complete_all();
  reap(3);

  ASSERT_TRUE(write(300, 4096, 4).ok());
  ch_->fail_post_deferred = Status::io("ibv_post_send: the QP is in error");
  ASSERT_TRUE(q_->process_completions().ok());
  ASSERT_EQ(link_.losses.size(), 1u);
  EXPECT_NE(link_.losses[0].why.find("ibv_post_send"), std::string::npos);
  EXPECT_EQ(q_->outstanding(), 1u) << "held for the next association";
}

// A thread sleeping on several queues: their channels' fds, and what fired handed back; a
// disconnect seen there is a loss. Without a connection there is nothing to sleep on.
TEST_F(IoQueueTest, WaitFdsAndAfterWaitServeAThreadOfSeveralQueues) {
  make(8);
  ch_->completion_fd = 5;
  ch_->cm_fd = 6;
  ASSERT_TRUE(write(1, 4096, 0).ok());
  pollfd fds[2];
  q_->wait_fds(fds);
  EXPECT_EQ(fds[0].fd, 5);
  EXPECT_EQ(fds[1].fd, 6);
  EXPECT_NE(q_->progress_deadline(), Deadline::max()) << "a command is in flight";
  fds[0].revents = POLLIN;
  fds[1].revents = 0;
  q_->after_wait(fds);
  EXPECT_EQ(ch_->after_waits, 1);
  EXPECT_TRUE(link_.losses.empty());
  fds[1].revents = POLLIN;
  q_->after_wait(fds);
  ASSERT_EQ(link_.losses.size(), 1u);
  EXPECT_TRUE(destroyed_);
  q_->wait_fds(fds);
  EXPECT_EQ(fds[0].fd, -1);
  EXPECT_EQ(fds[1].fd, -1);
  q_->after_wait(fds);  // nothing to consume
  link_.lose();
  auto next = std::make_unique<FakeChannel>(8);
  link_.reconnect(std::move(next));
  ASSERT_TRUE(q_->process_completions().ok());
  EXPECT_EQ(q_->stats().connections, 1u);
}

// A command that breaks every connection it goes on is sent kMaxResubmissions times, then
// aborted (Linux's nvme_max_retries): the host does not reconnect for it forever.
TEST_F(IoQueueTest, ACommandLostFiveTimesIsAbortedNotSentAgain) {
  make(8);
  ASSERT_TRUE(write(7, 4096, 1).ok());
  FakeChannel* ch = ch_;
  for (uint32_t i = 0; i <= IoQueue::kMaxResubmissions; ++i) {
    ch->fail_poll = Status::io("work completion error");
    ASSERT_TRUE(q_->process_completions().ok());
    if (i == IoQueue::kMaxResubmissions) break;
    auto next = std::make_unique<FakeChannel>(8);
    ch = next.get();
    link_.reconnect(std::move(next));
    ASSERT_TRUE(q_->process_completions().ok());
    ASSERT_EQ(ch->posts.size(), 1u) << "sent again, time " << i + 1;
  }
  reap(1);
  EXPECT_EQ(seen_.completions[0].status,
            make_status(proto::kSctPath, proto::kScCommandAbortedByHost));
  EXPECT_EQ(seen_.completions[0].resubmissions, IoQueue::kMaxResubmissions);
  EXPECT_EQ(q_->stats().aborted, 1u);
  EXPECT_EQ(link_.dropped, static_cast<int>(IoQueue::kMaxResubmissions) + 1)
      << "each dropped connection told to the link";
}

// What a connection refuses for good (more in-capsule pieces than it has SGEs) aborts that
// command; it is not a loss.
TEST_F(IoQueueTest, APostTheConnectionCannotEverTakeAbortsTheCommandOnly) {
  make(8);
  ch_->fail_post = Status::invalid_argument("5 in-capsule segments, the QP takes 4");
  ASSERT_TRUE(write(1, 4096, 1).ok());
  reap(1);
  EXPECT_EQ(seen_.completions[0].status,
            make_status(proto::kSctPath, proto::kScCommandAbortedByHost));
  EXPECT_TRUE(link_.losses.empty());
  EXPECT_FALSE(destroyed_);
  ch_->fail_post = Status();
  ASSERT_TRUE(write(2, 4096, 2).ok());
  ch_->complete_all();
  reap(2);
  EXPECT_EQ(seen_.completions[1].status, 0);
}

// A new association whose connection takes no in-capsule data (a failover path): a held write
// of one piece goes keyed; one of several pieces (no keyed SGL can describe it) is aborted; new
// writes are planned for the new connection.
TEST_F(IoQueueTest, HeldInCapsuleWritesFollowTheNewConnectionsPolicy) {
  make(8);
  ASSERT_TRUE(write(10, 4096, 1).ok());  // in-capsule, one piece
  const DataSegment two[2] = {seg(0, 512), seg(8192, 512)};
  ASSERT_TRUE(q_->submit_write(20, two, record, &tags_[2]).ok());  // in-capsule, two pieces
  ASSERT_EQ(ch_->posts[0].pieces.size(), 1u);
  link_.lose();
  ASSERT_TRUE(q_->process_completions().ok());
  auto next = std::make_unique<FakeChannel>(8);
  next->policy().enabled = false;
  next->policy().max_bytes = 0;
  FakeChannel* ch2 = next.get();
  link_.reconnect(std::move(next));
  ASSERT_TRUE(q_->process_completions().ok());
  ASSERT_EQ(ch2->posts.size(), 1u);
  EXPECT_EQ(ch2->posts[0].sqe.cdw10, 10u);
  EXPECT_TRUE(ch2->posts[0].pieces.empty()) << "keyed now: the target reads it";
  EXPECT_FALSE(q_->limits().in_capsule.enabled);
  ch2->complete_all();
  reap(2);
  EXPECT_EQ(seen_.tags[0], 2u);
  EXPECT_EQ(seen_.completions[0].status,
            make_status(proto::kSctPath, proto::kScCommandAbortedByHost));
  EXPECT_EQ(seen_.completions[1].status, 0);
  ASSERT_TRUE(write(30, 4096, 3).ok());
  ASSERT_EQ(ch2->posts.size(), 2u);
  EXPECT_TRUE(ch2->posts[1].pieces.empty()) << "planned keyed for this connection";
  ch2->complete_all();
  reap(3);
}

// close() (disconnect()): what was outstanding fails, and so does everything later, whatever
// the link does afterwards.
TEST_F(IoQueueTest, AClosedQueueStaysClosed) {
  make(8);
  ASSERT_TRUE(write(1, 4096, 1).ok());
  q_->close();
  reap(1);
  EXPECT_EQ(seen_.completions[0].status, make_status(proto::kSctPath, proto::kScHostPathingError));
  EXPECT_EQ(link_.dropped, 1);
  link_.reconnect(std::make_unique<FakeChannel>(8));  // a reconnect that ended while stopping
  Status st = write(2, 4096, 2);
  EXPECT_EQ(st.code(), StatusCode::kNvmeError) << st.to_string();
  EXPECT_EQ(q_->link_state(), LinkState::kDeleted);
}

TEST(LinkStateTest, Names) {
  EXPECT_STREQ(link_state_name(LinkState::kLive), "live");
  EXPECT_STREQ(link_state_name(LinkState::kReconnecting), "reconnecting");
  EXPECT_STREQ(link_state_name(LinkState::kDeleted), "deleted");
}

}  // namespace
}  // namespace nvmf::host
