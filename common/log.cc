// SPDX-License-Identifier: BSD-3-Clause
// Leveled logging: line formatting, the global level, and the sink (stderr by default).
#include "common/log.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <utility>

#include "common/wire_text.h"

namespace nvmf {
namespace internal {
std::atomic<int> g_log_level{static_cast<int>(LogLevel::kInfo)};
}  // namespace internal

namespace {

std::mutex& sink_mutex() {
  static std::mutex* const mu = new std::mutex;
  return *mu;
}

// Guarded by sink_mutex(). Never destroyed, so logging from static destructors stays safe.
LogSink& sink() {
  static LogSink* const s = new LogSink;
  return *s;
}

// One write() per line, so lines from several threads (or processes) do not interleave.
void write_stderr(std::string_view line) {
  while (!line.empty()) {
    ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    line.remove_prefix(static_cast<size_t>(n));
  }
}

char level_letter(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return 'D';
    case LogLevel::kInfo:
      return 'I';
    case LogLevel::kWarn:
      return 'W';
    case LogLevel::kError:
      return 'E';
  }
  return '?';
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != b[i]) return false;
  }
  return true;
}

}  // namespace

void set_log_level(LogLevel level) {
  internal::g_log_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

LogLevel log_level() {
  return static_cast<LogLevel>(internal::g_log_level.load(std::memory_order_relaxed));
}

Result<LogLevel> parse_log_level(std::string_view text) {
  if (iequals(text, "debug")) return LogLevel::kDebug;
  if (iequals(text, "info")) return LogLevel::kInfo;
  if (iequals(text, "warn") || iequals(text, "warning")) return LogLevel::kWarn;
  if (iequals(text, "error")) return LogLevel::kError;
  return Status::invalid_argument("log level \"" + std::string(text) +
                                  "\": expected debug, info, warn or error");
}

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "unknown";
}

void set_log_sink(LogSink new_sink) {
  std::lock_guard<std::mutex> lock(sink_mutex());
  sink() = std::move(new_sink);
}

std::string format_log_line(int64_t unix_ms, LogLevel level, std::string_view tag,
                            std::string_view message) {
  time_t secs = static_cast<time_t>(unix_ms / 1000);
  int ms = static_cast<int>(unix_ms % 1000);
  if (ms < 0) {  // Before 1970: keep the millisecond field positive.
    ms += 1000;
    --secs;
  }
  tm utc{};
  gmtime_r(&secs, &utc);
  char stamp[48];
  std::snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %c ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, ms,
                level_letter(level));
  std::string line(stamp);
  if (!tag.empty()) {
    line += tag;
    line += ": ";
  }
  // One line per statement whatever the text holds: a peer's bytes (an NQN from a Connect, say)
  // must not start a forged line, drive the terminal or reorder what a reader sees. Control
  // characters, DEL and invalid UTF-8 become \xNN, C1 controls, U+2028/2029 and bidirectional
  // overrides \uNNNN (common/wire_text.h); valid UTF-8 passes.
  line += escape_wire_text(message);
  line += '\n';
  return line;
}

namespace internal {

LogMessage::~LogMessage() {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  const std::string line = format_log_line(now_ms, level_, tag_, stream_.view());
  std::lock_guard<std::mutex> lock(sink_mutex());
  if (sink()) {
    sink()(line);
  } else {
    write_stderr(line);
  }
}

}  // namespace internal
}  // namespace nvmf
