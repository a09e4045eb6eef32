// SPDX-License-Identifier: BSD-3-Clause
// QueueCounters, StatusCounters and CounterSnapshot arithmetic.
#include "target/counters.h"

#include <algorithm>

#include "common/nvme_status.h"

namespace nvmf::target {

CounterSnapshot& CounterSnapshot::operator+=(const CounterSnapshot& o) {
  commands += o.commands;
  errors += o.errors;
  reads += o.reads;
  read_bytes += o.read_bytes;
  writes_in_capsule += o.writes_in_capsule;
  writes_in_capsule_bytes += o.writes_in_capsule_bytes;
  writes_rdma_read += o.writes_rdma_read;
  writes_rdma_read_bytes += o.writes_rdma_read_bytes;
  flushes += o.flushes;
  responses_inline += o.responses_inline;
  responses_by_reference += o.responses_by_reference;
  for (size_t i = 0; i < state_entered.size(); ++i) {
    state_entered[i] += o.state_entered[i];
    state_now[i] += o.state_now[i];
  }
  rdma_reads_in_flight_max = std::max(rdma_reads_in_flight_max, o.rdma_reads_in_flight_max);
  rdma_read_waits += o.rdma_read_waits;
  send_queue_waits += o.send_queue_waits;
  buffer_waits += o.buffer_waits;
  stalls += o.stalls;
  return *this;
}

CounterSnapshot QueueCounters::snapshot() const {
  CounterSnapshot s;
  s.commands = commands.get();
  s.errors = errors.get();
  s.reads = reads.get();
  s.read_bytes = read_bytes.get();
  s.writes_in_capsule = writes_in_capsule.get();
  s.writes_in_capsule_bytes = writes_in_capsule_bytes.get();
  s.writes_rdma_read = writes_rdma_read.get();
  s.writes_rdma_read_bytes = writes_rdma_read_bytes.get();
  s.flushes = flushes.get();
  s.responses_inline = responses_inline.get();
  s.responses_by_reference = responses_by_reference.get();
  for (size_t i = 0; i < kRequestStateCount; ++i) {
    s.state_entered[i] = state_entered[i].get();
    s.state_now[i] = state_now[i].get();
  }
  s.rdma_reads_in_flight_max = rdma_reads_in_flight_max.get();
  s.rdma_read_waits = rdma_read_waits.get();
  s.send_queue_waits = send_queue_waits.get();
  s.buffer_waits = buffer_waits.get();
  s.stalls = stalls.get();
  return s;
}

void StatusCounters::add(uint16_t status) {
  by_sct_sc_[status_sct(status) * 256u + status_sc(status)].add();
}

std::vector<StatusCount> StatusCounters::snapshot() const {
  const StatusCounters* self = this;
  return snapshot_sum({&self, 1});
}

std::vector<StatusCount> StatusCounters::snapshot_sum(std::span<const StatusCounters* const> all) {
  std::vector<StatusCount> out;
  for (size_t i = 1; i < std::tuple_size_v<decltype(by_sct_sc_)>; ++i) {
    uint64_t n = 0;
    for (const StatusCounters* c : all) n += c->by_sct_sc_[i].get();
    if (n == 0) continue;
    out.push_back({make_status(static_cast<uint8_t>(i / 256), static_cast<uint8_t>(i % 256)), n});
  }
  return out;
}

}  // namespace nvmf::target
