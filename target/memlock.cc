// SPDX-License-Identifier: BSD-3-Clause
// RLIMIT_MEMLOCK and CAP_IPC_LOCK of the calling process, and the refusal line when too low.
#include "target/memlock.h"

#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>

namespace nvmf {

MemlockLimit current_memlock_limit() {
  MemlockLimit out;
  rlimit rl{};
  if (::getrlimit(RLIMIT_MEMLOCK, &rl) != 0) {
    out.why_unlimited = "getrlimit failed";
    return out;
  }
  if (rl.rlim_cur == RLIM_INFINITY) {
    out.why_unlimited = "RLIM_INFINITY";
    return out;
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) == 0 &&
      (data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective & CAP_TO_MASK(CAP_IPC_LOCK)) != 0) {
    out.why_unlimited = "CAP_IPC_LOCK";
    return out;
  }
  out.unlimited = false;
  out.soft_bytes = static_cast<uint64_t>(rl.rlim_cur);
  return out;
}

std::string describe_bytes(uint64_t bytes) {
  char unit[48];
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  if (bytes < kMiB) {
    std::snprintf(unit, sizeof(unit), "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  } else if (bytes % kMiB == 0) {
    std::snprintf(unit, sizeof(unit), "%llu MiB", static_cast<unsigned long long>(bytes / kMiB));
  } else {
    std::snprintf(unit, sizeof(unit), "%.1f MiB", static_cast<double>(bytes) / kMiB);
  }
  return std::to_string(bytes) + " bytes (" + unit + ")";
}

std::string memlock_refusal(std::string_view program, uint64_t needed_bytes,
                            const MemlockLimit& limit) {
  if (limit.unlimited || needed_bytes <= limit.soft_bytes) return "";
  return std::string(program) + ": RLIMIT_MEMLOCK is " + describe_bytes(limit.soft_bytes) +
         "; this configuration registers at least " + describe_bytes(needed_bytes) +
         " for RDMA: raise it with 'ulimit -l unlimited' (shell) or 'LimitMEMLOCK=infinity' "
         "(systemd unit); past the hard limit only as root or in /etc/security/limits.conf";
}

}  // namespace nvmf
