// SPDX-License-Identifier: BSD-3-Clause
// Minimal leveled logging to stderr for setup, teardown and errors. Not for the fast path.
//
//   NVMF_LOG(INFO) << "listening on " << addr;
//   NVMF_LOG(WARN, "target") << "clamping inline_data_size to " << n;
//
// emits one line per statement, written with a single write() call:
//   2026-11-30T12:00:00.123Z W target: clamping inline_data_size to 8192
// The timestamp is UTC with milliseconds; the letter is D, I, W or E; the "tag: " part is present
// only when a component tag is given. Statements below the global level are not formatted at
// all (their << operands are not evaluated).
#ifndef NVMF_COMMON_LOG_H_
#define NVMF_COMMON_LOG_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>

#include "common/status.h"

namespace nvmf {

// Severity of a log line, lowest first; a line is emitted when its level >= log_level().
enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// Sets the global minimum level (default kInfo). Thread-safe.
void set_log_level(LogLevel level);
// The current minimum level. Thread-safe (a relaxed atomic load).
LogLevel log_level();
// True when a statement at `level` would be emitted.
inline bool log_enabled(LogLevel level);

// Parses "debug", "info", "warn"/"warning", "error" (case-insensitive), for --log-level options.
Result<LogLevel> parse_log_level(std::string_view text);
// "debug", "info", "warn", "error".
std::string_view log_level_name(LogLevel level);

// Receives each finished line, '\n' included. Called under the logging mutex, so a sink sees
// whole lines one at a time and must not log itself.
using LogSink = std::function<void(std::string_view line)>;
// Replaces the destination of all lines (tests capture output this way). An empty sink restores
// the default: one write(2, ...) per line to stderr.
void set_log_sink(LogSink sink);

// Formats one line: "<timestamp> <letter> [tag: ]message\n". `unix_ms` is milliseconds since
// the epoch. Exposed for tests.
std::string format_log_line(int64_t unix_ms, LogLevel level, std::string_view tag,
                            std::string_view message);

namespace internal {

// Collects one statement's text and emits it as one line when destroyed.
class LogMessage {
 public:
  LogMessage(LogLevel level, std::string_view tag = {}) : level_(level), tag_(tag) {}
  ~LogMessage();
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;

  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::string_view tag_;
  std::ostringstream stream_;
};

// Swallows the stream so NVMF_LOG can be a single expression (safe in an unbraced if/else).
struct LogVoidify {
  void operator&(std::ostream&) {}
};

// Names for NVMF_LOG(LEVEL); token pasting keeps macros named DEBUG or ERROR from interfering.
inline constexpr LogLevel kLogLevelDEBUG = LogLevel::kDebug;
inline constexpr LogLevel kLogLevelINFO = LogLevel::kInfo;
inline constexpr LogLevel kLogLevelWARN = LogLevel::kWarn;
inline constexpr LogLevel kLogLevelERROR = LogLevel::kError;

extern std::atomic<int> g_log_level;  // A LogLevel; read relaxed, so the check is one load.

}  // namespace internal

inline bool log_enabled(LogLevel level) {
  return static_cast<int>(level) >= internal::g_log_level.load(std::memory_order_relaxed);
}

}  // namespace nvmf

// NVMF_LOG(LEVEL) or NVMF_LOG(LEVEL, "tag"); LEVEL is DEBUG, INFO, WARN or ERROR. The tag must
// outlive the statement (a string literal or a string that lives across the statement).
#define NVMF_LOG(level, ...)                                                               \
  !::nvmf::log_enabled(::nvmf::internal::kLogLevel##level)                                 \
      ? (void)0                                                                            \
      : ::nvmf::internal::LogVoidify() &                                                   \
            ::nvmf::internal::LogMessage(::nvmf::internal::kLogLevel##level __VA_OPT__(, ) \
                                             __VA_ARGS__)                                  \
                .stream()

#endif  // NVMF_COMMON_LOG_H_
