// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes DH-HMAC-CHAP: the controller's transaction state machine (target/auth.h) with any
// sequence of Authentication Send messages (arbitrary bytes, or the host's real messages with a
// byte changed) and Receives of any allocation length; the host's parsers (host/auth.h) with any
// Challenge and Success1; and the secret representation parser (common/dhchap.h). Invariants: no
// Receive returns more than it was allowed, and a queue is authenticated only after a Reply
// computed with the right key was sent in some transaction, changed at most where the response
// does not reach (reserved bytes, CVALID, S2, C2).
#include <cstdint>
#include <string>
#include <vector>

#include "common/dhchap.h"
#include "fuzz/input.h"
#include "host/auth.h"
#include "target/auth.h"
#include "target/testing/fake_queue.h"

namespace {

using nvmf::dhchap::Secret;

const Secret& right_key() {
  static const Secret k =
      *Secret::parse("DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:");
  return k;
}
const Secret& wrong_key() {
  static const Secret k =
      *Secret::parse("DHHC-1:01:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:");
  return k;
}

constexpr char kHost[] = "nqn.2014-08.org.nvmexpress:uuid:f0f0f0f0-0000-0000-0000-000000000001";
constexpr char kSub[] = "nqn.2024-01.io.nvmf-rdma:fuzz";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nvmf::target::testing::require;
  nvmf::fuzz::Input in(data, size);
  const uint8_t setup = in.u8();
  nvmf::target::HostKey key{
      right_key(), std::nullopt, static_cast<nvmf::dhchap::Hash>(1 + setup % 3),
      // A DH key costs milliseconds: one input in 32 uses ffdhe2048.
      (setup & 0xF8) == 0x08 ? nvmf::dhchap::DhGroup::kFfdhe2048 : nvmf::dhchap::DhGroup::kNull};
  if ((setup & 0x40) != 0) key.ctrl_key = wrong_key();
  nvmf::target::AuthResponder responder(key, kHost, kSub);
  bool right_reply_sent = false;
  std::vector<uint8_t> out(4096);
  std::vector<uint8_t> last(4096);
  size_t last_len = 0;
  for (int step = 0; step < 32 && !in.empty(); ++step) {
    const uint8_t op = in.u8();
    switch (op % 6) {
      case 0: {  // arbitrary message
        auto m = in.bytes(in.u16() % 1300);
        responder.send(m);
        break;
      }
      case 1: {  // Receive of any allocation length
        const uint32_t al = in.u16() % 4097;
        const uint32_t n = responder.receive(al, out);
        require(n <= al, "a Receive returned more than its allocation length");
        std::copy(out.begin(), out.begin() + n, last.begin());
        last_len = n;
        break;
      }
      case 2:
      case 3: {  // the host's real transaction, right or wrong key, perhaps with a byte changed
        const bool right = op % 6 == 2;
        nvmf::host::DhchapSecrets secrets{right ? right_key() : wrong_key(), std::nullopt};
        if ((op & 0x40) != 0) secrets.ctrl = wrong_key();
        nvmf::host::AuthInitiator init(secrets, kHost, kSub, in.u16());
        std::vector<uint8_t> neg = init.negotiate();
        const uint16_t flip = in.u16();
        if ((op & 0x80) != 0 && !neg.empty())
          neg[flip % neg.size()] ^= static_cast<uint8_t>(flip >> 8);
        responder.send(neg);
        const uint32_t n = responder.receive(4096, out);
        auto reply = init.on_challenge({out.data(), n});
        if (!reply.ok()) break;
        const uint16_t flip2 = in.u16();
        bool covered = false;  // a changed byte the controller's check covers
        if ((op & 0x20) != 0 && !reply->empty()) {
          const size_t at = flip2 % reply->size();
          (*reply)[at] ^= static_cast<uint8_t>(1 | (flip2 >> 8));
          // Not covered, by design: reserved bytes, CVALID, S2 and C2 (the host's side of a
          // bidirectional exchange, proven by the controller's response, not the host's).
          const size_t hl = (*reply)[6];
          const bool benign = at == 2 || at == 3 || at == 7 || at == 8 || at == 9 ||
                              (at >= 12 && at < 16) || (at >= 16 + hl && at < 16 + 2 * hl);
          covered = !benign;
        }
        if (right && !covered) right_reply_sent = true;
        responder.send(*reply);
        const uint32_t n2 = responder.receive(4096, out);
        auto s2 = init.on_success1({out.data(), n2});
        if (s2.ok() && !s2->empty()) responder.send(*s2);
        break;
      }
      case 4: {  // the host's parsers on anything
        nvmf::host::AuthInitiator init({right_key(), wrong_key()}, kHost, kSub, in.u16());
        auto m = in.bytes(in.u16() % 1200);
        (void)init.on_challenge(m);
        (void)init.on_success1(m);
        (void)init.on_success1({last.data(), last_len});
        break;
      }
      case 5: {  // secret representations
        (void)Secret::parse(in.text());
        break;
      }
    }
    require(!responder.authenticated() || right_reply_sent,
            "authenticated without a Reply computed with the right key");
    // Once the queue is not authenticated, only a new right Reply may authenticate it again.
    if (!responder.authenticated()) right_reply_sent = false;
  }
  return 0;
}
