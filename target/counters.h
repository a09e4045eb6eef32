// SPDX-License-Identifier: BSD-3-Clause
// Relaxed atomic counters written by the event-loop thread and read by stats() from any thread.
#ifndef NVMF_TARGET_COUNTERS_H_
#define NVMF_TARGET_COUNTERS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "target/request_state.h"
#include "target/stats.h"

namespace nvmf::target {

// One 64-bit counter with a single writer (the event loop) and any number of readers. add() is
// a relaxed load and store, not a locked read-modify-write: cheap on the I/O path, and exact as
// long as only one thread writes.
class Counter {
 public:
  void add(uint64_t n = 1) {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  uint64_t get() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// A level with a single writer (the event loop): set() and get() are relaxed; add()/sub() are
// a load and a store (exact with one writer).
class Gauge {
 public:
  void set(uint64_t v) { value_.store(v, std::memory_order_relaxed); }
  void add(uint64_t n = 1) { set(get() + n); }
  void sub(uint64_t n = 1) { set(get() - n); }
  uint64_t get() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// The shared data-buffer pools (target/buffer_pool.h) of every device, as ResourceStats reports
// them: chunks registered, chunks held by commands now, and the most ever held at once.
struct SharedBufferGauges {
  Gauge chunks;
  Gauge in_use;
  Gauge in_use_peak;
};

// The counters of one queue; see CounterSnapshot for their meaning.
struct QueueCounters {
  Counter commands;
  Counter errors;
  Counter reads;
  Counter read_bytes;
  Counter writes_in_capsule;
  Counter writes_in_capsule_bytes;
  Counter writes_rdma_read;
  Counter writes_rdma_read_bytes;
  Counter flushes;
  Counter responses_inline;
  Counter responses_by_reference;
  // Request states (target/request_state.h), indexed by RequestState.
  std::array<Counter, kRequestStateCount> state_entered;
  std::array<Gauge, kRequestStateCount> state_now;
  Gauge rdma_reads_in_flight_max;
  Counter rdma_read_waits;
  Counter send_queue_waits;
  Counter buffer_waits;
  // Stalls the queue's StallWatch reported (target/stall_watch.h).
  Gauge stalls;

  // Moves one request's count from state `from` to state `to`.
  void count_move(RequestState from, RequestState to) {
    state_now[static_cast<size_t>(from)].sub();
    state_now[static_cast<size_t>(to)].add();
    state_entered[static_cast<size_t>(to)].add();
  }

  CounterSnapshot snapshot() const;
};

// One shared receive queue (target/shared_receive_queue.h); written by the event loop (the
// limit events by the device's async event thread, their only writer), read by
// StatsRegistry::snapshot() from any thread.
struct SrqCounters {
  Gauge depth;           // receives it was created with (all posted when idle)
  Gauge posted_now;      // posted this instant
  Gauge posted_low;      // fewest ever posted at once
  Counter limit_events;  // IBV_EVENT_SRQ_LIMIT_REACHED seen
  Gauge limit;           // srq_limit armed (receives)
};

// Completions per status field (SCT and SC; DNR, M, CRD and P ignored), per poll group.
class StatusCounters {
 public:
  void add(uint16_t status);
  // Non-zero counts, ascending by status (reported with DNR clear).
  std::vector<StatusCount> snapshot() const;
  // The same over several (one per poll group, each with its own writer), summed per status.
  static std::vector<StatusCount> snapshot_sum(std::span<const StatusCounters* const> all);

 private:
  std::array<Counter, 8 * 256> by_sct_sc_;  // index SCT * 256 + SC
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_COUNTERS_H_
