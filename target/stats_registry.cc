// SPDX-License-Identifier: BSD-3-Clause
// StatsRegistry.
#include "target/stats_registry.h"

#include <algorithm>

namespace nvmf::target {
namespace {

template <typename T>
void keep(std::deque<T>& kept, T item) {
  if (kept.size() == kFreedStatsKept) kept.pop_front();
  kept.push_back(std::move(item));
}

}  // namespace

void StatsRegistry::add_queue(const QueueCounters* counters, const QueueStats& info) {
  std::lock_guard lock(mutex_);
  queues_[counters] = LiveQueue{info, counters};
}

void StatsRegistry::set_queue_controller(const QueueCounters* counters, uint16_t cntlid) {
  std::lock_guard lock(mutex_);
  auto it = queues_.find(counters);
  if (it != queues_.end()) it->second.info.cntlid = cntlid;
}

void StatsRegistry::remove_queue(const QueueCounters* counters) {
  std::lock_guard lock(mutex_);
  auto it = queues_.find(counters);
  if (it == queues_.end()) return;
  CounterSnapshot s = counters->snapshot();
  QueueStats freed = it->second.info;
  freed.counters = s;
  s.state_now = {};  // nothing of a freed queue is in flight any more
  retired_ += s;
  auto c = controllers_.find(it->second.info.cntlid);
  if (c != controllers_.end()) c->second.retired += s;
  keep(freed_queues_, std::move(freed));
  queues_.erase(it);
  ++counts_.disconnections;
}

void StatsRegistry::add_controller(uint16_t cntlid, const std::string& hostnqn,
                                   const std::string& subnqn) {
  std::lock_guard lock(mutex_);
  controllers_[cntlid] = LiveController{hostnqn, false, {}, subnqn};
  ++counts_.controllers_created;
}

void StatsRegistry::set_controller_ready(uint16_t cntlid, bool ready) {
  std::lock_guard lock(mutex_);
  auto c = controllers_.find(cntlid);
  if (c != controllers_.end()) c->second.ready = ready;
}

void StatsRegistry::remove_controller(uint16_t cntlid) {
  std::lock_guard lock(mutex_);
  auto c = controllers_.find(cntlid);
  if (c == controllers_.end()) return;
  ControllerStats freed{cntlid, c->second.hostnqn, c->second.ready,
                        0,      c->second.retired, c->second.subnqn};
  for (const auto& [ptr, q] : queues_) {
    if (q.info.cntlid == cntlid) freed.counters += ptr->snapshot();
  }
  keep(freed_controllers_, std::move(freed));
  controllers_.erase(c);
  ++counts_.controllers_freed;
}

void StatsRegistry::count_accepted() {
  std::lock_guard lock(mutex_);
  ++counts_.connections_accepted;
}

void StatsRegistry::count_rejected() {
  std::lock_guard lock(mutex_);
  ++counts_.connections_rejected;
}

void StatsRegistry::count_inline_send_fallback() {
  std::lock_guard lock(mutex_);
  ++counts_.inline_send_fallbacks;
}

void StatsRegistry::add_resources(int64_t mr_bytes, int64_t mrs, int64_t posted_receives) {
  std::lock_guard lock(mutex_);
  ResourceStats& r = counts_.resources;
  r.mr_bytes = static_cast<uint64_t>(static_cast<int64_t>(r.mr_bytes) + mr_bytes);
  r.mrs = static_cast<uint64_t>(static_cast<int64_t>(r.mrs) + mrs);
  r.posted_receives =
      static_cast<uint64_t>(static_cast<int64_t>(r.posted_receives) + posted_receives);
  r.mr_bytes_peak = std::max(r.mr_bytes_peak, r.mr_bytes);
  r.posted_receives_peak = std::max(r.posted_receives_peak, r.posted_receives);
}

void StatsRegistry::add_cqs(int64_t cqs, int64_t entries) {
  std::lock_guard lock(mutex_);
  ResourceStats& r = counts_.resources;
  r.cqs = static_cast<uint64_t>(static_cast<int64_t>(r.cqs) + cqs);
  r.cq_entries = static_cast<uint64_t>(static_cast<int64_t>(r.cq_entries) + entries);
}

void StatsRegistry::add_srq(const SrqCounters* counters) {
  std::lock_guard lock(mutex_);
  srqs_.push_back(counters);
}

void StatsRegistry::remove_srq(const SrqCounters* counters) {
  std::lock_guard lock(mutex_);
  std::erase(srqs_, counters);
}

void StatsRegistry::set_negotiation(const NegotiationStats& negotiation) {
  std::lock_guard lock(mutex_);
  negotiation_ = negotiation;
}

NegotiationStats StatsRegistry::negotiation() const {
  std::lock_guard lock(mutex_);
  return negotiation_;
}

TargetStats StatsRegistry::snapshot(std::span<const StatusCounters* const> statuses) const {
  std::lock_guard lock(mutex_);
  TargetStats out = counts_;
  out.negotiation = negotiation_;
  out.totals = retired_;
  auto& by_group = out.resources.shared_buffers_by_group;
  for (const SharedBufferGauges& g : shared_buffers_) {
    by_group.push_back({g.chunks.get(), g.in_use.get(), g.in_use_peak.get()});
    out.resources.shared_buffers += g.chunks.get();
    out.resources.shared_buffers_in_use += g.in_use.get();
    out.resources.shared_buffers_in_use_peak += g.in_use_peak.get();
  }
  while (!by_group.empty() && by_group.back().chunks == 0) by_group.pop_back();
  std::map<uint16_t, ControllerStats> ctrls;
  for (const auto& [cntlid, c] : controllers_) {
    ctrls[cntlid] = ControllerStats{cntlid, c.hostnqn, c.ready, 0, c.retired, c.subnqn};
  }
  for (const auto& [ptr, q] : queues_) {
    QueueStats qs = q.info;
    qs.counters = ptr->snapshot();
    out.totals += qs.counters;
    auto c = ctrls.find(qs.cntlid);
    if (c != ctrls.end()) {
      c->second.counters += qs.counters;
      if (qs.qid > 0) ++c->second.io_queues;
    }
    out.queues.push_back(std::move(qs));
  }
  for (auto& [cntlid, c] : ctrls) out.controllers.push_back(std::move(c));
  out.freed_queues.assign(freed_queues_.begin(), freed_queues_.end());
  out.freed_controllers.assign(freed_controllers_.begin(), freed_controllers_.end());
  out.errors_by_status = StatusCounters::snapshot_sum(statuses);
  ResourceStats& r = out.resources;
  r.srqs = srqs_.size();
  for (const SrqCounters* c : srqs_) {
    r.srq_receives += c->depth.get();
    r.srq_posted_now += c->posted_now.get();
    r.srq_posted_low += c->posted_low.get();
    r.srq_limit_events += c->limit_events.get();
  }
  return out;
}

}  // namespace nvmf::target
