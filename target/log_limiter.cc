// SPDX-License-Identifier: BSD-3-Clause
// LogLimiter.
#include "target/log_limiter.h"

namespace nvmf::target {

bool LogLimiter::allow(std::string_view key, Clock::time_point now, uint64_t* suppressed) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    entries_.emplace(std::string(key), Entry{now, 1, 0});
    if (suppressed != nullptr) *suppressed = 0;
    return true;
  }
  Entry& e = it->second;
  if (now - e.window_start >= interval_) {
    e.window_start = now;
    e.lines = 0;
  }
  if (e.lines >= burst_) {
    ++e.suppressed;
    return false;
  }
  ++e.lines;
  if (suppressed != nullptr) *suppressed = e.suppressed;
  e.suppressed = 0;
  return true;
}

LogLimiter& refusal_log_limiter() {
  static LogLimiter limiter;
  return limiter;
}

LogLimiter& connection_log_limiter() {
  static LogLimiter limiter(std::chrono::seconds(1), kConnectionLogBurst);
  return limiter;
}

std::string suppressed_note(uint64_t suppressed) {
  if (suppressed == 0) return "";
  return " (" + std::to_string(suppressed) + " more like it since the last such line not logged)";
}

}  // namespace nvmf::target
