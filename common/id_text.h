// SPDX-License-Identifier: BSD-3-Clause
// 16-byte identifiers (NGUID, UUID, host identifier) as text, both ways: the forms nvme-cli,
// nvmetcli and SPDK print and accept.
#ifndef NVMF_COMMON_ID_TEXT_H_
#define NVMF_COMMON_ID_TEXT_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace nvmf {

using Id16 = std::array<uint8_t, 16>;

// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" or 32 hex digits (dashes anywhere are skipped, either
// case) to 16 bytes in text order. kInvalidArgument otherwise, quoting the text.
Result<Id16> parse_id_text(std::string_view text);
// The 8-4-4-4-12 lower-case form (a UUID as nvme-cli and nvmetcli print it).
std::string uuid_text(const Id16& id);
// 32 upper-case hex digits (an NGUID as SPDK prints it).
std::string hex_text(const Id16& id);

}  // namespace nvmf

#endif  // NVMF_COMMON_ID_TEXT_H_
