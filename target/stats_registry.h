// SPDX-License-Identifier: BSD-3-Clause
// StatsRegistry: the thread-safe bookkeeping behind Target::stats(): live queues and
// controllers, totals of those already freed, connection counts and the negotiation result.
#ifndef NVMF_TARGET_STATS_REGISTRY_H_
#define NVMF_TARGET_STATS_REGISTRY_H_

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "target/counters.h"
#include "target/stats.h"

namespace nvmf::target {

// All methods are thread-safe (one mutex). The event loop calls them on connection and
// controller events only, never per I/O; stats() may be called from any thread.
class StatsRegistry {
 public:
  // A queue was accepted; `counters` must stay valid until remove_queue().
  void add_queue(const QueueCounters* counters, const QueueStats& info);
  // Its Fabrics Connect bound it to controller `cntlid`.
  void set_queue_controller(const QueueCounters* counters, uint16_t cntlid);
  // It is being torn down: its counters move into the totals (and its controller's), and it is
  // kept in TargetStats::freed_queues.
  void remove_queue(const QueueCounters* counters);

  void add_controller(uint16_t cntlid, const std::string& hostnqn, const std::string& subnqn = {});
  void set_controller_ready(uint16_t cntlid, bool ready);
  // Kept in TargetStats::freed_controllers with its counters (freed queues + live ones).
  void remove_controller(uint16_t cntlid);

  void count_accepted();
  void count_rejected();
  void count_inline_send_fallback();
  // A queue registered (or, negative, deregistered) `mr_bytes` of memory in `mrs` regions and
  // keeps `posted_receives` more (fewer) receive WRs posted. Set-up and teardown only.
  void add_resources(int64_t mr_bytes, int64_t mrs, int64_t posted_receives);
  // Shared CQs made (`cqs` > 0) or destroyed (< 0), and entries added by making or growing
  // them or given back by destroying them (ResourceStats::cqs, cq_entries).
  void add_cqs(int64_t cqs, int64_t entries);
  // A device's SRQ: `counters` are read by snapshot() until remove_srq(). Its registered bytes
  // and receives go through add_resources().
  void add_srq(const SrqCounters* counters);
  void remove_srq(const SrqCounters* counters);
  void set_negotiation(const NegotiationStats& negotiation);
  NegotiationStats negotiation() const;

  // The gauges every device's shared buffer pool keeps up to date (event-loop thread writes,
  // snapshot() reads them with relaxed loads): ResourceStats::shared_buffers*.
  // One set per poll group (each group's pools have one writer); the snapshot sums them (the
  // peak: the sum of each group's peak).
  SharedBufferGauges& shared_buffers(size_t group = 0) { return shared_buffers_.at(group); }
  static constexpr size_t kGaugeGroups = 64;  // TargetOptions' kMaxPollGroups

  // The snapshot: live counters read with relaxed loads plus the retired totals; the status
  // counts summed over `statuses` (one per poll group).
  TargetStats snapshot(std::span<const StatusCounters* const> statuses) const;
  TargetStats snapshot(const StatusCounters& statuses) const {
    const StatusCounters* one = &statuses;
    return snapshot({&one, 1});
  }

 private:
  struct LiveQueue {
    QueueStats info;
    const QueueCounters* counters;
  };
  struct LiveController {
    std::string hostnqn;
    bool ready = false;
    CounterSnapshot retired;  // queues of this controller already freed
    std::string subnqn;
  };

  mutable std::mutex mutex_;
  std::array<SharedBufferGauges, kGaugeGroups> shared_buffers_;
  std::map<const QueueCounters*, LiveQueue> queues_;
  std::vector<const SrqCounters*> srqs_;
  std::map<uint16_t, LiveController> controllers_;
  CounterSnapshot retired_;
  TargetStats counts_;                             // connection/controller counts only
  std::deque<QueueStats> freed_queues_;            // at most kFreedStatsKept
  std::deque<ControllerStats> freed_controllers_;  // at most kFreedStatsKept
  NegotiationStats negotiation_;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_STATS_REGISTRY_H_
