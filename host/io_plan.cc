// SPDX-License-Identifier: BSD-3-Clause
// Transfer planning; see io_plan.h.
#include "host/io_plan.h"

#include <algorithm>
#include <string>

#include "common/nvme_status.h"
#include "common/sgl.h"

namespace nvmf::host {
namespace {

constexpr uint64_t kMaxNlb = 65536;  // NLB is 16 bits, 0-based

Piece piece_of(const DataSegment& seg, size_t offset, uint64_t length) {
  return Piece{reinterpret_cast<uint64_t>(seg.addr) + offset, static_cast<uint32_t>(length),
               seg.lkey, seg.rkey};
}

// Fills plan.pieces with `bytes` from `cursor` without advancing it; false when more than
// `max_pieces` pieces would be needed.
bool gather(std::span<const DataSegment> segments, TransferCursor cursor, uint64_t bytes,
            uint32_t max_pieces, CommandPlan& plan) {
  plan.num_pieces = 0;
  while (bytes > 0) {
    if (plan.num_pieces == max_pieces || cursor.segment >= segments.size()) return false;
    const DataSegment& seg = segments[cursor.segment];
    uint64_t take = std::min<uint64_t>(bytes, seg.length - cursor.offset);
    plan.pieces[plan.num_pieces++] = piece_of(seg, cursor.offset, take);
    bytes -= take;
    cursor.segment++;
    cursor.offset = 0;
  }
  return true;
}

void advance(std::span<const DataSegment> segments, TransferCursor& cursor, uint64_t bytes) {
  cursor.done += bytes;
  while (bytes > 0) {
    uint64_t left = segments[cursor.segment].length - cursor.offset;
    if (bytes < left) {
      cursor.offset += bytes;
      return;
    }
    bytes -= left;
    cursor.segment++;
    cursor.offset = 0;
  }
}

}  // namespace

uint32_t max_command_bytes(uint64_t mdts_bytes, uint32_t lba_size) {
  uint64_t limit = proto::kKeyedSglMaxLength;
  if (mdts_bytes != 0) limit = std::min(limit, mdts_bytes);
  limit = std::min(limit, kMaxNlb * lba_size);
  return static_cast<uint32_t>(limit - limit % lba_size);
}

WritePath choose_write_path(const HostInCapsulePolicy& policy, uint64_t bytes,
                            uint32_t num_pieces) {
  return bytes <= UINT32_MAX && fits_in_capsule(policy, static_cast<uint32_t>(bytes), num_pieces)
             ? WritePath::kInCapsule
             : WritePath::kKeyed;
}

CommandPlan plan_one_piece_write(const HostInCapsulePolicy& policy, const Piece& piece) {
  CommandPlan plan;
  plan.path = choose_write_path(policy, piece.length, 1);
  plan.bytes = piece.length;
  plan.num_pieces = 1;
  plan.pieces[0] = piece;
  return plan;
}

std::span<const Piece> encode_data(proto::Sqe& sqe, const CommandPlan& plan) {
  if (plan.path == WritePath::kInCapsule) {
    encode_in_capsule_sgl(sqe.dptr, 0, plan.bytes);
    return std::span<const Piece>(plan.pieces.data(), plan.num_pieces);
  }
  // plan.bytes <= kKeyedSglMaxLength (the caller's contract), so this cannot fail.
  (void)encode_keyed_sgl(sqe.dptr, plan.pieces[0].addr, plan.bytes, plan.pieces[0].rkey);
  return {};
}

std::string_view write_path_name(WritePath path) {
  return path == WritePath::kInCapsule ? "in-capsule" : "keyed";
}

uint64_t total_bytes(std::span<const DataSegment> segments) {
  uint64_t total = 0;
  for (const DataSegment& seg : segments) total += seg.length;
  return total;
}

Status validate_transfer(std::span<const DataSegment> segments, const TransferLimits& limits) {
  if (limits.lba_size == 0 || limits.max_command_bytes < limits.lba_size) {
    return Status::internal("transfer limits not set (LBA size " + std::to_string(limits.lba_size) +
                            ", max command bytes " + std::to_string(limits.max_command_bytes) +
                            ")");
  }
  for (size_t i = 0; i < segments.size(); ++i) {
    if (segments[i].addr == nullptr || segments[i].length == 0) {
      return Status::invalid_argument("data segment " + std::to_string(i) +
                                      " is empty or has no address");
    }
  }
  uint64_t total = total_bytes(segments);
  if (total == 0) return Status::invalid_argument("transfer of 0 bytes");
  if (total % limits.lba_size != 0) {
    return Status::invalid_argument("transfer of " + std::to_string(total) +
                                    " bytes is not a multiple of the LBA size " +
                                    std::to_string(limits.lba_size));
  }
  return ok_status();
}

Result<CommandPlan> next_write_command(std::span<const DataSegment> segments,
                                       TransferCursor& cursor, const TransferLimits& limits) {
  CommandPlan plan;
  const uint64_t remaining = total_bytes(segments) - cursor.done;
  const uint64_t bytes = std::min<uint64_t>(remaining, limits.max_command_bytes);
  const HostInCapsulePolicy& icd = limits.in_capsule;
  const uint32_t max_pieces = std::min(icd.max_segments, kMaxInCapsuleSegments);
  if (icd.enabled && bytes <= icd.max_bytes && gather(segments, cursor, bytes, max_pieces, plan) &&
      choose_write_path(icd, bytes, plan.num_pieces) == WritePath::kInCapsule) {
    plan.path = WritePath::kInCapsule;
    plan.bytes = static_cast<uint32_t>(bytes);
    advance(segments, cursor, bytes);
    return plan;
  }
  // Keyed: one descriptor (MSDBD 1), so one contiguous region, cut to whole LBAs.
  const DataSegment& seg = segments[cursor.segment];
  const uint64_t seg_left = seg.length - cursor.offset;
  const uint64_t keyed = std::min<uint64_t>(bytes, seg_left) / limits.lba_size * limits.lba_size;
  if (keyed > 0) {
    plan.path = WritePath::kKeyed;
    plan.bytes = static_cast<uint32_t>(keyed);
    plan.num_pieces = 1;
    plan.pieces[0] = piece_of(seg, cursor.offset, keyed);
    advance(segments, cursor, keyed);
    return plan;
  }
  // The next LBA straddles the end of this segment: no keyed descriptor can describe it. Send
  // the largest run of whole LBAs from here that fits in-capsule (one SGE per piece, no copy).
  if (icd.enabled) {
    const uint64_t cap = std::min<uint64_t>(bytes, icd.max_bytes);
    for (uint64_t n = cap / limits.lba_size * limits.lba_size; n > 0; n -= limits.lba_size) {
      if (gather(segments, cursor, n, max_pieces, plan) &&
          choose_write_path(icd, n, plan.num_pieces) == WritePath::kInCapsule) {
        plan.path = WritePath::kInCapsule;
        plan.bytes = static_cast<uint32_t>(n);
        advance(segments, cursor, n);
        return plan;
      }
    }
  }
  const std::string why =
      icd.enabled ? "it needs more than " + std::to_string(max_pieces) + " in-capsule segments"
                  : "in-capsule data is off (" + icd.why_off + ")";
  return Status::invalid_argument(
      "data segment " + std::to_string(cursor.segment) + " ends inside the LBA at byte " +
      std::to_string(cursor.done) + " of the transfer and " + why +
      ": a keyed command (MSDBD 1) carries one contiguous run of whole LBAs");
}

Status check_write_plan(std::span<const DataSegment> segments, const TransferLimits& limits) {
  NVMF_RETURN_IF_ERROR(validate_transfer(segments, limits));
  const uint64_t total = total_bytes(segments);
  TransferCursor cursor;
  while (cursor.done < total) {
    Result<CommandPlan> plan = next_write_command(segments, cursor, limits);
    if (!plan.ok()) return plan.status();
  }
  return ok_status();
}

CommandPlan next_read_command(const DataSegment& segment, TransferCursor& cursor,
                              const TransferLimits& limits) {
  CommandPlan plan;
  uint64_t bytes = std::min<uint64_t>(segment.length - cursor.offset, limits.max_command_bytes);
  plan.path = WritePath::kKeyed;
  plan.bytes = static_cast<uint32_t>(bytes);
  plan.num_pieces = 1;
  plan.pieces[0] = piece_of(segment, cursor.offset, bytes);
  cursor.offset += bytes;
  cursor.done += bytes;
  return plan;
}

Status cqe_status(const proto::Cqe& cqe, std::string_view what) {
  if (status_is_success(cqe.status)) return ok_status();
  return Status::nvme_error(cqe.status, std::string(what) + ": " + status_name(cqe.status));
}

}  // namespace nvmf::host
