// SPDX-License-Identifier: BSD-3-Clause
// Bytes from the wire are data: a host NQN with invalid UTF-8, control
// characters, a C1 control, U+2028 and a bidirectional override connects to nvmf-target (run as
// users run it, a separate process with --json); its log stays one line of safe text per line
// and the --json report written at exit is valid JSON naming the NQN escaped. Unescaped, the
// report writer throws at exit (nlohmann_json type_error 316) and the log passes the raw bytes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "ci/e2e/cli_harness.h"
#include "common/wire_text.h"

namespace nvmf::e2e {
namespace {

using nlohmann::json;

constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:hostile-strings";
// printf(1) escapes for the NQN's bytes: FF and a lone 80 (invalid UTF-8), ESC, a newline,
// C2 85 (C1 NEL), E2 80 A8 (U+2028), E2 80 AE (U+202E, right-to-left override), and E2 82
// (a sequence cut short at the end).
constexpr char kHostileNqnPrintf[] =
    "nqn.2014-08.org.nvmexpress:uuid:\\377\\200\\033[31m\\n\\302\\205\\342\\200\\250\\342\\200"
    "\\256x\\342\\202";
// The same NQN as escape_wire_text writes it, in logs and in the report.
constexpr char kEscapedNqn[] =
    "nqn.2014-08.org.nvmexpress:uuid:\\xff\\x80\\x1b[31m\\x0a\\u0085\\u2028\\u202ex\\xe2\\x82";

class HostileStringsTest : public CliFixture {
 protected:
  HostileStringsTest() : CliFixture(kNqn) {}

  std::string hostile_hostnqn_arg() const {
    return std::string("--hostnqn \"$(printf '") + kHostileNqnPrintf + "')\"";
  }

  // Every line the target wrote is safe text (one line per statement, valid UTF-8).
  void expect_log_lines_safe() {
    std::istringstream log(slurp(target_log_));
    std::string line;
    int n = 0;
    while (std::getline(log, line)) {
      ++n;
      EXPECT_TRUE(is_safe_wire_text(line)) << "target log line " << n << ": " << line;
    }
    EXPECT_GT(n, 0);
  }
};

TEST_F(HostileStringsTest, HostNqnWithInvalidUtf8ReachesLogAndJsonReportEscaped) {
  const std::string report = tmpdir() + "/hostile-strings-report.json";
  int port = start_target({"--ram-size", "1m", "--json", report});
  ASSERT_GT(port, 0);
  const std::string identify = tmpdir() + "/hostile-identify.json";
  int rc = run(host("identify", port, "--json " + hostile_hostnqn_arg() + " > '" + identify + "'"));
  EXPECT_EQ(rc, 0) << slurp(identify) << slurp(target_log_);
  json id;
  ASSERT_NO_THROW(id = json::parse(slurp(identify))) << slurp(identify);
  EXPECT_EQ(id["host"]["hostnqn"], kEscapedNqn);

  // Discovery with the same NQN: the discovery controller logs it too, and the log page's JSON
  // stays valid.
  const std::string discover = tmpdir() + "/hostile-discover.json";
  rc = run("timeout 300 '" + runfile("host/nvmf-host") + "' discover -a " + env_->target_addr +
           " -s " + std::to_string(port) + " -w " + env_->host_addr + " --json " +
           hostile_hostnqn_arg() + " > '" + discover + "'");
  EXPECT_EQ(rc, 0) << slurp(discover);
  json disc;
  ASSERT_NO_THROW(disc = json::parse(slurp(discover))) << slurp(discover);
  EXPECT_EQ(disc["numrec"], 2) << disc.dump(2);

  ASSERT_EQ(stop_target(), 0) << "the target must write its report and exit 0:\n"
                              << slurp(target_log_);
  const std::string text = slurp(report);
  json j;
  ASSERT_NO_THROW(j = json::parse(text)) << text;
  int found = 0;
  for (const auto& c : j["per_controller"]) found += c["hostnqn"] == kEscapedNqn ? 1 : 0;
  EXPECT_EQ(found, 2) << "the NVM and the discovery controller, each named escaped:\n"
                      << j["per_controller"].dump(2);
  expect_log_lines_safe();
  EXPECT_NE(slurp(target_log_).find(std::string("created for ") + kEscapedNqn), std::string::npos)
      << slurp(target_log_);
}

}  // namespace
}  // namespace nvmf::e2e
