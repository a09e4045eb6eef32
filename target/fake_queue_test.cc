// SPDX-License-Identifier: BSD-3-Clause
// The fuzzers' in-memory transport (target/testing/fake_queue.h) driven by a unit test: a Connect
// in-capsule and one by RDMA READ reach the processor and come back with the queue's CID and
// SQID; an RDMA READ waits until the test completes it; a second Connect on one queue is refused.
#include "target/testing/fake_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "common/nvme_status.h"
#include "common/sgl.h"
#include "proto/fabrics.h"
#include "target/counters.h"
#include "target/namespace.h"
#include "target/stats_registry.h"
#include "target/subsystem.h"
#include "target/testing/capsules.h"

namespace nvmf::target::testing {
namespace {

class FakeQueueTest : public ::testing::Test {
 protected:
  FakeQueueTest() {
    ns_ = std::move(Namespace::create_ram(1 << 20, 512)).value();
    SubsystemConfig cfg;
    cfg.nqn = kNqn;
    cfg.max_io_queues = 2;
    cfg.admin_queue_size = 8;
    cfg.io_queue_size = 16;
    cfg.mdts = 2;
    subsys_ = std::make_unique<Subsystem>(cfg, *ns_, registry_);
    subsys_->set_in_capsule_data_size(8192);
  }
  ~FakeQueueTest() override {
    queues_.clear();  // queues leave their controllers before the subsystem goes
    subsys_.reset();
  }
  FakeQueue& queue(uint16_t qid, uint32_t size) {
    queues_.push_back(std::make_unique<FakeQueue>(*subsys_, statuses_, qid, size, 8192));
    return *queues_.back();
  }

  std::unique_ptr<Namespace> ns_;
  StatsRegistry registry_;
  StatusCounters statuses_;
  std::unique_ptr<Subsystem> subsys_;
  std::vector<std::unique_ptr<FakeQueue>> queues_;
};

TEST_F(FakeQueueTest, InCapsuleConnectThenKeyedConnectByRdmaRead) {
  FakeQueue& admin = queue(0, 8);
  proto::Sqe c = in_capsule_connect_sqe(0, 7);
  c.cid = 0x1234;
  auto step = admin.deliver(c, connect_data(proto::kAdminQueueCntlid));
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(*step, NextStep::kRespond);
  EXPECT_EQ(admin.responses(), 1u);
  EXPECT_EQ(admin.last_cqe().cid, 0x1234);
  EXPECT_EQ(admin.last_cqe().sqid, 0);
  EXPECT_EQ(status_without_phase(admin.last_cqe().status), kStatusSuccess);
  const auto cntlid = static_cast<uint16_t>(admin.last_cqe().dw0);
  EXPECT_NE(cntlid, proto::kAdminQueueCntlid);
  ASSERT_NE(subsys_->find_controller(cntlid), nullptr);
  // Enabled (CC.EN 1): I/O queues may connect.
  ASSERT_TRUE(admin.deliver(property_set_sqe(proto::kPropCc, 0x00460001), {}).has_value());
  EXPECT_EQ(status_without_phase(admin.last_cqe().status), kStatusSuccess);

  // An I/O queue's Connect with keyed data: the processor asks for an RDMA READ, which waits.
  FakeQueue& io = queue(1, 16);
  proto::Sqe k = in_capsule_connect_sqe(1, 15);
  ASSERT_TRUE(encode_keyed_sgl(reinterpret_cast<proto::ConnectCommand&>(k).sgl1, 0x1000,
                               proto::kConnectDataSize, 0x77));
  step = io.deliver(k, {});
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(*step, NextStep::kReadFromHost);
  EXPECT_EQ(io.reads_outstanding(), 1u);
  EXPECT_EQ(io.responses(), 0u);
  step = io.complete_read(connect_data(cntlid));
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(*step, NextStep::kRespond);
  EXPECT_EQ(io.reads_outstanding(), 0u);
  EXPECT_EQ(io.last_cqe().sqid, 1);
  EXPECT_EQ(status_without_phase(io.last_cqe().status), kStatusSuccess);
  EXPECT_FALSE(io.complete_read({}).has_value());  // nothing outstanding any more

  // A second Connect on the connected admin queue: Command Sequence Error, queue kept.
  step = admin.deliver(in_capsule_connect_sqe(0, 7), connect_data(proto::kAdminQueueCntlid));
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(status_sc(admin.last_cqe().status), proto::kScCommandSequenceError);
  EXPECT_EQ(admin.responses(), 3u);
}

// A keyed Write of 8 LBAs at `slba` whose data the target fetches by RDMA READ.
proto::Sqe keyed_write_sqe(uint64_t slba, uint16_t cid) {
  proto::Sqe s = base_sqe(proto::kNvmWrite, cid);
  s.nsid = 1;
  s.cdw10 = static_cast<uint32_t>(slba);
  s.cdw11 = static_cast<uint32_t>(slba >> 32);
  s.cdw12 = 8 - 1;
  EXPECT_TRUE(encode_keyed_sgl(s.dptr, 0x3000, 8 * 512, 0x99));
  return s;
}

// The field failure behind this test: soft-RoCE completed an RDMA READ with IBV_WC_SUCCESS
// when its QP failed mid-READ (a host killed, or retries under loss), with no or only part of
// the data placed. The Write was executed with what its shared chunk still held, the data of
// an earlier command for another LBA: a well-formed block of another LBA was stored, and read
// back later by another host. A READ that completes without its data must execute nothing.
TEST_F(FakeQueueTest, KeyedWriteWhoseReadCameWithoutItsDataIsNotExecuted) {
  FakeQueue& admin = queue(0, 8);
  ASSERT_TRUE(admin.deliver(in_capsule_connect_sqe(0, 7), connect_data(proto::kAdminQueueCntlid))
                  .has_value());
  ASSERT_EQ(status_without_phase(admin.last_cqe().status), kStatusSuccess);
  const auto cntlid = static_cast<uint16_t>(admin.last_cqe().dw0);
  ASSERT_TRUE(admin.deliver(property_set_sqe(proto::kPropCc, 0x00460001), {}).has_value());
  ASSERT_EQ(status_without_phase(admin.last_cqe().status), kStatusSuccess);
  FakeQueue& io = queue(1, 16);
  ASSERT_TRUE(io.deliver(in_capsule_connect_sqe(1, 15), connect_data(cntlid)).has_value());
  ASSERT_EQ(status_without_phase(io.last_cqe().status), kStatusSuccess);

  // LBA 0..7 written with A: the slot's buffer now holds A.
  std::vector<uint8_t> a(8 * 512, 0xAA), b(8 * 512, 0xBB);
  ASSERT_EQ(io.deliver(keyed_write_sqe(0, 1), {}), NextStep::kReadFromHost);
  ASSERT_EQ(io.complete_read(a), NextStep::kRespond);
  ASSERT_EQ(status_without_phase(io.last_cqe().status), kStatusSuccess);
  ASSERT_EQ(ns_->bytes(0, 1)[0], 0xAA);

  // LBA 64..71 with B, on the same slot: the READ is reported done, nothing placed.
  ASSERT_EQ(io.deliver(keyed_write_sqe(64, 2), {}), NextStep::kReadFromHost);
  ASSERT_EQ(io.complete_read_partly(b, 0), NextStep::kRespond);
  EXPECT_EQ(status_sc(io.last_cqe().status), proto::kScDataTransferError);
  EXPECT_EQ(io.last_cqe().cid, 2);
  auto lba64 = ns_->bytes(64 * 512, 8 * 512);
  EXPECT_EQ(std::count(lba64.begin(), lba64.end(), 0), 8 * 512)
      << "the Write was executed with the buffer's stale bytes (byte 0: " << int{lba64[0]} << ")";
  EXPECT_TRUE(io.disconnect_requested());
  EXPECT_EQ(io.processor().reads_without_data(), 1u);

  // Only the first half placed (a READ cut short): nothing of it is stored either.
  ASSERT_EQ(io.deliver(keyed_write_sqe(128, 3), {}), NextStep::kReadFromHost);
  ASSERT_EQ(io.complete_read_partly(b, 4 * 512), NextStep::kRespond);
  EXPECT_EQ(status_sc(io.last_cqe().status), proto::kScDataTransferError);
  auto lba128 = ns_->bytes(128 * 512, 8 * 512);
  EXPECT_EQ(std::count(lba128.begin(), lba128.end(), 0), 8 * 512);

  // And a READ that placed all of its data is executed as before.
  ASSERT_EQ(io.deliver(keyed_write_sqe(192, 4), {}), NextStep::kReadFromHost);
  ASSERT_EQ(io.complete_read_partly(b, b.size()), NextStep::kRespond);
  EXPECT_EQ(status_without_phase(io.last_cqe().status), kStatusSuccess);
  EXPECT_EQ(ns_->bytes(192 * 512, 1)[0], 0xBB);
  EXPECT_EQ(io.processor().reads_without_data(), 2u);
}

// The edges of the sentinel check: a Connect by READ whose last 8 bytes did not arrive (1024
// bytes: sentinels at 0, 512 and 1016) is refused and leaves the queue able to take a Connect
// again; Dataset Management's 16-byte range list (sentinels at 0 and 8) is refused with its
// second half missing and accepted whole; a 4 KiB Write missing only its last 8 bytes is
// refused. Every READ that placed all its bytes is accepted (no false alarm).
TEST_F(FakeQueueTest, SentinelEdgesConnectDsmAndTheLastEightBytes) {
  FakeQueue& admin = queue(0, 8);
  ASSERT_TRUE(admin.deliver(in_capsule_connect_sqe(0, 7), connect_data(proto::kAdminQueueCntlid))
                  .has_value());
  const auto cntlid = static_cast<uint16_t>(admin.last_cqe().dw0);
  ASSERT_TRUE(admin.deliver(property_set_sqe(proto::kPropCc, 0x00460001), {}).has_value());
  FakeQueue& io = queue(1, 16);
  proto::Sqe k = in_capsule_connect_sqe(1, 15);
  ASSERT_TRUE(encode_keyed_sgl(reinterpret_cast<proto::ConnectCommand&>(k).sgl1, 0x1000,
                               proto::kConnectDataSize, 0x77));
  const std::vector<uint8_t> cd = connect_data(cntlid);
  ASSERT_EQ(io.deliver(k, {}), NextStep::kReadFromHost);
  ASSERT_EQ(io.complete_read_partly(cd, proto::kConnectDataSize - 8), NextStep::kRespond);
  EXPECT_EQ(status_sc(io.last_cqe().status), proto::kScDataTransferError);
  EXPECT_EQ(io.processor().reads_without_data(), 1u);
  // Not left "Connect in progress": a new Connect is taken (and this one's data all arrives).
  ASSERT_EQ(io.deliver(k, {}), NextStep::kReadFromHost);
  ASSERT_EQ(io.complete_read_partly(cd, cd.size()), NextStep::kRespond);
  ASSERT_EQ(status_without_phase(io.last_cqe().status), kStatusSuccess);

  proto::Sqe dsm = base_sqe(proto::kNvmDatasetManagement, 9);
  dsm.nsid = 1;
  dsm.cdw10 = 0;  // one range
  ASSERT_TRUE(encode_keyed_sgl(dsm.dptr, 0x5000, 4096, 0x55));
  std::vector<uint8_t> range(16, 0);
  range[8] = 0x10;  // slba 0x10, 0 LBAs
  ASSERT_EQ(io.deliver(dsm, {}), NextStep::kReadFromHost);
  ASSERT_EQ(io.complete_read_partly(range, 8), NextStep::kRespond);
  EXPECT_EQ(status_sc(io.last_cqe().status), proto::kScDataTransferError);
  ASSERT_EQ(io.deliver(dsm, {}), NextStep::kReadFromHost);
  ASSERT_EQ(io.complete_read_partly(range, 16), NextStep::kRespond);
  EXPECT_EQ(status_without_phase(io.last_cqe().status), kStatusSuccess);

  std::vector<uint8_t> c(8 * 512, 0xCC);
  ASSERT_EQ(io.deliver(keyed_write_sqe(256, 10), {}), NextStep::kReadFromHost);
  ASSERT_EQ(io.complete_read_partly(c, c.size() - 8), NextStep::kRespond);
  EXPECT_EQ(status_sc(io.last_cqe().status), proto::kScDataTransferError);
  EXPECT_EQ(ns_->bytes(256 * 512, 1)[0], 0);
  ASSERT_EQ(io.deliver(keyed_write_sqe(256, 11), {}), NextStep::kReadFromHost);
  ASSERT_EQ(io.complete_read_partly(c, c.size()), NextStep::kRespond);
  EXPECT_EQ(status_without_phase(io.last_cqe().status), kStatusSuccess);
  EXPECT_EQ(ns_->bytes(256 * 512 + 4095, 1)[0], 0xCC);
  EXPECT_EQ(io.processor().reads_without_data(), 3u);
}

}  // namespace
}  // namespace nvmf::target::testing
