// SPDX-License-Identifier: BSD-3-Clause
// Controller bring-up and teardown steps over a CommandChannel (no verbs): Fabrics Connect,
// Property Get/Set, enable and wait for CSTS.RDY, Identify, Set Features, shutdown.
#ifndef NVMF_HOST_BRINGUP_H_
#define NVMF_HOST_BRINGUP_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "common/status.h"
#include "host/channel.h"
#include "host/commands.h"
#include "host/identify.h"
#include "host/options.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"

namespace nvmf::host {

// Sleeps between property polls; tests replace it.
using SleepFn = std::function<void(std::chrono::milliseconds)>;
// std::this_thread::sleep_for(ms).
void default_sleep(std::chrono::milliseconds ms);

// Sends Connect for `qid` (SQSIZE = queue_size - 1, KATO on the admin queue) with `data`, and
// returns the CNTLID from DW0. Connect data goes in-capsule when `allow_in_capsule` and the
// channel allows it (I/O queues), keyed otherwise. kNvmeError "Connect (qid N): Connect Invalid
// Parameters (...), invalid field at Connect data byte 256" on a failed Connect. Base 2.0 §6.3.
// `authentication_required`, when given, is set to the response's AUTHREQ.ATR: the queue must
// authenticate (host/auth.h) before any other command.
Result<uint16_t> fabrics_connect(CommandChannel& ch, uint16_t qid, uint16_t queue_size,
                                 uint32_t kato_ms, const proto::ConnectData& data,
                                 bool allow_in_capsule, bool* authentication_required = nullptr);

// Property Get (4 or 8 bytes, `eight_bytes`; the value from CQE DW0, and DW1 for 8 bytes) /
// Property Set (4 bytes) of the property at byte offset `ofst` (CAP 0h, VS 8h, CC 14h, CSTS
// 1Ch). A CQE status other than success is kNvmeError naming the offset and the status;
// transport failures as CommandChannel::run. Base 2.0 §3.1.3 (properties), §6.5, §6.6.
Result<uint64_t> property_get(CommandChannel& ch, uint32_t ofst, bool eight_bytes);
Status property_set(CommandChannel& ch, uint32_t ofst, uint32_t value);

// Writes CC = kCcEnable and polls CSTS every 10 ms until RDY = 1, for at most CAP.TO (500 ms
// units, from `cap`). CSTS.CFS = 1 → kIo "controller fatal status (CSTS 0x...)"; expiry →
// kTimeout naming CAP.TO. Base 2.0 §3.5.1 "Memory-based Controller Initialization".
Status enable_controller(CommandChannel& ch, uint64_t cap, const SleepFn& sleep = default_sleep);

// Controller reset, first half: writes CC = `cc` with EN cleared and polls CSTS every 10 ms
// until RDY = 0, for at most CAP.TO (`cap`). Base 2.0 §3.7.2 "Controller Reset" (CC.EN 1 to 0:
// the controller deletes its I/O queues and completes outstanding AERs). kTimeout naming
// CAP.TO when RDY stays 1.
Status disable_controller(CommandChannel& ch, uint32_t cc, uint64_t cap,
                          const SleepFn& sleep = default_sleep);

// Writes CC.SHN = 01b (keeping EN) and polls CSTS until SHST = 10b, for at most `timeout_ms`.
// Base 2.0 §3.6.2. kTimeout naming the last SHST.
Status shutdown_controller(CommandChannel& ch, uint32_t cc, int timeout_ms,
                           const SleepFn& sleep = default_sleep);

// Identify Controller (validated: IOCCSZ/IORCSZ/KAS), Active Namespace list → first nsid,
// Identify Namespace → LBA size and capacity.
Result<IdentifyResult> identify_all(CommandChannel& ch);

// Set Features Number of Queues asking for `wanted` I/O queues; returns how many may be used,
// min(wanted, granted). kNvmeError when refused.
Result<uint16_t> set_number_of_queues(CommandChannel& ch, uint16_t wanted);

// Set Features Asynchronous Event Configuration (FID 0Bh, Base 2.0 §5.27.1.7): the notices in
// `aec` (proto::kAec* bits) are sent as Asynchronous Events. kNvmeError when refused.
Status set_async_event_config(CommandChannel& ch, uint32_t aec);

// The Active Namespace ID list (Identify CNS 02h from NSID 0: at most 1024 NSIDs, ascending),
// each of the first `identify_at_most` identified for its size, the rest kSizeUnknown.
Result<NamespaceSizes> scan_namespaces(CommandChannel& ch, size_t identify_at_most);

// After a Namespace Attribute Changed event: Identify Namespace of each NSID in `changed` (the
// Changed Namespace List; {0xFFFFFFFF}, its overflow, means every active and every known NSID)
// against `known`, which is updated: a zero NSZE or an Invalid Namespace status is a removal
// (reported only for a known NSID), an NSID not known is added, a known one with another NSZE
// resized, else changed. Other errors are returned (naming the NSID).
Result<std::vector<NamespaceChange>> rescan_namespaces(CommandChannel& ch, NamespaceSizes& known,
                                                       std::span<const uint32_t> changed);

// Keep Alive command.
Status keep_alive(CommandChannel& ch);

}  // namespace nvmf::host

#endif  // NVMF_HOST_BRINGUP_H_
