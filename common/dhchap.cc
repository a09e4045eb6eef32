// SPDX-License-Identifier: BSD-3-Clause
#include "common/dhchap.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/dh.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <zlib.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace nvmf::dhchap {
namespace {

constexpr std::string_view kSecretPrefix = "DHHC-1:";
constexpr std::string_view kTransformSuffix = "NVMe-over-Fabrics";

const EVP_MD* md_of(Hash hash) {
  switch (hash) {
    case Hash::kSha256:
      return EVP_sha256();
    case Hash::kSha384:
      return EVP_sha384();
    case Hash::kSha512:
      return EVP_sha512();
  }
  return nullptr;
}

const char* openssl_digest_name(Hash hash) {
  switch (hash) {
    case Hash::kSha256:
      return "SHA256";
    case Hash::kSha384:
      return "SHA384";
    case Hash::kSha512:
      return "SHA512";
  }
  return "";
}

bool valid_key_length(size_t n) { return n == 32 || n == 48 || n == 64; }

uint32_t crc32_of(std::span<const uint8_t> data) {
  return static_cast<uint32_t>(crc32(0L, data.data(), static_cast<uInt>(data.size())));
}

std::span<const uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
struct ParamBldFree {
  void operator()(OSSL_PARAM_BLD* b) const { OSSL_PARAM_BLD_free(b); }
};
struct ParamFree {
  void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
struct MacFree {
  void operator()(EVP_MAC* m) const { EVP_MAC_free(m); }
};
struct MacCtxFree {
  void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
};
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree>;
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

}  // namespace

void cleanse(void* p, size_t n) {
  if (p != nullptr && n > 0) OPENSSL_cleanse(p, n);
}

// ----------------------------------------------------------------------- names and sizes --

size_t hash_length(Hash hash) {
  switch (hash) {
    case Hash::kSha256:
      return 32;
    case Hash::kSha384:
      return 48;
    case Hash::kSha512:
      return 64;
  }
  return 0;
}

std::string_view hash_name(Hash hash) {
  switch (hash) {
    case Hash::kSha256:
      return "hmac(sha256)";
    case Hash::kSha384:
      return "hmac(sha384)";
    case Hash::kSha512:
      return "hmac(sha512)";
  }
  return "";
}

std::optional<Hash> parse_hash(std::string_view name) {
  for (Hash h : {Hash::kSha256, Hash::kSha384, Hash::kSha512}) {
    std::string_view full = hash_name(h);
    if (name == full || name == full.substr(5, full.size() - 6)) return h;
  }
  return std::nullopt;
}

std::optional<Hash> hash_from_id(uint8_t id) {
  if (id >= 1 && id <= 3) return static_cast<Hash>(id);
  return std::nullopt;
}

std::string_view dhgroup_name(DhGroup group) {
  switch (group) {
    case DhGroup::kNull:
      return "null";
    case DhGroup::kFfdhe2048:
      return "ffdhe2048";
    case DhGroup::kFfdhe3072:
      return "ffdhe3072";
    case DhGroup::kFfdhe4096:
      return "ffdhe4096";
    case DhGroup::kFfdhe6144:
      return "ffdhe6144";
    case DhGroup::kFfdhe8192:
      return "ffdhe8192";
  }
  return "";
}

std::optional<DhGroup> parse_dhgroup(std::string_view name) {
  for (uint8_t id = 0; id <= 5; ++id) {
    if (name == dhgroup_name(static_cast<DhGroup>(id))) return static_cast<DhGroup>(id);
  }
  return std::nullopt;
}

std::optional<DhGroup> dhgroup_from_id(uint8_t id) {
  if (id <= 5) return static_cast<DhGroup>(id);
  return std::nullopt;
}

size_t dhgroup_bytes(DhGroup group) {
  switch (group) {
    case DhGroup::kNull:
      return 0;
    case DhGroup::kFfdhe2048:
      return 256;
    case DhGroup::kFfdhe3072:
      return 384;
    case DhGroup::kFfdhe4096:
      return 512;
    case DhGroup::kFfdhe6144:
      return 768;
    case DhGroup::kFfdhe8192:
      return 1024;
  }
  return 0;
}

// ------------------------------------------------------------------------------- secrets --

Result<Secret> Secret::from_key(std::span<const uint8_t> key, uint8_t transform) {
  if (!valid_key_length(key.size())) {
    return Status::invalid_argument("DH-HMAC-CHAP key length " + std::to_string(key.size()) +
                                    " bytes, must be 32, 48 or 64");
  }
  if (transform > 3) {
    return Status::invalid_argument("DH-HMAC-CHAP key transformation " + std::to_string(transform) +
                                    ", must be 0 to 3");
  }
  Secret s;
  s.transform_ = transform;
  s.key_.assign(key.begin(), key.end());
  return s;
}

Result<Secret> Secret::generate(size_t key_bytes, uint8_t transform) {
  if (!valid_key_length(key_bytes)) {
    return Status::invalid_argument("DH-HMAC-CHAP key length " + std::to_string(key_bytes) +
                                    " bytes, must be 32, 48 or 64");
  }
  SecretBytes key(key_bytes);
  NVMF_RETURN_IF_ERROR(random_bytes(key));
  return from_key(key, transform);
}

Result<Secret> Secret::parse(std::string_view text) {
  auto bad = [](std::string_view why) {
    return Status::invalid_argument(std::string("DH-HMAC-CHAP secret: ") + std::string(why));
  };
  if (text.substr(0, kSecretPrefix.size()) != kSecretPrefix) {
    return bad("does not start with \"DHHC-1:\"");
  }
  text.remove_prefix(kSecretPrefix.size());
  if (text.size() < 3 || text[2] != ':' || text[0] < '0' || text[0] > '9' || text[1] < '0' ||
      text[1] > '9') {
    return bad("no two-digit transformation field after \"DHHC-1:\"");
  }
  const int hh = (text[0] - '0') * 10 + (text[1] - '0');
  if (hh > 3) return bad("transformation " + std::to_string(hh) + " is not 00 to 03");
  text.remove_prefix(3);
  // The base64 field ends at the last ':' (a trailing ':' is the format's; nvme-cli prints it).
  if (!text.empty() && text.back() == ':') text.remove_suffix(1);
  // Padding may be left out (Linux's decoder accepts that): put it back.
  std::string padded;
  padded.reserve(text.size() + 3);  // no reallocation: every copy of the text gets wiped
  padded.assign(text);
  while (padded.size() % 4 != 0 && padded.size() % 4 != 1) padded.push_back('=');
  text = padded;
  if (text.empty() || text.size() % 4 != 0 || text.size() > 4 * ((64 + 4 + 2) / 3)) {
    cleanse(padded.data(), padded.size());
    return bad("the key field is not base64 of 36, 52 or 68 bytes");
  }
  for (char c : text) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '=')) {
      cleanse(padded.data(), padded.size());
      return bad("the key field is not base64");
    }
  }
  SecretBytes raw(text.size() / 4 * 3);
  int n = EVP_DecodeBlock(raw.data(), reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  size_t pad = 0;
  if (text.back() == '=') ++pad;
  if (text.size() >= 2 && text[text.size() - 2] == '=') ++pad;
  cleanse(padded.data(), padded.size());
  if (n < 0) return bad("the key field is not base64");
  const size_t len = static_cast<size_t>(n) - pad;
  if (len < 4 || !valid_key_length(len - 4)) {
    return bad("the key is " + std::to_string(len < 4 ? 0 : len - 4) +
               " bytes, must be 32, 48 or 64");
  }
  const size_t key_len = len - 4;
  const uint32_t want = uint32_t{raw[key_len]} | uint32_t{raw[key_len + 1]} << 8 |
                        uint32_t{raw[key_len + 2]} << 16 | uint32_t{raw[key_len + 3]} << 24;
  if (crc32_of({raw.data(), key_len}) != want) return bad("the CRC-32 of the key does not match");
  return from_key({raw.data(), key_len}, static_cast<uint8_t>(hh));
}

std::string Secret::format() const {
  SecretBytes raw(key_.begin(), key_.end());
  const uint32_t crc = crc32_of(key_);
  for (int i = 0; i < 4; ++i) raw.push_back(static_cast<uint8_t>(crc >> (8 * i)));
  std::string b64(4 * ((raw.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()), raw.data(),
                          static_cast<int>(raw.size()));
  b64.resize(static_cast<size_t>(n));
  char hh[4];
  std::snprintf(hh, sizeof(hh), "%02u", unsigned{transform_});
  std::string out = std::string(kSecretPrefix) + hh + ":" + b64 + ":";
  cleanse(b64.data(), b64.size());
  return out;
}

Result<SecretBytes> Secret::transformed(std::string_view nqn) const {
  if (transform_ == 0) return SecretBytes(key_.begin(), key_.end());
  NVMF_ASSIGN_OR_RETURN(Bytes t, hmac(static_cast<Hash>(transform_), key_,
                                      {as_bytes(nqn), as_bytes(kTransformSuffix)}));
  SecretBytes out(t.begin(), t.end());
  cleanse(t.data(), t.size());
  return out;
}

// ---------------------------------------------------------------------- HMAC and digests --

Result<Bytes> hmac(Hash hash, std::span<const uint8_t> key,
                   std::initializer_list<std::span<const uint8_t>> parts) {
  // Fetched once: a fetch searches the providers each time; the object is shared read-only.
  static const std::unique_ptr<EVP_MAC, MacFree> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!mac) return Status::internal("OpenSSL has no HMAC");
  std::unique_ptr<EVP_MAC_CTX, MacCtxFree> ctx(EVP_MAC_CTX_new(mac.get()));
  if (!ctx) return Status::resource_exhausted("EVP_MAC_CTX_new failed");
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
                                       const_cast<char*>(openssl_digest_name(hash)), 0),
      OSSL_PARAM_construct_end()};
  if (EVP_MAC_init(ctx.get(), key.data(), key.size(), params) != 1) {
    return Status::internal("HMAC initialisation failed");
  }
  for (auto p : parts) {
    if (!p.empty() && EVP_MAC_update(ctx.get(), p.data(), p.size()) != 1) {
      return Status::internal("HMAC update failed");
    }
  }
  Bytes out(hash_length(hash));
  size_t n = 0;
  if (EVP_MAC_final(ctx.get(), out.data(), &n, out.size()) != 1 || n != out.size()) {
    return Status::internal("HMAC final failed");
  }
  return out;
}

Result<Bytes> digest(Hash hash, std::span<const uint8_t> data) {
  Bytes out(hash_length(hash));
  unsigned n = 0;
  if (EVP_Digest(data.data(), data.size(), out.data(), &n, md_of(hash), nullptr) != 1 ||
      n != out.size()) {
    return Status::internal("digest failed");
  }
  return out;
}

bool equal_constant_time(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Status random_bytes(std::span<uint8_t> out) {
  if (out.empty()) return {};
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) {
    return Status::internal("RAND_bytes failed");
  }
  return {};
}

Result<uint32_t> random_seqnum() {
  uint32_t v = 0;
  while (v == 0) {
    NVMF_RETURN_IF_ERROR(random_bytes({reinterpret_cast<uint8_t*>(&v), sizeof(v)}));
  }
  return v;
}

// ------------------------------------------------------------------------ Diffie-Hellman --

DhKey::~DhKey() { EVP_PKEY_free(static_cast<EVP_PKEY*>(pkey_)); }

Result<std::unique_ptr<DhKey>> DhKey::generate(DhGroup group) {
  if (group == DhGroup::kNull) return Status::invalid_argument("no DH key for the null group");
  PkeyCtx ctx(EVP_PKEY_CTX_new_from_name(nullptr, "DH", nullptr));
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1) {
    return Status::internal("DH key generation unavailable");
  }
  std::string name(dhgroup_name(group));
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, name.data(), 0),
      OSSL_PARAM_construct_end()};
  EVP_PKEY* raw = nullptr;
  if (EVP_PKEY_CTX_set_params(ctx.get(), params) != 1 || EVP_PKEY_generate(ctx.get(), &raw) != 1) {
    return Status::internal("DH key generation for " + name + " failed");
  }
  std::unique_ptr<DhKey> key(new DhKey());
  key->group_ = group;
  key->pkey_ = raw;
  BIGNUM* pub = nullptr;
  if (EVP_PKEY_get_bn_param(raw, OSSL_PKEY_PARAM_PUB_KEY, &pub) != 1) {
    return Status::internal("DH public value unavailable");
  }
  std::unique_ptr<BIGNUM, BnFree> pub_owner(pub);
  key->public_.resize(dhgroup_bytes(group));
  if (BN_bn2binpad(pub, key->public_.data(), static_cast<int>(key->public_.size())) < 0) {
    return Status::internal("DH public value does not fit its group");
  }
  return key;
}

Result<SecretBytes> DhKey::derive(std::span<const uint8_t> peer_public) const {
  const size_t bytes = dhgroup_bytes(group_);
  if (peer_public.size() != bytes) {
    return Status::invalid_argument("DH public value of " + std::to_string(peer_public.size()) +
                                    " bytes, " + std::string(dhgroup_name(group_)) + " needs " +
                                    std::to_string(bytes));
  }
  std::unique_ptr<BIGNUM, BnFree> pub(
      BN_bin2bn(peer_public.data(), static_cast<int>(peer_public.size()), nullptr));
  std::unique_ptr<OSSL_PARAM_BLD, ParamBldFree> bld(OSSL_PARAM_BLD_new());
  if (!pub || !bld) return Status::resource_exhausted("DH peer value: out of memory");
  std::string name(dhgroup_name(group_));
  if (OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, name.c_str(), 0) !=
          1 ||
      OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, pub.get()) != 1) {
    return Status::internal("DH peer parameters failed");
  }
  std::unique_ptr<OSSL_PARAM, ParamFree> params(OSSL_PARAM_BLD_to_param(bld.get()));
  PkeyCtx fctx(EVP_PKEY_CTX_new_from_name(nullptr, "DH", nullptr));
  EVP_PKEY* peer_raw = nullptr;
  if (!params || !fctx || EVP_PKEY_fromdata_init(fctx.get()) != 1 ||
      EVP_PKEY_fromdata(fctx.get(), &peer_raw, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
    return Status::invalid_argument("DH public value is not a " + name + " value");
  }
  Pkey peer(peer_raw);
  PkeyCtx dctx(EVP_PKEY_CTX_new_from_pkey(nullptr, static_cast<EVP_PKEY*>(pkey_), nullptr));
  if (!dctx || EVP_PKEY_derive_init(dctx.get()) != 1 ||
      EVP_PKEY_CTX_set_dh_pad(dctx.get(), 1) != 1) {
    return Status::internal("DH derivation unavailable");
  }
  // Validates the peer's value (1 < y < p - 1 and y^q = 1 for the named group).
  if (EVP_PKEY_derive_set_peer_ex(dctx.get(), peer.get(), 1) != 1) {
    return Status::invalid_argument("DH public value is not valid for " + name);
  }
  size_t len = 0;
  if (EVP_PKEY_derive(dctx.get(), nullptr, &len) != 1 || len != bytes) {
    return Status::internal("DH derivation failed");
  }
  SecretBytes shared(len);
  if (EVP_PKEY_derive(dctx.get(), shared.data(), &len) != 1 || len != bytes) {
    return Status::internal("DH derivation failed");
  }
  return shared;
}

// ---------------------------------------------------------------------------- responses --

Result<Bytes> augmented_challenge(Hash hash, std::span<const uint8_t> shared_secret,
                                  std::span<const uint8_t> challenge) {
  if (shared_secret.empty()) return Bytes(challenge.begin(), challenge.end());
  NVMF_ASSIGN_OR_RETURN(Bytes hashed, digest(hash, shared_secret));
  auto out = hmac(hash, hashed, {challenge});
  cleanse(hashed.data(), hashed.size());
  return out;
}

Result<Bytes> response(Hash hash, std::span<const uint8_t> transformed_key,
                       std::span<const uint8_t> challenge, uint32_t seqnum, uint16_t t_id,
                       uint8_t sc_c, Role role, std::string_view hostnqn, std::string_view subnqn) {
  const std::array<uint8_t, 4> seq = {
      static_cast<uint8_t>(seqnum), static_cast<uint8_t>(seqnum >> 8),
      static_cast<uint8_t>(seqnum >> 16), static_cast<uint8_t>(seqnum >> 24)};
  const std::array<uint8_t, 2> tid = {static_cast<uint8_t>(t_id), static_cast<uint8_t>(t_id >> 8)};
  const std::array<uint8_t, 1> scc = {sc_c};
  const std::array<uint8_t, 1> zero = {0};
  const bool host = role == Role::kHost;
  return hmac(hash, transformed_key,
              {challenge, seq, tid, scc, as_bytes(host ? "HostHost" : "Controller"),
               as_bytes(host ? hostnqn : subnqn), zero, as_bytes(host ? subnqn : hostnqn)});
}

}  // namespace nvmf::dhchap
