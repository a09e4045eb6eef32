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
constexpr uint32_t kRecvs = 64;    // CQE receives the raw host keeps posted
constexpr size_t kSendBytes = 64 + 8192;

// One RC connection speaking raw capsules: a send buffer, kRecvs CQE receives, one CQ.
struct RawQueue {
  std::optional<verbs::EventChannel> channel;
  std::optional<verbs::CmId> id;
  std::optional<verbs::ProtectionDomain> pd;
  std::optional<verbs::CompletionQueue> cq;
  std::vector<uint8_t> send_buf = std::vector<uint8_t>(kSendBytes);
  std::vector<proto::Cqe> cqes = std::vector<proto::Cqe>(kRecvs);
  std::optional<verbs::MemoryRegion> send_mr, cqe_mr;
  std::optional<verbs::QueuePair> qp;

  // Connects qid 0 with CM hsqsize `hsqsize` (hrqsize = hsqsize + 1).
  Status connect(const RxeEnv& env, uint16_t port, uint16_t hsqsize) {
    NVMF_ASSIGN_OR_RETURN(channel, verbs::EventChannel::create());
    NVMF_ASSIGN_OR_RETURN(id, verbs::CmId::create(*channel));
    NVMF_RETURN_IF_ERROR(id->resolve_addr(env.host_addr, env.target_addr, port, kTimeoutMs));
    NVMF_RETURN_IF_ERROR(id->resolve_route(kTimeoutMs));
    NVMF_ASSIGN_OR_RETURN(pd, verbs::ProtectionDomain::create(id->verbs()));
    NVMF_ASSIGN_OR_RETURN(cq, verbs::CompletionQueue::create(id->verbs(), 4 * kRecvs));
    NVMF_ASSIGN_OR_RETURN(send_mr,
                          verbs::MemoryRegion::create(pd->get(), send_buf.data(), kSendBytes, 0));
    NVMF_ASSIGN_OR_RETURN(
        cqe_mr, verbs::MemoryRegion::create(pd->get(), cqes.data(), kRecvs * sizeof(proto::Cqe),
                                            IBV_ACCESS_LOCAL_WRITE));
    verbs::QpConfig cfg;
    cfg.send_cq = cfg.recv_cq = cq->get();
    cfg.max_send_wr = kRecvs;
    cfg.max_recv_wr = kRecvs;
    NVMF_ASSIGN_OR_RETURN(qp, verbs::QueuePair::create(*id, pd->get(), cfg));
    for (uint32_t i = 0; i < kRecvs; ++i) NVMF_RETURN_IF_ERROR(post_recv(i));
    proto::CmRequestPrivateData priv{};
    priv.recfmt = proto::kCmRecfmt0;
    priv.qid = 0;
    priv.hsqsize = hsqsize;
    priv.hrqsize = static_cast<uint16_t>(hsqsize + 1);
    NVMF_RETURN_IF_ERROR(id->connect(&priv, sizeof(priv), 1, 1, 7, 7));  // RNR retry forever
    NVMF_ASSIGN_OR_RETURN(verbs::CmEvent ev, channel->get_event(kTimeoutMs));
    return ev.expect(RDMA_CM_EVENT_ESTABLISHED);
  }
  Status post_recv(uint32_t i) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(&cqes[i]), sizeof(proto::Cqe), cqe_mr->lkey()};
    ibv_recv_wr wr{};
    wr.wr_id = 1000 + i;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    int err = qp->post_recv(&wr);
    return err == 0 ? ok_status() : Status::from_errno("ibv_post_recv", err);
  }
  // Sends send_buf[offset, offset + bytes) as one capsule.
  Status send(size_t bytes, uint64_t wr_id, size_t offset = 0) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(send_buf.data() + offset), static_cast<uint32_t>(bytes),
                send_mr->lkey()};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    int err = qp->post_send(&wr);
    return err == 0 ? ok_status() : Status::from_errno("ibv_post_send", err);
  }
  void put_sqe(const proto::Sqe& sqe) { std::memcpy(send_buf.data(), &sqe, sizeof(sqe)); }
  // Waits for `responses` CQEs; returns them, or the first completion error.
  Result<std::vector<proto::Cqe>> collect(size_t responses) {
    std::vector<proto::Cqe> out;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
    while (out.size() < responses) {
      if (std::chrono::steady_clock::now() > deadline) {
        return Status::timeout("got " + std::to_string(out.size()) + " of " +
                               std::to_string(responses) + " responses");
      }
      ibv_wc wc[16];
      int n = cq->poll(wc);
      for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS) {
          return Status::io(std::string("completion error: ") + ibv_wc_status_str(wc[i].status));
        }
        if (wc[i].wr_id >= 1000) {
          uint32_t idx = static_cast<uint32_t>(wc[i].wr_id - 1000);
          out.push_back(cqes[idx]);
          NVMF_RETURN_IF_ERROR(post_recv(idx));
        }
      }
      if (n == 0) std::this_thread::yield();
    }
    return out;
  }
  // Admin Connect with the Connect data in-capsule; returns the CQE.
  Result<proto::Cqe> admin_connect(uint16_t entries) {
    auto data = host::connect_data(host::random_host_id(), proto::kAdminQueueCntlid, kNqn,
                                   "nqn.2014-08.org.nvmexpress:uuid:raw-capsule");
    if (!data.ok()) return data.status();
    proto::Sqe sqe = host::connect_sqe(0, entries, 0);
    encode_in_capsule_sgl(sqe.dptr, 0, sizeof(proto::ConnectData));
    sqe.cid = 0x7777;
    put_sqe(sqe);
    std::memcpy(send_buf.data() + 64, &*data, sizeof(proto::ConnectData));
    NVMF_RETURN_IF_ERROR(send(64 + sizeof(proto::ConnectData), 1));
    NVMF_ASSIGN_OR_RETURN(auto cqes_in, collect(1));
    return cqes_in[0];
  }
  // True once the CM reports the connection gone (target teardown), within the bound.
  bool disconnected() {
    auto ev = channel->get_event(kTimeoutMs);
    return ev.ok() && ev->event() == RDMA_CM_EVENT_DISCONNECTED;
  }
};

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
  auto c = q.admin_connect(kHsqsize + 1);
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
  auto c = q.admin_connect(32);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  ASSERT_EQ(status_without_phase(c->status), kStatusSuccess);
  ASSERT_TRUE(q.send(32, 2).ok());
  EXPECT_TRUE(q.disconnected());
  expect_target_still_serves();
}

TEST_F(RawCapsuleTest, CapsuleLongerThanTheReceiveTearsOnlyThatQueueDown) {
  RawQueue q;
  ASSERT_TRUE(q.connect(*env_, (*target_)->port(), 31).ok());
  auto c = q.admin_connect(32);
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
