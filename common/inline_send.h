// SPDX-License-Identifier: BSD-3-Clause
// The single place that decides whether a capsule is posted as an inline send (IBV_SEND_INLINE).
//
// Words: "inline send" is the verbs flag IBV_SEND_INLINE. It is unrelated to "in-capsule data"
// (write data carried in the command capsule after the SQE); see docs/wire-facts.md.
#ifndef NVMF_COMMON_INLINE_SEND_H_
#define NVMF_COMMON_INLINE_SEND_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <string_view>

namespace nvmf {

// How a capsule's send work request is posted.
//
// kInline: the WR carries IBV_SEND_INLINE. ibv_post_send() copies the bytes the SGEs describe
//   into the send queue entry before it returns, so the HCA never DMA-reads them: the SGE's lkey
//   is ignored, the memory may be unregistered (e.g. a stack or plain heap buffer), and it may be
//   reused as soon as ibv_post_send() returns. Only allowed when the total length is at most the
//   QP's max_inline_data as granted at creation (QueuePair::granted_max_inline_data()); posting
//   more fails (typically EINVAL/ENOMEM) or is undefined, depending on the provider.
// kByReference: a normal send; the SGEs must point into a registered MR (valid lkey) and the
//   memory must stay untouched until the send completion.
enum class SendMode { kInline, kByReference };

// The largest inline send this QP may actually post, in bytes: min(effective request, granted).
//
// `requested` is what the caller asked of ibv_create_qp/rdma_create_qp; `granted` is the
// max_inline_data the provider wrote back; `fallback` is true when the first create was refused
// and the QP was created again with max_inline_data 0 (QueuePair). The request caps the grant
// because providers round up or answer a request of 0 with a non-zero size: rxe (Debian 6.1,
// measured by ci/e2e/inline_send_test) writes back 16 bytes per send SGE at least, so 80 for
// the host's 5-SGE QP whether it asked 0, 32 or 64, and 16 for the target's 1-SGE QP asking 0
// or 16. A request of 0 means "never inline send", whatever came back. The grant caps the request
// because a provider might write back less than was asked (ibv_create_qp(3) promises at least the
// request, but the host must not trust that blindly), and an inline post beyond the grant fails.
constexpr uint32_t usable_max_inline_data(uint32_t requested, uint32_t granted, bool fallback) {
  if (fallback || requested == 0) return 0;
  return requested < granted ? requested : granted;
}

// Decides how to post a capsule of `capsule_bytes` bytes (64 for an SQE, 16 for a CQE, plus any
// in-capsule data) on a QP that may inline-send up to `granted_max_inline_data` bytes (pass
// usable_max_inline_data(), i.e. QueuePair::usable_max_inline_data(), not the raw grant).
//
// Inline only when the capsule has no in-capsule data and fits the granted size: a 64-byte SQE
// needs granted >= 64, a 16-byte CQE needs granted >= 16. A capsule with in-capsule data always
// goes by reference: its data lives in a registered buffer and is often larger than any inline
// limit, and copying it on the CPU is what the in-capsule path is meant to avoid anyway.
// 0 (the inline-send fallback happened, or 0 was requested) means never inline.
constexpr SendMode choose_send_mode(uint32_t capsule_bytes, bool has_in_capsule_data,
                                    uint32_t granted_max_inline_data) {
  if (has_in_capsule_data) return SendMode::kByReference;
  if (granted_max_inline_data == 0 || capsule_bytes > granted_max_inline_data) {
    return SendMode::kByReference;
  }
  return SendMode::kInline;
}

// The ibv_send_wr::send_flags bit for `mode`: IBV_SEND_INLINE or 0. OR it into the WR's flags.
constexpr unsigned int send_flags_for(SendMode mode) {
  return mode == SendMode::kInline ? static_cast<unsigned int>(IBV_SEND_INLINE) : 0u;
}

// "inline" or "by-reference", for logs.
std::string_view send_mode_name(SendMode mode);

}  // namespace nvmf

#endif  // NVMF_COMMON_INLINE_SEND_H_
