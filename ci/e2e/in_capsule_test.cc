// SPDX-License-Identifier: BSD-3-Clause
// In-capsule write data end to end over soft-RoCE: for each target inline_data_size,
// the negotiation (target stats, Identify, host policy), then a matrix of write sizes x host
// buffers in 1-4 uneven segments where every cell writes, reads back, compares and asserts the
// path from the target's counters (totals, per queue, per controller); then capsules that lie
// about their in-capsule data, each answered with the status wire-facts.md names, after which the
// queue still takes good writes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ci/e2e/e2e_options.h"
#include "ci/e2e/running_target.h"
#include "ci/e2e/rxe_env.h"
#include "common/nvme_status.h"
#include "common/sgl.h"
#include "host/cli/segments.h"
#include "host/commands.h"
#include "host/controller.h"
#include "host/raw/raw_commands.h"
#include "proto/nvme.h"
#include "target/target.h"

namespace nvmf::e2e {
namespace {

constexpr uint64_t kRamBytes = 16ull << 20;
constexpr uint32_t kLbaSize = 512;
constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:in-capsule";
constexpr uint32_t kMaxIo = 32 * 1024;    // the largest write of the matrix
constexpr uint64_t kCellStrideLbas = 80;  // > kMaxIo / kLbaSize: cells never overlap
constexpr uint32_t kPieceBytes = kMaxIo + 4096;

uint32_t page_size() { return static_cast<uint32_t>(::sysconf(_SC_PAGESIZE)); }

// The counters that prove a path: totals, the I/O queue's and its controller's.
struct PathCounters {
  target::CounterSnapshot totals, queue, controller;
};

// A target with `inline_data_size` and one connected host, plus registered host buffers: four
// separately allocated pieces (so a multi-segment write really is scattered) and a read buffer.
class InCapsuleFixture : public ::testing::Test {
 protected:
  void start(int32_t inline_data_size) {
    NVMF_REQUIRE_RXE(env_);
    target::TargetOptions topts = ram_target_options(*env_, kNqn, kRamBytes, kLbaSize);
    topts.inline_data_size = inline_data_size;
    target_ = RunningTarget::start(topts);
    ASSERT_NE(target_, nullptr);

    host::HostOptions hopts = host_options_for(*env_, (*target_)->port(), kNqn, 16);
    auto ctrl = host::Controller::connect(hopts);
    ASSERT_TRUE(ctrl.ok()) << ctrl.status().to_string();
    ctrl_ = std::move(*ctrl);

    for (auto& p : pieces_) {
      p.assign(kPieceBytes, 0);
      auto mr = ctrl_->register_buffer(p.data(), p.size());
      ASSERT_TRUE(mr.ok()) << mr.status().to_string();
      piece_mrs_.push_back(std::move(*mr));
    }
    readback_.assign(kMaxIo, 0);
    auto mr = ctrl_->register_buffer(readback_.data(), readback_.size());
    ASSERT_TRUE(mr.ok()) << mr.status().to_string();
    readback_mr_.emplace(std::move(*mr));
  }

  void TearDown() override {
    piece_mrs_.clear();
    readback_mr_.reset();
    if (ctrl_) {
      Status s = ctrl_->disconnect();
      EXPECT_TRUE(s.ok()) << s.to_string();
      ctrl_.reset();
    }
    target_.reset();
  }

  PathCounters counters() {
    target::TargetStats s = (*target_)->stats();
    PathCounters c;
    c.totals = s.totals;
    const uint16_t cntlid = ctrl_->negotiation().cntlid;
    int queues = 0, controllers = 0;
    for (const auto& q : s.queues) {
      if (q.qid == 1 && q.cntlid == cntlid) c.queue = q.counters, ++queues;
    }
    for (const auto& k : s.controllers) {
      if (k.cntlid == cntlid) c.controller = k.counters, ++controllers;
    }
    EXPECT_EQ(queues, 1) << "I/O queue 1 of controller " << cntlid << " in the target's stats";
    EXPECT_EQ(controllers, 1) << "controller " << cntlid << " in the target's stats";
    return c;
  }

  // Fills the first sizes.size() pieces with fresh random bytes; returns their segments and the
  // bytes in write order.
  std::vector<host::DataSegment> fill(const std::vector<uint64_t>& sizes, std::vector<uint8_t>& all,
                                      uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<host::DataSegment> segs;
    all.clear();
    for (size_t i = 0; i < sizes.size(); ++i) {
      // Start each piece at an odd offset too: the SGEs must not rely on any alignment.
      const size_t start = 8 * i + 1;
      for (uint64_t b = 0; b < sizes[i]; ++b) pieces_[i][start + b] = static_cast<uint8_t>(rng());
      all.insert(all.end(), pieces_[i].begin() + start, pieces_[i].begin() + start + sizes[i]);
      segs.push_back(host::segment_of(piece_mrs_[i], start, sizes[i]));
    }
    return segs;
  }

  // Reads `bytes` at `slba` and compares with `expected`.
  void expect_reads_back(uint64_t slba, const std::vector<uint8_t>& expected) {
    std::fill(readback_.begin(), readback_.end(), 0xA5);
    Status r = ctrl_->read(slba, host::segment_of(*readback_mr_, 0, expected.size()));
    ASSERT_TRUE(r.ok()) << r.to_string();
    EXPECT_EQ(0, std::memcmp(readback_.data(), expected.data(), expected.size()))
        << expected.size() << " bytes at LBA " << slba << " differ after reading back";
  }

  std::optional<RxeEnv> env_;
  std::unique_ptr<RunningTarget> target_;
  std::unique_ptr<host::Controller> ctrl_;
  std::array<std::vector<uint8_t>, 4> pieces_;
  std::vector<verbs::RegisteredBuffer> piece_mrs_;
  std::vector<uint8_t> readback_;
  std::optional<verbs::RegisteredBuffer> readback_mr_;
};

// Difference of the path counters, after - before.
target::CounterSnapshot delta(const target::CounterSnapshot& after,
                              const target::CounterSnapshot& before) {
  target::CounterSnapshot d;
  d.commands = after.commands - before.commands;
  d.errors = after.errors - before.errors;
  d.writes_in_capsule = after.writes_in_capsule - before.writes_in_capsule;
  d.writes_in_capsule_bytes = after.writes_in_capsule_bytes - before.writes_in_capsule_bytes;
  d.writes_rdma_read = after.writes_rdma_read - before.writes_rdma_read;
  d.writes_rdma_read_bytes = after.writes_rdma_read_bytes - before.writes_rdma_read_bytes;
  return d;
}

// ------------------------------------------------------------------------------- the matrix --

struct InlineCase {
  const char* name;
  int32_t configured;  // TargetOptions::inline_data_size (nvmet meaning)
};

class InCapsuleMatrixTest : public InCapsuleFixture,
                            public ::testing::WithParamInterface<InlineCase> {};

// nvmet's rule: -1 is a page, 0 is off, above max(16 KiB, page) is clamped.
uint32_t expected_effective(int32_t configured) {
  const uint32_t page = page_size();
  if (configured == -1) return page;
  return std::min<uint32_t>(static_cast<uint32_t>(configured), std::max(16384u, page));
}

TEST_P(InCapsuleMatrixTest, EveryCellLandsOnTheExpectedPath) {
  const InlineCase ic = GetParam();
  ASSERT_NO_FATAL_FAILURE(start(ic.configured));
  if (HasFatalFailure() || IsSkipped()) return;
  const uint32_t eff = expected_effective(ic.configured);

  // Negotiation, as the target reports it.
  const target::NegotiationStats n = (*target_)->stats().negotiation;
  ASSERT_TRUE(n.resolved);
  EXPECT_EQ(n.configured_inline_data_size, ic.configured);
  EXPECT_EQ(n.in_capsule_data_size, eff);
  EXPECT_EQ(n.ioccsz, (64 + eff) / 16);
  EXPECT_EQ((n.sgls & proto::kSglsOffset) != 0, eff > 0) << "SGLS bit 20 iff in-capsule data";
  if (ic.configured > static_cast<int32_t>(std::max(16384u, page_size()))) {
    ASSERT_EQ(n.warnings.size(), 1u);
    EXPECT_NE(n.warnings[0].find(std::to_string(ic.configured)), std::string::npos)
        << n.warnings[0];
    EXPECT_NE(n.warnings[0].find(std::to_string(eff)), std::string::npos) << n.warnings[0];
  } else {
    EXPECT_TRUE(n.warnings.empty()) << n.warnings.front();
  }

  // Identify as the host saw it, and the host's policy.
  const proto::IdentifyController& id = ctrl_->identify_controller();
  EXPECT_EQ(id.ioccsz, (64 + eff) / 16);
  EXPECT_EQ((id.sgls & proto::kSglsOffset) != 0, eff > 0);
  EXPECT_EQ(id.icdoff, 0u);
  const host::Negotiation hn = ctrl_->negotiation();
  EXPECT_EQ(hn.in_capsule_data_size, eff);
  EXPECT_EQ(hn.in_capsule_enabled, eff > 0);
  if (eff == 0) {
    EXPECT_EQ(hn.in_capsule_why_off, "target SGLS bit 20 clear");
  } else {
    EXPECT_EQ(hn.in_capsule_why_off, "");
    EXPECT_EQ(hn.max_in_capsule_segments, 4u) << "rxe max_send_sge 32: min(4, 32 - 1)";
  }

  const std::vector<uint32_t> sizes = {512, 4096, 8192, 12 * 1024 + 512, 16384, 16896, kMaxIo};
  uint64_t cell = 0;
  for (uint32_t size : sizes) {
    for (uint32_t nseg = 1; nseg <= 4; ++nseg, ++cell) {
      SCOPED_TRACE("inline_data_size " + std::to_string(ic.configured) + ", write of " +
                   std::to_string(size) + " bytes in " + std::to_string(nseg) + " segments");
      const bool in_capsule = eff > 0 && size <= eff;
      // In-capsule: pieces of any size. Keyed: whole-LBA pieces (one keyed command each, MSDBD
      // 1) when the size allows it; else (512 bytes in 2+ pieces, in-capsule off) the host must
      // refuse before sending anything.
      const bool lba_pieces = !in_capsule && size / kLbaSize >= nseg;
      std::vector<uint64_t> split;
      if (lba_pieces) {
        auto s = host::uneven_split(size / kLbaSize, nseg);
        ASSERT_TRUE(s.ok());
        for (uint64_t lbas : *s) split.push_back(lbas * kLbaSize);
      } else {
        auto s = host::uneven_split(size, nseg);
        ASSERT_TRUE(s.ok());
        split = *s;
      }
      std::vector<uint8_t> data;
      std::vector<host::DataSegment> segs = fill(split, data, size * 7 + nseg);
      const uint64_t slba = cell * kCellStrideLbas;

      const PathCounters before = counters();
      Status w = ctrl_->write(slba, segs);
      const PathCounters after = counters();
      const target::CounterSnapshot d = delta(after.totals, before.totals);
      EXPECT_EQ(delta(after.queue, before.queue), d) << "queue 1 counters follow the totals";
      EXPECT_EQ(delta(after.controller, before.controller), d)
          << "controller counters follow the totals";
      if (!in_capsule && !lba_pieces && nseg > 1) {
        EXPECT_EQ(w.code(), StatusCode::kInvalidArgument) << w.to_string();
        EXPECT_NE(w.message().find("ends inside the LBA"), std::string::npos) << w.to_string();
        EXPECT_EQ(d.commands, 0u) << "a refused write sends nothing";
        continue;
      }
      ASSERT_TRUE(w.ok()) << w.to_string();
      EXPECT_EQ(d.errors, 0u);
      if (in_capsule) {
        EXPECT_EQ(d.writes_in_capsule, 1u);
        EXPECT_EQ(d.writes_in_capsule_bytes, size);
        EXPECT_EQ(d.writes_rdma_read, 0u);
      } else {
        // Too big for one capsule: whole-LBA pieces go keyed, one RDMA READ each, until the
        // rest fits one capsule (the host decides per command, like Linux's per request).
        uint64_t rest = size, reads = 0;
        size_t i = 0;
        for (; i < split.size() && !(eff > 0 && rest <= eff); ++i) rest -= split[i], ++reads;
        EXPECT_GE(reads, 1u) << "a write larger than the in-capsule size needs an RDMA READ";
        EXPECT_EQ(d.writes_rdma_read, reads);
        EXPECT_EQ(d.writes_rdma_read_bytes, size - rest);
        EXPECT_EQ(d.writes_in_capsule, rest > 0 ? 1u : 0u);
        EXPECT_EQ(d.writes_in_capsule_bytes, rest);
        if (nseg == 1) {
          EXPECT_EQ(d.writes_rdma_read_bytes, size) << "all of it by RDMA READ";
        }
      }
      expect_reads_back(slba, data);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(InlineDataSize, InCapsuleMatrixTest,
                         ::testing::Values(InlineCase{"Off", 0}, InlineCase{"PageDefault", -1},
                                           InlineCase{"4096", 4096}, InlineCase{"8192", 8192},
                                           InlineCase{"16384", 16384},
                                           InlineCase{"65536ClampedTo16384", 65536}),
                         [](const auto& info) { return std::string(info.param.name); });

// --------------------------------------------- straddling LBAs and lying capsules (16 KiB area) --

class InCapsuleTest : public InCapsuleFixture {};

TEST_F(InCapsuleTest, LbaStraddlingTwoPiecesGoesInCapsuleInsideALargeWrite) {
  ASSERT_NO_FATAL_FAILURE(start(4096));
  if (IsSkipped()) return;
  // 16 KiB in pieces of 2730, 5461 and 8193 bytes; 4 KiB in-capsule. Planned (host/io_plan.h):
  // keyed 2560 | in-capsule 4096 (170 + 3926) | keyed 1024 | in-capsule 4096 (511 + 3585) |
  // keyed 4608.
  auto split = host::uneven_split(16384, 3);
  ASSERT_TRUE(split.ok());
  ASSERT_EQ(*split, (std::vector<uint64_t>{2730, 5461, 8193}));
  std::vector<uint8_t> data;
  std::vector<host::DataSegment> segs = fill(*split, data, 3);
  const PathCounters before = counters();
  Status w = ctrl_->write(100, segs);
  ASSERT_TRUE(w.ok()) << w.to_string();
  const target::CounterSnapshot d = delta(counters().totals, before.totals);
  EXPECT_EQ(d.writes_in_capsule, 2u);
  EXPECT_EQ(d.writes_in_capsule_bytes, 8192u);
  EXPECT_EQ(d.writes_rdma_read, 3u);
  EXPECT_EQ(d.writes_rdma_read_bytes, 8192u);
  expect_reads_back(100, data);
}

// The host-side tail of every lying-capsule case: the queue still takes a good 2-piece
// in-capsule write at `slba`, and it reads back.
#define EXPECT_QUEUE_STILL_WRITES(slba)                                     \
  do {                                                                      \
    std::vector<uint8_t> good;                                              \
    auto good_segs = fill({1000, 1048}, good, static_cast<uint32_t>(slba)); \
    const PathCounters b = counters();                                      \
    Status gw = ctrl_->write((slba), good_segs);                            \
    ASSERT_TRUE(gw.ok()) << gw.to_string();                                 \
    EXPECT_EQ(delta(counters().totals, b.totals).writes_in_capsule, 1u);    \
    expect_reads_back((slba), good);                                        \
  } while (0)

class LyingCapsuleTest : public InCapsuleFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(start(16384));
    if (IsSkipped()) return;
    auto mr = ctrl_->register_buffer(capsule_data_.data(), capsule_data_.size());
    ASSERT_TRUE(mr.ok()) << mr.status().to_string();
    capsule_mr_.emplace(std::move(*mr));
    std::fill(capsule_data_.begin(), capsule_data_.end(), 0xEE);
  }
  void TearDown() override {
    capsule_mr_.reset();
    InCapsuleFixture::TearDown();
  }

  // Sends `sqe` on I/O queue 1 with `bytes` of in-capsule data behind it; the CQE's status.
  uint16_t send(proto::Sqe sqe, uint32_t bytes) {
    host::DataSegment seg = host::segment_of(*capsule_mr_, 0, bytes);
    auto cqe = submit_raw(*ctrl_, 1, sqe,
                          bytes == 0 ? std::span<const host::DataSegment>()
                                     : std::span<const host::DataSegment>(&seg, 1));
    EXPECT_TRUE(cqe.ok()) << cqe.status().to_string();
    return cqe.ok() ? cqe->status : 0;
  }

  // Writes a known pattern at `slba` (`lbas` blocks) so a test can prove it was not overwritten.
  std::vector<uint8_t> known_pattern(uint64_t slba, uint32_t lbas) {
    std::vector<uint8_t> data;
    auto segs = fill({uint64_t{lbas} * kLbaSize}, data, 99);
    Status w = ctrl_->write(slba, segs);
    EXPECT_TRUE(w.ok()) << w.to_string();
    return data;
  }

  static void expect_status(uint16_t status, uint8_t sc, const char* name) {
    EXPECT_EQ(status_sct(status), proto::kSctGeneric) << name << ": " << status_name(status);
    EXPECT_EQ(status_sc(status), sc) << name << ": " << status_name(status);
    EXPECT_TRUE(status_dnr(status)) << name << ": " << status_name(status);
  }

  uint64_t errors_with(uint8_t sc) {
    for (const auto& e : (*target_)->stats().errors_by_status) {
      if (status_sct(e.status) == proto::kSctGeneric && status_sc(e.status) == sc) return e.count;
    }
    return 0;
  }

  std::vector<uint8_t> capsule_data_ = std::vector<uint8_t>(16384);
  std::optional<verbs::RegisteredBuffer> capsule_mr_;
};

TEST_F(LyingCapsuleTest, OffsetNearTwoToThe64IsSglOffsetInvalid) {
  const uint32_t nsid = ctrl_->namespace_info().nsid;
  const std::vector<uint8_t> before = known_pattern(200, 1);
  for (uint64_t offset : {~uint64_t{0} - 511, ~uint64_t{0} - 255, uint64_t{1} << 63}) {
    SCOPED_TRACE("offset " + std::to_string(offset));
    proto::Sqe sqe = host::write_sqe(nsid, 200, 1);
    encode_in_capsule_sgl(sqe.dptr, 0, kLbaSize);
    sqe.dptr.addr = offset;  // offset + length wraps (or nearly) past 2^64
    expect_status(send(sqe, kLbaSize), proto::kScSglOffsetInvalid, "offset near 2^64");
  }
  EXPECT_EQ(errors_with(proto::kScSglOffsetInvalid), 3u);
  expect_reads_back(200, before);
  EXPECT_QUEUE_STILL_WRITES(210);
}

TEST_F(LyingCapsuleTest, OffsetPlusLengthPastTheAreaIsSglOffsetInvalid) {
  const uint32_t nsid = ctrl_->namespace_info().nsid;
  const std::vector<uint8_t> before = known_pattern(300, 2);
  // Offset inside the 16 KiB area, but offset + length beyond it.
  proto::Sqe sqe = host::write_sqe(nsid, 300, 2);
  encode_in_capsule_sgl(sqe.dptr, 16384 - 512, 1024);
  expect_status(send(sqe, 16384), proto::kScSglOffsetInvalid, "offset + length past the area");
  // Offset itself beyond the area.
  sqe = host::write_sqe(nsid, 300, 1);
  encode_in_capsule_sgl(sqe.dptr, 16384 + 512, 512);
  expect_status(send(sqe, 1024), proto::kScSglOffsetInvalid, "offset past the area");
  EXPECT_EQ(errors_with(proto::kScSglOffsetInvalid), 2u);
  expect_reads_back(300, before);
  EXPECT_QUEUE_STILL_WRITES(310);
}

TEST_F(LyingCapsuleTest, LengthBeyondWhatWasReceivedIsDataSglLengthInvalid) {
  const uint32_t nsid = ctrl_->namespace_info().nsid;
  const std::vector<uint8_t> before = known_pattern(400, 8);
  // Claims 4 KiB of in-capsule data (inside the area) but carries only 512 bytes: nvmet would
  // write stale receive-buffer bytes (wire-facts.md); we answer 0Fh and write nothing.
  proto::Sqe sqe = host::write_sqe(nsid, 400, 8);
  encode_in_capsule_sgl(sqe.dptr, 0, 4096);
  expect_status(send(sqe, 512), proto::kScDataSglLengthInvalid, "length beyond received");
  // At an offset: 512 bytes at offset 512 needs 1024 received; 600 were.
  sqe = host::write_sqe(nsid, 400, 1);
  encode_in_capsule_sgl(sqe.dptr, 512, 512);
  expect_status(send(sqe, 600), proto::kScDataSglLengthInvalid, "offset + length beyond received");
  EXPECT_EQ(errors_with(proto::kScDataSglLengthInvalid), 2u);
  expect_reads_back(400, before);
  EXPECT_QUEUE_STILL_WRITES(410);
}

TEST_F(LyingCapsuleTest, InCapsuleDataOnReadOrFlushIsInvalidField) {
  const uint32_t nsid = ctrl_->namespace_info().nsid;
  const std::vector<uint8_t> before = known_pattern(500, 1);
  proto::Sqe read = host::read_sqe(nsid, 500, 1);
  encode_in_capsule_sgl(read.dptr, 0, kLbaSize);
  expect_status(send(read, kLbaSize), proto::kScInvalidField, "in-capsule data on a Read");
  proto::Sqe flush = host::flush_sqe(nsid);
  encode_in_capsule_sgl(flush.dptr, 0, kLbaSize);
  expect_status(send(flush, kLbaSize), proto::kScInvalidField, "in-capsule data on a Flush");
  EXPECT_EQ(errors_with(proto::kScInvalidField), 2u);
  expect_reads_back(500, before);
  EXPECT_QUEUE_STILL_WRITES(510);
}

TEST_F(LyingCapsuleTest, AnHonestRawCapsuleAtAnOffsetLands) {
  // The control case for the lies above: the same hook, an honest in-capsule SGL at offset 512
  // (data after 512 bytes of padding), is written and reads back.
  const uint32_t nsid = ctrl_->namespace_info().nsid;
  for (uint32_t i = 0; i < 1024; ++i) capsule_data_[512 + i] = static_cast<uint8_t>(i * 13 + 1);
  proto::Sqe sqe = host::write_sqe(nsid, 600, 2);
  encode_in_capsule_sgl(sqe.dptr, 512, 1024);
  const PathCounters b = counters();
  EXPECT_EQ(send(sqe, 1536), 0) << "success";
  EXPECT_EQ(delta(counters().totals, b.totals).writes_in_capsule, 1u);
  expect_reads_back(
      600, std::vector<uint8_t>(capsule_data_.begin() + 512, capsule_data_.begin() + 1536));
}

}  // namespace
}  // namespace nvmf::e2e
