// SPDX-License-Identifier: BSD-3-Clause
// The host's reading of Asymmetric Namespace Access (Base 2.0 §8.1): the ANA log page (Log
// Identifier 0Ch, Base 2.0 §5.16.1.13) decoded and checked.
#ifndef NVMF_HOST_ANA_H_
#define NVMF_HOST_ANA_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/nvme.h"

namespace nvmf::host {

// proto::ana_state_name(), or "state XXh" for a value that is no ANA state.
std::string ana_state_text(uint8_t state);

struct AnaGroup {
  uint32_t grpid = 0;
  uint64_t change_count = 0;
  uint8_t state = 0;
  std::vector<uint32_t> nsids;  // as listed (empty with RGO)
};

struct AnaLog {
  uint64_t change_count = 0;
  std::vector<AnaGroup> groups;  // in log order
  // The group listing `nsid`, or null.
  const AnaGroup* group_of_nsid(uint32_t nsid) const;
};

// Decodes an ANA log page of `bytes` (what a Get Log Page returned: trailing bytes past the
// last descriptor are ignored). kIo naming the fault when it does not hold together: a header
// or descriptor past the end, NGRPS above `anagrpmax`, a group ID 0, above `anagrpmax` or
// listed twice, a state that is none of the five, an NSID 0 or listed in two groups (Linux's
// nvme_parse_ana_log refuses the same).
Result<AnaLog> decode_ana_log(std::span<const uint8_t> bytes, uint32_t anagrpmax);

// The log's size as Linux sizes its read (nvme_mpath_init_identify): the header, NANAGRPID
// descriptors and one NSID per possible namespace (MNAN, else NN), in bytes.
uint64_t ana_log_bytes(const proto::IdentifyController& id);

}  // namespace nvmf::host

#endif  // NVMF_HOST_ANA_H_
