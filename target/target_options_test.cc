// SPDX-License-Identifier: BSD-3-Clause
// Tests of validate_options(): every range it enforces, at and just past each edge, and the
// inputs a careless user types.
#include "target/target_options.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <string>
#include <thread>

#include "target/subsystem.h"

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

TEST(ValidateOptions, DefaultsWithOneBackingAreValid) {
  EXPECT_TRUE(validate_options(good()).ok()) << validate_options(good()).to_string();
}

TEST(ValidateOptions, MdtsMustBeOneToEight) {
  TargetOptions o = good();
  o.mdts = 1;
  EXPECT_TRUE(validate_options(o).ok());
  o.mdts = 8;
  EXPECT_TRUE(validate_options(o).ok());
  o.mdts = 0;  // would advertise "no limit"
  expect_invalid(o, "mdts 0");
  o.mdts = 9;
  expect_invalid(o, "mdts 9");
}

TEST(ValidateOptions, ExactlyOneBacking) {
  TargetOptions o = good();
  o.file_path = "/tmp/x.img";
  expect_invalid(o, "exactly one namespace backing");
  o = good();
  o.ram_size = 0;
  expect_invalid(o, "exactly one namespace backing");
}

TEST(ValidateOptions, LbaSizeAndInlineDataSize) {
  TargetOptions o = good();
  o.lba_size = 1024;
  expect_invalid(o, "--lba-size 1024");
  o = good();
  o.inline_data_size = -2;
  expect_invalid(o, "--inline-data-size -2");
}

TEST(ValidateOptions, QueueSizeRange) {
  TargetOptions o = good();
  o.max_queue_size = 1;
  expect_invalid(o, "--queue-size 1");
  o.max_queue_size = 1025;
  expect_invalid(o, "--queue-size 1025");
}

TEST(ValidateOptions, BusyPollWindowAtMostOneSecond) {
  TargetOptions o = good();
  EXPECT_EQ(o.poll_mode, PollMode::kEvent);
  EXPECT_EQ(o.busy_poll_us, 1000u);
  o.busy_poll_us = 0;
  EXPECT_TRUE(validate_options(o).ok());
  o.busy_poll_us = 1000000;
  EXPECT_TRUE(validate_options(o).ok());
  o.busy_poll_us = 1000001;
  expect_invalid(o, "--busy-poll-us 1000001");
  EXPECT_STREQ(poll_mode_name(PollMode::kBusy), "busy");
  EXPECT_STREQ(poll_mode_name(PollMode::kEvent), "event");
}

TEST(ValidateOptions, StallWarnIsOffOrTenMillisecondsToAnHour) {
  TargetOptions o = good();
  EXPECT_EQ(o.stall_warn_ms, 1000u);
  for (uint32_t ok : {0u, 10u, 3600000u}) {
    o.stall_warn_ms = ok;
    EXPECT_TRUE(validate_options(o).ok()) << ok;
  }
  o.stall_warn_ms = 9;
  expect_invalid(o, "--stall-warn-ms 9");
  o.stall_warn_ms = 3600001;
  expect_invalid(o, "--stall-warn-ms 3600001");
}

TEST(ValidateOptions, GivenSizesAreWholeLbas) {
  TargetOptions o = good();
  o.ram_size = 1000;
  expect_invalid(o, "--ram-size 1000 is not a whole number of LBAs");
  o.ram_size = 1024;
  EXPECT_TRUE(validate_options(o).ok());
  o.lba_size = 4096;
  expect_invalid(o, "--ram-size 1024 is smaller than one LBA (--lba-size 4096)");
  o.ram_size = 6144;
  expect_invalid(o, "--ram-size 6144 is not a whole number of LBAs (--lba-size 4096)");
  o.ram_size = 0;
  o.file_path = "/tmp/x.img";
  o.file_size = 8192 + 512;
  expect_invalid(o, "--size 8704");
  o.file_size = 8192;
  EXPECT_TRUE(validate_options(o).ok());
  o.file_size = 100;  // refused before the file is created (none is left behind)
  expect_invalid(o, "--size 100 is smaller than one LBA");
}

TEST(ValidateOptions, TraddrRequired) {
  TargetOptions o = good();
  o.traddr.clear();
  expect_invalid(o, "--traddr");
}

// The inputs a careless user types: each is refused before any device is touched, with a
// message naming the option (was validate_options_hardening_test.cc).
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

TEST(ValidateOptionsHardening, MaxPendingConnectionsPerPeerIs1To65535) {
  TargetOptions o = good();
  EXPECT_EQ(o.max_pending_connections_per_peer, 32u);
  o.max_pending_connections_per_peer = 0;
  expect_invalid(o, "--max-pending-connections-per-peer 0 is not in 1..65535");
  o.max_pending_connections_per_peer = 65536;
  expect_invalid(o, "--max-pending-connections-per-peer 65536 is not in 1..65535");
  for (uint32_t ok : {1u, 32u, 65535u}) {
    o.max_pending_connections_per_peer = ok;
    EXPECT_TRUE(validate_options(o).ok()) << ok;
  }
}

TEST(ValidateOptionsHardening, MaxSrqDepthIs16To65535AndSrqIsOnByDefault) {
  TargetOptions o = good();
  EXPECT_TRUE(o.srq);
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

TEST(ValidateOptionsHardening, AckTimeoutIsZeroTo31) {
  TargetOptions o = good();
  EXPECT_EQ(o.ack_timeout, 0u) << "rdma_cm's own unless asked";
  o.ack_timeout = 32;
  expect_invalid(o, "--ack-timeout 32 is not in 0..31");
  for (uint32_t ok : {0u, 14u, 31u}) {
    o.ack_timeout = ok;
    EXPECT_TRUE(validate_options(o).ok()) << ok;
  }
}

}  // namespace
}  // namespace nvmf::target

namespace nvmf::target {
namespace {

TEST(ValidateOptions, FurtherNamespacesNeedAFileFirstAndDistinctNsids) {
  TargetOptions o = good();
  o.more_file_paths = {"/tmp/b.img"};
  expect_invalid(o, "RAM namespace cannot be followed by --file");
  o.ram_size = 0;
  o.file_path = "/tmp/a.img";
  EXPECT_TRUE(validate_options(o).ok()) << validate_options(o).to_string();

  TargetOptions c = good();
  SubsystemOptions s;
  s.nqn = "nqn.test:multi";
  s.file_path = "/dev/nullb0";
  NamespaceOptions n;
  n.nsid = 2;
  n.file_path = "/tmp/b.img";
  s.more_namespaces = {n};
  c.subsystems = {s};
  EXPECT_TRUE(validate_options(c).ok()) << validate_options(c).to_string();
  c.subsystems[0].more_namespaces[0].nsid = 1;
  expect_invalid(c, "NSID 1 is given twice");
  c.subsystems[0].more_namespaces[0].nsid = 0xFFFFFFFF;
  expect_invalid(c, "needs an NSID and a path");
}

TEST(ValidateOptions, PollGroupsAreAutoOrOneTo64AndACpuNumberPinsOne) {
  TargetOptions o = good();
  EXPECT_EQ(o.poll_groups, kPollGroupsAuto) << "the library default is one group per CPU";
  EXPECT_TRUE(validate_options(o).ok());
  o.poll_groups = 1;
  EXPECT_TRUE(validate_options(o).ok());
  o.poll_groups = kMaxPollGroups;
  EXPECT_TRUE(validate_options(o).ok());
  o.poll_groups = kMaxPollGroups + 1;
  expect_invalid(o, "--poll-groups 65 is not auto or 1..64");
  // A CPU number pins one thread: refused with two groups, one group with auto.
  o = good();
  o.cpu = 3;
  EXPECT_TRUE(validate_options(o).ok()) << validate_options(o).to_string();
  o.poll_groups = 2;
  expect_invalid(o, "--cpu 3 pins one thread");
  o.cpu = kCpuAuto;
  EXPECT_TRUE(validate_options(o).ok());
}

TEST(ChoosePollGroups, AutoIsOnePerAllowedCpuUpTo64) {
  TargetOptions o = good();
  PollGroupChoice c = choose_poll_groups(o, 2);
  EXPECT_EQ(c.groups, 2u);
  EXPECT_EQ(c.reason, "auto: 2 CPUs");
  c = choose_poll_groups(o, 1);
  EXPECT_EQ(c.groups, 1u);
  EXPECT_EQ(c.reason, "auto: 1 CPU");
  c = choose_poll_groups(o, 64);
  EXPECT_EQ(c.groups, 64u);
  c = choose_poll_groups(o, 96);
  EXPECT_EQ(c.groups, kMaxPollGroups);
  EXPECT_EQ(c.reason, "auto: 96 CPUs, at most 64");
  c = choose_poll_groups(o, 0);  // sched_getaffinity failed
  EXPECT_EQ(c.groups, 1u);
  EXPECT_EQ(c.reason, "auto: the CPU affinity mask could not be read");
  o.cpu = kCpuAuto;  // group i on the i-th CPU: still one per CPU
  EXPECT_EQ(choose_poll_groups(o, 8).groups, 8u);
  o.cpu = 5;
  c = choose_poll_groups(o, 8);
  EXPECT_EQ(c.groups, 1u);
  EXPECT_EQ(c.reason, "auto: --cpu 5 pins one thread");
}

TEST(ChoosePollGroups, AGivenCountIsKeptWhateverTheCpus) {
  TargetOptions o = good();
  o.poll_groups = 3;
  PollGroupChoice c = choose_poll_groups(o, 96);
  EXPECT_EQ(c.groups, 3u);
  EXPECT_EQ(c.reason, "--poll-groups 3");
  EXPECT_EQ(choose_poll_groups(o, 1).groups, 3u);
  o.poll_groups = 1;
  EXPECT_EQ(choose_poll_groups(o, 2).groups, 1u);
}

TEST(ChoosePollGroups, AllowedCpusAreTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  const uint32_t before = allowed_cpu_count();
  EXPECT_EQ(before, static_cast<uint32_t>(CPU_COUNT(&set)));
  EXPECT_GE(before, 1u);
  // Narrowed to one CPU (on a thread of its own, the test's mask stays), auto runs one group.
  uint32_t narrowed = 0;
  std::thread([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) {
        CPU_SET(c, &one);
        break;
      }
    }
    if (sched_setaffinity(0, sizeof(one), &one) == 0) narrowed = allowed_cpu_count();
  }).join();
  EXPECT_EQ(narrowed, 1u);
  EXPECT_EQ(choose_poll_groups(good(), narrowed).groups, 1u);
}

// ceil(x / groups) of the shared buffers and SRQ receives, on a many-core machine too: with 64
// groups and the defaults every group still gets what a queue needs to make progress.
TEST(PollGroupShares, SixtyFourGroupsWithTheDefaults) {
  const TargetOptions o = good();
  ASSERT_EQ(o.num_shared_buffers, 256u);
  ASSERT_EQ(o.max_srq_depth, 4096u);
  PollGroupShares s = poll_group_shares(o, 64);
  EXPECT_EQ(s.shared_buffers, 4u);
  EXPECT_EQ(s.srq_depth, 64u);
  EXPECT_EQ(s.total_shared_buffers, 256u);
  EXPECT_EQ(s.total_srq_depth, 4096u);
  s = poll_group_shares(o, 1);
  EXPECT_EQ(s.shared_buffers, 256u);
  EXPECT_EQ(s.srq_depth, 4096u);
  s = poll_group_shares(o, 3);  // rounded up: a group never gets less than its share
  EXPECT_EQ(s.shared_buffers, 86u);
  EXPECT_EQ(s.srq_depth, 1366u);
  EXPECT_EQ(s.total_shared_buffers, 258u);
}

TEST(PollGroupShares, AGroupNeverGetsLessThanAQueueNeedsToMakeProgress) {
  // A command's data is one chunk; an admin queue holds up to AERL + 1 Asynchronous Event
  // Requests (and their SRQ receives) for as long as no event comes.
  const uint32_t held_aers = uint32_t{SubsystemConfig().aerl} + 1;
  ASSERT_GT(kMinSrqDepthPerGroup, held_aers + 1);
  for (uint32_t groups = 1; groups <= kMaxPollGroups; ++groups) {
    for (uint32_t buffers : {1u, 2u, 3u, 63u, 64u, 65u, 256u, 65535u}) {
      for (uint32_t depth : {16u, 17u, 100u, 1023u, 4096u, 65535u}) {
        TargetOptions o = good();
        o.num_shared_buffers = buffers;
        o.max_srq_depth = depth;
        const PollGroupShares s = poll_group_shares(o, groups);
        const std::string where = std::to_string(groups) + " groups, " + std::to_string(buffers) +
                                  " buffers, depth " + std::to_string(depth);
        EXPECT_GE(s.shared_buffers, 1u) << where;
        EXPECT_EQ(s.shared_buffers, (buffers + groups - 1) / groups) << where;
        EXPECT_GE(s.total_shared_buffers, buffers) << where;
        EXPECT_GE(s.srq_depth, kMinSrqDepthPerGroup) << where;
        EXPECT_GE(s.total_srq_depth, depth) << where;
      }
    }
  }
  // The floors at work: 16 receives and one chunk a group, more than was asked for in all.
  TargetOptions o = good();
  o.num_shared_buffers = 8;
  o.max_srq_depth = 16;
  const PollGroupShares s = poll_group_shares(o, 64);
  EXPECT_EQ(s.shared_buffers, 1u);
  EXPECT_EQ(s.total_shared_buffers, 64u);
  EXPECT_EQ(s.srq_depth, 16u);
  EXPECT_EQ(s.total_srq_depth, 1024u);
  // Per-slot buffers (0) stay per-slot.
  o.num_shared_buffers = 0;
  EXPECT_EQ(poll_group_shares(o, 64).shared_buffers, 0u);
  EXPECT_EQ(poll_group_shares(o, 64).total_shared_buffers, 0u);
}

}  // namespace
}  // namespace nvmf::target
