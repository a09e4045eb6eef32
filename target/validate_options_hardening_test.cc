// validate_options() against the inputs a careless user types: each is refused before any
// device is touched, with a message naming the option.
#include <gtest/gtest.h>

#include "target/target_options.h"

namespace nvmf::target {
namespace {

TargetOptions good() {
  TargetOptions o;
  o.traddr = "10.0.0.1";
  o.ram_size = 1 << 20;
  return o;
}

void expect_invalid(const TargetOptions& o, const std::string& names) {
  Status s = validate_options(o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_NE(s.message().find(names), std::string::npos) << s.message();
}

TEST(ValidateOptionsHardening, BadPortsAreNamed) {
  for (const char* port : {"abc", "65536", "-1", "", "4420x", " 4420", "99999999999"}) {
    TargetOptions o = good();
    o.trsvcid = port;
    expect_invalid(o, "--trsvcid");
  }
  for (const char* port : {"0", "1", "4420", "65535"}) {
    TargetOptions o = good();
    o.trsvcid = port;
    EXPECT_TRUE(validate_options(o).ok()) << port << ": " << validate_options(o).to_string();
  }
}

TEST(ValidateOptionsHardening, BadAddressesAreNamed) {
  for (const char* addr :
       {"999.1.1.1", "10.0.0", "localhost", "10.0.0.1:4420", "fe80::1%", "[::1", "1.2.3.4 "}) {
    TargetOptions o = good();
    o.traddr = addr;
    expect_invalid(o, "--traddr");
  }
  for (const char* addr : {"10.0.0.1", "0.0.0.0", "::1", "[::1]", "fe80::1%1"}) {
    TargetOptions o = good();
    o.traddr = addr;
    EXPECT_TRUE(validate_options(o).ok()) << addr << ": " << validate_options(o).to_string();
  }
}

TEST(ValidateOptionsHardening, MaxIoQueuesNamesTheOption) {
  TargetOptions o = good();
  o.max_io_queues = 0;
  expect_invalid(o, "--max-io-queues 0");
  o.max_io_queues = 65;
  expect_invalid(o, "--max-io-queues 65");
}

TEST(ValidateOptionsHardening, NumSharedBuffersIsAtMost65535) {
  TargetOptions o = good();
  EXPECT_EQ(o.num_shared_buffers, 256u);
  o.num_shared_buffers = 65536;
  expect_invalid(o, "--num-shared-buffers 65536 is not in 0..65535");
  for (uint32_t ok : {0u, 1u, 65535u}) {
    o.num_shared_buffers = ok;
    EXPECT_TRUE(validate_options(o).ok()) << ok;
  }
}

TEST(ValidateOptionsHardening, MaxSrqDepthIs16To65535AndSrqIsOffByDefault) {
  TargetOptions o = good();
  EXPECT_FALSE(o.srq);
  EXPECT_EQ(o.max_srq_depth, 4096u);
  o.max_srq_depth = 15;
  expect_invalid(o, "--max-srq-depth 15 is not in 16..65535");
  o.max_srq_depth = 65536;
  expect_invalid(o, "--max-srq-depth 65536 is not in 16..65535");
  for (uint32_t ok : {16u, 4096u, 65535u}) {
    o.max_srq_depth = ok;
    EXPECT_TRUE(validate_options(o).ok()) << ok;
  }
}

TEST(ValidateOptionsHardening, MaxRdmaReadDepthIsOneTo255) {
  TargetOptions o = good();
  EXPECT_EQ(o.max_rdma_read_depth, 16u);
  o.max_rdma_read_depth = 0;
  expect_invalid(o, "--max-rdma-read-depth 0 is not in 1..255");
  o.max_rdma_read_depth = 256;
  expect_invalid(o, "--max-rdma-read-depth 256");
  for (uint32_t ok : {1u, 255u}) {
    o.max_rdma_read_depth = ok;
    EXPECT_TRUE(validate_options(o).ok()) << ok;
  }
}

}  // namespace
}  // namespace nvmf::target
