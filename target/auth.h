// SPDX-License-Identifier: BSD-3-Clause
// The controller's side of DH-HMAC-CHAP in-band authentication, one transaction per queue: the
// messages of Authentication Send are checked and answered through Authentication Receive, as
// Base 2.0 §8.13.5 orders them and nvmet answers them. No RDMA and no NVMe command here: the
// command processor moves the bytes.
#ifndef NVMF_TARGET_AUTH_H_
#define NVMF_TARGET_AUTH_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/dhchap.h"

namespace nvmf::target {

// What a host must prove, from the config (nvmetcli's hosts[].dhchap_key, dhchap_ctrl_key,
// dhchap_hash, dhchap_dhgroup). `hash` and `dhgroup` are the ones the controller uses: a host
// that does not offer them is refused (Failure1 hash / DH group unusable), never moved to a
// weaker one (nvmet falls back to the host's first offer instead).
struct HostKey {
  dhchap::Secret key;
  std::optional<dhchap::Secret> ctrl_key;  // set: bidirectional, the controller proves itself
  dhchap::Hash hash = dhchap::Hash::kSha256;
  dhchap::DhGroup dhgroup = dhchap::DhGroup::kNull;
};
// Host NQN -> its key; a host without an entry is not authenticated.
using HostKeys = std::map<std::string, HostKey, std::less<>>;

// Largest message an Authentication Send may carry (TL): a Reply with two 64-byte values and an
// ffdhe8192 public value is 1168 bytes; a Negotiate with more descriptors than DH-HMAC-CHAP's one
// is refused anyway.
inline constexpr uint32_t kAuthMaxSendBytes = 4096;

// One queue's authentication. Messages in the wrong order, with the wrong transaction identifier,
// truncated, oversized or not parseable fail the transaction: the next Authentication Receive
// returns AUTH_Failure1 with the reason's explanation, and the queue stays unauthenticated until
// a new AUTH_Negotiate succeeds (the transport's Connect deadline tears a queue down that does
// not get there). A new AUTH_Negotiate is accepted before any transaction, after a failed one and
// after a successful one (re-authentication: the queue stays authenticated until it fails), not
// in the middle of one; at most kMaxTransactionsWithoutSuccess of them in a row fail.
inline constexpr uint32_t kMaxTransactionsWithoutSuccess = 8;

class AuthResponder {
 public:
  // `hostnqn` and `subnqn` (the queue's Connect) enter the responses.
  AuthResponder(const HostKey& key, std::string hostnqn, std::string subnqn);

  // The host's key as the configuration has it now, given before each AUTH_Negotiate (a key
  // changed or removed by a new configuration applies from the next transaction on, as nvmet
  // reads it again at each Negotiate). nullopt: the host has no key any more, the transaction
  // fails.
  void set_key(std::optional<HostKey> key);
  const std::string& hostnqn() const { return hostnqn_; }

  // The data of an Authentication Send. Its command succeeds whatever the message (a failure is
  // answered by Failure1 at the next Receive), as nvmet does; AUTH_Failure2 from the host ends
  // the transaction failed.
  void send(std::span<const uint8_t> message);
  // The data for an Authentication Receive of allocation length `al`: the message due now
  // (Challenge, Success1 or Failure1), written to `out`, its length returned. With no message
  // due (a Receive out of sequence) the transaction fails and this Receive gets its Failure1. A
  // message longer than `al` is cut to `al` bytes (the host asked for less).
  uint32_t receive(uint32_t al, std::span<uint8_t> out);

  // The queue may carry other commands: a transaction succeeded (and no later one failed).
  bool authenticated() const { return authenticated_; }
  // The explanation code of the last failure (proto::kAuthFailure*), 0 when none; and its words.
  uint8_t failure() const { return failure_; }
  std::string_view failure_reason() const { return failure_reason_; }
  // Transactions that failed (a Failure1 due or sent, or the host's Failure2), since the start.
  uint32_t failures() const { return failures_; }
  // The hash and DH group of the current or last transaction.
  dhchap::Hash hash() const { return hash_; }
  dhchap::DhGroup dhgroup() const { return dhgroup_; }

 private:
  enum class Step : uint8_t {
    kIdle,           // waiting for AUTH_Negotiate
    kSendChallenge,  // Negotiate accepted: the next Receive gets the Challenge
    kAwaitReply,     // Challenge sent
    kSendSuccess1,   // Reply checked: the next Receive gets Success1
    kAwaitSuccess2,  // bidirectional: Success1 sent
    kSendFailure1,   // failed: the next Receive gets Failure1
  };
  void fail(uint8_t explanation, std::string_view why);
  void negotiate(std::span<const uint8_t> m);
  void reply(std::span<const uint8_t> m);
  void success2(std::span<const uint8_t> m);

  std::optional<HostKey> key_;
  std::string hostnqn_;
  std::string subnqn_;
  Step step_ = Step::kIdle;
  bool authenticated_ = false;
  uint8_t failure_ = 0;
  std::string failure_reason_;
  uint32_t attempts_ = 0;  // AUTH_Negotiates since the last success
  uint32_t failures_ = 0;
  uint16_t t_id_ = 0;
  dhchap::Hash hash_ = dhchap::Hash::kSha256;
  dhchap::DhGroup dhgroup_ = dhchap::DhGroup::kNull;
  uint32_t s1_ = 0;
  uint32_t s2_ = 0;
  dhchap::Bytes c1_;
  dhchap::Bytes c2_;  // the host's challenge (bidirectional)
  dhchap::SecretBytes shared_;
  std::unique_ptr<dhchap::DhKey> dh_;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_AUTH_H_
