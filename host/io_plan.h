// SPDX-License-Identifier: BSD-3-Clause
// Pure planning of data transfers: how a read or write over caller segments is cut into NVMe
// commands (MDTS, keyed SGL and NLB limits) and whether each goes in-capsule or keyed. No verbs.
#ifndef NVMF_HOST_IO_PLAN_H_
#define NVMF_HOST_IO_PLAN_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/in_capsule.h"
#include "common/status.h"
#include "proto/nvme.h"

namespace nvmf::host {

// A piece of registered memory (Controller::allocate_buffer(), segment_of()): the local key for
// SGEs, the remote key for keyed SGL descriptors. Lengths in bytes. It may be sent keyed or
// in-capsule, so it carries both keys.
struct DataSegment {
  void* addr = nullptr;
  size_t length = 0;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
};

// Limits for cutting a transfer into commands.
struct TransferLimits {
  uint32_t lba_size = 512;         // bytes
  uint32_t max_command_bytes = 0;  // per command, a multiple of lba_size (max_command_bytes())
  HostInCapsulePolicy in_capsule;  // writes only (common/in_capsule.h)
};

// Bytes one command may move: MDTS (`mdts_bytes`, 0 = no limit), the keyed SGL 24-bit length
// (16 MiB - 1), and NLB's 16 bits (65536 blocks), rounded down to whole LBAs.
// Base 2.0 §5.17.2.1 (MDTS), §4.3.2 (keyed length), NVM CS 1.0 §3.2.6 (NLB).
uint32_t max_command_bytes(uint64_t mdts_bytes, uint32_t lba_size);

// How a write's data reaches the target: inside the command capsule (SGL Data Block, offset
// subtype) or fetched by the target's RDMA READ (keyed SGL). Base 2.0 §4.3.2; RDMA 1.0 §3.
enum class WritePath : uint8_t { kInCapsule, kKeyed };
std::string_view write_path_name(WritePath path);  // "in-capsule" / "keyed"

// One contiguous piece of registered memory a command uses.
struct Piece {
  uint64_t addr = 0;
  uint32_t length = 0;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
};

// One command of a transfer: `bytes` (whole LBAs) over `num_pieces` pieces. Keyed commands use
// exactly one piece (one Keyed SGL Data Block descriptor); in-capsule ones up to
// kMaxInCapsuleSegments (one SGE each after the SQE).
struct CommandPlan {
  WritePath path = WritePath::kKeyed;
  uint32_t bytes = 0;
  uint32_t num_pieces = 0;
  std::array<Piece, kMaxInCapsuleSegments> pieces{};
};

// Where the next command of a transfer starts. Zero-initialise to start.
struct TransferCursor {
  size_t segment = 0;  // index into the segments
  size_t offset = 0;   // bytes into that segment
  uint64_t done = 0;   // bytes planned so far
};

// Checks a transfer before planning: limits sane, at least one byte, every segment non-empty
// with an address, total a multiple of lba_size. kInvalidArgument naming the problem.
Status validate_transfer(std::span<const DataSegment> segments, const TransferLimits& limits);

// Total bytes of `segments`.
uint64_t total_bytes(std::span<const DataSegment> segments);

// The host's one decision between in-capsule data and a keyed SGL for a command that moves
// `bytes` towards the controller in `num_pieces` pieces (Write; Connect data on I/O queues):
// in-capsule when fits_in_capsule() accepts them (common/in_capsule.h: the Linux host's rule),
// keyed otherwise. Every host path (Controller::write, the bench, Queue::run) asks this.
WritePath choose_write_path(const HostInCapsulePolicy& policy, uint64_t bytes, uint32_t num_pieces);

// One command moving the contiguous `piece` (whole command data, at most
// proto::kKeyedSglMaxLength bytes) towards the controller: path from choose_write_path().
CommandPlan plan_one_piece_write(const HostInCapsulePolicy& policy, const Piece& piece);

// Encodes SGL1 of `sqe` for a planned command and returns the pieces to post after the SQE:
// in-capsule: Data Block, subtype Offset, offset 0, length plan.bytes, and the plan's pieces
// (one SGE each); keyed: one Keyed SGL Data Block (pieces[0].addr, plan.bytes, pieces[0].rkey)
// and no pieces. plan.bytes must not exceed proto::kKeyedSglMaxLength (every planner keeps it
// there). NVMe-oF 1.1 §7.3.2 (SGL use in capsules), Base 2.0 §4.3.2.
std::span<const Piece> encode_data(proto::Sqe& sqe, const CommandPlan& plan);

// Plans the next Write command from `cursor` and advances it. Like the Linux host: the command
// covers min(remaining, max_command_bytes) and goes in-capsule when choose_write_path() accepts
// its byte count and piece count. Otherwise it is keyed: one Keyed SGL
// Data Block (our targets and Linux advertise MSDBD 1), so one contiguous region of whole LBAs,
// cut at the end of the current segment and rounded down to whole LBAs.
// Pieces of any size: when the next LBA straddles a segment boundary (no keyed descriptor can
// describe it), the largest run of whole LBAs from there that fits in-capsule is sent in-capsule,
// one SGE per piece, no bounce copy. When in-capsule data is off or that LBA spans more pieces
// than the segment limit, kInvalidArgument naming the segment and the byte: refusing is the
// correct answer (SPDK's host refuses a multi-SGE payload to an MSDBD 1 target the same way);
// check_write_plan() finds it before anything is sent. Call validate_transfer() first; no
// allocation.
Result<CommandPlan> next_write_command(std::span<const DataSegment> segments,
                                       TransferCursor& cursor, const TransferLimits& limits);

// validate_transfer(), then plans the whole write without sending it, so a write that cannot be
// sent (see next_write_command) is refused before its first command. O(commands), no allocation.
Status check_write_plan(std::span<const DataSegment> segments, const TransferLimits& limits);

// Plans the next Read command into `segment` (keyed, one piece) and advances `cursor`.
CommandPlan next_read_command(const DataSegment& segment, TransferCursor& cursor,
                              const TransferLimits& limits);

// Ok when the CQE's status is success; otherwise kNvmeError carrying the status field, with the
// message "<what>: <status_name>", e.g. "Read at LBA 123: LBA Out of Range (SCT 0x0 SC 0x80,
// DNR)".
Status cqe_status(const proto::Cqe& cqe, std::string_view what);

}  // namespace nvmf::host

#endif  // NVMF_HOST_IO_PLAN_H_
