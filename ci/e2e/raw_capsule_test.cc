// End to end over soft-RoCE with a bare RDMA connection instead of the host library: a host
// that floods the admin queue with more capsules than it has entries, and capsules shorter
// than an SQE or longer than the receive buffers. The target must answer every command or tear
// the one queue down, never crash, and keep serving others.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "ci/e2e/e2e_options.h"
#include "ci/e2e/raw_queue.h"
#include "ci/e2e/running_target.h"
#include "ci/e2e/rxe_env.h"
#include "common/nvme_status.h"
#include "common/sgl.h"
#include "common/verbs/verbs.h"
#include "host/commands.h"
#include "host/controller.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"
#include "proto/rdma_cm.h"
#include "target/target.h"

namespace nvmf::e2e {
namespace {

constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:raw-capsule";
constexpr int kTimeoutMs = 30000;  // a bound against hangs, never asserted as a duration
constexpr size_t kSendBytes = RawQueue::kSendBytes;
constexpr char kHostNqn[] = "nqn.2014-08.org.nvmexpress:uuid:raw-capsule";

class RawCapsuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NVMF_REQUIRE_RXE(env_);
    target::TargetOptions topts = ram_target_options(*env_, kNqn, 1 << 20);
    target_ = RunningTarget::start(topts);
    ASSERT_NE(target_, nullptr);
  }
  void TearDown() override {
    target_.reset();  // stops and joins the target, expecting run() to have returned ok
  }
  // A normal host still gets a controller and a working I/O queue.
  void expect_target_still_serves() {
    host::HostOptions h;
    h.traddr = env_->target_addr;
    h.trsvcid = std::to_string((*target_)->port());
    h.subnqn = kNqn;
    h.host_traddr = env_->host_addr;
    h.timeout_ms = kTimeoutMs;
    auto c = host::Controller::connect(h);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_TRUE((*c)->disconnect().ok());
  }

  std::optional<RxeEnv> env_;
  std::unique_ptr<RunningTarget> target_;
};

TEST_F(RawCapsuleTest, MoreCommandsThanQueueEntriesAreAllAnswered) {
  RawQueue q;
  constexpr uint16_t kHsqsize = 3;  // 4 entries: the target posts 4 receives
  ASSERT_TRUE(q.connect(*env_, (*target_)->port(), kHsqsize).ok());
  auto c = q.admin_connect(kHsqsize + 1, kNqn, kHostNqn);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  ASSERT_EQ(status_without_phase(c->status), kStatusSuccess) << status_name(c->status);
  // 40 Property Gets of CAP posted at once, 10 times the queue: the surplus waits in RNR retry
  // (rnr_retry 7) until the target reposts a receive. Some share a CID on purpose: the target
  // does not track CIDs, it must answer each capsule.
  constexpr int kFlood = 40;
  for (int i = 0; i < kFlood; ++i) {
    proto::Sqe sqe = host::property_get_sqe(proto::kPropCap, true);
    encode_null_sgl(sqe.dptr);
    sqe.cid = static_cast<uint16_t>(i % 30);
    std::memcpy(q.send_buf.data() + 64 * i, &sqe, sizeof(sqe));
    ASSERT_TRUE(q.send(64, 2 + i, 64 * i).ok()) << i;
  }
  auto got = q.collect(kFlood);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  std::set<uint16_t> cids;
  for (const proto::Cqe& e : *got) {
    cids.insert(e.cid);
    EXPECT_EQ(status_without_phase(e.status), kStatusSuccess) << status_name(e.status);
    EXPECT_EQ(e.dw0 & proto::kCapMqesMask, 127u) << "CAP.MQES";
    EXPECT_LT(e.sqhd, kHsqsize + 1) << "SQHD wraps at the queue size";
  }
  EXPECT_EQ(cids.size(), 30u);
  expect_target_still_serves();
}

TEST_F(RawCapsuleTest, CapsuleShorterThanAnSqeTearsOnlyThatQueueDown) {
  RawQueue q;
  ASSERT_TRUE(q.connect(*env_, (*target_)->port(), 31).ok());
  auto c = q.admin_connect(32, kNqn, kHostNqn);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  ASSERT_EQ(status_without_phase(c->status), kStatusSuccess);
  ASSERT_TRUE(q.send(32, 2).ok());
  EXPECT_TRUE(q.disconnected());
  expect_target_still_serves();
}

TEST_F(RawCapsuleTest, CapsuleLongerThanTheReceiveTearsOnlyThatQueueDown) {
  RawQueue q;
  ASSERT_TRUE(q.connect(*env_, (*target_)->port(), 31).ok());
  auto c = q.admin_connect(32, kNqn, kHostNqn);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  ASSERT_EQ(status_without_phase(c->status), kStatusSuccess);
  // SQE + 8 KiB: beyond the one-page in-capsule area each receive has.
  proto::Sqe s = host::write_sqe(1, 0, 16);
  encode_in_capsule_sgl(s.dptr, 0, 8192);
  q.put_sqe(s);
  ASSERT_TRUE(q.send(kSendBytes, 2).ok());
  EXPECT_TRUE(q.disconnected());
  expect_target_still_serves();
}

}  // namespace
}  // namespace nvmf::e2e
