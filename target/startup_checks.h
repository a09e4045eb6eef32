// SPDX-License-Identifier: BSD-3-Clause
// What nvmf-target works out from its options before it opens any device: the memory it will
// register for RDMA (checked against RLIMIT_MEMLOCK) and the open-admission notice.
#ifndef NVMF_TARGET_STARTUP_CHECKS_H_
#define NVMF_TARGET_STARTUP_CHECKS_H_

#include <cstdint>
#include <string>

#include "target/target_options.h"

namespace nvmf::target {

// A lower bound, in bytes, of the memory the target registers (ibv_reg_mr, pinned against
// RLIMIT_MEMLOCK) by the time it has accepted its first Connect, from `options` alone (no
// device), with `groups` poll groups (choose_poll_groups()) and `page_size` bytes a page:
//  - one poll group's share of the shared data buffers (num_shared_buffers / groups chunks of
//    4 KiB << mdts), registered at the first Connect; with num_shared_buffers 0 the first
//    (admin) queue's own 32 data buffers instead;
//  - the receive areas: with --srq on, every group's SRQ (its share of max_srq_depth, at most
//    what a shared CQ holds, x (64 bytes + the in-capsule pages)), registered when the ports
//    start listening; with --srq off, the first queue's own receives. (A device without SRQs
//    makes the target fall back to per-queue receives, which this bound then overstates: the
//    check asks for more than that device needs, never less.)
//  - its Connect page and CQE buffers.
// The in-capsule size counts at most one page (a device may clamp larger sizes). The RAM
// namespace (--ram-size) is plain memory, never registered, so it does not count; nor does the
// optional io_uring registration of --uring-fixedbufs (it falls back when refused).
uint64_t target_memlock_bytes(const TargetOptions& options, uint32_t groups, uint32_t page_size);

// The one start-up line (no newline) for a target that admits any host: every subsystem of a
// command-line target (no --config) does. Empty when some subsystem restricts its hosts.
// E.g. "any host may connect to nqn...:target: the command line admits every host NQN; to
// restrict it, use --config FILE with the subsystem's allowed_hosts and attr allow_any_host 0".
std::string any_host_notice(const TargetOptions& options);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_STARTUP_CHECKS_H_
