// LogLimiter: at most one log line per second for each kind of refusal, so that a host that
// keeps sending what the target refuses (CM requests over a limit, bad Connects) cannot flood
// the log.
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
  explicit LogLimiter(Clock::duration interval = std::chrono::seconds(1)) : interval_(interval) {}

  // True when a line for `key` may be written at `now`: the first time, and then once `interval`
  // has passed since the last line allowed. `*suppressed` (optional) gets how many lines for
  // `key` were refused since the last one allowed (to append "N more not logged").
  bool allow(std::string_view key, Clock::time_point now, uint64_t* suppressed = nullptr);

 private:
  struct Entry {
    Clock::time_point last;
    uint64_t suppressed = 0;
  };
  const Clock::duration interval_;
  std::mutex mu_;
  std::map<std::string, Entry, std::less<>> entries_;
};

// The process's limiter for the target's refusal lines (CM rejects, refused Connects, limits).
LogLimiter& refusal_log_limiter();

// " (N more like it in the last second not logged)" when `suppressed` > 0, else "".
std::string suppressed_note(uint64_t suppressed);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_LOG_LIMITER_H_
