// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for nvmf::Status, nvmf::Result<T> and the propagation macros.
#include "common/status.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <string>

namespace nvmf {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.to_string(), "OK");
  EXPECT_FALSE(s.os_errno().has_value());
  EXPECT_FALSE(s.nvme_status().has_value());
  EXPECT_TRUE(ok_status().ok());
}

TEST(StatusTest, OkCodeDropsMessage) {
  Status s(StatusCode::kOk, "ignored");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
}

TEST(StatusTest, FactoriesSetCodeAndMessage) {
  EXPECT_EQ(Status::invalid_argument("x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Status::unavailable("x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(Status::timeout("x").code(), StatusCode::kTimeout);
  EXPECT_EQ(Status::rejected("x").code(), StatusCode::kRejected);
  EXPECT_EQ(Status::io("x").code(), StatusCode::kIo);
  EXPECT_EQ(Status::internal("x").code(), StatusCode::kInternal);
  EXPECT_EQ(Status::not_found("x").code(), StatusCode::kNotFound);
  EXPECT_EQ(Status::resource_exhausted("x").code(), StatusCode::kResourceExhausted);
  Status s = Status::unavailable("connect 10.0.0.1:4420");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "connect 10.0.0.1:4420");
  EXPECT_EQ(s.to_string(), "UNAVAILABLE: connect 10.0.0.1:4420");
}

TEST(StatusTest, CodeNames) {
  EXPECT_EQ(status_code_name(StatusCode::kOk), "OK");
  EXPECT_EQ(status_code_name(StatusCode::kInvalidArgument), "INVALID_ARGUMENT");
  EXPECT_EQ(status_code_name(StatusCode::kUnavailable), "UNAVAILABLE");
  EXPECT_EQ(status_code_name(StatusCode::kTimeout), "TIMEOUT");
  EXPECT_EQ(status_code_name(StatusCode::kRejected), "REJECTED");
  EXPECT_EQ(status_code_name(StatusCode::kNvmeError), "NVME_ERROR");
  EXPECT_EQ(status_code_name(StatusCode::kIo), "IO");
  EXPECT_EQ(status_code_name(StatusCode::kInternal), "INTERNAL");
  EXPECT_EQ(status_code_name(StatusCode::kNotFound), "NOT_FOUND");
  EXPECT_EQ(status_code_name(StatusCode::kResourceExhausted), "RESOURCE_EXHAUSTED");
}

TEST(StatusTest, FromErrnoNamesOperationAndErrno) {
  Status s = Status::from_errno("ibv_create_cq", ENOMEM);
  EXPECT_EQ(s.message(), "ibv_create_cq: Cannot allocate memory (errno 12)");
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  ASSERT_TRUE(s.os_errno().has_value());
  EXPECT_EQ(*s.os_errno(), ENOMEM);
  EXPECT_EQ(s.to_string(), "RESOURCE_EXHAUSTED: ibv_create_cq: Cannot allocate memory (errno 12)");
}

TEST(StatusTest, FromErrnoWithDetail) {
  Status s = Status::from_errno("rdma_bind_addr", EADDRINUSE, "10.0.0.1:4420");
  EXPECT_EQ(s.message(), "rdma_bind_addr (10.0.0.1:4420): Address already in use (errno 98)");
}

TEST(StatusTest, ErrnoMapping) {
  EXPECT_EQ(status_code_from_errno(ECONNREFUSED), StatusCode::kUnavailable);
  EXPECT_EQ(status_code_from_errno(EHOSTUNREACH), StatusCode::kUnavailable);
  EXPECT_EQ(status_code_from_errno(ENETUNREACH), StatusCode::kUnavailable);
  EXPECT_EQ(status_code_from_errno(ENODEV), StatusCode::kUnavailable);
  EXPECT_EQ(status_code_from_errno(ETIMEDOUT), StatusCode::kTimeout);
  EXPECT_EQ(status_code_from_errno(EINVAL), StatusCode::kInvalidArgument);
  EXPECT_EQ(status_code_from_errno(ENOMEM), StatusCode::kResourceExhausted);
  EXPECT_EQ(status_code_from_errno(ENOSPC), StatusCode::kResourceExhausted);
  EXPECT_EQ(status_code_from_errno(ENOENT), StatusCode::kNotFound);
  EXPECT_EQ(status_code_from_errno(EIO), StatusCode::kIo);
  EXPECT_EQ(status_code_from_errno(EPERM), StatusCode::kInternal);
  EXPECT_EQ(status_code_from_errno(0), StatusCode::kInternal);
}

TEST(StatusTest, NvmeErrorCarriesStatusField) {
  // SCT 0, SC 0x80 (LBA Out of Range), DNR: field = 1<<15 | 0x80<<1.
  const uint16_t field = 0x8000 | (0x80 << 1);
  Status s = Status::nvme_error(field, "read nsid 1 lba 100");
  EXPECT_EQ(s.code(), StatusCode::kNvmeError);
  ASSERT_TRUE(s.nvme_status().has_value());
  EXPECT_EQ(*s.nvme_status(), field);
  EXPECT_EQ(s.to_string(), "NVME_ERROR: read nsid 1 lba 100 [nvme status 0x8100]");
}

TEST(StatusTest, AnnotatePrefixesContext) {
  Status s = Status::timeout("no event").annotate("resolve 10.0.0.1:4420");
  EXPECT_EQ(s.code(), StatusCode::kTimeout);
  EXPECT_EQ(s.message(), "resolve 10.0.0.1:4420: no event");
  const Status base = Status::from_errno("rdma_connect", ECONNREFUSED);
  Status copy = base.annotate("queue 1");
  EXPECT_EQ(copy.os_errno(), ECONNREFUSED);
  EXPECT_EQ(base.message(), "rdma_connect: Connection refused (errno 111)");
  EXPECT_TRUE(ok_status().annotate("ctx").ok());
  EXPECT_EQ(ok_status().annotate("ctx").message(), "");
}

TEST(StatusTest, WithErrno) {
  Status s = Status::unavailable("unreachable").with_errno(EHOSTUNREACH);
  EXPECT_EQ(s.os_errno(), EHOSTUNREACH);
}

TEST(StatusTest, Equality) {
  EXPECT_EQ(Status::io("a"), Status::io("a"));
  EXPECT_NE(Status::io("a"), Status::io("b"));
  EXPECT_NE(Status::io("a"), Status::internal("a"));
  EXPECT_EQ(Status(), ok_status());
}

TEST(ResultTest, HoldsValue) {
  Result<int> r = 42;
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), 42);
  EXPECT_EQ(*r, 42);
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(r.value_or(7), 42);
}

TEST(ResultTest, HoldsError) {
  Result<int> r = Status::not_found("namespace 3");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "namespace 3");
  EXPECT_EQ(r.value_or(7), 7);
}

TEST(ResultTest, OkStatusBecomesInternalError) {
  Result<int> r = ok_status();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(ResultTest, MoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(**r, 5);
  std::unique_ptr<int> taken = std::move(r).value();
  EXPECT_EQ(*taken, 5);
  Result<std::unique_ptr<int>> moved = std::move(r);
  EXPECT_TRUE(moved.ok());
}

TEST(ResultTest, ConvertingConstructorAndArrow) {
  Result<std::string> r = "abc";
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 3u);
  const Result<std::string>& cr = r;
  EXPECT_EQ(cr->size(), 3u);
  EXPECT_EQ(*cr, "abc");
}

TEST(ResultTest, StatusFromRvalue) {
  Result<int> r = Status::io("short read");
  Status s = std::move(r).status();
  EXPECT_EQ(s.code(), StatusCode::kIo);
  Result<int> good = 1;
  EXPECT_TRUE(std::move(good).status().ok());
}

TEST(ResultDeathTest, ValueOnErrorAborts) {
  Result<int> r = Status::io("boom");
  EXPECT_DEATH((void)r.value(), "IO: boom");
}

// Helpers driving the macros.
Status fail_if(bool fail) { return fail ? Status::io("inner failed") : ok_status(); }
Result<int> number(bool fail) {
  if (fail) return Status::invalid_argument("no number");
  return 7;
}

Status uses_return_if_error(bool fail, int* reached) {
  NVMF_RETURN_IF_ERROR(fail_if(fail));
  *reached = 1;
  return ok_status();
}

Result<int> uses_return_if_error_on_result(bool fail) {
  NVMF_RETURN_IF_ERROR(number(fail));
  return 1;
}

Result<int> uses_assign_or_return(bool fail) {
  NVMF_ASSIGN_OR_RETURN(const int n, number(fail));
  NVMF_ASSIGN_OR_RETURN(auto m, number(fail));  // Two in one scope need distinct temporaries.
  return n + m;
}

Status assigns_existing(bool fail, std::unique_ptr<int>* out) {
  auto make = [fail]() -> Result<std::unique_ptr<int>> {
    if (fail) return Status::internal("no pointer");
    return std::make_unique<int>(3);
  };
  NVMF_ASSIGN_OR_RETURN(*out, make());
  return ok_status();
}

TEST(MacroTest, ReturnIfError) {
  int reached = 0;
  EXPECT_TRUE(uses_return_if_error(false, &reached).ok());
  EXPECT_EQ(reached, 1);
  reached = 0;
  Status s = uses_return_if_error(true, &reached);
  EXPECT_EQ(s.code(), StatusCode::kIo);
  EXPECT_EQ(reached, 0);
  EXPECT_TRUE(uses_return_if_error_on_result(false).ok());
  EXPECT_EQ(uses_return_if_error_on_result(true).status().code(), StatusCode::kInvalidArgument);
}

TEST(MacroTest, ReturnIfErrorOnLvalue) {
  const Status bad = Status::rejected("sts 3");
  auto f = [&bad]() -> Status {
    NVMF_RETURN_IF_ERROR(bad);
    return ok_status();
  };
  EXPECT_EQ(f(), bad);
}

TEST(MacroTest, AssignOrReturn) {
  Result<int> ok = uses_assign_or_return(false);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 14);
  EXPECT_EQ(uses_assign_or_return(true).status().message(), "no number");
  std::unique_ptr<int> p;
  EXPECT_TRUE(assigns_existing(false, &p).ok());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 3);
  EXPECT_EQ(assigns_existing(true, &p).code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace nvmf
