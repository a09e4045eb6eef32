// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for AlignedBuffer and RegisteredBuffer's argument checks, create() and
// register_memory() (no device needed; the registration itself runs in every soft-RoCE test,
// whose queues and I/O buffers are built on it).
#include "common/verbs/registered_buffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace nvmf::verbs {
namespace {

TEST(AlignedBufferTest, ZeroedAndAlignedForEachAlignment) {
  int checked = 0;
  for (size_t alignment : {size_t{8}, size_t{64}, size_t{4096}, size_t{65536}}) {
    for (size_t bytes : {size_t{1}, size_t{100}, size_t{4096}, size_t{12289}}) {
      Result<AlignedBuffer> b = AlignedBuffer::create(bytes, alignment, "test buffer");
      ASSERT_TRUE(b.ok()) << b.status().to_string();
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % alignment, 0u) << alignment;
      EXPECT_EQ(b->size(), bytes);
      EXPECT_EQ(b->span().size(), bytes);
      EXPECT_EQ(b->span().data(), b->data());
      EXPECT_TRUE(
          std::all_of(b->span().begin(), b->span().end(), [](uint8_t v) { return v == 0; }));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 16);
}

TEST(AlignedBufferTest, RejectsZeroBytesNamingWhat) {
  Result<AlignedBuffer> b = AlignedBuffer::create(0, 64, "SQE buffers");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(b.status().message().find("SQE buffers"), std::string::npos) << b.status().message();
}

TEST(AlignedBufferTest, RejectsAlignmentsPosixMemalignWouldRefuse) {
  for (size_t alignment : {size_t{0}, size_t{1}, size_t{4}, size_t{48}, size_t{4095}}) {
    Result<AlignedBuffer> b = AlignedBuffer::create(64, alignment, "pages");
    ASSERT_FALSE(b.ok()) << alignment;
    EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument) << alignment;
    EXPECT_NE(b.status().message().find("alignment " + std::to_string(alignment)),
              std::string::npos)
        << b.status().message();
  }
}

TEST(AlignedBufferTest, MoveTransfersOwnership) {
  Result<AlignedBuffer> a = AlignedBuffer::create(256, 64, "a");
  ASSERT_TRUE(a.ok());
  a->data()[255] = 0xA5;
  uint8_t* p = a->data();
  AlignedBuffer b = std::move(*a);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 256u);
  EXPECT_EQ(b.data()[255], 0xA5);
  EXPECT_EQ(a->data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state
  AlignedBuffer c;
  EXPECT_EQ(c.data(), nullptr);
  EXPECT_EQ(c.size(), 0u);
  c = std::move(b);  // ASan: no leak, no double free
  EXPECT_EQ(c.data(), p);
}

TEST(RegisteredBufferTest, NullPdIsInvalidArgumentNamingWhat) {
  Result<RegisteredBuffer> r =
      RegisteredBuffer::create(nullptr, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, "data buffers");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("data buffers"), std::string::npos) << r.status().message();
}

TEST(RegisteredBufferTest, RegisterMemoryRefusesNullPdNullAddressAndZeroBytes) {
  uint8_t mem[64] = {};
  struct Case {
    ibv_pd* pd;
    void* addr;
    size_t bytes;
    const char* expect;
  };
  // A non-null PD that is never dereferenced: every case below is refused before ibv_reg_mr.
  auto* fake_pd = reinterpret_cast<ibv_pd*>(&mem[0]);
  const Case cases[] = {
      {nullptr, mem, sizeof(mem), "no protection domain"},
      {fake_pd, nullptr, sizeof(mem), "null or empty memory"},
      {fake_pd, mem, 0, "null or empty memory"},
  };
  int checked = 0;
  for (const Case& c : cases) {
    Result<RegisteredBuffer> r = RegisteredBuffer::register_memory(
        c.pd, c.addr, c.bytes, IBV_ACCESS_LOCAL_WRITE, "caller I/O buffer");
    ASSERT_FALSE(r.ok()) << c.expect;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.expect;
    EXPECT_NE(r.status().message().find("caller I/O buffer"), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().message();
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

}  // namespace
}  // namespace nvmf::verbs
