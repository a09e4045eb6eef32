// SPDX-License-Identifier: BSD-3-Clause
// DH-HMAC-CHAP, the NVMe in-band authentication protocol (Base 2.0 §8.13.5, from TP 8006): its
// secrets, hash functions and Diffie-Hellman groups, and the values both sides compute. Shared by
// the host and the target; the messages are in proto/auth.h.
//
// All cryptography is OpenSSL 3's (EVP HMAC and digests, finite-field DH over RFC 7919's named
// groups, RAND_bytes, CRYPTO_memcmp); nothing here is hand-written crypto. Key material lives in
// SecretBytes, wiped when freed, and no function puts a secret into an error message.
#ifndef NVMF_COMMON_DHCHAP_H_
#define NVMF_COMMON_DHCHAP_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace nvmf::dhchap {

// Overwrites `n` bytes at `p` in a way the compiler keeps (OPENSSL_cleanse).
void cleanse(void* p, size_t n);

// An allocator that wipes memory before giving it back.
template <typename T>
struct CleansingAllocator {
  using value_type = T;
  CleansingAllocator() = default;
  template <typename U>
  CleansingAllocator(const CleansingAllocator<U>&) {}  // NOLINT(google-explicit-constructor)
  T* allocate(size_t n) { return std::allocator<T>().allocate(n); }
  void deallocate(T* p, size_t n) {
    cleanse(p, n * sizeof(T));
    std::allocator<T>().deallocate(p, n);
  }
  friend bool operator==(const CleansingAllocator&, const CleansingAllocator&) { return true; }
};

// Key material: keys, transformed keys, DH shared secrets.
using SecretBytes = std::vector<uint8_t, CleansingAllocator<uint8_t>>;
using Bytes = std::vector<uint8_t>;

// Hash functions by their wire identifiers (proto::kAuthHash*).
enum class Hash : uint8_t { kSha256 = 1, kSha384 = 2, kSha512 = 3 };
// Diffie-Hellman groups by their wire identifiers (proto::kAuthDh*); kNull: no DH exchange.
enum class DhGroup : uint8_t {
  kNull = 0,
  kFfdhe2048 = 1,
  kFfdhe3072 = 2,
  kFfdhe4096 = 3,
  kFfdhe6144 = 4,
  kFfdhe8192 = 5,
};

// The output length of `hash` in bytes: 32, 48, 64. It is also the challenge and response length.
size_t hash_length(Hash hash);
// nvmet's configfs name, "hmac(sha256)", "hmac(sha384)", "hmac(sha512)".
std::string_view hash_name(Hash hash);
// A hash by configfs name ("hmac(sha256)") or bare ("sha256"); nullopt for anything else.
std::optional<Hash> parse_hash(std::string_view name);
// A hash by its wire identifier; nullopt when it is not one.
std::optional<Hash> hash_from_id(uint8_t id);

// nvmet's configfs name: "null", "ffdhe2048" ... "ffdhe8192".
std::string_view dhgroup_name(DhGroup group);
// A group by configfs name; nullopt for anything else.
std::optional<DhGroup> parse_dhgroup(std::string_view name);
// A group by its wire identifier; nullopt when it is not one.
std::optional<DhGroup> dhgroup_from_id(uint8_t id);
// The size of the group's prime, so of a public value and of the shared secret, in bytes (0 for
// kNull).
size_t dhgroup_bytes(DhGroup group);

// A DH-HMAC-CHAP secret in the representation of the NVMe specification and nvme-cli
// ("DHHC-1:hh:<base64 of key || CRC-32>:"): hh 00 means the key is used as it is, 01/02/03 that
// it is first transformed with HMAC-SHA-256/384/512 keyed by it over the NQN of its owner and
// "NVMe-over-Fabrics" (Base 2.0 §8.13.5.7; Linux nvme_auth_transform_key). The key is 32, 48 or
// 64 bytes; the CRC-32 (zlib's, little endian) over it must match.
class Secret {
 public:
  // Parses `text`. Errors (kInvalidArgument) say what is wrong with the text, never its content.
  static Result<Secret> parse(std::string_view text);
  // A new random secret of `key_bytes` (32, 48 or 64) with transformation `transform` (0-3).
  static Result<Secret> generate(size_t key_bytes, uint8_t transform);
  // A secret of the given key bytes (32, 48 or 64) and transformation (0-3).
  static Result<Secret> from_key(std::span<const uint8_t> key, uint8_t transform);

  // 0: none; else the hash (1-3) of the transformation.
  uint8_t transform() const { return transform_; }
  std::span<const uint8_t> key() const { return key_; }
  // "DHHC-1:hh:<base64>:" (secret: never log it).
  std::string format() const;
  // The key the responses are computed with: the key itself (hh 00), else HMAC-hh(key, `nqn` ||
  // "NVMe-over-Fabrics"). `nqn`: the host NQN for a host's key, the subsystem NQN for a
  // controller's key.
  Result<SecretBytes> transformed(std::string_view nqn) const;

 private:
  uint8_t transform_ = 0;
  SecretBytes key_;
};

// HMAC-`hash` keyed by `key` over the concatenation of `parts`.
Result<Bytes> hmac(Hash hash, std::span<const uint8_t> key,
                   std::initializer_list<std::span<const uint8_t>> parts);
// The `hash` digest of `data`.
Result<Bytes> digest(Hash hash, std::span<const uint8_t> data);
// Equal lengths and contents, in time independent of the contents (CRYPTO_memcmp).
bool equal_constant_time(std::span<const uint8_t> a, std::span<const uint8_t> b);
// Cryptographically random bytes (RAND_bytes).
Status random_bytes(std::span<uint8_t> out);
// A nonzero random 32-bit sequence number.
Result<uint32_t> random_seqnum();

// An ephemeral finite-field Diffie-Hellman key of one RFC 7919 group, new per transaction.
class DhKey {
 public:
  ~DhKey();
  DhKey(const DhKey&) = delete;
  DhKey& operator=(const DhKey&) = delete;
  static Result<std::unique_ptr<DhKey>> generate(DhGroup group);
  DhGroup group() const { return group_; }
  // g^x mod p, big endian, padded to dhgroup_bytes().
  const Bytes& public_value() const { return public_; }
  // The shared secret g^xy mod p, big endian, padded to dhgroup_bytes(), from the peer's public
  // value (exactly dhgroup_bytes() long and valid for the group: kInvalidArgument otherwise).
  Result<SecretBytes> derive(std::span<const uint8_t> peer_public) const;

 private:
  DhKey() = default;
  DhGroup group_ = DhGroup::kNull;
  void* pkey_ = nullptr;  // EVP_PKEY
  Bytes public_;
};

// The challenge a response is computed over: `challenge` itself without DH, else
// HMAC-`hash`(`hash`(shared secret), challenge) (Base 2.0 §8.13.5.4; Linux
// nvme_auth_augmented_challenge).
Result<Bytes> augmented_challenge(Hash hash, std::span<const uint8_t> shared_secret,
                                  std::span<const uint8_t> challenge);

// Whose response: the host's R1 ("HostHost", the host NQN first) or the controller's R2
// ("Controller", the subsystem NQN first).
enum class Role : uint8_t { kHost, kController };
// R = HMAC-`hash`(transformed key, challenge || seqnum (LE32) || T_ID (LE16) || SC_C || role
// string || first NQN || 00h || second NQN) (Base 2.0 §8.13.5.4-5; Linux
// nvme_auth_dhchap_setup_host_response and _ctrl_response). `challenge` is the augmented one.
Result<Bytes> response(Hash hash, std::span<const uint8_t> transformed_key,
                       std::span<const uint8_t> challenge, uint32_t seqnum, uint16_t t_id,
                       uint8_t sc_c, Role role, std::string_view hostnqn, std::string_view subnqn);

}  // namespace nvmf::dhchap

#endif  // NVMF_COMMON_DHCHAP_H_
