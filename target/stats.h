// SPDX-License-Identifier: BSD-3-Clause
// TargetStats: a point-in-time copy of the target's counters, as returned by Target::stats().
#ifndef NVMF_TARGET_STATS_H_
#define NVMF_TARGET_STATS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "target/request_state.h"

namespace nvmf::target {

// Command and data counters of one queue, one controller, or the whole target.
// Bytes are payload bytes moved for the host (not capsule or CQE bytes).
struct CounterSnapshot {
  uint64_t commands = 0;                 // capsules received (all opcodes)
  uint64_t errors = 0;                   // completions with a non-zero status
  uint64_t reads = 0;                    // NVM Reads that succeeded
  uint64_t read_bytes = 0;               // bytes RDMA WRITten for them
  uint64_t writes_in_capsule = 0;        // NVM Writes whose data came in the capsule
  uint64_t writes_in_capsule_bytes = 0;  // their bytes
  uint64_t writes_rdma_read = 0;         // NVM Writes whose data needed an RDMA READ
  uint64_t writes_rdma_read_bytes = 0;   // their bytes
  uint64_t flushes = 0;                  // NVM Flushes that succeeded
  // Response capsules (16-byte CQEs) handed to ibv_post_send, by how the SEND was posted
  // (common/inline_send.h): with IBV_SEND_INLINE, or by reference from the registered CQE
  // buffer. Counted just before the post, so a host that has seen the CQE sees the count.
  uint64_t responses_inline = 0;
  uint64_t responses_by_reference = 0;
  // Request states (target/request_state.h, indexed by RequestState): how many times a request
  // entered each state, and how many are in it now (live queues; a freed queue keeps what it
  // had when it was torn down, and totals count live queues only).
  std::array<uint64_t, kRequestStateCount> state_entered{};
  std::array<uint64_t, kRequestStateCount> state_now{};
  // RDMA READs (host data for Writes and Connects): the most outstanding at once on one queue
  // (the maximum over queues in sums), and how many had to wait for a READ credit or send-queue
  // room (in arrival order) before they were posted.
  uint64_t rdma_reads_in_flight_max = 0;
  uint64_t rdma_read_waits = 0;
  // Responses that waited for send-queue room.
  uint64_t send_queue_waits = 0;
  // Commands that waited for a shared data buffer (target/buffer_pool.h).
  uint64_t buffer_waits = 0;
  // Stalls reported: commands outstanding and no completion for TargetOptions::stall_warn_ms,
  // or one request's RDMA READ or response SEND without its work completion that long while
  // other completions went on (each stall counted once, however many WARN lines it got; a
  // transfer stall that turns into a stall of the whole queue, when the host stops sending,
  // counts as two).
  uint64_t stalls = 0;

  CounterSnapshot& operator+=(const CounterSnapshot& other);
  friend bool operator==(const CounterSnapshot&, const CounterSnapshot&) = default;
};

// How often one completion status (CQE status field, phase bit 0) was answered.
struct StatusCount {
  uint16_t status = 0;
  uint64_t count = 0;
};

// One live queue.
struct QueueStats {
  uint16_t cntlid = 0xFFFF;  // 0xFFFF until its Fabrics Connect succeeded
  uint16_t qid = 0;
  uint32_t queue_size = 0;  // entries (hsqsize + 1)
  std::string peer;         // "10.0.0.2:51234"
  uint32_t group = 0;       // the poll group that owns it (--poll-groups; 0 with one)
  // Inline send (IBV_SEND_INLINE) on this queue's QP, bytes: asked, written back by the
  // provider (rxe answers 0 with 16), and the ceiling responses use (0 after the fallback or
  // when 0 was asked; else min(requested, granted)).
  uint32_t requested_max_inline_data = 0;
  uint32_t granted_max_inline_data = 0;
  uint32_t usable_max_inline_data = 0;
  bool inline_fallback = false;  // the first QP create was refused; created again without
  // RDMA READs this queue may have outstanding: the initiator depth given to rdma_accept, the
  // lowest of the host's responder_resources, the device's max_qp_init_rd_atom and
  // TargetOptions::max_rdma_read_depth.
  uint32_t rdma_read_depth = 0;
  uint32_t send_queue_depth = 0;  // send work requests the QP was created for
  // The QP's local ACK timeout once accepted (ibv_query_qp; IBTA encoding, 4.096 us x 2^N;
  // TargetOptions::ack_timeout when set, else rdma_cm's); 0 when the query failed.
  uint8_t ack_timeout = 0;
  CounterSnapshot counters;
};

// One live controller (its queues' counters, freed queues included).
struct ControllerStats {
  uint16_t cntlid = 0;
  std::string hostnqn;
  bool ready = false;      // CSTS.RDY
  uint16_t io_queues = 0;  // I/O queues connected now
  CounterSnapshot counters;
  std::string subnqn;  // the subsystem it belongs to
};

// What the target advertises about in-capsule data (Identify Controller) and how it got there.
struct NegotiationStats {
  bool resolved = false;  // false until a device was seen (bind or first connect)
  int32_t configured_inline_data_size = -1;  // TargetOptions::inline_data_size
  uint32_t in_capsule_data_size = 0;         // effective bytes per capsule (0 = off)
  uint32_t ioccsz = 4;                       // (64 + in_capsule_data_size) / 16
  uint32_t sgls = 0;                         // Identify SGLS
  uint16_t icdoff = 0;
  uint8_t msdbd = 1;
  uint8_t mdts = 0;  // 2^mdts * 4 KiB
  uint32_t max_transfer_bytes = 0;
  std::vector<std::string> warnings;  // adjustments made while resolving
};

// How many freed queues and controllers TargetStats keeps (each).
inline constexpr size_t kFreedStatsKept = 64;

// Everything Target::stats() reports. Totals include queues and controllers already freed.
// Queue resources the target holds now, summed over every queue, and their peaks since start:
// what a host can make it pin by connecting (the scale bench reads them).
struct ResourceStats {
  uint64_t mr_bytes = 0;  // bytes in registered memory regions (ibv_reg_mr lengths)
  uint64_t mr_bytes_peak = 0;
  uint64_t mrs = 0;  // memory regions registered
  // Receive WRs kept posted: each queue's own receive depth (without SRQ, or where the device
  // has none) plus every SRQ's depth.
  uint64_t posted_receives = 0;
  uint64_t posted_receives_peak = 0;
  // Shared receive queues (target/shared_receive_queue.h), summed over devices: how many, their
  // receives (also in posted_receives), how many are posted this instant (the others hold a
  // command capsule until its response) and the fewest ever posted at once, and how often the
  // SRQ limit (depth / 8) was reached (IBV_EVENT_SRQ_LIMIT_REACHED: hosts near RNR).
  uint64_t srqs = 0;
  uint64_t srq_receives = 0;
  // Shared CQs (target/shared_cq.h), over every poll group and device: how many there are now
  // and their entries. Each device's first is made when the group first sees the device and
  // kept; another is made when a queue finds no room and destroyed with its last queue.
  uint64_t cqs = 0;
  uint64_t cq_entries = 0;
  uint64_t srq_posted_now = 0;
  uint64_t srq_posted_low = 0;
  uint64_t srq_limit_events = 0;
  // Shared data buffers (--num-shared-buffers, target/buffer_pool.h), over every device's pool:
  // chunks registered, chunks commands hold now, and the most held at once. With every queue
  // idle or gone, in_use is 0: a chunk still held then is a leak.
  uint64_t shared_buffers = 0;
  uint64_t shared_buffers_in_use = 0;
  uint64_t shared_buffers_in_use_peak = 0;
  // The same per poll group (each group has its own pool per device, of
  // ceil(--num-shared-buffers / --poll-groups) chunks), index = group, up to the last group
  // that has a pool (a group makes its pool at its first Connect).
  struct SharedBuffers {
    uint64_t chunks = 0;
    uint64_t in_use = 0;
    uint64_t in_use_peak = 0;
  };
  std::vector<SharedBuffers> shared_buffers_by_group;
};

// One poll group's IoEngine as it was set up (after the io_uring fallbacks).
struct IoEngineStats {
  uint32_t group = 0;
  std::string name;          // "io_uring" or "threads"
  std::string describe;      // IoEngine::describe(): "io_uring (single issuer, deferred task work)"
  uint32_t setup_flags = 0;  // io_uring_setup(2) flags the kernel accepted (no CQSIZE/R_DISABLED)
  bool fixed_buffers = false;      // READ_FIXED / WRITE_FIXED in use for registered memory
  uint64_t fixed_operations = 0;   // reads and writes submitted with a fixed buffer
  bool iopoll = false;             // the IOPOLL ring exists (IoEngine::iopoll())
  uint64_t polled_operations = 0;  // reads and writes submitted on the IOPOLL ring
};

struct TargetStats {
  CounterSnapshot totals;
  std::vector<StatusCount> errors_by_status;  // non-zero statuses only, ascending
  uint64_t connections_accepted = 0;          // CM connect requests accepted
  uint64_t connections_rejected = 0;          // CM connect requests rejected
  uint64_t disconnections = 0;                // queues torn down
  uint64_t controllers_created = 0;
  uint64_t controllers_freed = 0;
  uint64_t inline_send_fallbacks = 0;  // QPs created without inline send after a refusal
  std::vector<QueueStats> queues;
  std::vector<ControllerStats> controllers;
  // The most recently torn down queues and freed controllers with their final counters, oldest
  // first, at most kFreedStatsKept of each: what a report written at exit can still show.
  std::vector<QueueStats> freed_queues;
  std::vector<ControllerStats> freed_controllers;
  NegotiationStats negotiation;
  ResourceStats resources;
  // One entry per poll group that has an IoEngine (none without file or block-device
  // namespaces), group 0 first.
  std::vector<IoEngineStats> io_engines;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_STATS_H_
