// SPDX-License-Identifier: BSD-3-Clause
// End to end over soft-RoCE, in process: our target library on one thread, our host library on
// another, checking the advertised fields, data written and read back, the path each write took
// (the target's counters), and the statuses of bad requests.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "ci/e2e/e2e_options.h"
#include "ci/e2e/running_target.h"
#include "ci/e2e/rxe_env.h"
#include "common/nvme_status.h"
#include "host/bench/bench.h"
#include "host/controller.h"
#include "proto/nvme.h"
#include "target/target.h"

namespace nvmf::e2e {
namespace {

constexpr uint64_t kRamBytes = 64ull << 20;
constexpr uint32_t kLbaSize = 512;
constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:e2e";

// max_inline_data asked by each side, from NVMF_HOST_MAX_INLINE_DATA / NVMF_TARGET_MAX_INLINE_DATA
// when set: ci/run-rxe-tests.sh runs this suite a second time with both 0, so that every capsule
// and response goes by reference (the inline-send path must not hide a bug of the old one).
std::optional<uint32_t> max_inline_data_from_env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  unsigned long n = std::strtoul(v, &end, 10);
  if (*end != '\0' || n > UINT32_MAX) {
    ADD_FAILURE() << name << "=" << v << " is not a byte count";
    return std::nullopt;
  }
  return static_cast<uint32_t>(n);
}

class LoopbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NVMF_REQUIRE_RXE(env_);
    host_max_inline_data_ = max_inline_data_from_env("NVMF_HOST_MAX_INLINE_DATA");
    target_max_inline_data_ = max_inline_data_from_env("NVMF_TARGET_MAX_INLINE_DATA");
    target::TargetOptions topts = ram_target_options(*env_, kNqn, kRamBytes, kLbaSize);
    if (target_max_inline_data_) topts.requested_max_inline_data = *target_max_inline_data_;
    target_ = RunningTarget::start(topts);
    ASSERT_NE(target_, nullptr);

    host::HostOptions hopts = host_options_for(*env_, (*target_)->port(), kNqn, 32);
    if (host_max_inline_data_) hopts.requested_max_inline_data = *host_max_inline_data_;
    auto ctrl = host::Controller::connect(hopts);
    ASSERT_TRUE(ctrl.ok()) << ctrl.status().to_string();
    ctrl_ = std::move(*ctrl);
  }

  void TearDown() override {
    // The mode asked for is the mode that ran: 0 means nothing was posted inline.
    if (ctrl_ && host_max_inline_data_ == 0u) {
      EXPECT_EQ(ctrl_->stats().capsules_inline, 0u);
    }
    if (ctrl_ && host_max_inline_data_.value_or(64) >= 64) {
      EXPECT_GT(ctrl_->stats().capsules_inline, 0u);
    }
    if (target_ && target_max_inline_data_ == 0u) {
      EXPECT_EQ((*target_)->stats().totals.responses_inline, 0u);
    }
    if (ctrl_) {
      Status s = ctrl_->disconnect();
      EXPECT_TRUE(s.ok()) << s.to_string();
      ctrl_.reset();
    }
    target_.reset();
  }

  target::CounterSnapshot target_totals() { return (*target_)->stats().totals; }

  std::optional<RxeEnv> env_;
  std::optional<uint32_t> host_max_inline_data_;
  std::optional<uint32_t> target_max_inline_data_;
  std::unique_ptr<RunningTarget> target_;
  std::unique_ptr<host::Controller> ctrl_;
};

TEST_F(LoopbackTest, IdentifyAdvertisesWhatTheTargetDoes) {
  const proto::IdentifyController& id = ctrl_->identify_controller();
  EXPECT_EQ(id.sgls & 0x3u, 0x1u) << "SGLS bits 1:0: SGLs supported, no alignment rule";
  EXPECT_NE(id.sgls & proto::kSglsKeyedDataBlock, 0u) << "SGLS bit 2 (keyed data block)";
  EXPECT_NE(id.sgls & proto::kSglsOffset, 0u) << "SGLS bit 20 (in-capsule offsets)";
  EXPECT_EQ(id.ioccsz, (64u + 4096u) / 16u) << "one page of in-capsule data by default";
  EXPECT_EQ(id.iorcsz, 1u);
  EXPECT_EQ(id.icdoff, 0u);
  EXPECT_EQ(id.msdbd, 1u);
  EXPECT_GT(id.kas, 0u);
  EXPECT_GT(id.mdts, 0u);
  EXPECT_EQ(id.nn, 1024u);  // NSIDs up to 1024 may be added on a running target
  EXPECT_EQ(id.sqes, 0x66);
  EXPECT_EQ(id.cqes, 0x44);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(id.subnqn)), kNqn);

  EXPECT_EQ(ctrl_->lba_size(), kLbaSize);
  EXPECT_EQ(ctrl_->namespace_info().nsze, kRamBytes / kLbaSize);

  host::Negotiation n = ctrl_->negotiation();
  EXPECT_EQ(n.in_capsule_data_size, 4096u);
  EXPECT_TRUE(n.in_capsule_enabled) << n.in_capsule_why_off;
  EXPECT_EQ(n.icdoff, 0u);
  EXPECT_GE(n.max_in_capsule_segments, 1u);
  EXPECT_LE(n.max_in_capsule_segments, 4u);
  EXPECT_EQ(n.mdts_bytes, (1ull << id.mdts) * 4096);
}

struct SizeCase {
  uint32_t bytes;
  uint64_t slba;    // deliberately not a multiple of the transfer size
  bool in_capsule;  // expected path of every command
};

class WriteReadTest : public LoopbackTest, public ::testing::WithParamInterface<SizeCase> {};

TEST_P(WriteReadTest, ReadsBackWhatWasWrittenOnTheExpectedPath) {
  const SizeCase c = GetParam();
  std::vector<uint8_t> out(c.bytes), in(c.bytes, 0);
  std::mt19937 rng(c.bytes ^ static_cast<uint32_t>(c.slba));
  for (auto& b : out) b = static_cast<uint8_t>(rng());
  auto out_mr = ctrl_->register_buffer(out.data(), out.size());
  ASSERT_TRUE(out_mr.ok()) << out_mr.status().to_string();
  auto in_mr = ctrl_->register_buffer(in.data(), in.size());
  ASSERT_TRUE(in_mr.ok()) << in_mr.status().to_string();

  const target::CounterSnapshot before = target_totals();
  host::DataSegment seg = host::segment_of(*out_mr);
  Status w = ctrl_->write(c.slba, std::span<const host::DataSegment>(&seg, 1));
  ASSERT_TRUE(w.ok()) << w.to_string();
  Status r = ctrl_->read(c.slba, host::segment_of(*in_mr));
  ASSERT_TRUE(r.ok()) << r.to_string();
  EXPECT_EQ(0, std::memcmp(out.data(), in.data(), c.bytes))
      << c.bytes << " bytes at LBA " << c.slba;

  const target::CounterSnapshot after = target_totals();
  const uint64_t mdts = ctrl_->negotiation().mdts_bytes;
  const uint64_t commands = (c.bytes + mdts - 1) / mdts;
  if (c.in_capsule) {
    EXPECT_EQ(after.writes_in_capsule - before.writes_in_capsule, commands);
    EXPECT_EQ(after.writes_in_capsule_bytes - before.writes_in_capsule_bytes, c.bytes);
    EXPECT_EQ(after.writes_rdma_read, before.writes_rdma_read);
  } else {
    EXPECT_EQ(after.writes_rdma_read - before.writes_rdma_read, commands);
    EXPECT_EQ(after.writes_rdma_read_bytes - before.writes_rdma_read_bytes, c.bytes);
    EXPECT_EQ(after.writes_in_capsule, before.writes_in_capsule);
  }
  EXPECT_EQ(after.read_bytes - before.read_bytes, c.bytes);
  const host::HostStats hs = ctrl_->stats();
  EXPECT_EQ(c.in_capsule ? hs.bytes_in_capsule : hs.bytes_keyed, c.bytes);
}

INSTANTIATE_TEST_SUITE_P(Sizes, WriteReadTest,
                         ::testing::Values(SizeCase{512, 7, true}, SizeCase{4096, 13, true},
                                           SizeCase{8192, 1001, false},
                                           SizeCase{1u << 20, 4099, false}),
                         [](const auto& info) { return std::to_string(info.param.bytes) + "B"; });

TEST_F(LoopbackTest, ReadPastTheEndIsLbaOutOfRangeAndTheQueueStaysUsable) {
  std::vector<uint8_t> buf(2 * kLbaSize);
  auto mr = ctrl_->register_buffer(buf.data(), buf.size());
  ASSERT_TRUE(mr.ok()) << mr.status().to_string();
  const uint64_t last = kRamBytes / kLbaSize - 1;

  Status r = ctrl_->read(last, host::segment_of(*mr));  // the second LBA is past the end
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.code(), StatusCode::kNvmeError) << r.to_string();
  ASSERT_TRUE(r.nvme_status().has_value());
  EXPECT_EQ(status_sct(*r.nvme_status()), proto::kSctGeneric);
  EXPECT_EQ(status_sc(*r.nvme_status()), proto::kScLbaOutOfRange) << r.to_string();
  EXPECT_TRUE(status_dnr(*r.nvme_status())) << r.to_string();

  Status w = ctrl_->write(last + 1, std::span<const host::DataSegment>());
  EXPECT_FALSE(w.ok()) << "an empty write must be refused";

  host::DataSegment seg = host::segment_of(*mr);
  Status w2 = ctrl_->write(last, std::span<const host::DataSegment>(&seg, 1));
  ASSERT_FALSE(w2.ok());
  ASSERT_TRUE(w2.nvme_status().has_value()) << w2.to_string();
  EXPECT_EQ(status_sc(*w2.nvme_status()), proto::kScLbaOutOfRange) << w2.to_string();

  // The same queue still serves good I/O.
  Status ok = ctrl_->read(last - 1, host::segment_of(*mr));
  EXPECT_TRUE(ok.ok()) << ok.to_string();
}

TEST_F(LoopbackTest, FlushSucceeds) {
  Status f = ctrl_->flush();
  EXPECT_TRUE(f.ok()) << f.to_string();
}

// RDMA READ depth: a QD32 run of 64 KiB writes with verify makes every command of
// the queue want an RDMA READ at once. The target must never have more READs outstanding than
// the initiator depth it accepted with (--max-rdma-read-depth 4 here, below what rxe and the host
// offer), must reach that depth, and must make the others wait in order rather than fail: every
// write lands and reads back intact. Without the cap the high-water mark is the queue depth.
TEST(LoopbackReadDepthTest, Qd32WritesNeverExceedTheReadDepth) {
  std::optional<RxeEnv> env;
  NVMF_REQUIRE_RXE(env);
  constexpr char kDepthNqn[] = "nqn.2024-01.io.nvmf-rdma:e2e-read-depth";
  target::TargetOptions topts = ram_target_options(*env, kDepthNqn, 16ull << 20, kLbaSize);
  topts.max_rdma_read_depth = 4;
  topts.inline_data_size = 0;  // every write's data by RDMA READ
  auto target = RunningTarget::start(topts);
  ASSERT_NE(target, nullptr);
  auto ctrl = host::Controller::connect(host_options_for(*env, (*target)->port(), kDepthNqn, 64));
  ASSERT_TRUE(ctrl.ok()) << ctrl.status().to_string();

  host::BenchOptions b;
  b.rw = host::RwMode::kRandWrite;
  b.bs = {64 * 1024};
  b.iodepth = 32;
  b.numjobs = 1;
  b.runtime_s = 1;
  b.verify = true;
  auto report = host::run_bench(**ctrl, b);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  ASSERT_TRUE(report->status.ok()) << report->status.to_string();
  EXPECT_GT(report->verify_checked, 0u);
  EXPECT_EQ(report->verify_errors, 0u) << report->verify_first_error;
  ASSERT_EQ(report->results.size(), 1u);
  EXPECT_GT(report->results[0].all.write.ios, 0u);

  // The host has seen every CQE; the target frees a slot when it sees the SEND's completion,
  // which may come a moment later.
  target::TargetStats t = (*target)->stats();
  auto all_free = [](const target::TargetStats& s) {
    for (const target::QueueStats& q : s.queues) {
      if (q.qid != 0 &&
          q.counters.state_now[static_cast<size_t>(target::RequestState::kDone)] != q.queue_size) {
        return false;
      }
    }
    return true;
  };
  for (int i = 0; i < 500 && !all_free(t); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    t = (*target)->stats();
  }
  bool saw_io_queue = false;
  for (const target::QueueStats& q : t.queues) {
    EXPECT_EQ(q.rdma_read_depth, 4u) << "qid " << q.qid;
    EXPECT_LE(q.counters.rdma_reads_in_flight_max, 4u) << "qid " << q.qid;
    EXPECT_GE(q.send_queue_depth, 2 * q.queue_size) << "qid " << q.qid;
    if (q.qid == 0) continue;
    saw_io_queue = true;
    EXPECT_EQ(q.counters.rdma_reads_in_flight_max, 4u) << "the depth was reached";
    EXPECT_GT(q.counters.rdma_read_waits, 0u) << "READs beyond the depth waited";
    const auto& entered = q.counters.state_entered;
    auto at = [](target::RequestState s) { return static_cast<size_t>(s); };
    EXPECT_EQ(entered[at(target::RequestState::kWaitingForReadCredit)],
              entered[at(target::RequestState::kTransferringFromHost)])
        << "every waiting READ was posted";
    EXPECT_EQ(entered[at(target::RequestState::kTransferringFromHost)],
              q.counters.writes_rdma_read + 1)
        << "the keyed writes and the Connect's data";
    EXPECT_EQ(entered[at(target::RequestState::kNew)], q.counters.commands);
    EXPECT_EQ(q.counters.state_now[at(target::RequestState::kDone)], q.queue_size)
        << "every slot free once the host saw its last completion";
  }
  EXPECT_TRUE(saw_io_queue);
  EXPECT_TRUE((*ctrl)->disconnect().ok());
}

// Shared data buffers: with 3 buffers for a QD32 run of 64 KiB random reads and
// writes with verify, commands that move data wait for a buffer (waiting_for_buffer) instead of
// failing, every one completes, the data reads back intact, and the buffers are all back once
// the host saw its last completion.
TEST(LoopbackSharedBuffersTest, CommandsWaitForABufferAndNoneFails) {
  std::optional<RxeEnv> env;
  NVMF_REQUIRE_RXE(env);
  constexpr char kPoolNqn[] = "nqn.2024-01.io.nvmf-rdma:e2e-shared-buffers";
  target::TargetOptions topts = ram_target_options(*env, kPoolNqn, 16ull << 20, kLbaSize);
  topts.num_shared_buffers = 3;
  // Local ACK timeout 16 (268 ms), not rdma_cm's 19 (2147 ms). On soft-RoCE under load rxe
  // drops (veth backlog) or reorders a QP's packets and every run here retries tens of them
  // (rxe0 completer_retry_err); one CI run lost qid 2's response SENDs for two retransmit rounds
  // at 2147 ms, past the host's 5 s timeout, while they held all 3 buffers.
  topts.ack_timeout = 16;
  auto target = RunningTarget::start(topts);
  ASSERT_NE(target, nullptr);
  host::HostOptions hopts = host_options_for(*env, (*target)->port(), kPoolNqn, 64);
  hopts.num_io_queues = 2;
  hopts.ack_timeout = 16;  // the host's QPs too: its capsules and the target's READ responses
  auto ctrl = host::Controller::connect(hopts);
  ASSERT_TRUE(ctrl.ok()) << ctrl.status().to_string();

  host::BenchOptions b;
  b.rw = host::RwMode::kRandRw;
  b.bs = {64 * 1024};
  b.iodepth = 32;
  b.numjobs = 2;
  b.runtime_s = 1;
  b.verify = true;
  auto report = host::run_bench(**ctrl, b);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  ASSERT_TRUE(report->status.ok()) << report->status.to_string();
  EXPECT_GT(report->verify_checked, 0u);
  EXPECT_EQ(report->verify_errors, 0u) << report->verify_first_error;

  const size_t waiting = static_cast<size_t>(target::RequestState::kWaitingForBuffer);
  const size_t done = static_cast<size_t>(target::RequestState::kDone);
  target::TargetStats t = (*target)->stats();
  EXPECT_GT(t.totals.buffer_waits, 0u);
  EXPECT_EQ(t.totals.state_entered[waiting], t.totals.buffer_waits);
  EXPECT_EQ(t.totals.errors, 0u);
  int io_queues = 0;
  for (const target::QueueStats& q : t.queues) {
    EXPECT_EQ(q.ack_timeout, 16u) << "qid " << q.qid << ": the QP's local ACK timeout";
    if (q.qid == 0) continue;
    ++io_queues;
    EXPECT_EQ(q.counters.state_now[waiting], 0u) << "qid " << q.qid;
    EXPECT_LE(q.counters.state_now[done], q.queue_size) << "qid " << q.qid;
  }
  EXPECT_EQ(io_queues, 2);
  host::Negotiation n = (*ctrl)->negotiation();
  ASSERT_EQ(n.queues.size(), 3u);
  for (const host::QueueInlineSend& q : n.queues) {
    EXPECT_EQ(q.ack_timeout, 16u) << "host qid " << q.qid << ": the QP's local ACK timeout";
  }
  EXPECT_TRUE((*ctrl)->disconnect().ok());
}

// Shared CQs (target/shared_cq.h): every queue of a poll group on a device completes on one CQ,
// not one each: an admin queue and 4 I/O queues, all busy with verified I/O, use the CQ the
// target made when it saw the device at start-up (at least the SRQ's depth + 4096 entries: rxe
// rounds a CQ up to a power of two, less one).
TEST(LoopbackSharedCqTest, FiveQueuesOfOneGroupShareOneCq) {
  std::optional<RxeEnv> env;
  NVMF_REQUIRE_RXE(env);
  constexpr char kCqNqn[] = "nqn.2024-01.io.nvmf-rdma:e2e-shared-cq";
  target::TargetOptions topts = ram_target_options(*env, kCqNqn, 16ull << 20, kLbaSize);
  topts.poll_groups = 1;
  auto target = RunningTarget::start(topts);
  ASSERT_NE(target, nullptr);
  const target::ResourceStats idle = (*target)->stats().resources;
  EXPECT_EQ(idle.cqs, 1u) << "made with the SRQ when the device was first seen";
  EXPECT_GE(idle.cq_entries, idle.srq_receives + 4096);
  host::HostOptions hopts = host_options_for(*env, (*target)->port(), kCqNqn, 32);
  hopts.num_io_queues = 4;
  auto ctrl = host::Controller::connect(hopts);
  ASSERT_TRUE(ctrl.ok()) << ctrl.status().to_string();
  host::BenchOptions b;
  b.rw = host::RwMode::kRandRw;
  b.bs = {4096, 64 * 1024};
  b.iodepth = 16;
  b.numjobs = 4;
  b.runtime_s = 0.5;
  b.size = 1 << 20;
  b.verify = true;
  auto report = host::run_bench(**ctrl, b);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  ASSERT_TRUE(report->status.ok()) << report->status.to_string();
  EXPECT_GT(report->verify_checked, 0u);
  EXPECT_EQ(report->verify_errors, 0u) << report->verify_first_error;
  ASSERT_EQ(report->results.size(), 2u) << "one result per block size";
  ASSERT_EQ(report->results[0].jobs.size(), 4u);
  for (const host::JobResult& j : report->results[0].jobs) {
    EXPECT_GT(j.read.ios + j.write.ios, 0u) << "job " << j.jobid;
  }
  target::TargetStats t = (*target)->stats();
  EXPECT_EQ(t.queues.size(), 5u);
  EXPECT_EQ(t.resources.cqs, 1u) << "one shared CQ, not one per queue";
  EXPECT_EQ(t.resources.cq_entries, idle.cq_entries) << "5 small queues fit: no growth";
  EXPECT_EQ(t.totals.errors, 0u);
  EXPECT_TRUE((*ctrl)->disconnect().ok());
}

// Connects `io_queues` I/O queues of 128 entries and runs verified I/O on every one; returns the
// connected controller (null after a failure).
std::unique_ptr<host::Controller> connect_and_verify(const RxeEnv& env, target::Target& target,
                                                     const std::string& nqn, uint16_t io_queues,
                                                     const std::string& where) {
  host::HostOptions hopts = host_options_for(env, target.port(), nqn, 128);
  hopts.num_io_queues = io_queues;
  auto ctrl = host::Controller::connect(hopts);
  if (!ctrl.ok()) {
    ADD_FAILURE() << where << ": " << ctrl.status().to_string();
    return nullptr;
  }
  EXPECT_EQ((*ctrl)->negotiation().num_io_queues, io_queues) << where;
  host::BenchOptions b;
  b.rw = host::RwMode::kRandRw;
  b.bs = {4096};
  b.iodepth = 8;
  b.numjobs = io_queues;
  b.threads = 2;
  b.runtime_s = 0.3;
  b.size = 1 << 20;
  b.verify = true;
  auto report = host::run_bench(**ctrl, b);
  if (!report.ok()) {
    ADD_FAILURE() << where << ": " << report.status().to_string();
    return nullptr;
  }
  EXPECT_TRUE(report->status.ok()) << where << ": " << report->status.to_string();
  EXPECT_EQ(report->verify_errors, 0u) << where << ": " << report->verify_first_error;
  EXPECT_EQ(report->results[0].jobs.size(), io_queues) << where;
  for (const host::JobResult& j : report->results[0].jobs) {
    EXPECT_GT(j.verify_checked, 0u) << where << ", job " << j.jobid;
  }
  return std::move(*ctrl);
}

// A queue joins a shared CQ only when the CQ can promise it room for every completion it may
// have there at once (its send work requests; the SRQ's depth once per CQ), so no host can
// overflow a CQ other hosts' queues complete on. Receives are 64 bytes here (no in-capsule
// data), so deep SRQs cost little. The admin queue needs 2 x (32 + 4 AER slots) = 72 entries, a
// 128-entry I/O queue 256. rxe makes a CQ of 2^k - 1 entries, at least what was asked.
//  - SRQ 12250: the first CQ (12250 + 4096 asked: 16383) has room for the admin queue and 15
//    I/O queues; the 16th grows it (ibv_resize_cq, doubled: 32767). Still one CQ, kept grown.
//  - --max-srq-depth 40000: deeper than a CQ can keep room for next to queues, so clamped to
//    32767 - 4096 = 28671 (a WARN; it used to refuse every connection). The first CQ is rxe's
//    limit, 32767, with 4096 left: the admin queue and 15 I/O queues fit, the 16th gets a second
//    CQ, destroyed with its last queue; the same again makes one again.
TEST(LoopbackSharedCqTest, ACqWithoutRoomGrowsThenANewOneComesAndGoes) {
  std::optional<RxeEnv> env;
  NVMF_REQUIRE_RXE(env);
  auto start = [&](uint32_t srq_depth, const std::string& nqn) {
    target::TargetOptions topts = ram_target_options(*env, nqn, 16ull << 20, kLbaSize);
    topts.poll_groups = 1;
    topts.srq = true;
    topts.inline_data_size = 0;
    topts.max_srq_depth = srq_depth;
    topts.max_io_queues = 16;
    return RunningTarget::start(topts);
  };
  const std::string grow_nqn = "nqn.2024-01.io.nvmf-rdma:e2e-shared-cq-grow";
  auto grow = start(12250, grow_nqn);
  ASSERT_NE(grow, nullptr);
  const target::ResourceStats first = (*grow)->stats().resources;
  ASSERT_EQ(first.srq_receives, 12250u);
  ASSERT_EQ(first.cqs, 1u);
  ASSERT_GE(first.cq_entries, 12250u + 4096);
  ASSERT_LT((first.cq_entries - 12250 - 72) / 256, 16u) << "16 I/O queues must not fit at first";
  {
    auto ctrl = connect_and_verify(*env, **grow, grow_nqn, 16, "SRQ 12250");
    ASSERT_NE(ctrl, nullptr);
    const target::ResourceStats grown = (*grow)->stats().resources;
    EXPECT_EQ(grown.cqs, 1u);
    EXPECT_GE(grown.cq_entries, 2 * first.cq_entries) << "doubled";
    EXPECT_TRUE(ctrl->disconnect().ok());
  }
  EXPECT_EQ((*grow)->stats().totals.errors, 0u);

  const std::string room_nqn = "nqn.2024-01.io.nvmf-rdma:e2e-shared-cq-room";
  auto room = start(40000, room_nqn);
  ASSERT_NE(room, nullptr);
  ASSERT_EQ((*room)->stats().resources.srq_receives, 28671u) << "clamped";
  ASSERT_EQ((*room)->stats().resources.cq_entries, 32767u);
  for (int round = 1; round <= 2; ++round) {
    const std::string where = "SRQ 28671, round " + std::to_string(round);
    auto ctrl = connect_and_verify(*env, **room, room_nqn, 16, where);
    ASSERT_NE(ctrl, nullptr) << where;
    EXPECT_EQ((*room)->stats().resources.cqs, 2u) << where;
    EXPECT_EQ((*room)->stats().resources.cq_entries, 2u * 32767) << where;
    EXPECT_TRUE(ctrl->disconnect().ok()) << where;
    ctrl.reset();
    // The target destroys the queues when it sees them go (a moment after the host).
    target::ResourceStats r = (*room)->stats().resources;
    for (int i = 0; i < 500 && r.cqs != 1; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      r = (*room)->stats().resources;
    }
    EXPECT_EQ(r.cqs, 1u) << where << ": the second CQ goes with its last queue";
    EXPECT_EQ(r.cq_entries, 32767u) << where;
  }
  EXPECT_EQ((*room)->stats().totals.errors, 0u);
  auto again = connect_and_verify(*env, **grow, grow_nqn, 2, "SRQ 12250 again");
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(again->disconnect().ok());
}

// bench --threads in process (so under ASan + UBSan too): 4 jobs, one I/O queue each, all on
// one thread, then on 2, with event and busy polling: every job completes verified reads and
// writes on its own queue and the report has the 4 jobs and the threads run.
TEST(LoopbackBenchThreadsTest, FewThreadsDriveFourQueuesEventAndBusy) {
  std::optional<RxeEnv> env;
  NVMF_REQUIRE_RXE(env);
  constexpr char kThreadsNqn[] = "nqn.2024-01.io.nvmf-rdma:e2e-bench-threads";
  auto target = RunningTarget::start(ram_target_options(*env, kThreadsNqn, 16ull << 20, kLbaSize));
  ASSERT_NE(target, nullptr);
  for (host::PollMode poll : {host::PollMode::kEvent, host::PollMode::kBusy}) {
    for (uint32_t threads : {1u, 2u}) {
      std::string where = std::string(poll == host::PollMode::kEvent ? "event" : "busy") + ", " +
                          std::to_string(threads) + " threads";
      host::HostOptions hopts = host_options_for(*env, (*target)->port(), kThreadsNqn, 16);
      hopts.num_io_queues = 4;
      hopts.poll_mode = poll;
      auto ctrl = host::Controller::connect(hopts);
      ASSERT_TRUE(ctrl.ok()) << where << ": " << ctrl.status().to_string();
      host::BenchOptions b;
      b.rw = host::RwMode::kRandRw;
      b.bs = {4096};
      b.iodepth = 4;
      b.numjobs = 4;
      b.threads = threads;
      b.runtime_s = 0.5;
      b.size = 1 << 20;
      b.verify = true;
      auto report = host::run_bench(**ctrl, b);
      ASSERT_TRUE(report.ok()) << where << ": " << report.status().to_string();
      EXPECT_TRUE(report->status.ok()) << where << ": " << report->status.to_string();
      EXPECT_GT(report->verify_checked, 0u) << where;
      EXPECT_EQ(report->verify_errors, 0u) << where << ": " << report->verify_first_error;
      EXPECT_EQ(host::bench_json(*report)["global options"]["threads"], threads) << where;
      ASSERT_EQ(report->results.size(), 1u) << where;
      const std::vector<host::JobResult>& jobs = report->results[0].jobs;
      ASSERT_EQ(jobs.size(), 4u) << where;
      for (uint32_t j = 0; j < 4; ++j) {
        EXPECT_EQ(jobs[j].jobid, j) << where;
        EXPECT_EQ(jobs[j].qid, j + 1) << where;
        EXPECT_GT(jobs[j].read.ios, 0u) << where << ", job " << j;
        EXPECT_GT(jobs[j].write.ios, 0u) << where << ", job " << j;
        EXPECT_GT(jobs[j].verify_checked, 0u) << where << ", job " << j;
        EXPECT_TRUE(jobs[j].status.ok()) << where << ", job " << j;
      }
      EXPECT_TRUE((*ctrl)->disconnect().ok()) << where;
    }
  }
}

}  // namespace
}  // namespace nvmf::e2e
