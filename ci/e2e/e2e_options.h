// SPDX-License-Identifier: BSD-3-Clause
// Options of the in-process end-to-end tests: a target on the rxe environment's target address
// and a host pointed at it, with the settings every test shares, so that each test sets only
// what it is about.
#ifndef NVMF_CI_E2E_E2E_OPTIONS_H_
#define NVMF_CI_E2E_E2E_OPTIONS_H_

#include <cstdint>
#include <cstdlib>
#include <string>

#include "ci/e2e/rxe_env.h"
#include "host/options.h"
#include "target/target_options.h"

namespace nvmf::e2e {

// A target listening on env.target_addr, port "0" (ephemeral: test binaries never collide),
// serving `nqn` with a RAM namespace of `ram_bytes` bytes in `lba_size`-byte LBAs. Everything
// else is TargetOptions' default.
inline target::TargetOptions ram_target_options(const RxeEnv& env, const std::string& nqn,
                                                uint64_t ram_bytes, uint32_t lba_size = 512) {
  target::TargetOptions o;
  o.traddr = env.target_addr;
  o.trsvcid = "0";
  o.subnqn = nqn;
  o.ram_size = ram_bytes;
  o.lba_size = lba_size;
  // NVMF_E2E_SRQ=off runs a suite with per-queue receives (--srq off) instead of the shared
  // receive queue (the default; NVMF_E2E_SRQ=on asks for it explicitly), to check it both ways
  // without a second copy of every test (ci/run-rxe-tests.sh runs the suites both ways).
  if (const char* srq = std::getenv("NVMF_E2E_SRQ"); srq != nullptr) {
    o.srq = std::string(srq) == "on";
  }
  // NVMF_E2E_POLL_GROUPS=N runs a suite with N poll groups (--poll-groups N) instead of the
  // default, one per CPU ("auto", as strtoul reads it: 0, kPollGroupsAuto).
  if (const char* groups = std::getenv("NVMF_E2E_POLL_GROUPS"); groups != nullptr) {
    o.poll_groups = static_cast<uint32_t>(std::strtoul(groups, nullptr, 10));
  }
  return o;
}

// Our host from env.host_addr to the target at env.target_addr:`port`, subsystem `nqn`,
// `queue_size` entries per I/O queue, and ctrl_loss_tmo 0: these suites check what the host
// sees when the target stops or drops it, so a lost association fails at once instead of
// reconnecting for nvme-cli's 600 s (recovery_test sets its own). Everything else is
// HostOptions' default.
inline host::HostOptions host_options_for(const RxeEnv& env, uint16_t port, const std::string& nqn,
                                          uint16_t queue_size) {
  host::HostOptions o;
  o.ctrl_loss_tmo_s = 0;
  o.traddr = env.target_addr;
  o.trsvcid = std::to_string(port);
  o.subnqn = nqn;
  o.host_traddr = env.host_addr;
  o.queue_size = queue_size;
  return o;
}

}  // namespace nvmf::e2e

#endif  // NVMF_CI_E2E_E2E_OPTIONS_H_
