// SPDX-License-Identifier: BSD-3-Clause
// RLIMIT_MEMLOCK against the bytes a binary is about to register for RDMA: one refusal line.
#ifndef NVMF_TARGET_MEMLOCK_H_
#define NVMF_TARGET_MEMLOCK_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace nvmf {

// The calling process's locked-memory allowance, as ibv_reg_mr sees it: the kernel pins
// registered pages against the soft RLIMIT_MEMLOCK unless the process has CAP_IPC_LOCK in its
// effective set (root without it is bound too).
struct MemlockLimit {
  bool unlimited = true;      // RLIM_INFINITY, CAP_IPC_LOCK, or getrlimit/capget failed
  uint64_t soft_bytes = 0;    // the soft limit in bytes when !unlimited
  std::string why_unlimited;  // "RLIM_INFINITY", "CAP_IPC_LOCK", ... (for logs and tests)
};

// Reads getrlimit(RLIMIT_MEMLOCK) and capget(): never fails (a failing call counts as
// unlimited, so the check never refuses a start it cannot judge).
MemlockLimit current_memlock_limit();

// "8388608 bytes (8 MiB)": bytes, then MiB (one decimal unless whole; KiB below 1 MiB).
std::string describe_bytes(uint64_t bytes);

// The one line (no newline) a binary prints on stderr before exiting 1 when `needed_bytes`
// (bytes it registers at least) exceeds `limit`; empty when it fits or the limit is unlimited.
// `program` starts the line ("nvmf-target: RLIMIT_MEMLOCK is ...").
std::string memlock_refusal(std::string_view program, uint64_t needed_bytes,
                            const MemlockLimit& limit);

}  // namespace nvmf

#endif  // NVMF_TARGET_MEMLOCK_H_
