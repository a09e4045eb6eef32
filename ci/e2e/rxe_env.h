// SPDX-License-Identifier: BSD-3-Clause
// Where the soft-RoCE end-to-end tests find their devices: the environment ci/rxe-run exports.
#ifndef NVMF_CI_E2E_RXE_ENV_H_
#define NVMF_CI_E2E_RXE_ENV_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace nvmf::e2e {

// The addresses ci/rxe-run gives the target's and the host's rxe devices.
struct RxeEnv {
  std::string target_addr;  // NVMF_TARGET_ADDR
  std::string host_addr;    // NVMF_HOST_ADDR
};

// Reads NVMF_TARGET_ADDR and NVMF_HOST_ADDR; nullopt when either is unset.
inline std::optional<RxeEnv> rxe_env() {
  const char* target = std::getenv("NVMF_TARGET_ADDR");
  const char* host = std::getenv("NVMF_HOST_ADDR");
  if (target == nullptr || host == nullptr || *target == '\0' || *host == '\0') {
    return std::nullopt;
  }
  return RxeEnv{target, host};
}

// True when NVMF_RXE_REQUIRED=1: a missing device is then a failure, not a skip.
inline bool rxe_required() {
  const char* v = std::getenv("NVMF_RXE_REQUIRED");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace nvmf::e2e

// Fills `env` (an std::optional<RxeEnv>) or ends the test: FAIL under NVMF_RXE_REQUIRED=1,
// otherwise skip naming what was missing. Use at the top of SetUp() or a TEST body.
#define NVMF_REQUIRE_RXE(env)                                                            \
  do {                                                                                   \
    (env) = ::nvmf::e2e::rxe_env();                                                      \
    if (!(env)) {                                                                        \
      if (::nvmf::e2e::rxe_required()) {                                                 \
        FAIL() << "NVMF_RXE_REQUIRED=1 but NVMF_TARGET_ADDR/NVMF_HOST_ADDR are unset";   \
      }                                                                                  \
      GTEST_SKIP() << "needs a soft-RoCE device: NVMF_TARGET_ADDR/NVMF_HOST_ADDR unset " \
                      "(run under ci/rxe-run)";                                          \
    }                                                                                    \
  } while (0)

#endif  // NVMF_CI_E2E_RXE_ENV_H_
