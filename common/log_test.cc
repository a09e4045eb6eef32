// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for common/log: format, level filtering, sinks and thread-safe line emission.
#include "common/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace nvmf {
namespace {

// True when `text` has the shape of `pattern`: 'd' stands for one decimal digit, any other
// character for itself ("dddd-dd-dd" matches "2026-12-01").
bool has_shape(const std::string& text, const std::string& pattern) {
  if (text.size() != pattern.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(text[i])) != 0;
    if (pattern[i] == 'd' ? !digit : text[i] != pattern[i]) return false;
  }
  return true;
}

// Captures lines through the sink for one test and restores defaults afterwards.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_log_sink([this](std::string_view line) { lines_.emplace_back(line); });
  }
  void TearDown() override {
    set_log_sink(nullptr);
    set_log_level(LogLevel::kInfo);
  }
  std::vector<std::string> lines_;
};

TEST(LogFormatTest, FormatsUtcMillisecondsLevelTagAndMessage) {
  // 2026-11-30T12:00:00.123Z
  const int64_t ms = 1796040000123;
  EXPECT_EQ(format_log_line(ms, LogLevel::kWarn, "target", "message"),
            "2026-11-30T12:00:00.123Z W target: message\n");
  EXPECT_EQ(format_log_line(ms, LogLevel::kInfo, "", "no tag"),
            "2026-11-30T12:00:00.123Z I no tag\n");
  EXPECT_EQ(format_log_line(0, LogLevel::kError, "x", "y"), "1970-01-01T00:00:00.000Z E x: y\n");
  EXPECT_EQ(format_log_line(5, LogLevel::kDebug, "", "d"), "1970-01-01T00:00:00.005Z D d\n");
}

// A remote peer's bytes in a message (a SUBNQN with ESC and a newline, as a hostile host may send)
// stay on one line and cannot drive the terminal.
TEST(LogFormatTest, ControlCharactersAreEscapedSoALineStaysOneLine) {
  const std::string nqn = "nqn.\x1b[31mred\nINJECTED LINE\t\x7f\r";
  EXPECT_EQ(format_log_line(0, LogLevel::kInfo, "target", "no subsystem '" + nqn + "'"),
            "1970-01-01T00:00:00.000Z I target: no subsystem "
            "'nqn.\\x1b[31mred\\x0aINJECTED LINE\\x09\\x7f\\x0d'\n");
  EXPECT_EQ(format_log_line(0, LogLevel::kInfo, "", "caf\xc3\xa9"),  // UTF-8 passes
            "1970-01-01T00:00:00.000Z I caf\xc3\xa9\n");
}

// Bytes >= 80h used to pass unchecked: invalid UTF-8, a C1 NEL (U+0085, a line break to some
// readers) and U+2028 from a host's NQN now reach the log escaped, still one line of UTF-8.
TEST(LogFormatTest, InvalidUtf8C1AndLineSeparatorAreEscaped) {
  EXPECT_EQ(format_log_line(0, LogLevel::kInfo, "target",
                            "host 'nqn.\xff\xfe\xc2\x85x\xe2\x80\xa8y\xc3' refused"),
            "1970-01-01T00:00:00.000Z I target: host "
            "'nqn.\\xff\\xfe\\u0085x\\u2028y\\xc3' refused\n");
}

TEST_F(LogTest, EmitsOneLinePerStatement) {
  NVMF_LOG(INFO) << "listening on "
                 << "10.0.0.1" << ':' << 4420;
  NVMF_LOG(WARN, "target") << "clamped";
  NVMF_LOG(ERROR, "host") << "failed";
  ASSERT_EQ(lines_.size(), 3u);
  EXPECT_TRUE(has_shape(lines_[0].substr(0, 25), "dddd-dd-ddTdd:dd:dd.dddZ ")) << lines_[0];
  EXPECT_EQ(lines_[0].substr(25), "I listening on 10.0.0.1:4420\n");
  EXPECT_EQ(lines_[1].substr(25), "W target: clamped\n");
  EXPECT_EQ(lines_[2].substr(25), "E host: failed\n");
}

TEST_F(LogTest, LevelFiltersAndSkipsEvaluation) {
  int evaluated = 0;
  auto count = [&evaluated]() { return ++evaluated; };
  NVMF_LOG(DEBUG) << "hidden " << count();
  EXPECT_TRUE(lines_.empty());
  EXPECT_EQ(evaluated, 0);

  set_log_level(LogLevel::kDebug);
  EXPECT_EQ(log_level(), LogLevel::kDebug);
  NVMF_LOG(DEBUG) << "shown " << count();
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0].substr(25), "D shown 1\n");

  set_log_level(LogLevel::kError);
  NVMF_LOG(WARN) << "hidden";
  NVMF_LOG(INFO) << "hidden";
  NVMF_LOG(ERROR) << "shown";
  EXPECT_EQ(lines_.size(), 2u);
  EXPECT_FALSE(log_enabled(LogLevel::kWarn));
  EXPECT_TRUE(log_enabled(LogLevel::kError));
}

TEST_F(LogTest, SafeInUnbracedIfElse) {
  bool flag = false;
  if (flag)
    NVMF_LOG(INFO) << "then";
  else
    NVMF_LOG(INFO) << "else";
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0].substr(25), "I else\n");
}

TEST_F(LogTest, ConcurrentLinesStayWhole) {
  constexpr int kThreads = 8;
  constexpr int kLines = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kLines; ++i) NVMF_LOG(INFO, "t") << "thread " << t << " line " << i;
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(lines_.size(), static_cast<size_t>(kThreads * kLines));
  for (const auto& line : lines_) {
    ASSERT_TRUE(has_shape(line.substr(0, 25), "dddd-dd-ddTdd:dd:dd.dddZ ")) << line;
    const std::string rest = line.substr(25);  // "I t: thread T line L\n", T and L numbers
    int t = -1, i = -1;
    ASSERT_EQ(std::sscanf(rest.c_str(), "I t: thread %d line %d", &t, &i), 2) << line;
    EXPECT_EQ(rest, "I t: thread " + std::to_string(t) + " line " + std::to_string(i) + "\n");
    EXPECT_TRUE(t >= 0 && t < kThreads && i >= 0 && i < kLines) << line;
  }
}

TEST(LogStderrTest, DefaultSinkWritesToStderr) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const int saved = dup(STDERR_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_GE(dup2(fds[1], STDERR_FILENO), 0);
  NVMF_LOG(WARN, "verbs") << "to stderr";
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(fds[1]);
  char buf[256] = {};
  const ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
  close(fds[0]);
  ASSERT_GT(n, 25);
  EXPECT_EQ(std::string(buf + 25, static_cast<size_t>(n) - 25), "W verbs: to stderr\n");
}

TEST(LogLevelTest, ParseAndName) {
  EXPECT_EQ(*parse_log_level("debug"), LogLevel::kDebug);
  EXPECT_EQ(*parse_log_level("INFO"), LogLevel::kInfo);
  EXPECT_EQ(*parse_log_level("warn"), LogLevel::kWarn);
  EXPECT_EQ(*parse_log_level("Warning"), LogLevel::kWarn);
  EXPECT_EQ(*parse_log_level("error"), LogLevel::kError);
  Result<LogLevel> bad = parse_log_level("loud");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("\"loud\""), std::string::npos);
  EXPECT_EQ(log_level_name(LogLevel::kWarn), "warn");
}

}  // namespace
}  // namespace nvmf
