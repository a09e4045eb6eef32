// SPDX-License-Identifier: BSD-3-Clause
#include "ublk/ublk_map.h"

#include <gtest/gtest.h>
#include <linux/ublk_cmd.h>

#include <cerrno>

#include "common/nvme_status.h"
#include "proto/nvme.h"

namespace nvmf::ublk {
namespace {

DeviceFacts facts_4k() {
  DeviceFacts f;
  f.lba_size = 4096;
  f.nsze = 262144;  // 1 GiB
  f.max_command_bytes = 1u << 20;
  f.volatile_write_cache = true;
  f.dataset_management = true;
  f.write_zeroes = true;
  f.queues = 4;
  f.depth = 127;
  f.max_io_bytes = 128 * 1024;
  return f;
}

TEST(PlanDevice, GeometryFollowsTheNamespace) {
  Result<DeviceLayout> l = plan_device(facts_4k());
  ASSERT_TRUE(l.ok()) << l.status().to_string();
  EXPECT_EQ(l->nr_hw_queues, 4);
  EXPECT_EQ(l->queue_depth, 127);
  EXPECT_EQ(l->max_io_buf_bytes, 131072u);
  EXPECT_EQ(l->logical_bs_shift, 12);
  EXPECT_EQ(l->dev_sectors, 262144ull * 8);
  EXPECT_EQ(l->max_sectors, 256u);
  EXPECT_TRUE(l->volatile_cache);
  EXPECT_TRUE(l->fua);
  EXPECT_EQ(l->max_write_zeroes_sectors, 65536u * 8);
  EXPECT_EQ(l->max_discard_sectors, 262144u * 8);  // the whole namespace: under 2 GiB
  EXPECT_EQ(l->discard_granularity, 4096u);
}

TEST(PlanDevice, OneCommandBoundsTheRequestInWholePages) {
  DeviceFacts f = facts_4k();
  f.max_command_bytes = 65536 + 512;  // an MDTS that is not whole pages
  Result<DeviceLayout> l = plan_device(f);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->max_io_buf_bytes, 65536u);
  EXPECT_EQ(l->max_sectors, 128u);
  f.max_command_bytes = 2048;
  EXPECT_EQ(plan_device(f).status().code(), StatusCode::kInvalidArgument);
}

TEST(PlanDevice, NoCacheNoFuaAndMissingCommandsAreNotAdvertised) {
  DeviceFacts f = facts_4k();
  f.volatile_write_cache = false;
  f.dataset_management = false;
  f.write_zeroes = false;
  f.lba_size = 512;
  Result<DeviceLayout> l = plan_device(f);
  ASSERT_TRUE(l.ok());
  EXPECT_FALSE(l->volatile_cache);
  EXPECT_FALSE(l->fua);
  EXPECT_EQ(l->max_discard_sectors, 0u);
  EXPECT_EQ(l->max_write_zeroes_sectors, 0u);
  EXPECT_EQ(l->logical_bs_shift, 9);
  EXPECT_EQ(l->dev_sectors, 262144u);
}

TEST(PlanDevice, RefusesWhatNoUblkDeviceCanShow) {
  for (uint32_t lba : {256u, 520u, 8192u}) {
    DeviceFacts f = facts_4k();
    f.lba_size = lba;
    Result<DeviceLayout> l = plan_device(f);
    EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument) << lba;
  }
  DeviceFacts f = facts_4k();
  f.nsze = 0;
  EXPECT_FALSE(plan_device(f).ok());
  f = facts_4k();
  f.queues = 0;
  EXPECT_FALSE(plan_device(f).ok());
  f = facts_4k();
  f.depth = 0;
  EXPECT_FALSE(plan_device(f).ok());
  f.depth = kMaxQueueDepth + 1;
  EXPECT_NE(plan_device(f).status().message().find("queue depth 4097"), std::string::npos);
}

class MapIo : public ::testing::Test {
 protected:
  DeviceLayout layout = *plan_device(facts_4k());
};

TEST_F(MapIo, ReadAndWriteBecomeOneCommandOfWholeLbas) {
  MappedIo r = map_io(layout, UBLK_IO_OP_READ, 64, 800);
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.request.kind, IoKind::kRead);
  EXPECT_EQ(r.request.slba, 100u);
  EXPECT_EQ(r.request.nlb, 8u);
  EXPECT_EQ(r.request.bytes, 32768u);
  EXPECT_FALSE(r.request.fua);
  MappedIo w = map_io(layout, UBLK_IO_OP_WRITE | UBLK_IO_F_FUA, 256, 0);
  ASSERT_EQ(w.error, 0);
  EXPECT_EQ(w.request.kind, IoKind::kWrite);
  EXPECT_EQ(w.request.bytes, 131072u);
  EXPECT_TRUE(w.request.fua);
}

TEST_F(MapIo, FlushDiscardAndWriteZeroes) {
  MappedIo f = map_io(layout, UBLK_IO_OP_FLUSH, 0, 0);
  EXPECT_EQ(f.error, 0);
  EXPECT_EQ(f.request.kind, IoKind::kFlush);
  MappedIo d = map_io(layout, UBLK_IO_OP_DISCARD, 1u << 20, 8);
  ASSERT_EQ(d.error, 0);
  EXPECT_EQ(d.request.kind, IoKind::kDeallocate);
  EXPECT_EQ(d.request.slba, 1u);
  EXPECT_EQ(d.request.nlb, 1u << 17);
  EXPECT_EQ(d.request.bytes, 0u);
  MappedIo z = map_io(layout, UBLK_IO_OP_WRITE_ZEROES, 65536 * 8, 0);
  ASSERT_EQ(z.error, 0);
  EXPECT_EQ(z.request.kind, IoKind::kWriteZeroes);
  EXPECT_EQ(z.request.nlb, 65536u);
}

TEST_F(MapIo, WhatTheDeviceDidNotAdvertiseIsNotSupported) {
  EXPECT_EQ(map_io(layout, UBLK_IO_OP_WRITE_SAME, 8, 0).error, -EOPNOTSUPP);
  EXPECT_EQ(map_io(layout, 0xFF, 8, 0).error, -EOPNOTSUPP);
  DeviceFacts f = facts_4k();
  f.dataset_management = false;
  f.write_zeroes = false;
  DeviceLayout plain = *plan_device(f);
  EXPECT_EQ(map_io(plain, UBLK_IO_OP_DISCARD, 8, 0).error, -EOPNOTSUPP);
  EXPECT_EQ(map_io(plain, UBLK_IO_OP_WRITE_ZEROES, 8, 0).error, -EOPNOTSUPP);
}

// The descriptor is memory the kernel writes: a value it never sends is still refused.
TEST_F(MapIo, DescriptorsOutsideTheDeviceAreRefused) {
  EXPECT_EQ(map_io(layout, UBLK_IO_OP_READ, 4, 0).error, -EINVAL);     // half an LBA
  EXPECT_EQ(map_io(layout, UBLK_IO_OP_READ, 8, 4).error, -EINVAL);     // misaligned start
  EXPECT_EQ(map_io(layout, UBLK_IO_OP_READ, 0, 0).error, -EINVAL);     // nothing
  EXPECT_EQ(map_io(layout, UBLK_IO_OP_WRITE, 264, 0).error, -EINVAL);  // more than a tag holds
  const uint64_t end = layout.dev_sectors;
  EXPECT_EQ(map_io(layout, UBLK_IO_OP_READ, 8, end).error, -EINVAL);
  EXPECT_EQ(map_io(layout, UBLK_IO_OP_READ, 16, end - 8).error, -EINVAL);
  EXPECT_EQ(map_io(layout, UBLK_IO_OP_READ, 8, end - 8).error, 0);
  EXPECT_EQ(map_io(layout, UBLK_IO_OP_READ, 8, ~0ull - 7).error, -EINVAL);
  EXPECT_EQ(map_io(layout, UBLK_IO_OP_DISCARD, layout.max_discard_sectors + 8, 0).error, -EINVAL);
  EXPECT_EQ(map_io(layout, UBLK_IO_OP_WRITE_ZEROES, 65537 * 8, 0).error, -EINVAL);
}

TEST(ErrnoOfStatus, MirrorsLinuxNvmeErrorStatus) {
  using proto::kSctCommandSpecific;
  using proto::kSctGeneric;
  using proto::kSctMediaError;
  using proto::kSctPath;
  EXPECT_EQ(errno_of_status(0), 0);
  EXPECT_EQ(errno_of_status(make_status(kSctPath, proto::kScHostPathingError)), -ENOLINK);
  EXPECT_EQ(errno_of_status(make_status(kSctPath, proto::kScAnaInaccessible)), -EIO);
  EXPECT_EQ(errno_of_status(make_status(kSctGeneric, proto::kScLbaOutOfRange, true)), -EREMOTEIO);
  EXPECT_EQ(errno_of_status(make_status(kSctGeneric, proto::kScNamespaceNotReady)), -EREMOTEIO);
  EXPECT_EQ(errno_of_status(make_status(kSctGeneric, 0x21)), -EREMOTEIO);  // Command Interrupted
  EXPECT_EQ(errno_of_status(make_status(kSctGeneric, proto::kScCapacityExceeded)), -ENOSPC);
  EXPECT_EQ(errno_of_status(make_status(kSctGeneric, proto::kScReservationConflict)), -EBADE);
  EXPECT_EQ(errno_of_status(make_status(kSctGeneric, proto::kScInvalidOpcode, true)), -EOPNOTSUPP);
  EXPECT_EQ(errno_of_status(make_status(kSctGeneric, proto::kScInvalidField, true)), -EOPNOTSUPP);
  EXPECT_EQ(errno_of_status(make_status(kSctGeneric, proto::kScInternalError)), -EIO);
  EXPECT_EQ(errno_of_status(make_status(kSctCommandSpecific, 0x83)), -EOPNOTSUPP);
  EXPECT_EQ(errno_of_status(make_status(kSctCommandSpecific, 0x82)), -ENODATA);
  EXPECT_EQ(errno_of_status(make_status(kSctMediaError, proto::kScWriteFault)), -ENODATA);
  EXPECT_EQ(errno_of_status(make_status(kSctMediaError, proto::kScUnrecoveredReadError)), -ENODATA);
  EXPECT_EQ(errno_of_status(make_status(kSctMediaError, 0x82)), -EILSEQ);
  EXPECT_EQ(errno_of_status(make_status(proto::kSctVendor, 0x01)), -EIO);
}

}  // namespace
}  // namespace nvmf::ublk
