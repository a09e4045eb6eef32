// SPDX-License-Identifier: BSD-3-Clause
// The nvmf-host CLI helpers against what a careless user types: bad addresses and ports, ranges
// that overflow 64 bits, a directory or device as --input, an unwritable --json path. Each is
// refused with a message naming the option, before any connection is made.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "host/cli/cli_util.h"

namespace nvmf::host {
namespace {

HostOptions good() {
  HostOptions o;
  o.traddr = "10.0.0.1";
  o.subnqn = "nqn.2024-01.io.nvmf-rdma:target";
  return o;
}

void expect_invalid(const Status& s, const std::string& names) {
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_NE(s.message().find(names), std::string::npos) << s.message();
}

std::string tmpdir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t != nullptr ? t : "/tmp";
}

TEST(CheckConnectionOptions, GoodOptionsPass) {
  EXPECT_TRUE(check_connection_options(good()).ok());
  HostOptions o = good();
  o.traddr = "fe80::1%1";
  o.host_traddr = "10.0.0.2";
  o.trsvcid = "65535";
  EXPECT_TRUE(check_connection_options(o).ok()) << check_connection_options(o).to_string();
}

TEST(CheckConnectionOptions, BadPortsAreNamed) {
  for (const char* port : {"abc", "0", "65536", "-1", "", "4420x", "99999999999"}) {
    HostOptions o = good();
    o.trsvcid = port;
    expect_invalid(check_connection_options(o), "--trsvcid");
  }
}

TEST(CheckConnectionOptions, BadAddressesAreNamed) {
  for (const char* addr : {"999.1.1.1", "localhost", "10.0.0.1:4420", "[::1"}) {
    HostOptions o = good();
    o.traddr = addr;
    expect_invalid(check_connection_options(o), "--traddr");
  }
  HostOptions o = good();
  o.traddr.clear();  // missing, not bad: main.cc names it after every bad value
  EXPECT_TRUE(check_connection_options(o).ok()) << check_connection_options(o).to_string();
  o.trsvcid = "abc";  // the port is still checked
  expect_invalid(check_connection_options(o), "--trsvcid");
  o = good();
  o.host_traddr = "10.0.0.256";
  expect_invalid(check_connection_options(o), "--host-traddr");
}

TEST(CheckConnectionOptions, NqnLengths) {
  HostOptions o = good();
  o.subnqn.clear();  // discover connects without one; main.cc requires it for the others
  EXPECT_TRUE(check_connection_options(o).ok());
  o.subnqn = std::string(224, 'n');
  expect_invalid(check_connection_options(o), "--nqn");
  o.subnqn = std::string(223, 'n');
  EXPECT_TRUE(check_connection_options(o).ok());
  o = good();
  o.hostnqn = std::string(224, 'h');
  expect_invalid(check_connection_options(o), "--hostnqn");
}

TEST(CheckByteRange, NearTwoToTheSixtyFourIsRefused) {
  // Before: --length 0xffffffffffffffff rounded up to whole LBAs was 0, so read did nothing and
  // exited 0.
  expect_invalid(check_byte_range(0, UINT64_MAX, "--offset + --length"), "--offset + --length");
  expect_invalid(check_byte_range(UINT64_MAX, 1, "--offset + --length"), "overflows");
  expect_invalid(check_byte_range(UINT64_MAX - 512, 512, "--offset + --length"), "overflows");
  expect_invalid(check_byte_range(1ull << 63, 1ull << 63, "--offset + --length"), "overflows");
  EXPECT_TRUE(check_byte_range(0, 1ull << 40, "x").ok());
  EXPECT_TRUE(check_byte_range(1ull << 62, 1ull << 62, "x").ok());
  // The largest accepted range still rounds up to whole 1 MiB LBAs without wrapping.
  const uint64_t last = UINT64_MAX - ((1ull << 20) - 1);
  EXPECT_TRUE(check_byte_range(0, last, "x").ok());
  EXPECT_GT(round_up_to_lba(last, 1u << 20), 0u);
}

TEST(RegularFileSize, RefusesDirectoriesAndDevices) {
  int dir = ::open(tmpdir().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  auto d = regular_file_size(dir, tmpdir(), "--input");
  ::close(dir);
  ASSERT_FALSE(d.ok());
  expect_invalid(d.status(), "--input");
  EXPECT_NE(d.status().message().find("directory"), std::string::npos);

  int null = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(null, 0);
  auto n = regular_file_size(null, "/dev/null", "--input");
  ::close(null);
  ASSERT_FALSE(n.ok());
  expect_invalid(n.status(), "not a regular file");

  const std::string path = tmpdir() + "/five.bin";
  int f = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(f, 0);
  ASSERT_EQ(::write(f, "12345", 5), 5);
  auto s = regular_file_size(f, path, "--input");
  ::close(f);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(*s, 5u);
}

TEST(CheckWritable, NamesTheOptionAndPath) {
  Status s = check_writable("/nonexistent-dir/report.json", "--json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--json /nonexistent-dir/report.json"), std::string::npos)
      << s.message();
  EXPECT_EQ(s.os_errno(), ENOENT);
  EXPECT_FALSE(check_writable(tmpdir(), "--json").ok());  // a directory
  EXPECT_TRUE(check_writable(tmpdir() + "/report.json", "--json").ok());
}

TEST(CliHardening, WritePastTheNamespaceEndIsRefusedBeforeAnythingLands) {
  // 8 LBAs of 512 bytes = 4096 bytes.
  EXPECT_TRUE(check_fits_namespace(0, 4096, 512, 8, "w").ok());
  EXPECT_TRUE(check_fits_namespace(3584, 1, 512, 8, "w").ok());  // padded to the last LBA
  expect_invalid(check_fits_namespace(3584, 513, 512, 8, "--offset + the --input size"),
                 "ends at byte 4608, past the namespace end at byte 4096");
  expect_invalid(check_fits_namespace(4096, 1, 512, 8, "w"), "nothing was written");
  EXPECT_TRUE(check_fits_namespace(0, 4096, 4096, UINT64_MAX, "w").ok());  // nsze * lba overflows
}

}  // namespace
}  // namespace nvmf::host
