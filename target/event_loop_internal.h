// SPDX-License-Identifier: BSD-3-Clause
// What the files of EventLoop share (event_loop.cc: the loop, its devices and sweeps;
// event_loop_cm.cc: the listener's CM events; event_loop_poll.cc: the poll group's completions;
// event_loop_timers.cc: Connect deadlines, keep-alive expiry and stalls; event_loop_ports.cc:
// port removal). Private to those files.
#ifndef NVMF_TARGET_EVENT_LOOP_INTERNAL_H_
#define NVMF_TARGET_EVENT_LOOP_INTERNAL_H_

#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "common/verbs/cm_id.h"

namespace nvmf::target::event_loop_detail {

constexpr uint64_t kTagCm = 0;
constexpr uint64_t kTagWake = 1;
constexpr uint64_t kTagDeviceBase = 2;
constexpr uint64_t kTagEngine = ~uint64_t{0};
constexpr int kIdleSpins = 64;      // empty polls between two looks at the clock
constexpr int kCmCheckRounds = 64;  // busy rounds between two looks at the CM channel
constexpr int kListenBacklog = 128;
// Work completions taken from a shared CQ by one ibv_poll_cq, and the batches taken from one CQ
// in one round before the loop moves on (the posts those completions led to go out after each
// batch).
constexpr int kPollBatch = 32;
constexpr int kBatchesPerRound = 4;

inline uint32_t page_size() { return static_cast<uint32_t>(::sysconf(_SC_PAGESIZE)); }

// Gives the heap pages freed with a queue back to the system (glibc's malloc_trim). Not under
// ASan or TSan: their allocator owns the heap and does not intercept malloc_trim, so the call
// would reach glibc's unused allocator and initialise it lazily from whichever poll group
// calls first; two groups doing that at once (queues of both torn down together) both attach
// to main_arena with one count, and glibc aborts at the second one's thread exit
// ("__malloc_arena_thread_freeres: a->attached_threads > 0": asan.rxe keep_alive_test with
// NVMF_E2E_POLL_GROUPS=2, in one of three runs).
inline void trim_heap() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return;
#else
  ::malloc_trim(0);
#endif
}

inline std::string peer_of(const verbs::CmId& id) {
  auto addr = id.peer_address();
  return addr.ok() ? addr->to_string() : std::string("(unknown peer)");
}

// The peer's address without its port: the key of the per-peer shares.
inline std::string peer_host_of(const verbs::CmId& id) {
  auto addr = id.peer_address();
  return addr.ok() ? addr->host() : std::string("(unknown peer)");
}

}  // namespace nvmf::target::event_loop_detail

#endif  // NVMF_TARGET_EVENT_LOOP_INTERNAL_H_
