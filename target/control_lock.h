// SPDX-License-Identifier: BSD-3-Clause
// The control lock: the one mutex that serializes controller, subsystem and port state across
// poll groups (target/event_loop.h). Taken by Connect, Admin and Fabrics commands, queue
// teardown, keep-alive expiry and port removal; never by NVM I/O commands on a connected I/O
// queue, whose only shared reads are the Controller's atomics (enabled, traffic).
#ifndef NVMF_TARGET_CONTROL_LOCK_H_
#define NVMF_TARGET_CONTROL_LOCK_H_

#include <mutex>

namespace nvmf::target {

// Process-wide (several Targets in one process, as in the in-process tests, share it: only
// their control paths are serialized). Recursive: freeing a controller from inside an admin
// command (CC.EN cleared, admin queue teardown) re-enters it.
inline std::recursive_mutex& control_mutex() {
  static std::recursive_mutex mu;
  return mu;
}

using ControlLock = std::lock_guard<std::recursive_mutex>;

}  // namespace nvmf::target

#endif  // NVMF_TARGET_CONTROL_LOCK_H_
