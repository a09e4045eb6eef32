// SPDX-License-Identifier: BSD-3-Clause
// SharedCq: which CQ a new queue joins, and making and growing them.
#include "target/shared_cq.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/verbs/device.h"
#include "target/device_context.h"
#include "target/stats_registry.h"

namespace nvmf::target {
namespace {

int cq_limit(const DeviceContext& dev) { return std::min(dev.attr.max_cqe, kSharedCqEntries); }
int srq_reserve(const DeviceContext& dev) {
  return dev.srq != nullptr ? static_cast<int>(dev.srq->depth()) : 0;
}

Result<SharedCq*> make_shared_cq(DeviceContext& dev, int need, StatsRegistry& registry) {
  const int reserved = srq_reserve(dev);
  const int limit = cq_limit(dev);
  if (reserved + need > limit) {
    return Status::resource_exhausted(
        "a CQ of " + std::to_string(limit) + " entries (the device's max_cqe " +
        std::to_string(dev.attr.max_cqe) + ") cannot hold the SRQ's " + std::to_string(reserved) +
        " receives and a queue's " + std::to_string(need) + " work requests; lower " +
        "--max-srq-depth");
  }
  NVMF_ASSIGN_OR_RETURN(
      auto cq, verbs::CompletionQueue::create(
                   dev.context, shared_cq_first_size(reserved, need, limit), &dev.channel));
  dev.cqs.push_back(std::make_unique<SharedCq>(std::move(cq), reserved));
  registry.add_cqs(1, dev.cqs.back()->cq.cqe());
  return dev.cqs.back().get();
}

}  // namespace

Status ensure_shared_cq(DeviceContext& dev, StatsRegistry& registry) {
  if (!dev.cqs.empty()) return ok_status();
  return make_shared_cq(dev, 256, registry).status();
}

Result<SharedCq*> join_shared_cq(DeviceContext& dev, int need, StatsRegistry& registry) {
  std::vector<int> free;
  free.reserve(dev.cqs.size());
  // A CQ made before the device had its SRQ keeps no room for it: nobody joins it any more.
  auto usable = [&dev](const SharedCq& c) { return !c.broken && c.reserved >= srq_reserve(dev); };
  for (const auto& c : dev.cqs) free.push_back(usable(*c) ? c->free_cqes : -1);
  SharedCq* cq = nullptr;
  if (size_t pick = pick_shared_cq(free, need); pick < dev.cqs.size()) cq = dev.cqs[pick].get();
  for (size_t i = 0; cq == nullptr && i < dev.cqs.size(); ++i) {
    SharedCq& c = *dev.cqs[i];
    const int size = shared_cq_grown_size(c.cq.cqe(), c.free_cqes, need, cq_limit(dev));
    if (!usable(c) || size == c.cq.cqe()) continue;
    const int before = c.cq.cqe();
    if (Status st = c.cq.resize(size); !st.ok()) {
      NVMF_LOG(WARN, "target") << "device " << verbs::device_name(dev.context)
                               << ": growing a shared CQ of " << before << " entries to " << size
                               << ": " << st.to_string() << "; making another";
      continue;
    }
    c.free_cqes += c.cq.cqe() - before;
    registry.add_cqs(0, c.cq.cqe() - before);
    if (c.free_cqes >= need) cq = &c;
  }
  if (cq == nullptr) {
    NVMF_ASSIGN_OR_RETURN(cq, make_shared_cq(dev, need, registry));
  }
  cq->free_cqes -= need;
  ++cq->queues;
  return cq;
}

void leave_shared_cq(DeviceContext& dev, SharedCq& cq, int need, StatsRegistry& registry) {
  cq.free_cqes += need;
  --cq.queues;
  if (cq.queues > 0 || dev.cqs.empty() || dev.cqs.front().get() == &cq) return;
  const int entries = cq.cq.cqe();
  std::erase_if(dev.cqs, [&cq](const std::unique_ptr<SharedCq>& c) { return c.get() == &cq; });
  registry.add_cqs(-1, -entries);
}

size_t pick_shared_cq(std::span<const int> free_cqes, int need) {
  for (size_t i = 0; i < free_cqes.size(); ++i) {
    if (free_cqes[i] >= need) return i;
  }
  return free_cqes.size();
}

int shared_cq_grown_size(int cqe, int free, int need, int limit) {
  if (free >= need) return cqe;
  if (static_cast<int64_t>(free) + limit - cqe < need) return cqe;
  int64_t size = cqe;
  while (free + size - cqe < need) size = size * 2 < limit ? size * 2 : limit;
  return static_cast<int>(size);
}

}  // namespace nvmf::target
