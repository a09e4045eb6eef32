// SPDX-License-Identifier: BSD-3-Clause
// FakeTarget: a port with the discovery subsystem and one NVM subsystem on a small RAM namespace,
// as Target sets them up, for the fuzzers that drive FakeQueues against it.
#ifndef NVMF_FUZZ_FAKE_TARGET_H_
#define NVMF_FUZZ_FAKE_TARGET_H_

#include <memory>
#include <string_view>

#include "common/wire_text.h"
#include "target/cm_request.h"
#include "target/counters.h"
#include "target/namespace.h"
#include "target/port.h"
#include "target/stats_registry.h"
#include "target/subsystem.h"
#include "target/testing/fake_queue.h"

namespace nvmf::fuzz {

// The shared in-memory transport (target/testing/fake_queue.h).
using target::testing::FakeQueue;
using target::testing::require;

// The fuzzers' log sink: every log line is one line of safe text, whatever the peer sent
// (common/wire_text.h).
inline void check_log_line(std::string_view line) {
  require(!line.empty() && line.back() == '\n', "a log line without its newline");
  require(is_safe_wire_text(line.substr(0, line.size() - 1)),
          "a log line with control characters or invalid UTF-8");
}

inline constexpr char kFuzzSubnqn[] = "nqn.2024-01.io.nvmf-rdma:fuzz";
// The one host allowed on kFuzzSubnqn (allow_any_host 0); any other host may only discover.
inline constexpr char kAllowedHost[] = "nqn.2014-08.org.nvmexpress:uuid:allowed";
inline constexpr char kOtherHost[] = "nqn.2014-08.org.nvmexpress:uuid:other";

// Small limits keep one fuzz input cheap (the namespace is made once per process): 8-entry admin
// queues, 16-entry I/O queues, two I/O queues per controller, MDTS 2 (16 KiB), 8 KiB of in-capsule
// data, a 64 KiB namespace of 512-byte LBAs.
struct FakeTarget {
  FakeTarget();
  ~FakeTarget();

  target::CmLimits cm_limits() const;

  target::Namespace* ns;  // shared by every FakeTarget of the process
  target::StatsRegistry registry;
  target::StatusCounters statuses;
  std::unique_ptr<target::Subsystem> discovery;
  std::unique_ptr<target::Subsystem> nvm;
  std::unique_ptr<target::Port> port;
};

}  // namespace nvmf::fuzz

#endif  // NVMF_FUZZ_FAKE_TARGET_H_
