// SPDX-License-Identifier: BSD-3-Clause
// NVMe in-band authentication (DH-HMAC-CHAP): the Authentication Send/Receive capsules and the
// messages they carry.
//
// Layouts and constants only. Base 2.0 §6.4 "Authentication Receive", §6.5 "Authentication
// Send", §8.13.5 "DH-HMAC-CHAP" (from TP 8006). The messages are byte strings moved as the
// commands' data; their multi-byte fields are little endian, as on the wire everywhere in NVMe.
#ifndef NVMF_PROTO_AUTH_H_
#define NVMF_PROTO_AUTH_H_

#include <bit>
#include <cstddef>
#include <cstdint>

#include "proto/fabrics.h"
#include "proto/nvme.h"

namespace nvmf::proto {

// The structs below are written and read as the machine's own integers: little endian only.
static_assert(std::endian::native == std::endian::little, "NVMe wire fields are little endian");

// Authentication Send (FCTYPE 05h, data host to controller) and Authentication Receive (FCTYPE
// 06h, data controller to host). CDW10: SECP 31:24, SPSP1 23:16, SPSP0 15:8; CDW11: the
// transfer length TL (Send) or the allocation length AL (Receive), in bytes.
struct AuthCommand {
  uint8_t opcode;  // kOpcodeFabrics
  uint8_t flags;
  uint16_t cid;
  uint8_t fctype;  // kFctypeAuthSend or kFctypeAuthReceive
  uint8_t rsvd5[19];
  SglDescriptor sgl1;  // 24
  uint8_t rsvd40;
  uint8_t spsp0;    // 41
  uint8_t spsp1;    // 42
  uint8_t secp;     // 43
  uint32_t length;  // 44: TL (Send) or AL (Receive)
  uint8_t rsvd48[16];
};
static_assert(sizeof(AuthCommand) == 64);
static_assert(offsetof(AuthCommand, spsp0) == 41, "Base 2.0 §6.5: SPSP0 in CDW10 15:8");
static_assert(offsetof(AuthCommand, secp) == 43, "Base 2.0 §6.5: SECP in CDW10 31:24");
static_assert(offsetof(AuthCommand, length) == 44, "Base 2.0 §6.5: TL in CDW11");

// SECP of the NVMe authentication protocols, and the SPSP0/SPSP1 the DH-HMAC-CHAP messages use.
inline constexpr uint8_t kAuthSecp = 0xE9;
inline constexpr uint8_t kAuthSpsp0 = 0x01;
inline constexpr uint8_t kAuthSpsp1 = 0x01;

// Connect response DW0 bits 31:16, AUTHREQ: ATR, the controller requires authentication on this
// queue before any other command; ASCR, secure channel concatenation (TCP only).
inline constexpr uint32_t kConnectRespAuthreqAtr = 1u << 17;
inline constexpr uint32_t kConnectRespAuthreqAscr = 1u << 18;

// Command-specific status 91h, Authentication Required: a command other than Authentication
// Send/Receive on a queue whose authentication has not succeeded (nvmet answers it with DNR).
inline constexpr uint8_t kScAuthRequired = 0x91;

// AUTH_Type and AUTH_Id, bytes 0 and 1 of every message.
inline constexpr uint8_t kAuthTypeCommon = 0x00;
inline constexpr uint8_t kAuthTypeDhchap = 0x01;
inline constexpr uint8_t kAuthIdNegotiate = 0x00;  // common
inline constexpr uint8_t kAuthIdChallenge = 0x01;  // DH-HMAC-CHAP
inline constexpr uint8_t kAuthIdReply = 0x02;
inline constexpr uint8_t kAuthIdSuccess1 = 0x03;
inline constexpr uint8_t kAuthIdSuccess2 = 0x04;
inline constexpr uint8_t kAuthIdFailure2 = 0xF0;  // common: host to controller
inline constexpr uint8_t kAuthIdFailure1 = 0xF1;  // common: controller to host

// Authentication protocol identifier in an AUTH_Negotiate descriptor.
inline constexpr uint8_t kAuthProtocolDhchap = 0x01;
// SC_C, secure channel concatenation: only "none" exists over RDMA.
inline constexpr uint8_t kAuthScNone = 0x00;

// Hash function identifiers (HashIDList, Challenge HashID).
inline constexpr uint8_t kAuthHashSha256 = 0x01;
inline constexpr uint8_t kAuthHashSha384 = 0x02;
inline constexpr uint8_t kAuthHashSha512 = 0x03;
// Diffie-Hellman group identifiers (DHGIDList, Challenge DHGID): RFC 7919's groups.
inline constexpr uint8_t kAuthDhNull = 0x00;
inline constexpr uint8_t kAuthDhFfdhe2048 = 0x01;
inline constexpr uint8_t kAuthDhFfdhe3072 = 0x02;
inline constexpr uint8_t kAuthDhFfdhe4096 = 0x03;
inline constexpr uint8_t kAuthDhFfdhe6144 = 0x04;
inline constexpr uint8_t kAuthDhFfdhe8192 = 0x05;

// AUTH_Failure reason code and its explanations.
inline constexpr uint8_t kAuthFailureReasonFailed = 0x01;
inline constexpr uint8_t kAuthFailureFailed = 0x01;                    // authentication failed
inline constexpr uint8_t kAuthFailureProtocolUnusable = 0x02;          // no protocol in common
inline constexpr uint8_t kAuthFailureConcatMismatch = 0x03;            // secure channel mismatch
inline constexpr uint8_t kAuthFailureHashUnusable = 0x04;              // no hash function in common
inline constexpr uint8_t kAuthFailureDhgroupUnusable = 0x05;           // no DH group in common
inline constexpr uint8_t kAuthFailureIncorrectPayload = 0x06;          // malformed message
inline constexpr uint8_t kAuthFailureIncorrectProtocolMessage = 0x07;  // out of sequence

// AUTH_Negotiate (host to controller): a header and NAPD protocol descriptors.
struct AuthNegotiateHeader {
  uint8_t auth_type;  // kAuthTypeCommon
  uint8_t auth_id;    // kAuthIdNegotiate
  uint8_t rsvd2[2];
  uint16_t t_id;  // 4: transaction identifier
  uint8_t sc_c;   // 6
  uint8_t napd;   // 7: number of descriptors that follow
};
static_assert(sizeof(AuthNegotiateHeader) == 8);
// One protocol descriptor: HALEN hash identifiers in idlist[0, 30), DHLEN DH group identifiers
// in idlist[30, 60).
inline constexpr size_t kAuthIdListHalf = 30;
struct AuthProtocolDescriptor {
  uint8_t auth_id;  // kAuthProtocolDhchap
  uint8_t rsvd1;
  uint8_t halen;
  uint8_t dhlen;
  uint8_t idlist[2 * kAuthIdListHalf];
};
static_assert(sizeof(AuthProtocolDescriptor) == 64);

// DH-HMAC-CHAP_Challenge (controller to host): header, then the challenge C1 (HL bytes), then
// the controller's DH public value (DHVLEN bytes).
struct DhchapChallengeHeader {
  uint8_t auth_type;  // kAuthTypeDhchap
  uint8_t auth_id;    // kAuthIdChallenge
  uint8_t rsvd2[2];
  uint16_t t_id;  // 4
  uint8_t hl;     // 6: hash length, bytes
  uint8_t rsvd7;
  uint8_t hashid;   // 8
  uint8_t dhgid;    // 9
  uint16_t dhvlen;  // 10
  uint32_t seqnum;  // 12: S1
};
static_assert(sizeof(DhchapChallengeHeader) == 16);

// DH-HMAC-CHAP_Reply (host to controller): header, the response R1 (HL bytes), the host's
// challenge C2 (HL bytes; meaningful when CVALID), the host's DH public value (DHVLEN bytes).
struct DhchapReplyHeader {
  uint8_t auth_type;  // kAuthTypeDhchap
  uint8_t auth_id;    // kAuthIdReply
  uint8_t rsvd2[2];
  uint16_t t_id;  // 4
  uint8_t hl;     // 6
  uint8_t rsvd7;
  uint8_t cvalid;  // 8: C2 is valid, bidirectional authentication asked
  uint8_t rsvd9;
  uint16_t dhvlen;  // 10
  uint32_t seqnum;  // 12: S2 (nonzero when CVALID)
};
static_assert(sizeof(DhchapReplyHeader) == 16);

// DH-HMAC-CHAP_Success1 (controller to host): header, then the response R2 (HL bytes; meaningful
// when RVALID).
struct DhchapSuccess1Header {
  uint8_t auth_type;  // kAuthTypeDhchap
  uint8_t auth_id;    // kAuthIdSuccess1
  uint8_t rsvd2[2];
  uint16_t t_id;  // 4
  uint8_t hl;     // 6
  uint8_t rsvd7;
  uint8_t rvalid;  // 8
  uint8_t rsvd9[7];
};
static_assert(sizeof(DhchapSuccess1Header) == 16);

// DH-HMAC-CHAP_Success2 (host to controller, bidirectional only).
struct DhchapSuccess2 {
  uint8_t auth_type;  // kAuthTypeDhchap
  uint8_t auth_id;    // kAuthIdSuccess2
  uint8_t rsvd2[2];
  uint16_t t_id;  // 4
  uint8_t rsvd6[10];
};
static_assert(sizeof(DhchapSuccess2) == 16);

// AUTH_Failure1 (controller to host) and AUTH_Failure2 (host to controller).
struct AuthFailure {
  uint8_t auth_type;  // kAuthTypeCommon
  uint8_t auth_id;    // kAuthIdFailure1 or kAuthIdFailure2
  uint8_t rsvd2[2];
  uint16_t t_id;        // 4
  uint8_t reason;       // 6: kAuthFailureReasonFailed
  uint8_t explanation;  // 7
};
static_assert(sizeof(AuthFailure) == 8);

}  // namespace nvmf::proto

#endif  // NVMF_PROTO_AUTH_H_
