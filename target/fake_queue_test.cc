// The fuzzers' in-memory transport (target/testing/fake_queue.h) driven by a unit test: a Connect
// in-capsule and one by RDMA READ reach the processor and come back with the queue's CID and
// SQID; an RDMA READ waits until the test completes it; a second Connect on one queue is refused.
#include "target/testing/fake_queue.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(admin.responses(), 2u);
}

}  // namespace
}  // namespace nvmf::target::testing
