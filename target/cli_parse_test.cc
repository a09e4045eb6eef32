// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for parse_size.
#include "target/cli_parse.h"

#include <gtest/gtest.h>

namespace nvmf::target {
namespace {

TEST(ParseSize, PlainAndSuffixes) {
  EXPECT_EQ(*parse_size("512", "--size"), 512u);
  EXPECT_EQ(*parse_size("4k", "--size"), 4096u);
  EXPECT_EQ(*parse_size("64m", "--size"), 64u << 20);
  EXPECT_EQ(*parse_size("1G", "--size"), 1u << 30);
  EXPECT_EQ(*parse_size("2t", "--size"), 2ull << 40);
  EXPECT_EQ(*parse_size("4KiB", "--size"), 4096u);
  EXPECT_EQ(*parse_size("8MB", "--size"), 8u << 20);
}

TEST(ParseSize, ErrorsNameTheOption) {
  for (const char* bad : {"", "m", "12x", "1.5g", "-4", "4kk"}) {
    auto r = parse_size(bad, "--ram-size");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--ram-size"), std::string::npos);
  }
  EXPECT_FALSE(parse_size("99999999999999999999", "--size").ok());
  EXPECT_FALSE(parse_size("17179869184g", "--size").ok());
}

}  // namespace
}  // namespace nvmf::target

namespace nvmf::target {
namespace {

TEST(DhchapOptions, HostKeysControllerKeysHashAndGroup) {
  const std::string key = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
  HostKeys keys;
  ASSERT_TRUE(apply_dhchap_options({"nqn.h1=" + key, "nqn.h2=" + key}, {"nqn.h1=" + key},
                                   "hmac(sha384)", "ffdhe4096", keys)
                  .ok());
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_TRUE(keys.at("nqn.h1").ctrl_key.has_value());
  EXPECT_FALSE(keys.at("nqn.h2").ctrl_key.has_value());
  EXPECT_EQ(keys.at("nqn.h2").hash, dhchap::Hash::kSha384);
  EXPECT_EQ(keys.at("nqn.h2").dhgroup, dhchap::DhGroup::kFfdhe4096);
  HostKeys k2;
  Status st = apply_dhchap_options({}, {"nqn.h3=" + key}, "", "", k2);
  EXPECT_NE(st.message().find("that host has no --dhchap-key"), std::string::npos);
  st = apply_dhchap_options({"nqn.h1=DHHC-1:00:AAAA:"}, {}, "", "", k2);
  EXPECT_NE(st.message().find("--dhchap-key for 'nqn.h1'"), std::string::npos) << st.message();
  EXPECT_NE(apply_dhchap_options({key}, {}, "", "", k2).message().find("HOSTNQN="),
            std::string::npos);
  EXPECT_FALSE(apply_dhchap_options({"a=" + key}, {}, "md5", "", k2).ok());
  // A key given without HOSTNQN= (base64 padding holds '='): refused, the key never quoted.
  auto s48 = dhchap::Secret::generate(48, 2);
  ASSERT_TRUE(s48.ok());
  const std::string k48 = s48->format();
  ASSERT_NE(k48.find('='), std::string::npos);
  Status bare = apply_dhchap_options({k48}, {}, "", "", k2);
  EXPECT_FALSE(bare.ok());
  EXPECT_EQ(bare.message().find(k48.substr(10, 12)), std::string::npos) << bare.message();
  // --dhchap-hash applies to the hosts of --dhchap-key, not to keys from a config file.
  HostKeys k3;
  k3["nqn.from-config"].key = *dhchap::Secret::parse(key);
  ASSERT_TRUE(apply_dhchap_options({"nqn.cli=" + key}, {}, "hmac(sha512)", "", k3).ok());
  EXPECT_EQ(k3.at("nqn.cli").hash, dhchap::Hash::kSha512);
  EXPECT_EQ(k3.at("nqn.from-config").hash, dhchap::Hash::kSha256);
}

}  // namespace
}  // namespace nvmf::target
