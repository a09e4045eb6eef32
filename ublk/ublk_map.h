// SPDX-License-Identifier: BSD-3-Clause
// What `nvmf-host ublk` decides without the kernel: the ublk device's geometry and limits from
// what the controller reported, each ublk request as one NVMe command, and each NVMe status as
// the errno the block layer sees. The ublk server (ublk/ublk_device.h) applies them.
#ifndef NVMF_UBLK_UBLK_MAP_H_
#define NVMF_UBLK_UBLK_MAP_H_

#include <cstddef>
#include <cstdint>

#include "common/status.h"

namespace nvmf::ublk {

// What the controller and its namespace offer the block device.
struct DeviceFacts {
  uint32_t lba_size = 512;             // bytes, a power of two
  uint64_t nsze = 0;                   // namespace size in LBAs
  uint32_t max_command_bytes = 0;      // what one NVMe Read or Write may move (0: no limit)
  bool volatile_write_cache = false;   // Identify Controller VWC bit 0: Flush means something
  bool dataset_management = false;     // ONCS bit 2: Deallocate
  bool write_zeroes = false;           // ONCS bit 3
  uint16_t queues = 1;                 // I/O queues (ublk hardware queues)
  uint16_t depth = 1;                  // commands per queue (ublk tags)
  uint32_t max_io_bytes = 128 * 1024;  // the most one ublk request may carry, asked for
};

// The ublk device made of DeviceFacts: the fields of ublksrv_ctrl_dev_info and ublk_params
// (include/uapi/linux/ublk_cmd.h) that `nvmf-host ublk` sets.
struct DeviceLayout {
  uint16_t nr_hw_queues = 0;
  uint16_t queue_depth = 0;
  uint32_t max_io_buf_bytes = 0;  // per tag: each tag's registered buffer
  uint8_t logical_bs_shift = 9;
  uint64_t dev_sectors = 0;     // 512-byte sectors
  uint32_t max_sectors = 0;     // per request, 512-byte sectors
  bool volatile_cache = false;  // UBLK_ATTR_VOLATILE_CACHE: the block layer sends flushes
  bool fua = false;             // UBLK_ATTR_FUA: writes may carry FUA
  // Discard (Deallocate) and Write Zeroes: 0 sectors when the controller lacks the command.
  uint32_t max_discard_sectors = 0;
  uint32_t max_write_zeroes_sectors = 0;
  uint32_t discard_granularity = 0;  // bytes
};

// ublk's limits (Linux 6.x ublk_drv): tags per queue, hardware queues.
inline constexpr uint16_t kMaxQueueDepth = 4096;
inline constexpr uint16_t kMaxHwQueues = 4096;
// Write Zeroes moves at most 65536 blocks (NLB is 16 bits, 0's based).
inline constexpr uint32_t kMaxWriteZeroesBlocks = 65536;

// The layout, or kInvalidArgument naming what cannot make a block device: an LBA size that is
// not a power of two in 512..4096 (ublk takes logical blocks up to a page), an empty namespace,
// no queue or tag, more than ublk takes, one command that cannot move a page.
Result<DeviceLayout> plan_device(const DeviceFacts& facts);

// One ublk request as the NVMe command that serves it.
enum class IoKind : uint8_t { kRead, kWrite, kFlush, kDeallocate, kWriteZeroes };
struct IoRequest {
  IoKind kind = IoKind::kRead;
  uint64_t slba = 0;
  uint32_t nlb = 0;  // LBAs (0 for Flush)
  size_t bytes = 0;  // data moved: Read and Write only
  bool fua = false;  // UBLK_IO_F_FUA on a Write
};
// `op_flags`, `nr_sectors` and `start_sector` are ublksrv_io_desc's. A negative errno for a
// request no command can serve: -EOPNOTSUPP for an operation the device did not advertise (a
// discard without Deallocate, WRITE_SAME, zoned operations), -EINVAL for sectors that are not
// whole LBAs, a request past the namespace's end or larger than one tag's buffer (the kernel
// never sends these: checked because the descriptor is shared memory the kernel writes).
struct MappedIo {
  int error = 0;  // 0, or the negative errno to complete the request with
  IoRequest request;
};
MappedIo map_io(const DeviceLayout& layout, uint32_t op_flags, uint32_t nr_sectors,
                uint64_t start_sector);

// The errno a completed command gives the block layer, as Linux's nvme_error_status()
// (drivers/nvme/host/core.c) maps NVMe statuses to blk_status_t and blk_status_to_errno() maps
// those: 0 for success; -ENOLINK for Host Pathing Error (BLK_STS_TRANSPORT); -EREMOTEIO for
// LBA Out of Range, Namespace Not Ready and Command Interrupted (BLK_STS_TARGET); -ENOSPC for
// Capacity Exceeded; -EOPNOTSUPP for Invalid Opcode, Invalid Field, Invalid Namespace, ONCS not
// supported; -ENODATA for media errors (Write Fault, Unrecovered Read Error, Access Denied, ...);
// -EBADE for a reservation conflict; -EIO otherwise. `status` is the CQE status field without the
// phase bit.
int errno_of_status(uint16_t status);

}  // namespace nvmf::ublk

#endif  // NVMF_UBLK_UBLK_MAP_H_
