// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for status_for_io_error: nvmet's errno mapping, command by command.
#include "target/io_status.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "common/nvme_status.h"

namespace nvmf::target {
namespace {

TEST(IoStatus, CapacityExceededWithDnrForEveryCommand) {
  for (IoCommand c : {IoCommand::kRead, IoCommand::kWrite, IoCommand::kFlush,
                      IoCommand::kWriteZeroes, IoCommand::kDatasetManagement}) {
    uint16_t st = status_for_io_error(c, ENOSPC);
    EXPECT_EQ(status_sct(st), proto::kSctGeneric);
    EXPECT_EQ(status_sc(st), proto::kScCapacityExceeded);
    EXPECT_TRUE(status_dnr(st));
    EXPECT_EQ(status_for_io_error(c, EDQUOT), st);
  }
}

TEST(IoStatus, MediaErrorsByDirectionWithoutDnr) {
  uint16_t read = status_for_io_error(IoCommand::kRead, EIO);
  EXPECT_EQ(status_sct(read), proto::kSctMediaError);
  EXPECT_EQ(status_sc(read), proto::kScUnrecoveredReadError);
  EXPECT_FALSE(status_dnr(read));
  EXPECT_EQ(status_name(read), "Unrecovered Read Error (SCT 0x2 SC 0x81)");
  uint16_t write = status_for_io_error(IoCommand::kWrite, EIO);
  EXPECT_EQ(status_sct(write), proto::kSctMediaError);
  EXPECT_EQ(status_sc(write), proto::kScWriteFault);
  EXPECT_FALSE(status_dnr(write));
  EXPECT_EQ(status_name(write), "Write Fault (SCT 0x2 SC 0x80)");
  EXPECT_EQ(status_for_io_error(IoCommand::kWriteZeroes, EIO), write);
  EXPECT_EQ(status_for_io_error(IoCommand::kRead, ENODATA), read);
}

TEST(IoStatus, FlushFailuresAlwaysHaveDnr) {
  for (int err : {EIO, EROFS, EBADF, EINVAL}) {
    uint16_t st = status_for_io_error(IoCommand::kFlush, err);
    EXPECT_EQ(status_sc(st), proto::kScInternalError) << err;
    EXPECT_TRUE(status_dnr(st)) << err;
  }
}

TEST(IoStatus, EverythingElseIsInternalErrorWithDnr) {
  EXPECT_EQ(status_for_io_error(IoCommand::kRead, EBADF),
            generic_status(proto::kScInternalError, true));
  EXPECT_EQ(status_for_io_error(IoCommand::kWrite, EFBIG),
            generic_status(proto::kScInternalError, true));
  EXPECT_EQ(status_for_io_error(IoCommand::kDatasetManagement, EIO),
            generic_status(proto::kScInternalError, true));
  EXPECT_EQ(status_for_io_error(IoCommand::kWriteZeroes, EOPNOTSUPP),
            generic_status(proto::kScInvalidOpcode, true));
}

}  // namespace
}  // namespace nvmf::target
