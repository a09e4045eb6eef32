// SPDX-License-Identifier: BSD-3-Clause
// RequestPipeline driven as RdmaQueue drives it, with a recorded transport: the order in which
// requests short of a credit, a chunk or a slot are served, what parked capsules hold, and the
// capsule limit.
#include "target/request_pipeline.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "target/testing/processor_harness.h"

namespace nvmf::target {
namespace {

using namespace nvmf::target::testing;  // NOLINT: the harness vocabulary

constexpr uint32_t kQueueSize = 4;
constexpr uint32_t kReceives = 8;  // more than the queue may hold: a wrong count would show

// The transport, recorded: receives (SQE + in-capsule pages), the READs and responses posted,
// the receives given back, the parked-receive deltas and the failure, if any.
class RecordedWire : public PipelineTransport, public QueueLink {
 public:
  RecordedWire()
      : pages_(kReceives * (kInCapsule / kPage), std::vector<uint8_t>(kPage)), sqes_(kReceives) {
    for (auto& p : pages_) page_ptrs_.push_back(p.data());
  }

  // Places `sqe` (and `data` in-capsule at offset 0) in receive `recv`; returns the byte count.
  uint32_t fill(uint32_t recv, const proto::Sqe& sqe, std::span<const uint8_t> data = {}) {
    sqes_[recv] = sqe;
    for (size_t i = 0; i < data.size(); ++i) {
      pages_[recv * (kInCapsule / kPage) + i / kPage][i % kPage] = data[i];
    }
    return static_cast<uint32_t>(sizeof(proto::Sqe) + data.size());
  }

  const proto::Sqe* capsule_sqe(uint32_t recv) override { return &sqes_[recv]; }
  std::span<uint8_t* const> capsule_pages(uint32_t recv) override {
    return {page_ptrs_.data() + size_t{recv} * (kInCapsule / kPage), kInCapsule / kPage};
  }
  bool repost_receive(uint32_t recv) override {
    reposts.push_back(recv);
    return true;
  }
  void parked_receives_changed(int32_t delta) override { parked_deltas.push_back(delta); }
  void post_read(uint32_t slot, const Request& r) override {
    reads.push_back(slot);
    read_cids.push_back(r.sqe->cid);
  }
  void post_response(uint32_t slot, const Request& r, bool with_data) override {
    responses.push_back(slot);
    response_cids.push_back(r.cqe.cid);
    response_status.push_back(r.cqe.status);
    (void)with_data;
  }
  void response_ready() override {}
  void fail(const std::string& what) override {
    if (failure.empty()) failure = what;
  }
  bool wants_teardown() const override { return !failure.empty(); }

  void request_disconnect(std::string_view reason) override { fail(std::string(reason)); }
  std::string describe() const override { return "recorded qid 1"; }

  std::vector<uint32_t> reads, responses, reposts;
  std::vector<uint16_t> read_cids, response_cids, response_status;
  std::vector<int32_t> parked_deltas;
  std::string failure;

 private:
  std::vector<std::vector<uint8_t>> pages_;
  std::vector<uint8_t*> page_ptrs_;
  std::vector<proto::Sqe> sqes_;
};

proto::Sqe with_cid(proto::Sqe s, uint16_t cid) {
  s.cid = cid;
  return s;
}

class RequestPipelineTest : public ::testing::Test {
 protected:
  RequestPipelineTest() {
    ns_ = std::move(Namespace::create_ram(1 << 20, 512)).value();
    SubsystemConfig cfg;
    cfg.nqn = kNqn;
    cfg.max_io_queues = 4;
    cfg.io_queue_size = 128;
    cfg.mdts = 1;  // 8 KiB
    subsys_ = std::make_unique<Subsystem>(cfg, *ns_, registry_);
    subsys_->set_in_capsule_data_size(kInCapsule);
    // The controller, through an admin queue driven directly.
    admin_ = std::make_unique<TestQueue>(*subsys_, statuses_, 0, 32);
    auto data = connect_data(proto::kAdminQueueCntlid);
    EXPECT_EQ(admin_->submit(connect_sqe(0, 31, true), data), NextStep::kRespond);
    cntlid_ = static_cast<uint16_t>(admin_->req.cqe.dw0);
    EXPECT_EQ(admin_->submit(property_set_sqe(proto::kPropCc, kGoodCc)), NextStep::kRespond);
    EXPECT_EQ(admin_->status(), kStatusSuccess);
  }
  ~RequestPipelineTest() override {
    processor_.reset();
    pipeline_.reset();
    admin_.reset();
  }

  // I/O queue 1 with its pipeline: kQueueSize slots of 8 KiB (or none with `pool`), READ depth
  // and send-queue entries as given; connected (its Connect's SEND completed).
  void connect(uint32_t read_depth, uint32_t send_entries, bool shared_receives = false,
               ChunkList* pool = nullptr) {
    PipelineParams p;
    p.queue_size = kQueueSize;
    p.slot_count = kQueueSize;
    p.page_size = kPage;
    p.shared_receives = shared_receives;
    pipeline_ = std::make_unique<RequestPipeline>(wire_, counters_, p);
    processor_.emplace(*subsys_, wire_, counters_, statuses_, 1, kQueueSize, kInCapsule);
    pipeline_->set_processor(&*processor_);
    buffers_.assign(kQueueSize, std::vector<uint8_t>(8192));
    for (auto& b : buffers_) pipeline_->add_slot(pool != nullptr ? std::span<uint8_t>{} : b);
    if (pool != nullptr) pipeline_->use_pool(pool);
    pipeline_->set_capsule_limit(kQueueSize, true);
    pipeline_->set_read_depth(read_depth);
    pipeline_->set_send_queue_depth(send_entries);
    auto data = connect_data(cntlid_);
    capsule(0, connect_sqe(1, kQueueSize - 1, true), data);
    ASSERT_EQ(wire_.responses.size(), 1u) << wire_.failure;
    ASSERT_EQ(wire_.response_status[0], kStatusSuccess);
    pipeline_->on_send_done(wire_.responses[0]);
    clear();
  }
  void capsule(uint32_t recv, const proto::Sqe& sqe, std::span<const uint8_t> data = {}) {
    pipeline_->on_capsule(recv, wire_.fill(recv, sqe, data));
  }
  // The READ of `slot` brings the host's data (every byte written, the sentinel included).
  void read_done(uint32_t slot) {
    std::span<uint8_t> b = pipeline_->request(slot).buffer;
    std::memset(b.data(), 0xA5, pipeline_->request(slot).transfer_bytes);
    pipeline_->on_read_done(slot);
  }
  void clear() {
    wire_.reads.clear();
    wire_.read_cids.clear();
    wire_.responses.clear();
    wire_.response_cids.clear();
    wire_.response_status.clear();
    wire_.reposts.clear();
    wire_.parked_deltas.clear();
  }
  uint64_t in_state(RequestState s) const {
    return counters_.state_now[static_cast<size_t>(s)].get();
  }

  std::unique_ptr<Namespace> ns_;
  StatsRegistry registry_;
  StatusCounters statuses_;
  std::unique_ptr<Subsystem> subsys_;
  std::unique_ptr<TestQueue> admin_;
  uint16_t cntlid_ = 0;
  RecordedWire wire_;
  QueueCounters counters_;
  std::unique_ptr<RequestPipeline> pipeline_;
  std::optional<CommandProcessor> processor_;
  std::vector<std::vector<uint8_t>> buffers_;
};

TEST_F(RequestPipelineTest, ReadsBeyondTheReadDepthWaitAndGoOutInArrivalOrder) {
  connect(/*read_depth=*/1, /*send_entries=*/16);
  for (uint16_t i = 0; i < 3; ++i) {
    capsule(i, with_cid(rw_sqe(proto::kNvmWrite, i, 1, 512), static_cast<uint16_t>(10 + i)));
  }
  ASSERT_EQ(wire_.read_cids, (std::vector<uint16_t>{10}));
  EXPECT_EQ(in_state(RequestState::kWaitingForReadCredit), 2u);
  EXPECT_EQ(counters_.rdma_read_waits.get(), 2u);
  read_done(wire_.reads[0]);
  ASSERT_EQ(wire_.read_cids, (std::vector<uint16_t>{10, 11}));
  EXPECT_EQ(wire_.response_cids, (std::vector<uint16_t>{10}));
  read_done(wire_.reads[1]);
  read_done(wire_.reads[2]);
  EXPECT_EQ(wire_.read_cids, (std::vector<uint16_t>{10, 11, 12}));
  EXPECT_EQ(wire_.response_cids, (std::vector<uint16_t>{10, 11, 12}));
  EXPECT_EQ(pipeline_->reads().in_use(), 0u);
  EXPECT_EQ(wire_.failure, "");
}

TEST_F(RequestPipelineTest, ResponsesWithoutSendQueueRoomWaitAndGoOutInArrivalOrder) {
  connect(/*read_depth=*/4, /*send_entries=*/1);
  const proto::Sqe flush = base_sqe(proto::kNvmFlush);
  for (uint16_t i = 0; i < 3; ++i) {
    proto::Sqe s = with_cid(flush, static_cast<uint16_t>(20 + i));
    s.nsid = 1;
    capsule(i, s);
  }
  ASSERT_EQ(wire_.response_cids, (std::vector<uint16_t>{20}));
  EXPECT_EQ(pipeline_->responses_waiting(), 2u);
  EXPECT_EQ(counters_.send_queue_waits.get(), 2u);
  // Each receive went back when its response was ready, before any SEND.
  EXPECT_EQ(wire_.reposts, (std::vector<uint32_t>{0, 1, 2}));
  pipeline_->on_send_done(wire_.responses[0]);
  ASSERT_EQ(wire_.response_cids, (std::vector<uint16_t>{20, 21}));
  pipeline_->on_send_done(wire_.responses[1]);
  EXPECT_EQ(wire_.response_cids, (std::vector<uint16_t>{20, 21, 22}));
  EXPECT_EQ(pipeline_->responses_waiting(), 0u);
}

TEST_F(RequestPipelineTest, ParkedCapsulesOnASharedReceiveQueueHoldOnlyTheReceivesOfTheirData) {
  connect(/*read_depth=*/4, /*send_entries=*/16, /*shared_receives=*/true);
  proto::Sqe flush = base_sqe(proto::kNvmFlush);
  flush.nsid = 1;
  // Every slot's response is posted and its SEND never completes.
  for (uint16_t i = 0; i < kQueueSize; ++i) capsule(i, with_cid(flush, static_cast<uint16_t>(i)));
  ASSERT_EQ(wire_.responses.size(), kQueueSize);
  clear();
  // A dataless capsule finds no slot: its SQE is copied and its receive goes back at once.
  capsule(4, with_cid(flush, 40));
  EXPECT_EQ(wire_.reposts, (std::vector<uint32_t>{4}));
  EXPECT_EQ(pipeline_->capsules_parked(), 1u);
  EXPECT_EQ(pipeline_->parked_receives(), 0u);
  // One with in-capsule data keeps its receive (its data is read in place) and is counted.
  const std::vector<uint8_t> data(512, 0x3C);
  capsule(5, with_cid(rw_sqe(proto::kNvmWrite, 0, 1, 512, /*in_capsule=*/true), 41), data);
  EXPECT_EQ(wire_.reposts, (std::vector<uint32_t>{4}));
  EXPECT_EQ(pipeline_->parked_receives(), 1u);
  EXPECT_EQ(wire_.parked_deltas, (std::vector<int32_t>{1}));
  // The receive 4 was reposted: the host may reuse it while the copy waits.
  wire_.fill(4, with_cid(flush, 99));
  // SEND completions start them in arrival order, each answered from what it carried.
  pipeline_->on_send_done(0);
  ASSERT_EQ(wire_.response_cids, (std::vector<uint16_t>{40}));
  pipeline_->on_send_done(1);
  EXPECT_EQ(wire_.response_cids, (std::vector<uint16_t>{40, 41}));
  EXPECT_EQ(wire_.response_status[1], kStatusSuccess);
  EXPECT_EQ(wire_.parked_deltas, (std::vector<int32_t>{1, -1}));
  EXPECT_EQ(wire_.reposts, (std::vector<uint32_t>{4, 5}));
  EXPECT_EQ(pipeline_->capsules_parked(), 0u);
  EXPECT_EQ(pipeline_->capsules().in_use(), 0u);
}

TEST_F(RequestPipelineTest, TearingDownGivesParkedReceivesBackAndForgetsTheCopies) {
  connect(/*read_depth=*/4, /*send_entries=*/16, /*shared_receives=*/true);
  proto::Sqe flush = base_sqe(proto::kNvmFlush);
  flush.nsid = 1;
  for (uint16_t i = 0; i < kQueueSize; ++i) capsule(i, with_cid(flush, static_cast<uint16_t>(i)));
  const std::vector<uint8_t> data(512, 0x3C);
  capsule(4, with_cid(rw_sqe(proto::kNvmWrite, 0, 1, 512, true), 50), data);
  capsule(5, with_cid(flush, 51));
  clear();
  pipeline_->abandon_waiters();
  EXPECT_EQ(wire_.reposts, (std::vector<uint32_t>{4}));
  EXPECT_EQ(wire_.parked_deltas, (std::vector<int32_t>{-1}));
  EXPECT_EQ(pipeline_->capsules_parked(), 0u);
  EXPECT_EQ(pipeline_->outstanding(), kQueueSize);  // the slots whose SENDs are posted
}

TEST_F(RequestPipelineTest, MoreCapsulesThanTheQueueHoldsFailTheQueue) {
  connect(/*read_depth=*/1, /*send_entries=*/16);
  // Writes waiting for their READ hold their capsules: the fifth is beyond hsqsize + 1.
  for (uint16_t i = 0; i < kQueueSize; ++i) {
    capsule(i, with_cid(rw_sqe(proto::kNvmWrite, i, 1, 512), i));
  }
  EXPECT_EQ(wire_.failure, "");
  EXPECT_EQ(pipeline_->capsules().in_use(), kQueueSize);
  capsule(kQueueSize, with_cid(rw_sqe(proto::kNvmWrite, 0, 1, 512), 9));
  EXPECT_EQ(wire_.failure,
            "the host sent more than 4 command capsules without waiting for their responses "
            "(hsqsize + 1)");
}

TEST_F(RequestPipelineTest, AHostTakingNoResponsesIsFailedAtItsCapsuleBeyondTwiceTheQueueSize) {
  // Every response SEND is posted and never completes (the host posts no receives): each slot's
  // capsule is given back when its response is posted, so the host may send one queue's worth
  // more, which waits parked; the capsule after that one is a protocol violation.
  connect(/*read_depth=*/4, /*send_entries=*/64, /*shared_receives=*/true);
  proto::Sqe flush = base_sqe(proto::kNvmFlush);
  flush.nsid = 1;
  for (uint16_t i = 0; i < 2 * kQueueSize; ++i) {
    capsule(i % kReceives, with_cid(flush, i));
    ASSERT_EQ(wire_.failure, "") << "capsule " << i;
  }
  EXPECT_EQ(wire_.responses.size(), kQueueSize);
  EXPECT_EQ(pipeline_->capsules_parked(), kQueueSize);
  capsule(0, with_cid(flush, 2 * kQueueSize));
  EXPECT_EQ(wire_.failure,
            "the host sent more than 4 command capsules without waiting for their responses "
            "(hsqsize + 1)");
}

TEST_F(RequestPipelineTest, ACapsuleShorterThanAnSqeFailsTheQueue) {
  connect(/*read_depth=*/1, /*send_entries=*/16);
  pipeline_->on_capsule(0, 63);
  EXPECT_EQ(wire_.failure, "capsule of 63 bytes is shorter than an SQE");
}

TEST_F(RequestPipelineTest, ACommandWithoutAChunkWaitsAndStartsWhenOneIsGivenBack) {
  std::vector<uint8_t> memory(8192);
  ChunkList pool(memory.data(), 1, 8192);
  connect(/*read_depth=*/4, /*send_entries=*/16, false, &pool);
  capsule(0, with_cid(rw_sqe(proto::kNvmWrite, 0, 1, 512), 60));
  capsule(1, with_cid(rw_sqe(proto::kNvmWrite, 1, 1, 512), 61));
  ASSERT_EQ(wire_.read_cids, (std::vector<uint16_t>{60}));
  EXPECT_EQ(in_state(RequestState::kWaitingForBuffer), 1u);
  EXPECT_EQ(pipeline_->buffer_waiters(), 1u);
  EXPECT_EQ(pool.waiting(), 1u);
  // The first write's response needs no chunk: it goes back when the response is ready, and
  // the pool's FIFO (served by the event loop) hands it to the waiter.
  read_done(wire_.reads[0]);
  EXPECT_EQ(wire_.response_cids, (std::vector<uint16_t>{60}));
  EXPECT_EQ(pool.free_count(), 1u);
  EXPECT_EQ(pool.serve(), 1u);
  EXPECT_EQ(wire_.read_cids, (std::vector<uint16_t>{60, 61}));
  EXPECT_EQ(pipeline_->request(wire_.reads[1]).buffer.data(), memory.data());
  read_done(wire_.reads[1]);
  EXPECT_EQ(wire_.response_cids, (std::vector<uint16_t>{60, 61}));
  EXPECT_EQ(pool.free_count(), 1u);
  EXPECT_EQ(pipeline_->pool_chunks_held(), 0u);
}

}  // namespace
}  // namespace nvmf::target
