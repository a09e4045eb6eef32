// SPDX-License-Identifier: BSD-3-Clause
// One encoding of a work request's kind and index into ibv_send_wr/ibv_recv_wr::wr_id, shared by
// the host's and the target's queues, so that a completion (ibv_wc::wr_id) names what finished.
#ifndef NVMF_COMMON_VERBS_WORK_REQUEST_ID_H_
#define NVMF_COMMON_VERBS_WORK_REQUEST_ID_H_

#include <cstdint>

namespace nvmf::verbs {

// What a work request was posted for. The index it carries is a receive index for kRecv and a
// command slot index for the others.
enum class WrKind : uint8_t {
  kRecv = 1,   // ibv_post_recv of a capsule (target: command capsule; host: response capsule)
  kRead = 2,   // RDMA READ (target: write data from the host)
  kSend = 3,   // SEND of a capsule (target: response; host: command)
  kWrite = 4,  // RDMA WRITE (target: read data to the host)
};

// "recv", "read", "send", "write"; "unknown" for any other value (a corrupt wr_id).
const char* wr_kind_name(WrKind kind);

// wr_id layout (64 bits): bits 63..40 zero, bits 39..32 the kind, bits 31..0 the index.
constexpr uint64_t encode_wr_id(WrKind kind, uint32_t index) {
  return (uint64_t{static_cast<uint8_t>(kind)} << 32) | index;
}

// A decoded wr_id (decode_wr_id).
struct WrId {
  WrKind kind;
  uint32_t index;
};

// The inverse of encode_wr_id. `kind` is the stored byte as is; valid_wr_kind() tells whether it
// is one of the four kinds (a wr_id with bits 63..40 set also yields an invalid kind).
constexpr WrId decode_wr_id(uint64_t wr_id) {
  uint64_t kind = wr_id >> 32;
  return WrId{kind > 0xFF ? WrKind{0} : static_cast<WrKind>(kind), static_cast<uint32_t>(wr_id)};
}

// True for the four kinds above; false for any other byte (a corrupt or foreign wr_id).
constexpr bool valid_wr_kind(WrKind kind) {
  return kind == WrKind::kRecv || kind == WrKind::kRead || kind == WrKind::kSend ||
         kind == WrKind::kWrite;
}

}  // namespace nvmf::verbs

#endif  // NVMF_COMMON_VERBS_WORK_REQUEST_ID_H_
