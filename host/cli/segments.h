// SPDX-License-Identifier: BSD-3-Clause
// Splitting a transfer into uneven pieces, for `nvmf-host write --segments N`: the CLI's way to
// drive scattered (multi-segment) writes through the host library, as a caller with an iovec would.
#ifndef NVMF_HOST_CLI_SEGMENTS_H_
#define NVMF_HOST_CLI_SEGMENTS_H_

#include <cstdint>
#include <vector>

#include "common/status.h"

namespace nvmf::host {

// Most pieces `--segments` accepts: the in-capsule limit (kMaxInCapsuleSegments).
inline constexpr uint32_t kMaxCliSegments = 4;

// Splits `total` bytes into `n` pieces of deliberately uneven sizes, in the ratio 1 : 2 : ... : n
// (rounded down; the last piece takes the rest), so that boundaries generally fall inside LBAs and
// pages. Every piece is at least one byte; sizes sum to `total`. kInvalidArgument when n is 0,
// above kMaxCliSegments, or larger than `total`.
Result<std::vector<uint64_t>> uneven_split(uint64_t total, uint32_t n);

}  // namespace nvmf::host

#endif  // NVMF_HOST_CLI_SEGMENTS_H_
