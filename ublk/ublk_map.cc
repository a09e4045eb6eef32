// SPDX-License-Identifier: BSD-3-Clause
#include "ublk/ublk_map.h"

#include <linux/ublk_cmd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <string>

#include "common/nvme_status.h"
#include "proto/nvme.h"

namespace nvmf::ublk {

namespace {

constexpr uint32_t kPageBytes = 4096;
constexpr uint32_t kSectorBytes = 512;

}  // namespace

Result<DeviceLayout> plan_device(const DeviceFacts& f) {
  if (f.lba_size < kSectorBytes || f.lba_size > kPageBytes || !std::has_single_bit(f.lba_size)) {
    return Status::invalid_argument("LBA size " + std::to_string(f.lba_size) +
                                    ": a ublk device takes logical blocks of 512..4096 bytes");
  }
  if (f.nsze == 0) return Status::invalid_argument("the namespace has no blocks");
  if (f.queues == 0 || f.queues > kMaxHwQueues) {
    return Status::invalid_argument("queues " + std::to_string(f.queues) + ": give 1.." +
                                    std::to_string(kMaxHwQueues));
  }
  if (f.depth == 0 || f.depth > kMaxQueueDepth) {
    return Status::invalid_argument("queue depth " + std::to_string(f.depth) + ": give 1.." +
                                    std::to_string(kMaxQueueDepth));
  }
  // One request is one command: at most what one command moves, whole pages.
  uint32_t io = f.max_io_bytes;
  if (f.max_command_bytes != 0) io = std::min(io, f.max_command_bytes);
  io -= io % kPageBytes;
  if (io == 0) {
    return Status::invalid_argument("one command moves " + std::to_string(f.max_command_bytes) +
                                    " bytes, less than a page");
  }
  DeviceLayout l;
  l.nr_hw_queues = f.queues;
  l.queue_depth = f.depth;
  l.max_io_buf_bytes = io;
  l.logical_bs_shift = static_cast<uint8_t>(std::countr_zero(f.lba_size));
  l.dev_sectors = f.nsze * (f.lba_size / kSectorBytes);
  l.max_sectors = io / kSectorBytes;
  l.volatile_cache = f.volatile_write_cache;
  l.fua = f.volatile_write_cache;  // FUA matters only where a cache can hold a write
  if (f.dataset_management) {
    // One range per Deallocate (NLB is 32 bits), at most 2 GiB a request.
    const uint64_t blocks = std::min<uint64_t>(0xFFFFFFFFull, f.nsze);
    const uint64_t sectors = std::min<uint64_t>(blocks * (f.lba_size / kSectorBytes), 1u << 22);
    l.max_discard_sectors = static_cast<uint32_t>(sectors);
    l.discard_granularity = f.lba_size;
  }
  if (f.write_zeroes) {
    l.max_write_zeroes_sectors = kMaxWriteZeroesBlocks * (f.lba_size / kSectorBytes);
  }
  return l;
}

MappedIo map_io(const DeviceLayout& layout, uint32_t op_flags, uint32_t nr_sectors,
                uint64_t start_sector) {
  MappedIo m;
  const uint32_t op = op_flags & 0xff;
  const uint32_t per_lba = 1u << (layout.logical_bs_shift - 9);
  auto whole = [&](uint32_t max_sectors) {
    if (nr_sectors == 0 || nr_sectors % per_lba != 0 || start_sector % per_lba != 0 ||
        nr_sectors > max_sectors || start_sector > layout.dev_sectors ||
        nr_sectors > layout.dev_sectors - start_sector) {
      m.error = -EINVAL;
      return false;
    }
    m.request.slba = start_sector / per_lba;
    m.request.nlb = nr_sectors / per_lba;
    return true;
  };
  switch (op) {
    case UBLK_IO_OP_READ:
    case UBLK_IO_OP_WRITE:
      m.request.kind = op == UBLK_IO_OP_READ ? IoKind::kRead : IoKind::kWrite;
      if (whole(layout.max_io_buf_bytes / 512)) {
        m.request.bytes = static_cast<size_t>(nr_sectors) * 512;
        m.request.fua = op == UBLK_IO_OP_WRITE && (op_flags & UBLK_IO_F_FUA) != 0;
      }
      return m;
    case UBLK_IO_OP_FLUSH:
      m.request.kind = IoKind::kFlush;
      return m;
    case UBLK_IO_OP_DISCARD:
      m.request.kind = IoKind::kDeallocate;
      if (layout.max_discard_sectors == 0) {
        m.error = -EOPNOTSUPP;
        return m;
      }
      whole(layout.max_discard_sectors);
      return m;
    case UBLK_IO_OP_WRITE_ZEROES:
      m.request.kind = IoKind::kWriteZeroes;
      if (layout.max_write_zeroes_sectors == 0) {
        m.error = -EOPNOTSUPP;
        return m;
      }
      whole(layout.max_write_zeroes_sectors);
      return m;
    default:
      m.error = -EOPNOTSUPP;
      return m;
  }
}

int errno_of_status(uint16_t status) {
  if (status_is_success(status)) return 0;
  const uint8_t sct = status_sct(status);
  const uint8_t sc = status_sc(status);
  switch (sct) {
    case proto::kSctGeneric:
      switch (sc) {
        case proto::kScLbaOutOfRange:
        case proto::kScNamespaceNotReady:
        case 0x21:  // Command Interrupted
          return -EREMOTEIO;
        case proto::kScCapacityExceeded:
          return -ENOSPC;
        case proto::kScReservationConflict:
          return -EBADE;
        case proto::kScInvalidOpcode:
        case proto::kScInvalidField:
        case proto::kScInvalidNamespaceOrFormat:
          return -EOPNOTSUPP;
        default:
          return -EIO;
      }
    case proto::kSctCommandSpecific:
      switch (sc) {
        case 0x80:  // Conflicting Attributes
        case 0x83:  // ONCS not supported (Linux NVME_SC_ONCS_NOT_SUPPORTED)
          return -EOPNOTSUPP;
        case 0x81:  // Invalid Protection Information
          return -EILSEQ;
        case 0x82:  // Attempted Write to Read Only Range
          return -ENODATA;
        default:
          return -EIO;
      }
    case proto::kSctMediaError:
      switch (sc) {
        case 0x82:  // End-to-end Guard Check Error
        case 0x83:  // Application Tag Check Error
        case 0x84:  // Reference Tag Check Error
          return -EILSEQ;
        case proto::kScWriteFault:
        case proto::kScUnrecoveredReadError:
        case 0x85:  // Compare Failure
        case 0x86:  // Access Denied
        case 0x87:  // Deallocated or Unwritten Logical Block
          return -ENODATA;
        default:
          return -EIO;
      }
    case proto::kSctPath:
      return sc == proto::kScHostPathingError ? -ENOLINK : -EIO;
    default:
      return -EIO;
  }
}

}  // namespace nvmf::ublk
