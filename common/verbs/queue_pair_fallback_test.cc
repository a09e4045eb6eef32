// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for the inline-send fallback of QP creation, driven by a fake create function.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/verbs/queue_pair.h"

namespace nvmf::verbs {
namespace {

// Records each attempt's requested caps and answers from a script of errnos. On success it
// writes back granted caps the way a provider does: rxe answers max_inline_data 0 with 16.
class FakeCreate {
 public:
  explicit FakeCreate(std::vector<int> results) : results_(std::move(results)) {}

  QpCreateFn fn() {
    return [this](ibv_qp_init_attr& attr) {
      requested_.push_back(attr);
      const int result = results_.at(requested_.size() - 1);
      if (result == 0) {
        if (attr.cap.max_inline_data == 0) attr.cap.max_inline_data = 16;
        attr.cap.max_send_sge += 1;  // Providers may grant more than asked.
      } else {
        attr.cap.max_inline_data = 12345;  // A failed create must not leak into the outcome.
      }
      return result;
    };
  }
  const std::vector<ibv_qp_init_attr>& requested() const { return requested_; }

 private:
  std::vector<int> results_;
  std::vector<ibv_qp_init_attr> requested_;
};

class FallbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_log_sink([this](std::string_view line) { lines_.emplace_back(line); });
    config_.max_send_wr = 32;
    config_.max_recv_wr = 33;
    config_.max_send_sge = 2;
    config_.max_recv_sge = 4;
  }
  void TearDown() override { set_log_sink(nullptr); }

  QpConfig config_;
  std::vector<std::string> lines_;
};

TEST_F(FallbackTest, DefaultRequestsOneSqe) {
  EXPECT_EQ(QpConfig{}.requested_max_inline_data, 64u);
  EXPECT_EQ(kDefaultMaxInlineData, 64u);
}

TEST_F(FallbackTest, FirstAttemptSucceeds) {
  FakeCreate fake({0});
  Result<QpCreation> r = create_qp_with_inline_fallback(config_, "rxe0", fake.fn());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(fake.requested().size(), 1u);
  const ibv_qp_init_attr& attr = fake.requested()[0];
  EXPECT_EQ(attr.qp_type, IBV_QPT_RC);
  EXPECT_EQ(attr.cap.max_inline_data, 64u);
  EXPECT_EQ(attr.cap.max_send_wr, 32u);
  EXPECT_EQ(attr.cap.max_recv_wr, 33u);
  EXPECT_EQ(attr.cap.max_send_sge, 2u);
  EXPECT_EQ(attr.cap.max_recv_sge, 4u);
  EXPECT_FALSE(r->inline_fallback);
  EXPECT_EQ(r->requested_max_inline_data, 64u);
  EXPECT_EQ(r->granted.max_inline_data, 64u);
  EXPECT_EQ(r->usable_max_inline_data(), 64u);
  EXPECT_EQ(r->granted.max_send_sge, 3u);  // Written back by the provider.
  EXPECT_EQ(r->granted.max_recv_sge, 4u);
  EXPECT_TRUE(lines_.empty());
}

TEST_F(FallbackTest, EinvalThenRetryWithoutInline) {
  config_.requested_max_inline_data = 1024;  // rxe refuses > 512 with EINVAL.
  FakeCreate fake({EINVAL, 0});
  Result<QpCreation> r = create_qp_with_inline_fallback(config_, "rxe0", fake.fn());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(fake.requested().size(), 2u);
  EXPECT_EQ(fake.requested()[0].cap.max_inline_data, 1024u);
  EXPECT_EQ(fake.requested()[1].cap.max_inline_data, 0u);
  EXPECT_EQ(fake.requested()[1].cap.max_send_sge, 2u);  // Everything else unchanged.
  EXPECT_EQ(fake.requested()[1].cap.max_send_wr, 32u);
  EXPECT_TRUE(r->inline_fallback);
  EXPECT_EQ(r->first_errno, EINVAL);
  EXPECT_EQ(r->requested_max_inline_data, 1024u);
  EXPECT_EQ(r->granted.max_inline_data, 16u);  // What the provider wrote back for 0.
  EXPECT_EQ(r->usable_max_inline_data(), 0u);  // ... but nothing is ever posted inline.
  // Exactly one WARN, naming the device, the size and the errno.
  ASSERT_EQ(lines_.size(), 1u);
  const std::string& line = lines_[0];
  EXPECT_NE(line.find(" W verbs: "), std::string::npos) << line;
  EXPECT_NE(line.find("rxe0"), std::string::npos) << line;
  EXPECT_NE(line.find("max_inline_data 1024"), std::string::npos) << line;
  EXPECT_NE(line.find("Invalid argument (errno 22)"), std::string::npos) << line;
  EXPECT_NE(line.find("retried without inline send (max_inline_data 0): created"),
            std::string::npos)
      << line;
}

TEST_F(FallbackTest, AnyErrnoTriggersTheRetry) {
  FakeCreate fake({ENOMEM, 0});  // librdmacm reports ENOMEM whatever the provider said.
  Result<QpCreation> r = create_qp_with_inline_fallback(config_, "irdma0", fake.fn());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->inline_fallback);
  EXPECT_EQ(r->first_errno, ENOMEM);
}

TEST_F(FallbackTest, RequestZeroIsOneAttemptAndNeverInlineThoughSixteenIsGranted) {
  config_.requested_max_inline_data = 0;
  FakeCreate fake({0});
  Result<QpCreation> r = create_qp_with_inline_fallback(config_, "rxe0", fake.fn());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(fake.requested().size(), 1u);
  EXPECT_EQ(fake.requested()[0].cap.max_inline_data, 0u);
  EXPECT_FALSE(r->inline_fallback);
  EXPECT_EQ(r->granted.max_inline_data, 16u);
  EXPECT_EQ(r->usable_max_inline_data(), 0u);
  EXPECT_TRUE(lines_.empty());
}

TEST_F(FallbackTest, GrantBelowTheRequestIsUsedWithoutRetry) {
  config_.requested_max_inline_data = 512;
  FakeCreate fake({0});
  auto shrink = [inner = fake.fn()](ibv_qp_init_attr& attr) {
    const int rc = inner(attr);
    attr.cap.max_inline_data = 32;  // a provider that writes back less than was asked
    return rc;
  };
  Result<QpCreation> r = create_qp_with_inline_fallback(config_, "mlx5_0", shrink);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(fake.requested().size(), 1u);
  EXPECT_FALSE(r->inline_fallback);
  EXPECT_EQ(r->granted.max_inline_data, 32u);
  EXPECT_EQ(r->usable_max_inline_data(), 32u);
  EXPECT_EQ(choose_send_mode(64, false, r->usable_max_inline_data()), SendMode::kByReference);
  EXPECT_EQ(choose_send_mode(16, false, r->usable_max_inline_data()), SendMode::kInline);
}

TEST_F(FallbackTest, RequestZeroFailsWithoutRetry) {
  config_.requested_max_inline_data = 0;
  FakeCreate fake({EINVAL});
  Result<QpCreation> r = create_qp_with_inline_fallback(config_, "rxe0", fake.fn());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(fake.requested().size(), 1u);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().os_errno(), EINVAL);
  EXPECT_EQ(r.status().message().rfind("rdma_create_qp (rxe0,", 0), 0u) << r.status().message();
  EXPECT_NE(r.status().message().find("Invalid argument (errno 22)"), std::string::npos);
  EXPECT_TRUE(lines_.empty());
}

TEST_F(FallbackTest, RetryFailsToo) {
  FakeCreate fake({EINVAL, ENOMEM});
  Result<QpCreation> r = create_qp_with_inline_fallback(config_, "rxe0", fake.fn());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(fake.requested().size(), 2u);  // No third attempt.
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().os_errno(), ENOMEM);
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("max_inline_data 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("first attempt with max_inline_data 64 failed with errno 22"),
            std::string::npos)
      << msg;
  // No WARN: it would say inline send was the trouble when it was not (both attempts failed,
  // the returned error names both).
  EXPECT_TRUE(lines_.empty()) << lines_[0];
}

TEST(QpInitAttrTest, CopiesConfig) {
  QpConfig config;
  config.max_send_wr = 8;
  config.sq_sig_all = true;
  int context = 0;
  config.qp_context = &context;
  const ibv_qp_init_attr attr = make_qp_init_attr(config, 200);
  EXPECT_EQ(attr.cap.max_inline_data, 200u);
  EXPECT_EQ(attr.cap.max_send_wr, 8u);
  EXPECT_EQ(attr.sq_sig_all, 1);
  EXPECT_EQ(attr.qp_context, &context);
  EXPECT_EQ(attr.srq, nullptr);
  EXPECT_EQ(attr.qp_type, IBV_QPT_RC);
}

}  // namespace
}  // namespace nvmf::verbs
