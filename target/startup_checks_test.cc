// SPDX-License-Identifier: BSD-3-Clause
// target_memlock_bytes() against hand-computed registrations, and the open-admission notice.
#include "target/startup_checks.h"

#include <gtest/gtest.h>

#include "target/memlock.h"

namespace nvmf::target {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST(TargetMemlockBytes, DefaultsCountOneGroupsPoolShareAndEveryGroupsSrq) {
  TargetOptions o;  // 256 shared buffers of 128 KiB (mdts 5), SRQ of 4096, one page in capsule
  // Every group's SRQ: 4096 receives over the groups, each 64 bytes + one page (16.25 MiB in
  // all); the Connect page and the first queue's 32 CQEs.
  const uint64_t srqs = 4096 * 64 + 4096 * 4096;
  const uint64_t rest = 4096 + 32 * 16;
  EXPECT_EQ(target_memlock_bytes(o, 1, 4096), 256 * 128 * 1024 + srqs + rest);
  EXPECT_EQ(target_memlock_bytes(o, 2, 4096), 128 * 128 * 1024 + srqs + rest);  // 32.25 MiB
  // 3 groups: 86 buffers and 1366 receives each (both rounded up); 1366 x 64 = 87424 bytes of
  // SQEs round up to 22 pages.
  EXPECT_EQ(target_memlock_bytes(o, 3, 4096),
            86 * 128 * 1024 + 3 * (22 * 4096 + 1366 * 4096) + rest);
}

TEST(TargetMemlockBytes, SrqOffCountsTheFirstQueuesOwnReceives) {
  TargetOptions o;
  o.max_srq_depth = 16;  // 16 x 64 bytes of SQEs take one page, then 16 pages
  EXPECT_EQ(target_memlock_bytes(o, 1, 4096), 32 * kMiB + 4096 + 16 * 4096 + 4096 + 32 * 16);
  o.srq = false;  // the queue's own receives: 32 SQEs and 32 pages
  EXPECT_EQ(target_memlock_bytes(o, 1, 4096), 32 * kMiB + 32 * 64 + 32 * 4096 + 4096 + 32 * 16);
}

TEST(TargetMemlockBytes, NoSharedBuffersMeansPerSlotBuffers) {
  TargetOptions o;
  o.num_shared_buffers = 0;
  o.mdts = 1;  // 8 KiB transfers
  o.inline_data_size = 0;
  o.srq = false;
  EXPECT_EQ(target_memlock_bytes(o, 4, 4096), 32 * 8192 + 32 * 64 + 4096 + 32 * 16);
}

TEST(TargetMemlockBytes, RamNamespaceIsNotRegistered) {
  TargetOptions a, b;
  b.ram_size = 1ull << 30;
  EXPECT_EQ(target_memlock_bytes(a, 1, 4096), target_memlock_bytes(b, 1, 4096));
}

TEST(MemlockRefusal, NamesLimitNeedAndFix) {
  MemlockLimit limit;
  limit.unlimited = false;
  limit.soft_bytes = 8 * kMiB;
  EXPECT_EQ(
      memlock_refusal("nvmf-target", 68 * kMiB, limit),
      "nvmf-target: RLIMIT_MEMLOCK is 8388608 bytes (8 MiB); this configuration registers "
      "at least 71303168 bytes (68 MiB) for RDMA: raise it with 'ulimit -l unlimited' "
      "(shell) or 'LimitMEMLOCK=infinity' (systemd unit); past the hard limit only as root or "
      "in /etc/security/limits.conf");
  EXPECT_EQ(memlock_refusal("nvmf-target", 8 * kMiB, limit), "");  // exactly fits
  limit.unlimited = true;
  EXPECT_EQ(memlock_refusal("nvmf-target", 1ull << 40, limit), "");
}

TEST(DescribeBytes, WholeAndFractionalUnits) {
  EXPECT_EQ(describe_bytes(8 * kMiB), "8388608 bytes (8 MiB)");
  EXPECT_EQ(describe_bytes(17039360), "17039360 bytes (16.2 MiB)");
  EXPECT_EQ(describe_bytes(2048), "2048 bytes (2.0 KiB)");
}

TEST(AnyHostNotice, CommandLineTargetAdmitsEveryHost) {
  TargetOptions o;
  EXPECT_EQ(any_host_notice(o),
            "any host may connect to nqn.2024-01.io.nvmf-rdma:target: the command line admits "
            "every host NQN; to restrict it, use --config FILE with the subsystem's "
            "allowed_hosts and attr allow_any_host 0");
}

TEST(AnyHostNotice, RestrictedConfigSaysNothing) {
  TargetOptions o;
  SubsystemOptions s;
  s.nqn = "nqn.x";
  s.allow_any_host = false;
  s.allowed_hosts = {"nqn.h"};
  o.subsystems = {s};
  EXPECT_EQ(any_host_notice(o), "");
}

}  // namespace
}  // namespace nvmf::target
