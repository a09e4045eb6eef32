// End to end over soft-RoCE, in process: our target serving a file namespace through its
// IoEngine (io_uring and the worker threads), our host writing, reading and flushing it; then
// the faults a real disk brings: a file system that runs out of space (a 32 MiB tmpfs under a
// 64 MiB sparse namespace) and a backing file truncated under the target. Each must end as an
// NVMe status on the host while the target keeps serving.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ci/e2e/e2e_options.h"
#include "ci/e2e/running_target.h"
#include "ci/e2e/rxe_env.h"
#include "common/nvme_status.h"
#include "host/controller.h"
#include "proto/nvme.h"
#include "target/target.h"

namespace nvmf::e2e {
namespace {

constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:file-backend";
constexpr uint32_t kLbaSize = 512;

std::string temp_dir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

uint16_t nvme_status_of(const Status& s) {
  return status_without_phase(s.nvme_status().value_or(0xFFFF));
}

class FileBackendTest : public ::testing::TestWithParam<target::IoEngineKind> {
 protected:
  void SetUp() override { NVMF_REQUIRE_RXE(env_); }
  void TearDown() override {
    if (ctrl_) (void)ctrl_->disconnect();
    reg_.reset();
    ctrl_.reset();
    target_.reset();
    if (!mount_.empty()) {
      ::unlink(path_.c_str());
      ::umount2(mount_.c_str(), MNT_DETACH);
      ::rmdir(mount_.c_str());
    } else if (!path_.empty()) {
      ::unlink(path_.c_str());
    }
  }

  void start(const std::string& path, uint64_t size) {
    path_ = path;
    target::TargetOptions o = ram_target_options(*env_, kNqn, 0, kLbaSize);
    o.ram_size = 0;
    o.file_path = path;
    o.file_size = size;
    o.io_engine = GetParam();
    target_ = RunningTarget::start(o);
    ASSERT_NE(target_, nullptr);
    host::HostOptions h = host_options_for(*env_, (*target_)->port(), kNqn, 32);
    h.timeout_ms = 20000;
    auto ctrl = host::Controller::connect(h);
    ASSERT_TRUE(ctrl.ok()) << ctrl.status().to_string();
    ctrl_ = std::move(*ctrl);
    buf_.assign(1 << 20, 0);
    auto reg = ctrl_->register_buffer(buf_.data(), buf_.size());
    ASSERT_TRUE(reg.ok()) << reg.status().to_string();
    reg_.emplace(std::move(*reg));
  }

  Status write(uint64_t slba, size_t length) {
    host::DataSegment s = host::segment_of(*reg_, 0, length);
    return ctrl_->write(slba, {&s, 1});
  }
  Status read(uint64_t slba, size_t offset, size_t length) {
    return ctrl_->read(slba, host::segment_of(*reg_, offset, length));
  }

  std::optional<RxeEnv> env_;
  std::string path_, mount_;
  std::unique_ptr<RunningTarget> target_;
  std::unique_ptr<host::Controller> ctrl_;
  std::vector<uint8_t> buf_;
  std::optional<verbs::RegisteredBuffer> reg_;
};

TEST_P(FileBackendTest, WriteReadFlushAndIdentifyOnAFile) {
  start(temp_dir() + "/file_backend.img", 16 << 20);
  ASSERT_NE(ctrl_, nullptr);
  EXPECT_EQ(ctrl_->identify_controller().vwc & 1, 1) << "page cache: Flush has work to do";
  EXPECT_EQ(ctrl_->identify_controller().oncs & 0xC, 0xC) << "Write Zeroes and DSM";
  for (size_t i = 0; i < 256 * 1024; ++i) buf_[i] = static_cast<uint8_t>(i * 7 + 1);
  ASSERT_TRUE(write(100, 256 * 1024).ok());
  ASSERT_TRUE(ctrl_->flush().ok());
  ASSERT_TRUE(read(100, 512 * 1024, 256 * 1024).ok());
  EXPECT_EQ(std::memcmp(buf_.data(), buf_.data() + 512 * 1024, 256 * 1024), 0);
  // The bytes are in the file itself (no private copy in the target).
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> direct(4096);
  ASSERT_EQ(::pread(fd, direct.data(), direct.size(), 100 * 512), 4096);
  ::close(fd);
  EXPECT_EQ(std::memcmp(direct.data(), buf_.data(), 4096), 0);
  auto stats = (*target_)->stats();
  EXPECT_GE(stats.totals.flushes, 1u);
  EXPECT_EQ(stats.totals.errors, 0u);
}

// The repro: a 64 MiB sparse namespace on a 32 MiB tmpfs, written past the space. Each
// failed write is Capacity Exceeded with DNR; the target lives, and writes over space already
// allocated still succeed.
TEST_P(FileBackendTest, FullFileSystemIsCapacityExceededAndTheNextGoodIoWorks) {
  mount_ = temp_dir() + "/small_tmpfs_" + target::io_engine_kind_name(GetParam());
  ASSERT_EQ(::mkdir(mount_.c_str(), 0755), 0) << std::strerror(errno);
  ASSERT_EQ(::mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=32m"), 0)
      << "mount tmpfs: " << std::strerror(errno) << " (the soft-RoCE guest runs tests as root)";
  start(mount_ + "/sparse.img", 64 << 20);
  ASSERT_NE(ctrl_, nullptr);
  std::memset(buf_.data(), 0xC3, buf_.size());
  Status failed;
  uint64_t written = 0;
  for (uint64_t mib = 0; mib < 40; ++mib) {
    Status s = write(mib * 2048, 1 << 20);
    if (!s.ok()) {
      failed = s;
      break;
    }
    written = mib + 1;
  }
  ASSERT_FALSE(failed.ok()) << "40 MiB fit in a 32 MiB tmpfs?";
  EXPECT_EQ(nvme_status_of(failed), generic_status(proto::kScCapacityExceeded, true))
      << failed.to_string();
  EXPECT_GE(written, 20u);
  // The next good I/O: over space already allocated, and a read of it.
  std::memset(buf_.data(), 0x5A, 64 * 1024);
  ASSERT_TRUE(write(0, 64 * 1024).ok());
  ASSERT_TRUE(read(0, 128 * 1024, 64 * 1024).ok());
  EXPECT_EQ(buf_[128 * 1024], 0x5A);
  EXPECT_EQ(buf_[128 * 1024 + 64 * 1024 - 1], 0x5A);
  EXPECT_GE((*target_)->stats().totals.errors, 1u);
}

TEST_P(FileBackendTest, TruncatedBackingFileGivesStatusesNotACrash) {
  start(temp_dir() + "/truncated.img", 8 << 20);
  ASSERT_NE(ctrl_, nullptr);
  std::memset(buf_.data(), 0x77, 64 * 1024);
  ASSERT_TRUE(write(8192, 64 * 1024).ok());
  ASSERT_EQ(::truncate(path_.c_str(), 1 << 20), 0);  // someone else shrinks it
  Status s = read(8192, 0, 64 * 1024);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(nvme_status_of(s), make_status(proto::kSctMediaError, proto::kScUnrecoveredReadError))
      << s.to_string();
  // The first MiB is still there and readable; the queue still serves.
  ASSERT_TRUE(read(0, 0, 4096).ok());
  ASSERT_TRUE(ctrl_->flush().ok());
}

INSTANTIATE_TEST_SUITE_P(Engines, FileBackendTest,
                         ::testing::Values(target::IoEngineKind::kUring,
                                           target::IoEngineKind::kThreads),
                         [](const auto& info) { return target::io_engine_kind_name(info.param); });

}  // namespace
}  // namespace nvmf::e2e
