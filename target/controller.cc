// SPDX-License-Identifier: BSD-3-Clause
// Controller.
#include "target/controller.h"

#include <algorithm>
#include <utility>

#include "proto/nvme.h"

namespace nvmf::target {

Controller::Controller(uint16_t cntlid, std::string hostnqn, const std::array<uint8_t, 16>& hostid,
                       uint32_t kato_ms, uint16_t max_io_queues, uint32_t io_queue_size,
                       uint32_t version)
    : cntlid_(cntlid),
      hostnqn_(std::move(hostnqn)),
      hostid_(hostid),
      kato_ms_(kato_ms),
      keep_alive_at_(Clock::now()),
      max_io_queues_(max_io_queues),
      registers_(io_queue_size, version),
      queues_(static_cast<size_t>(max_io_queues) + 1, nullptr) {}

void Controller::set_kato_ms(uint32_t ms, Clock::time_point now) {
  kato_ms_ = ms;
  keep_alive_at_ = now;
  traffic_.store(false, std::memory_order_relaxed);
}

std::optional<Controller::Clock::time_point> Controller::keep_alive_deadline() const {
  if (kato_ms_ == 0) return std::nullopt;
  // nvmet_start_keep_alive_timer: DIV_ROUND_UP(kato, 1000) seconds.
  return keep_alive_at_ + std::chrono::seconds((uint64_t{kato_ms_} + 999) / 1000);
}

bool Controller::restart_for_traffic(Clock::time_point now) {
  if (!traffic_.exchange(false, std::memory_order_relaxed)) return false;
  keep_alive_at_ = now;
  return true;
}

bool Controller::enabled() const {
  return (registers_.cc() & proto::kCcEn) != 0 && registers_.ready();
}

bool Controller::post_event(uint32_t dw0, uint32_t aec_bit) {
  if ((async_event_config_ & aec_bit) == 0) return false;
  const auto log_page = static_cast<uint8_t>(dw0 >> 16);
  if (std::find(masked_log_pages_.begin(), masked_log_pages_.end(), log_page) !=
          masked_log_pages_.end() ||
      std::find(events_.begin(), events_.end(), dw0) != events_.end()) {
    return false;
  }
  masked_log_pages_.push_back(log_page);
  events_.push_back(dw0);
  return true;
}

std::optional<uint32_t> Controller::take_event() {
  if (events_.empty()) return std::nullopt;
  const uint32_t dw0 = events_.front();
  events_.erase(events_.begin());
  return dw0;
}

void Controller::log_page_read(uint8_t log_page) { std::erase(masked_log_pages_, log_page); }

uint32_t Controller::grant_queues(uint16_t nsqr, uint16_t ncqr) {
  granted_sq_ = static_cast<uint16_t>(std::min<uint32_t>(nsqr + 1u, max_io_queues_));
  granted_cq_ = static_cast<uint16_t>(std::min<uint32_t>(ncqr + 1u, max_io_queues_));
  return granted_queues_dw0();
}

uint32_t Controller::granted_queues_dw0() const {
  uint32_t sq = granted_sq_ != 0 ? granted_sq_ : max_io_queues_;
  uint32_t cq = granted_cq_ != 0 ? granted_cq_ : max_io_queues_;
  return ((cq - 1) << 16) | (sq - 1);
}

uint16_t Controller::io_qid_limit() const {
  if (granted_sq_ == 0 || granted_cq_ == 0) return max_io_queues_;
  return std::min(granted_sq_, granted_cq_);
}

CommandProcessor* Controller::queue(uint16_t qid) const {
  return qid < queues_.size() ? queues_[qid] : nullptr;
}

void Controller::attach(uint16_t qid, CommandProcessor* q) {
  if (qid < queues_.size()) queues_[qid] = q;
}

void Controller::detach(uint16_t qid, const CommandProcessor* q) {
  if (qid < queues_.size() && queues_[qid] == q) queues_[qid] = nullptr;
}

std::vector<CommandProcessor*> Controller::io_queues() const {
  std::vector<CommandProcessor*> out;
  for (size_t qid = 1; qid < queues_.size(); ++qid) {
    if (queues_[qid] != nullptr) out.push_back(queues_[qid]);
  }
  return out;
}

void Controller::note_namespace_changed(uint32_t nsid) {
  auto& list = changed_namespaces_;
  if (list.size() == 1 && list.front() == 0xFFFFFFFF) return;  // overflowed already
  if (std::find(list.begin(), list.end(), nsid) != list.end()) return;
  if (list.size() == kMaxChangedNamespaces) {
    list.assign(1, 0xFFFFFFFF);
    return;
  }
  list.push_back(nsid);
}

std::vector<uint32_t> Controller::take_changed_namespaces() {
  return std::exchange(changed_namespaces_, {});
}

}  // namespace nvmf::target
