// Unit tests for IoEngine, both kinds, against real files in TEST_TMPDIR: data round trips,
// short transfers at the end of a file, errors as -errno, more operations than the ring holds,
// the eventfd, drain().
#include "target/io_engine.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace nvmf::target {
namespace {

struct Collector : IoCompletion {
  void io_done(IoRequest& io) override { done.push_back(&io); }
  std::vector<IoRequest*> done;
};

class IoEngineTest : public ::testing::TestWithParam<IoEngineKind> {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("TEST_TMPDIR");
    path_ = std::string(dir != nullptr ? dir : "/tmp") + "/io_engine_" +
            io_engine_kind_name(GetParam()) + std::to_string(::getpid());
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd_, 0);
    ASSERT_EQ(::ftruncate(fd_, 1 << 20), 0);
    auto e = IoEngine::create(GetParam(), 4);  // a small ring: the overflow path is used
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    engine_ = std::move(e).value();
  }
  void TearDown() override {
    engine_.reset();
    ::close(fd_);
    ::unlink(path_.c_str());
  }

  IoRequest op(IoOp kind, uint64_t offset, uint64_t length, uint8_t* data, int fd = -1) {
    IoRequest io;
    io.op = kind;
    io.fd = fd < 0 ? fd_ : fd;
    io.offset = offset;
    io.length = length;
    io.data = data;
    io.done = &collector_;
    return io;
  }
  // Submits and reaps until `ios` completed (5 s at most); returns the result of the last.
  void run(std::vector<IoRequest*> ios) {
    size_t before = collector_.done.size();
    for (IoRequest* io : ios) engine_->submit(*io);
    for (int i = 0; i < 5000 && collector_.done.size() < before + ios.size(); ++i) {
      engine_->flush_submissions();
      if (engine_->reap() == 0) ::usleep(1000);
    }
    ASSERT_EQ(collector_.done.size(), before + ios.size());
    EXPECT_EQ(engine_->in_flight(), 0u);
  }

  std::string path_;
  int fd_ = -1;
  Collector collector_;
  std::unique_ptr<IoEngine> engine_;
};

TEST_P(IoEngineTest, WriteWithFuaThenReadBack) {
  std::vector<uint8_t> out(8192), in(8192, 0);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 13 + 7);
  IoRequest w = op(IoOp::kWrite, 4096, out.size(), out.data());
  w.fua = true;
  run({&w});
  EXPECT_EQ(w.result, 8192);
  IoRequest r = op(IoOp::kRead, 4096, in.size(), in.data());
  run({&r});
  EXPECT_EQ(r.result, 8192);
  EXPECT_EQ(in, out);
  IoRequest f = op(IoOp::kFlush, 0, 0, nullptr);
  run({&f});
  EXPECT_EQ(f.result, 0);
}

TEST_P(IoEngineTest, ReadPastTheEndOfTheFileIsEio) {
  ASSERT_EQ(::ftruncate(fd_, 6144), 0);  // 2 KiB of the 8 KiB asked for are missing
  std::vector<uint8_t> in(8192);
  IoRequest r = op(IoOp::kRead, 0, in.size(), in.data());
  run({&r});
  EXPECT_EQ(r.result, -EIO);
}

TEST_P(IoEngineTest, ErrorsComeBackAsNegativeErrno) {
  int ro = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(ro, 0);
  std::vector<uint8_t> data(512, 1);
  IoRequest w = op(IoOp::kWrite, 0, data.size(), data.data(), ro);
  IoRequest z = op(IoOp::kZeroRange, 0, 4096, nullptr, ro);
  run({&w, &z});
  EXPECT_EQ(w.result, -EBADF);
  EXPECT_EQ(z.result, -EBADF);
  ::close(ro);
}

TEST_P(IoEngineTest, ZeroRangeAndPunchHoleReadBackZeroes) {
  std::vector<uint8_t> ones(65536, 0xFF), in(65536);
  IoRequest w = op(IoOp::kWrite, 0, ones.size(), ones.data());
  run({&w});
  ASSERT_EQ(w.result, 65536);
  IoRequest z = op(IoOp::kZeroRange, 4096, 8192, nullptr);
  IoRequest p = op(IoOp::kPunchHole, 32768, 16384, nullptr);
  run({&z, &p});
  // A file system without a mode says EOPNOTSUPP (the processor then tries the other).
  if (z.result == -EOPNOTSUPP || p.result == -EOPNOTSUPP) {
    GTEST_LOG_(INFO) << "this file system lacks a fallocate mode: " << z.result << " " << p.result;
  }
  IoRequest r = op(IoOp::kRead, 0, in.size(), in.data());
  run({&r});
  for (size_t i = 0; i < in.size(); ++i) {
    bool zeroed =
        (z.result == 0 && i >= 4096 && i < 12288) || (p.result == 0 && i >= 32768 && i < 49152);
    ASSERT_EQ(in[i], zeroed ? 0 : 0xFF) << "byte " << i;
  }
  EXPECT_TRUE(z.result == 0 || p.result == 0) << "neither fallocate mode works here";
}

TEST_P(IoEngineTest, MoreOperationsThanTheRingHoldsAllComplete) {
  constexpr int kOps = 64;
  std::vector<std::vector<uint8_t>> bufs(kOps, std::vector<uint8_t>(512));
  std::vector<IoRequest> ios;
  ios.reserve(kOps);
  for (int i = 0; i < kOps; ++i) {
    std::memset(bufs[i].data(), i + 1, 512);
    ios.push_back(op(IoOp::kWrite, i * 512u, 512, bufs[i].data()));
  }
  std::vector<IoRequest*> ptrs;
  for (auto& io : ios) ptrs.push_back(&io);
  run(ptrs);
  for (auto& io : ios) EXPECT_EQ(io.result, 512);
  std::vector<uint8_t> all(kOps * 512);
  ASSERT_EQ(::pread(fd_, all.data(), all.size(), 0), static_cast<ssize_t>(all.size()));
  for (int i = 0; i < kOps; ++i) ASSERT_EQ(all[i * 512 + 511], i + 1);
}

TEST_P(IoEngineTest, EventFdSignalsAndDrainDelivers) {
  std::vector<uint8_t> in(4096);
  IoRequest r = op(IoOp::kRead, 0, in.size(), in.data());
  engine_->submit(r);
  EXPECT_EQ(engine_->in_flight(), 1u);
  EXPECT_TRUE(collector_.done.empty()) << "never delivered from inside submit()";
  engine_->flush_submissions();
  pollfd p{engine_->event_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  engine_->clear_event();
  IoRequest f = op(IoOp::kFlush, 0, 0, nullptr);
  engine_->submit(f);
  engine_->drain();
  EXPECT_EQ(engine_->in_flight(), 0u);
  ASSERT_EQ(collector_.done.size(), 2u);
  EXPECT_EQ(r.result, 4096);
  EXPECT_EQ(f.result, 0);
}

INSTANTIATE_TEST_SUITE_P(Kinds, IoEngineTest,
                         ::testing::Values(IoEngineKind::kUring, IoEngineKind::kThreads),
                         [](const auto& info) { return io_engine_kind_name(info.param); });

}  // namespace
}  // namespace nvmf::target
