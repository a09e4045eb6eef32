// SPDX-License-Identifier: BSD-3-Clause
// LogLimiter: at most a few log lines per second for each kind, so that a host that keeps
// sending what the target refuses (CM requests over a limit, bad Connects), or keeps connecting
// and disconnecting, cannot flood the log.
#ifndef NVMF_TARGET_LOG_LIMITER_H_
#define NVMF_TARGET_LOG_LIMITER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace nvmf::target {

// Thread-safe (a mutex; refusals are never on the I/O path). Keys name a kind of refusal, not
// an instance ("connect 0x4182", "cm reject 6"), so the map stays small.
class LogLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  // `burst` lines per `interval` for each key (at least 1).
  explicit LogLimiter(Clock::duration interval = std::chrono::seconds(1), uint32_t burst = 1)
      : interval_(interval), burst_(burst == 0 ? 1 : burst) {}

  // True when a line for `key` may be written at `now`. A key's first line opens a window of
  // `interval`; `burst` lines are allowed in it, the rest refused; the first line at or after
  // its end opens the next window. `*suppressed` (optional) gets how many lines for `key` were
  // refused since the last one allowed (to append "N more not logged").
  bool allow(std::string_view key, Clock::time_point now, uint64_t* suppressed = nullptr);

 private:
  struct Entry {
    Clock::time_point window_start;
    uint32_t lines = 0;  // allowed in the window
    uint64_t suppressed = 0;
  };
  const Clock::duration interval_;
  const uint32_t burst_;
  std::mutex mu_;
  std::map<std::string, Entry, std::less<>> entries_;
};

// The process's limiter for the target's refusal lines (CM rejects, refused Connects, limits):
// one line a second per kind.
LogLimiter& refusal_log_limiter();

// Lines a second, per kind, of connection_log_limiter(): a Linux host's admin queue and 8 I/O
// queues (nvme connect -i 8) from each of a few hosts connecting at once are all logged.
inline constexpr uint32_t kConnectionLogBurst = 32;

// The process's limiter for the per-connection INFO lines a host can cause at will by connecting
// and disconnecting (CM accepted, queue disconnected, queue connected, controller created and
// freed): kConnectionLogBurst lines a second per kind.
LogLimiter& connection_log_limiter();

// " (N more like it in the last second not logged)" when `suppressed` > 0, else "".
std::string suppressed_note(uint64_t suppressed);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_LOG_LIMITER_H_
