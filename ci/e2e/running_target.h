// SPDX-License-Identifier: BSD-3-Clause
// An in-process nvmf-target on its own thread, for the end-to-end tests that drive both
// libraries in one process: started from TargetOptions, stopped and joined on destruction.
#ifndef NVMF_CI_E2E_RUNNING_TARGET_H_
#define NVMF_CI_E2E_RUNNING_TARGET_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <thread>
#include <utility>

#include "common/log.h"
#include "common/status.h"
#include "target/target.h"

namespace nvmf::e2e {

class RunningTarget {
 public:
  // Creates the target (listening when this returns) and runs it on a new thread; nullptr, with
  // a test failure naming the Status, when creation fails.
  // The log level is WARN from here on (every accept and disconnect at INFO would bury the test
  // output); NVMF_LOG_LEVEL=debug|info|warn|error overrides it.
  static std::unique_ptr<RunningTarget> start(const target::TargetOptions& options) {
    const char* level = std::getenv("NVMF_LOG_LEVEL");
    auto parsed = parse_log_level(level != nullptr ? level : "warn");
    EXPECT_TRUE(parsed.ok()) << "NVMF_LOG_LEVEL=" << level;
    set_log_level(parsed.ok() ? *parsed : LogLevel::kWarn);
    auto created = target::Target::create(options);
    EXPECT_TRUE(created.ok()) << created.status().to_string();
    if (!created.ok()) return nullptr;
    auto t = std::unique_ptr<RunningTarget>(new RunningTarget(std::move(*created)));
    t->thread_ = std::thread([p = t.get()] { p->run_status_ = p->target_->run(); });
    return t;
  }
  // Stops the target, joins its thread and expects run() to have returned ok.
  ~RunningTarget() {
    target_->stop();
    thread_.join();
    EXPECT_TRUE(run_status_.ok()) << run_status_.to_string();
  }
  target::Target& operator*() { return *target_; }
  target::Target* operator->() { return target_.get(); }
  // The thread run() runs on (its CPU affinity is TargetOptions::cpu's business).
  std::thread::native_handle_type native_thread() { return thread_.native_handle(); }

 private:
  explicit RunningTarget(std::unique_ptr<target::Target> t) : target_(std::move(t)) {}
  std::unique_ptr<target::Target> target_;
  std::thread thread_;
  Status run_status_;
};

}  // namespace nvmf::e2e

#endif  // NVMF_CI_E2E_RUNNING_TARGET_H_
