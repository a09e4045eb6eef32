// SPDX-License-Identifier: BSD-3-Clause
// End to end over soft-RoCE, in process: our target serving a file namespace through its
// IoEngine (io_uring and the worker threads), our host writing, reading and flushing it; then
// the faults a real disk brings: a file system that runs out of space (a 32 MiB tmpfs under a
// 64 MiB sparse namespace) and a backing file truncated under the target. Each must end as an
// NVMe status on the host while the target keeps serving. And io_uring with deferred task work
// (--uring-defer-taskrun, --uring-fixedbufs) with the loop asleep in epoll between commands
// (--poll event, --busy-poll-us 0): every completion must wake it through the eventfd, on a file
// and on a null_blk whose completions come from a timer 2 ms after submission; and
// --uring-iopoll on a null_blk with a poll queue, where no completion wakes it and the loop
// must poll until each is reaped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <liburing.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ci/e2e/e2e_options.h"
#include "ci/e2e/running_target.h"
#include "ci/e2e/rxe_env.h"
#include "common/log.h"
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

  // `adjust` changes the options before the target starts.
  void start(const std::string& path, uint64_t size,
             const std::function<void(target::TargetOptions&)>& adjust = {}) {
    path_ = path;
    target::TargetOptions o = ram_target_options(*env_, kNqn, 0, kLbaSize);
    o.ram_size = 0;
    o.file_path = path;
    o.file_size = size;
    o.io_engine = GetParam();
    if (adjust) adjust(o);
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

// --uring-iopoll on with the worker-thread engine (which has no polling): the target warns
// once at start-up that the option does nothing there and serves I/O by interrupt as usual.
// With io_uring it says nothing of the kind (a file on TMPDIR has no IOPOLL: its own warning,
// "no IOPOLL ring", is another line). Both engines then write, flush and read back.
TEST_P(FileBackendTest, IopollWithTheThreadsEngineWarnsAndServes) {
  std::mutex mu;
  std::vector<std::string> lines;
  set_log_sink([&](std::string_view line) {
    std::lock_guard lock(mu);
    lines.emplace_back(line);
  });
  start(temp_dir() + "/iopoll_threads.img", 4 << 20,
        [](target::TargetOptions& o) { o.uring.iopoll = true; });
  set_log_sink(nullptr);
  ASSERT_NE(ctrl_, nullptr);
  int warned = 0;
  for (const std::string& l : lines) {
    warned += l.find("--uring-iopoll on does nothing with the threads engine") != std::string::npos;
  }
  EXPECT_EQ(warned, GetParam() == target::IoEngineKind::kThreads ? 1 : 0);
  for (size_t i = 0; i < 8192; ++i) buf_[i] = static_cast<uint8_t>(i * 13 + 5);
  ASSERT_TRUE(write(8, 8192).ok());
  ASSERT_TRUE(ctrl_->flush().ok());
  ASSERT_TRUE(read(8, 65536, 8192).ok());
  EXPECT_EQ(std::memcmp(buf_.data(), buf_.data() + 65536, 8192), 0);
  EXPECT_EQ((*target_)->stats().totals.errors, 0u);
}

// A full file system: a 64 MiB sparse namespace on a 32 MiB tmpfs, written past the space. Each
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

// ------------------------------------------------------------ io_uring deferred task work --

// A memory-backed null_blk made through configfs (ci/lib/null_blk.sh does the same for the
// guest scripts) whose completions come from a timer (irqmode 2) `completion_nsec` after
// submission: never inline, so with DEFER_TASKRUN each is held as task work for the ring's
// issuer. Removed on destruction.
class TimerNullBlk {
 public:
  explicit TimerNullBlk(std::string name) : name_(std::move(name)), dir_(kConfig + name_) {}
  ~TimerNullBlk() {
    if (!made_) return;
    (void)put("power", "0");
    ::rmdir(dir_.c_str());
  }
  // Creates and powers it; the /dev path, or "" with the reason in `why`. `poll_queues` > 0:
  // that many IOPOLL queues besides the one interrupt-driven queue (configfs poll_queues; the
  // disk's queue/io_poll then reads 1).
  std::string create(uint32_t size_mib, uint32_t completion_nsec, std::string& why,
                     uint32_t poll_queues = 0) {
    struct stat st {};
    if (::stat(kConfig, &st) != 0 && std::system("modprobe null_blk nr_devices=0") != 0) {
      why = "modprobe null_blk failed";
      return "";
    }
    if (::mkdir(dir_.c_str(), 0755) != 0) {
      why = "mkdir " + dir_ + ": " + std::strerror(errno);
      return "";
    }
    made_ = true;
    std::vector<std::pair<const char*, std::string>> settings{
        {"size", std::to_string(size_mib)},
        {"memory_backed", "1"},
        {"blocksize", "512"},
        {"irqmode", "2"},
        {"completion_nsec", std::to_string(completion_nsec)}};
    if (poll_queues > 0) settings.emplace_back("poll_queues", std::to_string(poll_queues));
    settings.emplace_back("power", "1");
    for (const auto& [key, value] : settings) {
      if (!put(key, value)) {
        why = dir_ + "/" + key + " refused " + value;
        return "";
      }
    }
    std::string index;
    std::ifstream(dir_ + "/index") >> index;
    // 6.1 names the disk nullb<index>; newer kernels after the configfs directory.
    for (int i = 0; i < 50; ++i) {
      for (const std::string& dev : {"/dev/nullb" + index, "/dev/" + name_}) {
        if (::stat(dev.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) return dev;
      }
      ::usleep(100 * 1000);
    }
    why = "no block device for null_blk " + name_ + " (index " + index + ")";
    return "";
  }

 private:
  static constexpr char kConfig[] = "/sys/kernel/config/nullb/";
  bool put(const char* key, const std::string& value) {
    std::ofstream f(dir_ + "/" + key);
    f << value;
    f.flush();
    return static_cast<bool>(f);
  }
  std::string name_, dir_;
  bool made_ = false;
};

class DeferredTaskWorkTest : public FileBackendTest {
 protected:
  // io_uring with SINGLE_ISSUER | DEFER_TASKRUN | TASKRUN_FLAG and fixed buffers; the loop goes
  // to sleep in epoll as soon as it has nothing to do and nothing else wakes it: no busy-poll
  // window, no stall timer, and the host sends no Keep Alive (kato 0). A completion that did
  // not signal the eventfd would leave its command unanswered until the host's timeout.
  static void asleep_between_commands(target::TargetOptions& o) {
    o.poll_mode = target::PollMode::kEvent;
    o.busy_poll_us = 0;
    o.stall_warn_ms = 0;
    o.uring.defer_taskrun = true;
    o.uring.fixed_buffers = true;
  }

  // QD1: `rounds` x (a 4 KiB write, its read back, compared), a Flush every 16.
  void write_read_rounds(int rounds) {
    ASSERT_NE(ctrl_, nullptr);
    const uint64_t lbas = ctrl_->namespace_info().nsze;
    ASSERT_GE(lbas, 8u * rounds);
    for (int i = 0; i < rounds; ++i) {
      for (size_t b = 0; b < 4096; ++b) buf_[b] = static_cast<uint8_t>(b * 31 + i);
      const uint64_t slba = (static_cast<uint64_t>(i) * 7919 * 8) % (lbas - 8);
      Status w = write(slba, 4096);
      ASSERT_TRUE(w.ok()) << "write " << i << ": " << w.to_string();
      Status r = read(slba, 8192, 4096);
      ASSERT_TRUE(r.ok()) << "read " << i << ": " << r.to_string();
      ASSERT_EQ(std::memcmp(buf_.data(), buf_.data() + 8192, 4096), 0) << "round " << i;
      if (i % 16 == 15) {
        Status f = ctrl_->flush();
        ASSERT_TRUE(f.ok()) << "flush " << i << ": " << f.to_string();
      }
    }
  }

  // write_read_rounds(), then what the ring got (Target::stats().io_engines, as the --json
  // report shows it).
  void io_with_the_loop_asleep(int rounds) {
    ASSERT_NO_FATAL_FAILURE(write_read_rounds(rounds));
    target::TargetStats s = (*target_)->stats();
    EXPECT_EQ(s.totals.errors, 0u);
    // One engine per poll group (one per CPU by default), each set up alike.
    ASSERT_FALSE(s.io_engines.empty());
    uint64_t fixed = 0;
    for (const target::IoEngineStats& e : s.io_engines) {
      EXPECT_EQ(e.name, "io_uring");
      EXPECT_EQ(e.setup_flags,
                IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG)
          << e.describe << " (the soft-RoCE guest runs Linux 6.1, which has DEFER_TASKRUN)";
      EXPECT_TRUE(e.fixed_buffers) << e.describe;
      fixed += e.fixed_operations;
    }
    // The shared buffer pool is registered at the first Connect, and every backend read and
    // write has its data in a pool chunk (in-capsule data is gathered into the slot's chunk
    // first, CommandProcessor::write_data): all of them went as READ_FIXED / WRITE_FIXED.
    EXPECT_EQ(s.totals.reads, static_cast<uint64_t>(rounds));
    EXPECT_EQ(s.totals.writes_in_capsule + s.totals.writes_rdma_read,
              static_cast<uint64_t>(rounds));
    EXPECT_EQ(fixed, 2u * rounds);
  }
};

TEST_P(DeferredTaskWorkTest, FileNamespaceIoCompletesWithTheLoopAsleep) {
  start(temp_dir() + "/deferred.img", 8 << 20, asleep_between_commands);
  io_with_the_loop_asleep(64);
}

TEST_P(DeferredTaskWorkTest, TimerCompletionsOnABlockDeviceWakeTheLoop) {
  // Each O_DIRECT read and write completes 2 ms after submission from a timer, long after the
  // loop went back to sleep: the completion is held as deferred task work, and only the
  // eventfd signal wakes the loop for it.
  TimerNullBlk nullb("e2e-deferred");
  std::string why;
  const std::string dev = nullb.create(16, 2000000, why);
  ASSERT_FALSE(dev.empty()) << why;
  start(dev, 0, [](target::TargetOptions& o) {
    asleep_between_commands(o);
    o.direct_io = true;  // a block device: O_DIRECT always works
  });
  io_with_the_loop_asleep(64);
  path_.clear();  // not ours to unlink
}

TEST_P(DeferredTaskWorkTest, PolledReadsAndWritesOnAPollingBlockDevice) {
  // --uring-iopoll on a null_blk with a poll queue: every read and write goes to the IOPOLL
  // ring and completes when the poll group polls the device; none of them signals the eventfd,
  // so a loop that went to sleep with one outstanding (--busy-poll-us 0) would leave the host
  // waiting. Flushes stay on the interrupt ring (its completions from the 2 ms timer).
  TimerNullBlk nullb("e2e-iopoll");
  std::string why;
  const std::string dev = nullb.create(16, 2000000, why, 1);
  ASSERT_FALSE(dev.empty()) << why;
  start(dev, 0, [](target::TargetOptions& o) {
    asleep_between_commands(o);
    o.uring.defer_taskrun = false;
    o.uring.fixed_buffers = false;
    o.uring.iopoll = true;
    o.direct_io = true;
  });
  constexpr int kRounds = 64;
  ASSERT_NO_FATAL_FAILURE(write_read_rounds(kRounds));
  target::TargetStats s = (*target_)->stats();
  EXPECT_EQ(s.totals.errors, 0u);
  ASSERT_FALSE(s.io_engines.empty());
  uint64_t polled = 0;
  for (const target::IoEngineStats& e : s.io_engines) {
    EXPECT_TRUE(e.iopoll) << e.describe;
    EXPECT_NE(e.describe.find("IOPOLL ring"), std::string::npos) << e.describe;
    polled += e.polled_operations;
  }
  EXPECT_EQ(polled, 2u * kRounds) << "every read and write polled (the device's queue/io_poll "
                                     "must read 1, and the kernel must not refuse them)";
  path_.clear();  // not ours to unlink
}

INSTANTIATE_TEST_SUITE_P(Uring, DeferredTaskWorkTest,
                         ::testing::Values(target::IoEngineKind::kUring),
                         [](const auto& info) { return target::io_engine_kind_name(info.param); });

INSTANTIATE_TEST_SUITE_P(Engines, FileBackendTest,
                         ::testing::Values(target::IoEngineKind::kUring,
                                           target::IoEngineKind::kThreads),
                         [](const auto& info) { return target::io_engine_kind_name(info.param); });

}  // namespace
}  // namespace nvmf::e2e
