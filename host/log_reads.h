// SPDX-License-Identifier: BSD-3-Clause
// Log pages read over an admin CommandChannel (Get Log Page, Base 2.0 §5.16): the ANA log the
// controller keeps (host/ana.h decodes it) and the Discovery Log Page (host/discover.h).
#ifndef NVMF_HOST_LOG_READS_H_
#define NVMF_HOST_LOG_READS_H_

#include <cstdint>

#include "common/status.h"
#include "host/ana.h"
#include "host/channel.h"
#include "host/discover.h"
#include "proto/nvme.h"

namespace nvmf::host {

// Get Log Page of `bytes` (a multiple of 4, >= 4) from byte `offset` of log `lid`:
// NUMDL/NUMDU = bytes / 4 - 1, LPOL/LPOU = offset. Base 2.0 §5.16.
proto::Sqe get_log_page_sqe(uint8_t lid, uint32_t bytes, uint64_t offset);

// Over an admin channel already connected to the discovery controller and enabled: Identify
// Controller, then the log header (1024 bytes), then the entries in reads of at most 4096 bytes
// at increasing offsets; when GENCTR changed meanwhile, starts again (at most 3 times, as
// nvme-cli). NVMe errors name the command ("Get Log Page 70h at offset 1024: ...").
Result<DiscoveryLog> read_discovery_log(CommandChannel& admin);

// Reads and decodes the whole ANA log page through `ch` (Get Log Page 0Ch, RAE 0: an ANA Change
// notice is enabled again): the header first, then as many 4096-byte windows (LPO) as the group
// descriptors and their NSID lists need, never past ana_log_bytes(id). When it took more than
// one command the header is read again and a moved change count starts over (at most 3 times,
// as the discovery log's GENCTR). Errors: kNvmeError "Get Log Page 0Ch at offset N: <status>",
// kIo for a log that does not fit in ana_log_bytes(id) or fails decode_ana_log().
Result<AnaLog> read_ana_log(CommandChannel& ch, const proto::IdentifyController& id);

}  // namespace nvmf::host

#endif  // NVMF_HOST_LOG_READS_H_
