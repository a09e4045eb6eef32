// Unit tests for Namespace: file creation/extension, RAM, read back, errors.
#include "target/namespace.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace nvmf::target {
namespace {

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
  auto ns = Namespace::open_file(path, 1 << 20, 512);
  ASSERT_TRUE(ns.ok()) << ns.status().to_string();
  EXPECT_EQ(file_size(path), 1u << 20);
  EXPECT_EQ((*ns)->num_lbas(), 2048u);
  EXPECT_EQ((*ns)->lba_shift(), 9);
  EXPECT_TRUE((*ns)->file_backed());
  ::unlink(path.c_str());
}

TEST(Namespace, FileWriteSurvivesReopen) {
  std::string path = temp_path("ns_reopen");
  ::unlink(path.c_str());
  {
    auto ns = Namespace::open_file(path, 64 * 1024, 4096);
    ASSERT_TRUE(ns.ok());
    auto bytes = (*ns)->bytes(8192, 4096);
    std::memset(bytes.data(), 0xA5, bytes.size());
    ASSERT_TRUE((*ns)->flush().ok());
  }
  auto ns = Namespace::open_file(path, 0, 4096);  // existing size
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ((*ns)->num_lbas(), 16u);
  auto bytes = (*ns)->bytes(8192, 4096);
  for (uint8_t b : bytes) ASSERT_EQ(b, 0xA5);
  EXPECT_EQ((*ns)->bytes(0, 1)[0], 0);
  ::unlink(path.c_str());
}

TEST(Namespace, FileExtendedNeverShrunk) {
  std::string path = temp_path("ns_extend");
  ::unlink(path.c_str());
  ASSERT_TRUE(Namespace::open_file(path, 8192, 512).ok());
  ASSERT_TRUE(Namespace::open_file(path, 16384, 512).ok());
  EXPECT_EQ(file_size(path), 16384u);
  auto ns = Namespace::open_file(path, 4096, 512);
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(file_size(path), 16384u);
  EXPECT_EQ((*ns)->num_lbas(), 32u);
  ::unlink(path.c_str());
}

TEST(Namespace, MissingFileWithoutSizeFails) {
  std::string path = temp_path("ns_missing");
  ::unlink(path.c_str());
  auto ns = Namespace::open_file(path, 0, 512);
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
  EXPECT_TRUE((*ns)->flush().ok());
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
  EXPECT_EQ(Namespace::open_file(temp_path("ns_bad"), 1 << 20, 2048).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace nvmf::target
