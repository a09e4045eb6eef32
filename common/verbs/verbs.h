// SPDX-License-Identifier: BSD-3-Clause
// Umbrella header for //common/verbs: RAII wrappers for verbs and rdma_cm objects.
//
// Each wrapper has one owner and one destroy path; factories return Result<T> whose errors name
// the verb and errno. Destroy in reverse order of dependence (members of a connection struct
// declared in this order are destroyed correctly by the compiler, last declared first):
//   EventChannel  <- CmId <- QueuePair
//   ProtectionDomain <- MemoryRegion, QueuePair
//   CompletionChannel <- CompletionQueue <- QueuePair
// i.e. QueuePair first; then MemoryRegions, CompletionQueues, CmId (after acking its events);
// then ProtectionDomain, CompletionChannel, EventChannel.
#ifndef NVMF_COMMON_VERBS_VERBS_H_
#define NVMF_COMMON_VERBS_VERBS_H_

#include "common/verbs/address.h"             // IWYU pragma: export
#include "common/verbs/cm_event.h"            // IWYU pragma: export
#include "common/verbs/cm_id.h"               // IWYU pragma: export
#include "common/verbs/completion_channel.h"  // IWYU pragma: export
#include "common/verbs/completion_queue.h"    // IWYU pragma: export
#include "common/verbs/device.h"              // IWYU pragma: export
#include "common/verbs/event_channel.h"       // IWYU pragma: export
#include "common/verbs/fd_wait.h"             // IWYU pragma: export
#include "common/verbs/memory_region.h"       // IWYU pragma: export
#include "common/verbs/protection_domain.h"   // IWYU pragma: export
#include "common/verbs/queue_pair.h"          // IWYU pragma: export

#endif  // NVMF_COMMON_VERBS_VERBS_H_
