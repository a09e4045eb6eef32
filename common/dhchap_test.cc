// SPDX-License-Identifier: BSD-3-Clause
#include "common/dhchap.h"

#include <gtest/gtest.h>

#include <string>

namespace nvmf::dhchap {
namespace {

std::string hex(std::span<const uint8_t> b) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t v : b) {
    s += digits[v >> 4];
    s += digits[v & 15];
  }
  return s;
}

Bytes span_of(std::string_view s) { return Bytes(s.begin(), s.end()); }

constexpr char kHostNqn[] = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000001";

TEST(DhchapSecret, ParsesNvmeClisExampleKeyWithItsCrc) {
  // The example secret of nvme-cli's documentation: its CRC-32 must check.
  auto s = Secret::parse("DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->transform(), 0);
  EXPECT_EQ(s->key().size(), 32u);
  EXPECT_EQ(s->format(), "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:");
}

TEST(DhchapSecret, FormatsAndParsesBackEveryLengthAndTransformation) {
  for (size_t len : {32u, 48u, 64u}) {
    for (uint8_t hh = 0; hh <= 3; ++hh) {
      auto s = Secret::generate(len, hh);
      ASSERT_TRUE(s.ok());
      auto back = Secret::parse(s->format());
      ASSERT_TRUE(back.ok()) << back.status().to_string();
      EXPECT_EQ(back->transform(), hh);
      EXPECT_EQ(Bytes(back->key().begin(), back->key().end()),
                Bytes(s->key().begin(), s->key().end()));
    }
  }
}

TEST(DhchapSecret, AcceptsAMissingTrailingColonAndMissingPaddingAsLinuxDoes) {
  auto s = Secret::generate(48, 2);  // 52 bytes: base64 ends in "=="
  ASSERT_TRUE(s.ok());
  std::string text = s->format();
  ASSERT_EQ(text.substr(text.size() - 3), "==:");
  auto bare = Secret::parse(text.substr(0, text.size() - 3));
  ASSERT_TRUE(bare.ok()) << bare.status().to_string();
  EXPECT_EQ(bare->format(), text);
}

TEST(DhchapSecret, RefusesMalformedTextsWithoutEchoingThem) {
  const std::string good = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
  ASSERT_TRUE(Secret::parse(good).ok());
  std::string bad_crc = good;
  bad_crc[bad_crc.size() - 3] = 'S';
  for (const std::string& t :
       {std::string("DHHC-2:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"),
        std::string("DHHC-1:04:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"),
        std::string("DHHC-1:0:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"),
        std::string("DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd:"),
        std::string("DHHC-1:00:AAEC*wQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"), bad_crc,
        std::string("DHHC-1:00::"), std::string("")}) {
    auto s = Secret::parse(t);
    ASSERT_FALSE(s.ok()) << t;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    if (t.size() > 12) {
      EXPECT_EQ(s.status().message().find(t.substr(10, 8)), std::string::npos)
          << s.status().message();
    }
  }
}

// Known answers computed independently (Python's hmac/hashlib) from the formulas of Base 2.0
// §8.13.5 for key 00..1f.
TEST(DhchapSecret, TransformsWithHmacOverTheNqnAndTheFabricsLabel) {
  auto s = Secret::parse("DHHC-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:");
  ASSERT_TRUE(s.ok());
  auto t = s->transformed(kHostNqn);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(hex(*t), "6c7b81cb2a746f74454b1d7140f3153b51ca99459fcef7a86a17f27695b87cd8");
  auto plain = Secret::parse("DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:");
  auto same = plain->transformed(kHostNqn);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(hex(*same), "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
}

TEST(DhchapResponse, HostResponseCoversChallengeSequenceTransactionAndBothNqns) {
  Bytes key;
  const std::string t = "6c7b81cb2a746f74454b1d7140f3153b51ca99459fcef7a86a17f27695b87cd8";
  for (size_t i = 0; i < t.size(); i += 2) key.push_back(std::stoi(t.substr(i, 2), nullptr, 16));
  Bytes challenge(32, 0xa5);
  auto r = response(Hash::kSha256, key, challenge, 0x01020304, 0x0102, 0, Role::kHost, kHostNqn,
                    "nqn.sub");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(hex(*r), "9b2f3caccb81a8807042c9bc6729d4993242c017b016d98aceb49a440be7bd2a");
  // The controller's response over the same inputs differs (its label and NQN order).
  auto c = response(Hash::kSha256, key, challenge, 0x01020304, 0x0102, 0, Role::kController,
                    kHostNqn, "nqn.sub");
  ASSERT_TRUE(c.ok());
  EXPECT_NE(hex(*c), hex(*r));
}

TEST(DhchapResponse, AugmentedChallengeIsHmacKeyedByTheHashedSharedSecret) {
  Bytes shared(256, 7);
  Bytes challenge(32, 0xa5);
  auto a = augmented_challenge(Hash::kSha256, shared, challenge);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(hex(*a), "d6507a4e70db31a582be7debdad3575c1e8ca97c300ad800a7ef1f8006063e1e");
  auto none = augmented_challenge(Hash::kSha256, {}, challenge);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, challenge);
}

TEST(DhchapDh, BothSidesDeriveTheSameSecretInEveryGroup) {
  for (uint8_t id = 1; id <= 5; ++id) {
    const DhGroup g = static_cast<DhGroup>(id);
    if (g == DhGroup::kFfdhe6144) continue;  // same code path; keeps the test short
    auto a = DhKey::generate(g);
    auto b = DhKey::generate(g);
    ASSERT_TRUE(a.ok() && b.ok()) << dhgroup_name(g);
    EXPECT_EQ((*a)->public_value().size(), dhgroup_bytes(g));
    auto sa = (*a)->derive((*b)->public_value());
    auto sb = (*b)->derive((*a)->public_value());
    ASSERT_TRUE(sa.ok() && sb.ok()) << dhgroup_name(g);
    EXPECT_EQ(sa->size(), dhgroup_bytes(g));
    EXPECT_TRUE(equal_constant_time(*sa, *sb)) << dhgroup_name(g);
  }
}

TEST(DhchapDh, RefusesPeerValuesOfTheWrongSizeOrOutsideTheGroup) {
  auto a = DhKey::generate(DhGroup::kFfdhe2048);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE((*a)->derive(Bytes(255, 1)).ok());
  Bytes one(256, 0);
  one[255] = 1;
  EXPECT_EQ((*a)->derive(one).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE((*a)->derive(Bytes(256, 0)).ok());
  EXPECT_FALSE((*a)->derive(Bytes(256, 0xff)).ok());  // above p
}

TEST(DhchapNames, ConfigfsNamesRoundTrip) {
  for (Hash h : {Hash::kSha256, Hash::kSha384, Hash::kSha512}) {
    EXPECT_EQ(parse_hash(hash_name(h)), h);
  }
  EXPECT_EQ(parse_hash("sha384"), Hash::kSha384);
  EXPECT_EQ(parse_hash("hmac(md5)"), std::nullopt);
  EXPECT_EQ(parse_dhgroup("ffdhe8192"), DhGroup::kFfdhe8192);
  EXPECT_EQ(parse_dhgroup("null"), DhGroup::kNull);
  EXPECT_EQ(parse_dhgroup("modp2048"), std::nullopt);
  EXPECT_EQ(hash_from_id(0), std::nullopt);
  EXPECT_EQ(dhgroup_from_id(6), std::nullopt);
  EXPECT_EQ(hash_length(Hash::kSha384), 48u);
}

TEST(DhchapCompare, ConstantTimeCompareNeedsEqualLengthsAndBytes) {
  EXPECT_TRUE(equal_constant_time(span_of("abc"), span_of("abc")));
  EXPECT_FALSE(equal_constant_time(span_of("abc"), span_of("abd")));
  EXPECT_FALSE(equal_constant_time(span_of("abc"), span_of("ab")));
}

}  // namespace
}  // namespace nvmf::dhchap
