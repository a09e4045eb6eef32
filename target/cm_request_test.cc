// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for check_cm_request: every reject status and the padding rule.
#include "target/cm_request.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "proto/rdma_cm.h"

namespace nvmf::target {
namespace {

std::vector<uint8_t> request(uint16_t qid, uint16_t hrqsize, uint16_t hsqsize, size_t len = 32,
                             uint16_t recfmt = 0) {
  proto::CmRequestPrivateData pd{};
  pd.recfmt = recfmt;
  pd.qid = qid;
  pd.hrqsize = hrqsize;
  pd.hsqsize = hsqsize;
  std::vector<uint8_t> bytes(len, 0);
  std::memcpy(bytes.data(), &pd, std::min(len, sizeof(pd)));
  return bytes;
}

const CmLimits kLimits{4, 32, 128};

TEST(CmRequest, LinuxAdminQueueAccepted) {
  auto c = check_cm_request(request(0, 32, 31), kLimits);
  EXPECT_TRUE(c.accepted());
  EXPECT_EQ(c.qid, 0);
  EXPECT_EQ(c.queue_size, 32u);
  EXPECT_EQ(c.hrqsize, 32);
}

TEST(CmRequest, RoceLength56Accepted) {
  auto c = check_cm_request(request(1, 128, 127, 56), kLimits);
  EXPECT_TRUE(c.accepted());
  EXPECT_EQ(c.queue_size, 128u);
}

TEST(CmRequest, Length31RejectedAsInvalidLength) {
  auto c = check_cm_request(request(0, 32, 31, 31), kLimits);
  EXPECT_EQ(c.reject_sts, proto::kCmRejectInvalidPrivateDataLength);
  EXPECT_EQ(check_cm_request({}, kLimits).reject_sts, proto::kCmRejectInvalidPrivateDataLength);
}

TEST(CmRequest, RecfmtRejected) {
  EXPECT_EQ(check_cm_request(request(0, 32, 31, 32, 1), kLimits).reject_sts,
            proto::kCmRejectInvalidRecfmt);
}

TEST(CmRequest, QidAboveIoQueuesRejected) {
  EXPECT_TRUE(check_cm_request(request(4, 128, 127), kLimits).accepted());
  EXPECT_EQ(check_cm_request(request(5, 128, 127), kLimits).reject_sts, proto::kCmRejectInvalidQid);
}

TEST(CmRequest, HsqsizeZeroOrTooLargeRejected) {
  EXPECT_EQ(check_cm_request(request(1, 128, 0), kLimits).reject_sts,
            proto::kCmRejectInvalidHsqsize);
  EXPECT_EQ(check_cm_request(request(1, 128, 128), kLimits).reject_sts,
            proto::kCmRejectInvalidHsqsize);
  EXPECT_EQ(check_cm_request(request(0, 32, 32), kLimits).reject_sts,
            proto::kCmRejectInvalidHsqsize);  // admin queue: at most 32 entries
}

TEST(CmRequest, HrqsizeZeroOrTooLargeRejected) {
  EXPECT_EQ(check_cm_request(request(1, 0, 127), kLimits).reject_sts,
            proto::kCmRejectInvalidHrqsize);
  EXPECT_EQ(check_cm_request(request(1, 129, 127), kLimits).reject_sts,
            proto::kCmRejectInvalidHrqsize);
}

TEST(CmRequest, ChecksRunInSpecOrder) {
  // Bad recfmt and bad qid: recfmt wins. Bad hsqsize and hrqsize: hsqsize wins.
  EXPECT_EQ(check_cm_request(request(9, 0, 0, 32, 7), kLimits).reject_sts,
            proto::kCmRejectInvalidRecfmt);
  EXPECT_EQ(check_cm_request(request(1, 0, 0), kLimits).reject_sts, proto::kCmRejectInvalidHsqsize);
}

}  // namespace
}  // namespace nvmf::target
