// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for IoEngine, both kinds, against real files in TEST_TMPDIR: data round trips,
// short transfers at the end of a file, errors as -errno, more operations than the ring holds,
// the eventfd, drain(); the io_uring setup fallbacks (flags refused as by an older kernel), a
// ring created on one thread and used on another, fixed buffers (register_memory) and their
// fallback (no sparse table: plain reads and writes), O_DIRECT in a directory that takes it.
#include "target/io_engine.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <liburing.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace nvmf::target {
namespace {

struct Collector : IoCompletion {
  void io_done(IoRequest& io) override { done.push_back(&io); }
  std::vector<IoRequest*> done;
};

// The running kernel's (major, minor) from uname(2); (0, 0) when it cannot be read.
std::pair<int, int> kernel_version() {
  utsname u{};
  int major = 0, minor = 0;
  if (::uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

// Linux 5.19 added the sparse fixed-buffer table (IORING_RSRC_REGISTER_SPARSE) the engine needs.
bool kernel_has_sparse_buffer_table() { return kernel_version() >= std::pair{5, 19}; }

// A directory whose file system takes O_DIRECT (tmpfs before Linux 6.6 refuses it with
// EINVAL): TEST_TMPDIR, else /var/tmp, else /tmp. Empty when none does.
std::string direct_io_dir() {
  const char* test_tmpdir = std::getenv("TEST_TMPDIR");
  for (const char* dir : {test_tmpdir, "/var/tmp", "/tmp"}) {
    if (dir == nullptr) continue;
    std::string probe = std::string(dir) + "/o_direct_probe" + std::to_string(::getpid());
    int fd = ::open(probe.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::close(fd);
      ::unlink(probe.c_str());
      return dir;
    }
  }
  return "";
}

IoRequest make_io(IoOp kind, int fd, uint64_t offset, uint64_t length, uint8_t* data,
                  IoCompletion* done) {
  IoRequest io;
  io.op = kind;
  io.fd = fd;
  io.offset = offset;
  io.length = length;
  io.data = data;
  io.done = done;
  return io;
}

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
    return make_io(kind, fd < 0 ? fd_ : fd, offset, length, data, &collector_);
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

// ------------------------------------------------------------------ io_uring set-up choices --

constexpr uint32_t kDefer =
    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG;

// Deferred task work and fixed buffers asked for (the target's defaults have them off).
UringSetupOptions all_on() {
  UringSetupOptions o;
  o.defer_taskrun = true;
  o.fixed_buffers = true;
  return o;
}

class UringSetupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("TEST_TMPDIR");
    path_ =
        std::string(dir != nullptr ? dir : "/tmp") + "/uring_setup" + std::to_string(::getpid());
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd_, 0);
    ASSERT_EQ(::ftruncate(fd_, 1 << 20), 0);
    // Page-aligned (O_DIRECT, fixed buffers), two regions' worth.
    void* p =
        ::mmap(nullptr, 2 * kRegion, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    mem_ = static_cast<uint8_t*>(p);
  }
  void TearDown() override {
    ::munmap(mem_, 2 * kRegion);
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  std::unique_ptr<IoEngine> make(const UringSetupOptions& opt) {
    auto e = IoEngine::create(IoEngineKind::kUring, 8, opt);
    EXPECT_TRUE(e.ok()) << e.status().to_string();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  IoRequest op(IoOp kind, uint64_t offset, uint64_t length, uint8_t* data, int fd = -1) {
    return make_io(kind, fd < 0 ? fd_ : fd, offset, length, data, &collector_);
  }
  // Submits, then waits on the eventfd (as the event loop sleeps in epoll) before each reap: a
  // completion the kernel holds (deferred task work) must still signal it.
  static void run(IoEngine& e, Collector& c, IoRequest& io) {
    size_t before = c.done.size();
    e.submit(io);
    e.flush_submissions();
    for (int i = 0; i < 50 && c.done.size() == before; ++i) {
      if (e.reap() > 0) break;
      pollfd p{e.event_fd(), POLLIN, 0};
      ASSERT_EQ(::poll(&p, 1, 5000), 1) << "no eventfd signal with an operation in flight";
      e.clear_event();
    }
    ASSERT_EQ(c.done.size(), before + 1);
  }
  // Writes a pattern through `e` at `offset` from `buf`, reads it back into buf + 4096.
  void round_trip(IoEngine& e, uint8_t* buf, uint64_t offset, int fd = -1) {
    for (int i = 0; i < 4096; ++i) buf[i] = static_cast<uint8_t>(i * 7 + offset / 4096);
    IoRequest w = op(IoOp::kWrite, offset, 4096, buf, fd);
    ASSERT_NO_FATAL_FAILURE(run(e, collector_, w));
    EXPECT_EQ(w.result, 4096);
    IoRequest r = op(IoOp::kRead, offset, 4096, buf + 4096, fd);
    ASSERT_NO_FATAL_FAILURE(run(e, collector_, r));
    EXPECT_EQ(r.result, 4096);
    EXPECT_EQ(std::memcmp(buf, buf + 4096, 4096), 0);
  }

  // No fixed-buffer table: said so, register_memory() refuses, round trips are plain and right.
  void expect_plain_reads_and_writes(IoEngine& e) {
    EXPECT_FALSE(e.fixed_buffers());
    EXPECT_NE(e.describe().find("no fixed buffers"), std::string::npos) << e.describe();
    EXPECT_FALSE(e.register_memory(mem_, kRegion));
    round_trip(e, mem_ + 8192, 20480);
    EXPECT_EQ(e.fixed_operations(), 0u);
  }

  static constexpr uint64_t kRegion = 1 << 16;
  std::string path_;
  int fd_ = -1;
  uint8_t* mem_ = nullptr;
  Collector collector_;
};

TEST_F(UringSetupTest, DefaultIsThePlainSetupWithoutFixedBuffers) {
  auto e = make({});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->setup_flags(), 0u);
  EXPECT_FALSE(e->register_memory(mem_, kRegion));
  round_trip(*e, mem_, 0);
}

// The set-up flags a kernel accepts first, in the engine's order: deferred task work from
// Linux 6.1, a single issuer alone on 6.0, the plain set-up before.
uint32_t first_setup_accepted(std::pair<int, int> kernel) {
  if (kernel >= std::pair{6, 1}) return kDefer;
  if (kernel >= std::pair{6, 0}) return IORING_SETUP_SINGLE_ISSUER;
  return 0;
}

TEST_F(UringSetupTest, AskedForItIsTheFirstSetupThisKernelAccepts) {
  auto e = make(all_on());
  ASSERT_NE(e, nullptr);
  const auto kernel = kernel_version();
  ASSERT_NE(kernel, (std::pair{0, 0})) << "uname(2) names the running kernel";
  EXPECT_EQ(e->setup_flags(), first_setup_accepted(kernel))
      << "on Linux " << kernel.first << "." << kernel.second;
  EXPECT_NE(e->describe().find("io_uring ("), std::string::npos) << e->describe();
  round_trip(*e, mem_, 0);
}

TEST_F(UringSetupTest, DeferTaskrunRefusedFallsBackToSingleIssuerThenPlain) {
  UringSetupOptions opt = all_on();
  opt.refuse_flags = IORING_SETUP_DEFER_TASKRUN;  // as a 6.0 kernel answers
  auto e = make(opt);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->setup_flags(),
            (kernel_version() >= std::pair{6, 0} ? IORING_SETUP_SINGLE_ISSUER : 0u));
  round_trip(*e, mem_, 4096);
  opt.refuse_flags = IORING_SETUP_SINGLE_ISSUER;  // as a 5.x kernel answers
  e = make(opt);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->setup_flags(), 0u);
  EXPECT_NE(e->describe().find("return to user space"), std::string::npos) << e->describe();
  round_trip(*e, mem_, 8192);
}

TEST_F(UringSetupTest, OffStartsAtThePlainSetup) {
  UringSetupOptions opt;
  opt.defer_taskrun = false;
  opt.refuse_flags = IORING_SETUP_SINGLE_ISSUER;  // would fail the test if it were tried
  auto e = make(opt);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->setup_flags(), 0u);
}

TEST_F(UringSetupTest, EveryFlagRefusedIsAnErrorForUringAndThreadsForAuto) {
  UringSetupOptions opt = all_on();
  opt.refuse_flags = IORING_SETUP_CQSIZE;  // in every setup: nothing left to try
  auto u = IoEngine::create(IoEngineKind::kUring, 8, opt);
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().to_string().find("io_uring is not available"), std::string::npos)
      << u.status().to_string();
  auto a = IoEngine::create(IoEngineKind::kAuto, 8, opt);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_STREQ((*a)->name(), "threads");
  round_trip(**a, mem_, 12288);
}

TEST_F(UringSetupTest, CreatedOnOneThreadUsedOnAnother) {
  // The target may build the engine on its main thread and run the loop on another: with
  // SINGLE_ISSUER the ring's issuer is the thread that first uses it.
  auto e = make(all_on());
  ASSERT_NE(e, nullptr);
  std::thread user([&] { round_trip(*e, mem_, 16384); });
  user.join();
  EXPECT_EQ(collector_.done.size(), 2u);
}

TEST_F(UringSetupTest, ODirectCompletionsSignalTheEventFd) {
  // O_DIRECT completes from the device's interrupt, not inline: the path where deferred task
  // work is held until the loop asks. In a directory whose file system takes O_DIRECT; where
  // none does, the refusal is the EINVAL the namespace's fallback to buffered I/O expects
  // (target/namespace.cc), and the same round trips run buffered.
  const std::string dir = direct_io_dir();
  const std::string path =
      (dir.empty() ? path_ : dir + "/uring_direct" + std::to_string(::getpid()));
  int direct = ::open(path.c_str(), O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0600);
  if (dir.empty()) {
    ASSERT_LT(direct, 0) << "O_DIRECT refused by the probe, taken now?";
    EXPECT_EQ(errno, EINVAL) << std::strerror(errno);
    GTEST_LOG_(INFO) << "no directory here takes O_DIRECT: the round trips run buffered";
    direct = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  }
  ASSERT_GE(direct, 0) << path << ": " << std::strerror(errno);
  ASSERT_EQ(::ftruncate(direct, 1 << 20), 0);
  for (bool defer : {true, false}) {
    UringSetupOptions opt = all_on();
    opt.defer_taskrun = defer;
    auto e = make(opt);
    ASSERT_NE(e, nullptr);
    // The data in a registered region: READ_FIXED / WRITE_FIXED on O_DIRECT where it exists.
    const bool fixed = e->register_memory(mem_, kRegion);
    EXPECT_EQ(fixed, kernel_has_sparse_buffer_table());
    round_trip(*e, mem_, defer ? 65536 : 131072, direct);
    EXPECT_EQ(e->fixed_operations(), fixed ? 2u : 0u);
  }
  ::close(direct);
  if (!dir.empty()) ::unlink(path.c_str());
}

// Submits a polled operation and reaps until it is delivered, as the event loop does while
// polled_in_kernel() > 0 (no eventfd wait: IOPOLL completions are found by polling).
void run_polled(IoEngine& e, Collector& c, IoRequest& io) {
  size_t before = c.done.size();
  e.submit(io);
  e.flush_submissions();
  for (int i = 0; i < 1000000 && c.done.size() == before; ++i) e.reap();
  ASSERT_EQ(c.done.size(), before + 1) << "a polled operation never completed";
  EXPECT_EQ(e.polled_in_kernel(), 0u);
}

TEST_F(UringSetupTest, IopollRingTakesPolledReadsAndWritesOnly) {
  // An O_DIRECT file where a file system here takes it, else a buffered one. Its device does
  // not poll (no null_blk here; the soft-RoCE guest's ci/e2e/file_backend_test.cc has one that
  // does), so the kernel may refuse a polled operation with EOPNOTSUPP (Linux 6.x does for
  // reads): the engine then sends it, and every later one, through the first ring. Either way
  // every operation completes with its full length and the data reads back.
  const std::string dir = direct_io_dir();
  const std::string path = dir.empty() ? path_ : dir + "/uring_iopoll" + std::to_string(::getpid());
  int fd = dir.empty() ? ::open(path.c_str(), O_RDWR | O_CLOEXEC)
                       : ::open(path.c_str(), O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  ASSERT_EQ(::ftruncate(fd, 1 << 20), 0);
  UringSetupOptions opt;
  opt.iopoll = true;
  auto e = make(opt);
  ASSERT_NE(e, nullptr);
  ASSERT_TRUE(e->iopoll()) << "IOPOLL rings exist since Linux 5.1";
  EXPECT_NE(e->describe().find("IOPOLL ring"), std::string::npos) << e->describe();

  for (int i = 0; i < 4096; ++i) mem_[i] = static_cast<uint8_t>(i * 13 + 5);
  IoRequest w = op(IoOp::kWrite, 8192, 4096, mem_, fd);
  w.polled = true;
  e->submit(w);
  e->flush_submissions();
  EXPECT_EQ(e->polled_in_kernel(), 1u) << "until reaped: the loop must not sleep";
  EXPECT_EQ(e->polled_operations(), 1u);
  for (int i = 0; i < 1000000 && collector_.done.empty(); ++i) {
    e->reap();
    e->flush_submissions();  // a refused one goes again on the first ring
  }
  ASSERT_EQ(collector_.done.size(), 1u);
  EXPECT_EQ(w.result, 4096);
  EXPECT_EQ(e->polled_in_kernel(), 0u);
  IoRequest r = op(IoOp::kRead, 8192, 4096, mem_ + 4096, fd);
  r.polled = true;
  e->submit(r);
  e->flush_submissions();
  for (int i = 0; i < 1000000 && collector_.done.size() == 1; ++i) {
    e->reap();
    e->flush_submissions();
  }
  ASSERT_EQ(collector_.done.size(), 2u);
  EXPECT_EQ(r.result, 4096);
  EXPECT_EQ(std::memcmp(mem_, mem_ + 4096, 4096), 0);
  const uint64_t polled = e->polled_operations();
  EXPECT_GE(polled, 1u);
  EXPECT_LE(polled, 2u);

  // A FUA write, a Flush and a request not marked polled: the first ring (eventfd, interrupt).
  IoRequest fua = op(IoOp::kWrite, 12288, 4096, mem_, fd);
  fua.polled = true;
  fua.fua = true;
  ASSERT_NO_FATAL_FAILURE(run(*e, collector_, fua));
  EXPECT_EQ(fua.result, 4096);
  IoRequest flush = op(IoOp::kFlush, 0, 0, nullptr, fd);
  flush.polled = true;
  ASSERT_NO_FATAL_FAILURE(run(*e, collector_, flush));
  EXPECT_EQ(flush.result, 0);
  IoRequest plain = op(IoOp::kRead, 12288, 4096, mem_ + 4096, fd);
  ASSERT_NO_FATAL_FAILURE(run(*e, collector_, plain));
  EXPECT_EQ(plain.result, 4096);
  EXPECT_EQ(std::memcmp(mem_, mem_ + 4096, 4096), 0);
  EXPECT_EQ(e->polled_operations(), polled);

  // drain() (target shutdown) polls for what is on the IOPOLL ring rather than waiting.
  IoRequest last = op(IoOp::kRead, 8192, 4096, mem_ + 4096, fd);
  last.polled = true;
  e->submit(last);
  e->flush_submissions();
  e->drain();
  EXPECT_EQ(e->in_flight(), 0u);
  EXPECT_EQ(last.result, 4096);
  ::close(fd);
  if (!dir.empty()) ::unlink(path.c_str());
}

// drain() (target shutdown) of a polled read that the kernel refuses with EOPNOTSUPP: reap()
// moves it to the first ring, where it sits in the SQ unsubmitted; drain() must submit it
// before it waits on that ring, or io_uring_wait_cqe waits for a completion that never comes
// and the target never exits. On a fresh engine (the first refusal happens inside drain()). Run
// in a child with an alarm: a hang is a failure, not a stuck test.
TEST_F(UringSetupTest, DrainSubmitsAPolledOperationRefusedInsideIt) {
  const std::string dir = direct_io_dir();
  const std::string path =
      dir.empty() ? path_ : dir + "/uring_iopoll_drain" + std::to_string(::getpid());
  int fd = dir.empty() ? ::open(path.c_str(), O_RDWR | O_CLOEXEC)
                       : ::open(path.c_str(), O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  ASSERT_EQ(::ftruncate(fd, 1 << 20), 0);
  // Written first: a read of a hole is answered without any I/O, polled or not.
  for (int i = 0; i < 4096; ++i) mem_[i] = static_cast<uint8_t>(i * 7 + 1);
  ASSERT_EQ(::pwrite(fd, mem_, 4096, 8192), 4096);
  ASSERT_EQ(::fsync(fd), 0);
  EXPECT_EXIT(
      {
        ::alarm(10);
        UringSetupOptions opt;
        opt.iopoll = true;
        auto e = IoEngine::create(IoEngineKind::kUring, 8, opt);
        if (!e.ok() || !(*e)->iopoll()) ::_exit(2);
        IoRequest r = op(IoOp::kRead, 8192, 4096, mem_ + 4096, fd);
        r.polled = true;
        (*e)->submit(r);
        (*e)->flush_submissions();
        (*e)->drain();
        ::_exit((*e)->in_flight() == 0 && r.result == 4096 &&
                        std::memcmp(mem_, mem_ + 4096, 4096) == 0
                    ? 0
                    : 3);
      },
      ::testing::ExitedWithCode(0), "");
  ::close(fd);
  if (!dir.empty()) ::unlink(path.c_str());
}

TEST_F(UringSetupTest, IopollOffPutsPolledRequestsOnTheOneRing) {
  auto e = make({});
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->iopoll());
  EXPECT_EQ(e->describe().find("IOPOLL"), std::string::npos) << e->describe();
  for (int i = 0; i < 4096; ++i) mem_[i] = static_cast<uint8_t>(i);
  IoRequest w = op(IoOp::kWrite, 0, 4096, mem_);
  w.polled = true;
  ASSERT_NO_FATAL_FAILURE(run(*e, collector_, w));
  EXPECT_EQ(w.result, 4096);
  EXPECT_EQ(e->polled_operations(), 0u);
  EXPECT_EQ(e->polled_in_kernel(), 0u);
}

TEST_F(UringSetupTest, WithoutASparseTableReadsAndWritesArePlain) {
  // As a kernel before 5.19 answers (refused here on any kernel): no fixed buffers, said so,
  // and the I/O is the same.
  UringSetupOptions opt = all_on();
  opt.refuse_sparse_buffers = true;
  auto e = make(opt);
  ASSERT_NE(e, nullptr);
  expect_plain_reads_and_writes(*e);
}

TEST_F(UringSetupTest, FixedBuffersForDataInsideARegisteredRegion) {
  auto e = make(all_on());
  ASSERT_NE(e, nullptr);
  if (!kernel_has_sparse_buffer_table()) {  // the fallback, asserted
    expect_plain_reads_and_writes(*e);
    return;
  }
  EXPECT_TRUE(e->fixed_buffers());
  EXPECT_EQ(e->describe().find("no fixed buffers"), std::string::npos) << e->describe();
  ASSERT_TRUE(e->register_memory(mem_, kRegion));
  EXPECT_TRUE(e->register_memory(mem_, kRegion)) << "registering again is a no-op";
  round_trip(*e, mem_ + 8192, 0);  // both operations inside the region
  EXPECT_EQ(e->fixed_operations(), 2u);
  round_trip(*e, mem_ + kRegion, 4096);  // outside: plain reads and writes
  EXPECT_EQ(e->fixed_operations(), 2u);
  // An operation that starts inside and ends outside is not fixed either.
  IoRequest straddle = op(IoOp::kWrite, 0, 8192, mem_ + kRegion - 4096);
  ASSERT_NO_FATAL_FAILURE(run(*e, collector_, straddle));
  EXPECT_EQ(straddle.result, 8192);
  EXPECT_EQ(e->fixed_operations(), 2u);
  e->unregister_memory(mem_);
  round_trip(*e, mem_ + 8192, 8192);
  EXPECT_EQ(e->fixed_operations(), 2u);
}

TEST_F(UringSetupTest, FixedBufferTableHasALimitAndCanBeTurnedOff) {
  auto e = make(all_on());
  ASSERT_NE(e, nullptr);
  if (!kernel_has_sparse_buffer_table()) {  // the fallback, asserted
    expect_plain_reads_and_writes(*e);
    return;
  }
  const uint32_t n = IoEngine::kMaxFixedRegions;
  const uint64_t page = 4096;
  void* p =
      ::mmap(nullptr, (n + 1) * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto* pages = static_cast<uint8_t*>(p);
  for (uint32_t i = 0; i < n; ++i) EXPECT_TRUE(e->register_memory(pages + i * page, page)) << i;
  EXPECT_FALSE(e->register_memory(pages + n * page, page)) << "the table is full";
  e->unregister_memory(pages);
  EXPECT_TRUE(e->register_memory(pages + n * page, page)) << "a freed slot is reused";
  EXPECT_FALSE(e->register_memory(nullptr, page));
  EXPECT_FALSE(e->register_memory(pages, 0));
  e.reset();
  ::munmap(p, (n + 1) * page);

  UringSetupOptions off = all_on();
  off.fixed_buffers = false;
  e = make(off);
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->register_memory(mem_, kRegion));
  EXPECT_NE(e->describe().find("no fixed buffers"), std::string::npos);
  auto t = IoEngine::create(IoEngineKind::kThreads);
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE((*t)->register_memory(mem_, kRegion)) << "the thread engine has none";
}

TEST(UringSetupFlagNames, NamesTheBitsLowestFirstAndUnknownOnesInHex) {
  EXPECT_EQ(uring_setup_flag_names(kDefer),
            (std::vector<std::string>{"TASKRUN_FLAG", "SINGLE_ISSUER", "DEFER_TASKRUN"}));
  EXPECT_EQ(uring_setup_flag_names(IORING_SETUP_SINGLE_ISSUER),
            (std::vector<std::string>{"SINGLE_ISSUER"}));
  EXPECT_TRUE(uring_setup_flag_names(0).empty());
  EXPECT_EQ(uring_setup_flag_names(IORING_SETUP_CQSIZE | (1u << 31)),
            (std::vector<std::string>{"CQSIZE", "0x80000000"}));
}

}  // namespace
}  // namespace nvmf::target
