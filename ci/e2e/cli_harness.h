// SPDX-License-Identifier: BSD-3-Clause
// Shared harness of the end-to-end tests that run nvmf-target and nvmf-host as separate
// processes, as users do: runfiles, a target started in the background on an ephemeral port and
// stopped with SIGTERM, and host command lines pointed at it.
#ifndef NVMF_CI_E2E_CLI_HARNESS_H_
#define NVMF_CI_E2E_CLI_HARNESS_H_

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ci/e2e/rxe_env.h"

namespace nvmf::e2e {

inline std::string runfile(const std::string& rel) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return std::string(srcdir ? srcdir : ".") + "/nvmf_rdma/" + rel;
}

inline std::string tmpdir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t ? t : "/tmp";
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs a shell command line, returns its exit status (or -1 when it did not exit normally).
inline int run(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

inline std::string sha256(const std::string& path) {
  std::string out = path + ".sha";
  if (run("sha256sum < '" + path + "' | cut -d' ' -f1 > '" + out + "'") != 0) return "";
  return slurp(out);
}

class CliFixture : public ::testing::Test {
 protected:
  explicit CliFixture(std::string nqn) : nqn_(std::move(nqn)) {}

  void SetUp() override { NVMF_REQUIRE_RXE(env_); }

  void TearDown() override {
    if (target_pid_ > 0) {
      kill(target_pid_, SIGKILL);
      waitpid(target_pid_, nullptr, 0);
    }
  }

  // Starts nvmf-target in the background on `trsvcid` ("0": an ephemeral port; a number: that
  // port, e.g. to restart a killed target where its hosts expect it); returns the port it
  // listens on (0 on failure).
  int start_target(const std::vector<std::string>& extra, const std::string& trsvcid = "0") {
    // One log per test, removed first: a stale "listening on" line must never be read.
    target_log_ = tmpdir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                  ".target.log";
    unlink(target_log_.c_str());
    std::vector<std::string> args = {
        runfile("target/nvmf-target"), "-a", env_->target_addr, "-s", trsvcid, "-n", nqn_};
    // NVMF_E2E_SRQ=on|off: --srq for the target processes too, as for the in-process targets
    // (ci/e2e/e2e_options.h).
    if (const char* srq = std::getenv("NVMF_E2E_SRQ"); srq != nullptr) {
      args.insert(args.end(), {"--srq", std::string(srq) == "on" ? "on" : "off"});
    }
    // NVMF_E2E_POLL_GROUPS=N: --poll-groups N for them too, unless the test gives its own (a
    // figure defined for one group).
    const bool own_groups = std::find(extra.begin(), extra.end(), "--poll-groups") != extra.end();
    if (const char* groups = std::getenv("NVMF_E2E_POLL_GROUPS");
        groups != nullptr && !own_groups) {
      args.insert(args.end(), {"--poll-groups", groups});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    target_pid_ = fork();
    if (target_pid_ == 0) {
      FILE* log = std::freopen(target_log_.c_str(), "w", stdout);
      if (log == nullptr || dup2(fileno(stdout), STDERR_FILENO) < 0) _exit(127);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    const std::string marker = "listening on ";
    for (int i = 0; i < 300; ++i) {
      std::string log = slurp(target_log_);
      size_t at = log.find(marker);
      if (at != std::string::npos) {
        size_t colon = log.find_last_of(':', log.find('\n', at));
        return std::atoi(log.c_str() + colon + 1);
      }
      if (waitpid(target_pid_, nullptr, WNOHANG) == target_pid_) {
        target_pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "nvmf-target did not start:\n" << slurp(target_log_);
    return 0;
  }

  // SIGTERM, then the exit status (0 = clean stop).
  int stop_target() {
    kill(target_pid_, SIGTERM);
    int status = 0;
    waitpid(target_pid_, &status, 0);
    target_pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // SIGKILL, as a crash: no shutdown, no CM disconnect of its own (the kernel tears its
  // connections down).
  void kill_target() {
    kill(target_pid_, SIGKILL);
    waitpid(target_pid_, nullptr, 0);
    target_pid_ = -1;
  }

  std::string host(const std::string& sub, int port, const std::string& args) {
    return "timeout 300 '" + runfile("host/nvmf-host") + "' " + sub + " -a " + env_->target_addr +
           " -s " + std::to_string(port) + " -w " + env_->host_addr + " -n " + nqn_ + " " + args;
  }

  std::optional<RxeEnv> env_;
  pid_t target_pid_ = -1;
  std::string target_log_;
  std::string nqn_;  // the subsystem the target serves and the host connects to
};

}  // namespace nvmf::e2e

#endif  // NVMF_CI_E2E_CLI_HARNESS_H_
