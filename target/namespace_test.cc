// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for Namespace: file creation/extension, RAM, read back, errors.
#include "target/namespace.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "target/io_engine.h"

namespace nvmf::target {
namespace {

IoEngine& engine() {
  static std::unique_ptr<IoEngine> e = std::move(IoEngine::create(IoEngineKind::kThreads)).value();
  return *e;
}

std::string temp_path(const char* name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name + std::to_string(::getpid());
}

uint64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

TEST(Namespace, FileCreatedWithSize) {
  std::string path = temp_path("ns_create");
  ::unlink(path.c_str());
  auto ns = Namespace::open_file(path, 1 << 20, 512, engine());
  ASSERT_TRUE(ns.ok()) << ns.status().to_string();
  EXPECT_EQ(file_size(path), 1u << 20);
  EXPECT_EQ((*ns)->num_lbas(), 2048u);
  EXPECT_EQ((*ns)->lba_shift(), 9);
  EXPECT_TRUE((*ns)->file_backed());
  ::unlink(path.c_str());
}

TEST(Namespace, FileIsOpenedNotMappedAndReportsItsCache) {
  std::string path = temp_path("ns_fd");
  ::unlink(path.c_str());
  auto ns = Namespace::open_file(path, 64 * 1024, 4096, engine(), {.direct = false});
  ASSERT_TRUE(ns.ok()) << ns.status().to_string();
  EXPECT_GE((*ns)->fd(), 0);
  EXPECT_EQ((*ns)->engine(), &engine());
  EXPECT_FALSE((*ns)->block_device());
  EXPECT_FALSE((*ns)->direct());
  EXPECT_TRUE((*ns)->volatile_write_cache());  // the page cache
  EXPECT_EQ((*ns)->describe(), "file " + path + " (buffered)");
  // A byte written through the descriptor is in the file (nothing mapped, nothing copied).
  uint8_t b = 0xA5;
  ASSERT_EQ(::pwrite((*ns)->fd(), &b, 1, 8192), 1);
  auto again = Namespace::open_file(path, 0, 4096, engine(), {.direct = false});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->num_lbas(), 16u);
  uint8_t back = 0;
  ASSERT_EQ(::pread((*again)->fd(), &back, 1, 8192), 1);
  EXPECT_EQ(back, 0xA5);
  ::unlink(path.c_str());
}

// Whether the file system holding `path` accepts O_DIRECT opens (tmpfs did not before Linux 6.6).
bool accepts_o_direct(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// nvmet's buffered_io defaults to 0 (O_DIRECT): so does an unset FileBackingOptions::direct,
// falling back to the page cache only where the file system refuses O_DIRECT; asked for
// explicitly, O_DIRECT is never silently dropped.
TEST(Namespace, DefaultIsODirectLikeNvmetWithBufferedFallback) {
  const char* test_tmpdir = std::getenv("TEST_TMPDIR");
  for (const char* dir : {test_tmpdir, "/dev/shm"}) {
    if (dir == nullptr) continue;
    std::string path = std::string(dir) + "/ns_default" + std::to_string(::getpid());
    ::unlink(path.c_str());
    bool supported = accepts_o_direct(path);
    ::unlink(path.c_str());
    SCOPED_TRACE(path + (supported ? ": O_DIRECT accepted" : ": O_DIRECT refused"));
    auto ns = Namespace::open_file(path, 64 * 1024, 512, engine());
    ASSERT_TRUE(ns.ok()) << ns.status().to_string();
    EXPECT_EQ((*ns)->direct(), supported);
    EXPECT_EQ((*ns)->describe(), "file " + path + (supported ? " (O_DIRECT)" : " (buffered)"));
    EXPECT_TRUE((*ns)->volatile_write_cache());  // a file: its file system's metadata, the disk
    EXPECT_EQ((*ns)->fd() >= 0 && (::fcntl((*ns)->fd(), F_GETFL) & O_DIRECT) != 0, supported);
    ns = Namespace::open_file(path, 0, 512, engine(), {.direct = true});
    if (supported) {
      ASSERT_TRUE(ns.ok()) << ns.status().to_string();
      EXPECT_TRUE((*ns)->direct());
    } else {
      ASSERT_FALSE(ns.ok());
      EXPECT_EQ(ns.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(ns.status().message().find("does not support O_DIRECT"), std::string::npos)
          << ns.status().message();
    }
    ns = Namespace::open_file(path, 0, 512, engine(), {.direct = false});
    ASSERT_TRUE(ns.ok()) << ns.status().to_string();
    EXPECT_FALSE((*ns)->direct());
    EXPECT_EQ(::fcntl((*ns)->fd(), F_GETFL) & O_DIRECT, 0);
    ::unlink(path.c_str());
  }
}

TEST(Namespace, FlushErrorIsSticky) {
  std::string path = temp_path("ns_sticky");
  auto ns = Namespace::open_file(path, 4096, 512, engine());
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ((*ns)->flush_error(), 0);
  (*ns)->set_flush_error(EIO);
  (*ns)->set_flush_error(ENOSPC);  // the first error stays
  EXPECT_EQ((*ns)->flush_error(), EIO);
  ::unlink(path.c_str());
}

TEST(Namespace, NotAFileOrBlockDevice) {
  auto ns = Namespace::open_file("/dev/null", 0, 512, engine());
  ASSERT_FALSE(ns.ok());
  EXPECT_EQ(ns.status().code(), StatusCode::kInvalidArgument);
}

TEST(Namespace, FileExtendedNeverShrunk) {
  std::string path = temp_path("ns_extend");
  ::unlink(path.c_str());
  ASSERT_TRUE(Namespace::open_file(path, 8192, 512, engine()).ok());
  ASSERT_TRUE(Namespace::open_file(path, 16384, 512, engine()).ok());
  EXPECT_EQ(file_size(path), 16384u);
  auto ns = Namespace::open_file(path, 4096, 512, engine());
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(file_size(path), 16384u);
  EXPECT_EQ((*ns)->num_lbas(), 32u);
  ::unlink(path.c_str());
}

TEST(Namespace, MissingFileWithoutSizeFails) {
  std::string path = temp_path("ns_missing");
  ::unlink(path.c_str());
  auto ns = Namespace::open_file(path, 0, 512, engine());
  EXPECT_FALSE(ns.ok());
  EXPECT_EQ(ns.status().code(), StatusCode::kNotFound);
}

TEST(Namespace, RamReadsBackWhatWasWritten) {
  auto ns = Namespace::create_ram(1 << 20, 512);
  ASSERT_TRUE(ns.ok());
  EXPECT_FALSE((*ns)->file_backed());
  EXPECT_EQ((*ns)->num_lbas(), 2048u);
  auto w = (*ns)->bytes(512 * 7, 1024);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(i);
  auto r = (*ns)->bytes(512 * 7, 1024);
  for (size_t i = 0; i < r.size(); ++i) ASSERT_EQ(r[i], static_cast<uint8_t>(i));
  EXPECT_FALSE((*ns)->volatile_write_cache());
  EXPECT_EQ((*ns)->engine(), nullptr);
}

TEST(Namespace, SizeRoundedDownToLbas) {
  auto ns = Namespace::create_ram(10000, 4096);
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ((*ns)->num_lbas(), 2u);
  EXPECT_EQ((*ns)->size_bytes(), 8192u);
}

TEST(Namespace, BadSizesRejected) {
  EXPECT_EQ(Namespace::create_ram(100, 512).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Namespace::create_ram(1 << 20, 1024).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Namespace::open_file(temp_path("ns_bad"), 1 << 20, 2048, engine()).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace nvmf::target
