// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for cm_event_status: how unexpected rdma_cm events become Status values.
#include "common/verbs/cm_event.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace nvmf::verbs {
namespace {

TEST(CmEventStatusTest, ExpectedEventIsOk) {
  EXPECT_TRUE(cm_event_status(RDMA_CM_EVENT_ESTABLISHED, 0, RDMA_CM_EVENT_ESTABLISHED).ok());
  EXPECT_TRUE(cm_event_status(RDMA_CM_EVENT_ADDR_RESOLVED, 0, RDMA_CM_EVENT_ADDR_RESOLVED).ok());
}

TEST(CmEventStatusTest, AddrErrorCarriesErrno) {
  Status s = cm_event_status(RDMA_CM_EVENT_ADDR_ERROR, -ENETUNREACH, RDMA_CM_EVENT_ADDR_RESOLVED,
                             "resolve address 10.0.0.9:4420");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.os_errno(), ENETUNREACH);
  EXPECT_EQ(s.message(),
            "resolve address 10.0.0.9:4420: expected RDMA_CM_EVENT_ADDR_RESOLVED, got "
            "RDMA_CM_EVENT_ADDR_ERROR: Network is unreachable (errno 101)");
}

TEST(CmEventStatusTest, ResolveTimeoutIsTimeout) {
  EXPECT_EQ(
      cm_event_status(RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT, RDMA_CM_EVENT_ADDR_RESOLVED).code(),
      StatusCode::kTimeout);
  EXPECT_EQ(
      cm_event_status(RDMA_CM_EVENT_ROUTE_ERROR, -ETIMEDOUT, RDMA_CM_EVENT_ROUTE_RESOLVED).code(),
      StatusCode::kTimeout);
  EXPECT_EQ(cm_event_status(RDMA_CM_EVENT_ROUTE_ERROR, -EHOSTUNREACH, RDMA_CM_EVENT_ROUTE_RESOLVED)
                .code(),
            StatusCode::kUnavailable);
}

TEST(CmEventStatusTest, UnreachableIsUnavailable) {
  Status s = cm_event_status(RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, RDMA_CM_EVENT_ESTABLISHED);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("RDMA_CM_EVENT_UNREACHABLE"), std::string::npos);
  EXPECT_EQ(
      cm_event_status(RDMA_CM_EVENT_CONNECT_ERROR, -ECONNRESET, RDMA_CM_EVENT_ESTABLISHED).code(),
      StatusCode::kUnavailable);
  EXPECT_EQ(cm_event_status(RDMA_CM_EVENT_DEVICE_REMOVAL, 0, RDMA_CM_EVENT_ESTABLISHED).code(),
            StatusCode::kUnavailable);
}

TEST(CmEventStatusTest, ConsumerRejectIsRejected) {
  Status s = cm_event_status(RDMA_CM_EVENT_REJECTED, kIbCmRejectConsumerDefined,
                             RDMA_CM_EVENT_ESTABLISHED);
  EXPECT_EQ(s.code(), StatusCode::kRejected);
  EXPECT_EQ(s.message(),
            "expected RDMA_CM_EVENT_ESTABLISHED, got RDMA_CM_EVENT_REJECTED (status 28): "
            "rejected by the peer");
  EXPECT_FALSE(s.os_errno().has_value());
}

TEST(CmEventStatusTest, NoListenerIsConnectionRefused) {
  Status s = cm_event_status(RDMA_CM_EVENT_REJECTED, kIbCmRejectInvalidServiceId,
                             RDMA_CM_EVENT_ESTABLISHED);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("no listener"), std::string::npos);
}

TEST(CmEventStatusTest, OtherEventsAreInternal) {
  Status s = cm_event_status(RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, RDMA_CM_EVENT_ROUTE_RESOLVED);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "expected RDMA_CM_EVENT_ROUTE_RESOLVED, got RDMA_CM_EVENT_TIMEWAIT_EXIT");
}

TEST(CmEventStatusTest, ExpectedEventWithErrorStatus) {
  Status s = cm_event_status(RDMA_CM_EVENT_ESTABLISHED, -ENOMEM, RDMA_CM_EVENT_ESTABLISHED);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.os_errno(), ENOMEM);
}

}  // namespace
}  // namespace nvmf::verbs
