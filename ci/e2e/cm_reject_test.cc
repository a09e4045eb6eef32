// SPDX-License-Identifier: BSD-3-Clause
// End to end over soft-RoCE: the target answers bad RDMA CM connect requests with a CM reject
// whose private data carries the NVMe-oF RDMA reject status (RDMA transport binding, "RDMA_CM
// REJECT private data"), and keeps serving good connections afterwards. (A short private data
// length cannot be sent over RoCE: the CM pads REQ private data to 56 bytes; the target's unit
// tests cover it.)
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>

#include "ci/e2e/e2e_options.h"
#include "ci/e2e/raw_cm.h"
#include "ci/e2e/running_target.h"
#include "ci/e2e/rxe_env.h"
#include "common/verbs/verbs.h"
#include "host/controller.h"
#include "host/raw/raw_queue.h"
#include "proto/rdma_cm.h"
#include "target/target.h"

namespace nvmf::e2e {
namespace {

constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:cm-reject";

struct RejectCase {
  const char* name;
  proto::CmRequestPrivateData pd;
  uint8_t length;     // bytes of private data sent
  uint16_t want_sts;  // expected CmRejectPrivateData::sts
};

// host::cm_request with RECFMT `recfmt`.
proto::CmRequestPrivateData request(uint16_t recfmt, uint16_t qid, uint16_t hrqsize,
                                    uint16_t hsqsize) {
  proto::CmRequestPrivateData pd = host::cm_request(qid, hrqsize, hsqsize);
  pd.recfmt = recfmt;
  return pd;
}

class CmRejectTest : public ::testing::TestWithParam<RejectCase> {
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

  std::optional<RxeEnv> env_;
  std::unique_ptr<RunningTarget> target_;
};

TEST_P(CmRejectTest, RejectsWithTheRightStatusAndStillServes) {
  const RejectCase& c = GetParam();
  auto rej = raw_connect_expect_reject(*env_, (*target_)->port(), &c.pd, c.length,
                                       /*responder_resources=*/1, /*initiator_depth=*/1, 5000);
  ASSERT_TRUE(rej.ok()) << c.name << ": " << rej.status().to_string();
  EXPECT_EQ(rej->recfmt, 0);
  EXPECT_EQ(rej->sts, c.want_sts) << c.name;

  // A good host still connects after the reject.
  host::HostOptions hopts = host_options_for(*env_, (*target_)->port(), kNqn, 128);
  auto ctrl = host::Controller::connect(hopts);
  ASSERT_TRUE(ctrl.ok()) << ctrl.status().to_string();
  EXPECT_TRUE((*ctrl)->disconnect().ok());
  EXPECT_GE((*target_)->stats().connections_rejected, 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CmRejectTest,
    ::testing::Values(
        RejectCase{"Recfmt1", request(1, 0, 32, 31), 32, proto::kCmRejectInvalidRecfmt},
        RejectCase{"QidTooLarge", request(0, 1000, 32, 31), 32, proto::kCmRejectInvalidQid},
        RejectCase{"Hsqsize0", request(0, 0, 32, 0), 32, proto::kCmRejectInvalidHsqsize},
        RejectCase{"HsqsizeHuge", request(0, 1, 32, 60000), 32, proto::kCmRejectInvalidHsqsize},
        RejectCase{"Hrqsize0", request(0, 0, 0, 31), 32, proto::kCmRejectInvalidHrqsize},
        RejectCase{"AdminHsqsize32", request(0, 0, 32, 32), 32, proto::kCmRejectInvalidHsqsize},
        RejectCase{"AdminHrqsize33", request(0, 0, 33, 31), 32, proto::kCmRejectInvalidHrqsize},
        RejectCase{"IoHrqsize129", request(0, 1, 129, 127), 32, proto::kCmRejectInvalidHrqsize},
        RejectCase{"IoHsqsize128", request(0, 1, 128, 128), 32, proto::kCmRejectInvalidHsqsize},
        RejectCase{"HrqsizeMax", request(0, 1, 0xFFFF, 31), 32, proto::kCmRejectInvalidHrqsize},
        RejectCase{"Qid0xFFFF", request(0, 0xFFFF, 32, 31), 32, proto::kCmRejectInvalidQid},
        RejectCase{"QidOneAboveMax", request(0, 5, 32, 31), 32, proto::kCmRejectInvalidQid}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace nvmf::e2e
