// SPDX-License-Identifier: BSD-3-Clause
// The host's side of DH-HMAC-CHAP in-band authentication (Base 2.0 §8.13.5): the messages of one
// transaction (AuthInitiator, no I/O) and the transaction run over a queue's CommandChannel
// right after its Connect when the controller set AUTHREQ.ATR (authenticate()), as the Linux
// host does on every queue (drivers/nvme/host/auth.c).
#ifndef NVMF_HOST_AUTH_H_
#define NVMF_HOST_AUTH_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/dhchap.h"
#include "common/status.h"
#include "host/channel.h"
#include "host/options.h"
#include "proto/nvme.h"

namespace nvmf::host {

// What a Negotiate offers. The defaults offer every hash and group, in identifier order, as the
// Linux host does; the controller picks.
struct DhchapOffer {
  std::vector<uint8_t> hashes = {1, 2, 3};             // proto::kAuthHash*
  std::vector<uint8_t> dhgroups = {0, 1, 2, 3, 4, 5};  // proto::kAuthDh*
};

// The messages of one transaction. Each step returns the next message to send, or an error
// (kRejected) naming the step and, for a Failure1 from the controller, its explanation. A
// received message may be followed by unused bytes of the receive buffer: its header gives its
// length.
class AuthInitiator {
 public:
  AuthInitiator(const DhchapSecrets& secrets, std::string hostnqn, std::string subnqn,
                uint16_t t_id, DhchapOffer offer = {});
  // AUTH_Negotiate.
  dhchap::Bytes negotiate() const;
  // The controller's Challenge (or Failure1) -> DH-HMAC-CHAP_Reply.
  Result<dhchap::Bytes> on_challenge(std::span<const uint8_t> message);
  // The controller's Success1 (or Failure1) -> Success2 when bidirectional, else an empty
  // message (nothing more to send). A controller response that does not match its key is an
  // error: send failure2() then.
  Result<dhchap::Bytes> on_success1(std::span<const uint8_t> message);
  // AUTH_Failure2 with `explanation` (proto::kAuthFailure*).
  dhchap::Bytes failure2(uint8_t explanation) const;

  dhchap::Hash hash() const { return hash_; }
  dhchap::DhGroup dhgroup() const { return dhgroup_; }

 private:
  DhchapSecrets secrets_;
  std::string hostnqn_;
  std::string subnqn_;
  uint16_t t_id_;
  DhchapOffer offer_;
  dhchap::Hash hash_ = dhchap::Hash::kSha256;
  dhchap::DhGroup dhgroup_ = dhchap::DhGroup::kNull;
  uint32_t s2_ = 0;
  dhchap::Bytes c2_;
  dhchap::SecretBytes shared_;
};

// The words of a Failure1/Failure2 explanation code, e.g. "hash function unusable".
std::string auth_failure_text(uint8_t explanation);

// Authentication Send (TL = the message's length) and Receive (AL) SQEs for DH-HMAC-CHAP (SECP
// E9h, SPSP0 = SPSP1 = 01h). Base 2.0 §6.4, §6.5.
proto::Sqe auth_send_sqe(uint32_t length);
proto::Sqe auth_receive_sqe(uint32_t allocation_length);

// Runs one transaction on queue `qid` over `ch`: Negotiate, Challenge, Reply, Success1 (and
// Success2). Errors: kInvalidArgument when no host secret is given ("the controller requires
// authentication: give --dhchap-secret"); kRejected naming the step and the controller's
// explanation ("qid 0: DH-HMAC-CHAP Reply refused (AUTH_Failure1: authentication failed)"), or
// "Reply refused (the controller disconnected instead of answering ...)" when the association
// ends after the Reply with no answer (nvmet disconnects as it sends AUTH_Failure1), or the
// host's finding (the controller's response does not match --dhchap-ctrl-secret, after sending
// Failure2); kNvmeError when an Authentication Send/Receive itself fails; transport errors as
// CommandChannel::run. Secrets never appear in a message.
Status authenticate(CommandChannel& ch, uint16_t qid, const DhchapSecrets& secrets,
                    const std::string& hostnqn, const std::string& subnqn,
                    const DhchapOffer& offer = {});

}  // namespace nvmf::host

#endif  // NVMF_HOST_AUTH_H_
