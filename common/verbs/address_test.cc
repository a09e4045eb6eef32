// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for SocketAddress and parse_port (no device needed).
#include "common/verbs/address.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

namespace nvmf::verbs {
namespace {

TEST(ParsePortTest, AcceptsDecimalRange) {
  EXPECT_EQ(*parse_port("4420"), 4420);
  EXPECT_EQ(*parse_port("0"), 0);
  EXPECT_EQ(*parse_port("65535"), 65535);
}

TEST(ParsePortTest, RejectsNamingTheText) {
  for (const char* bad : {"", "65536", "-1", "44x", " 4420", "4420 ", "0x10", "99999999999"}) {
    Result<uint16_t> r = parse_port(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("\"" + std::string(bad) + "\""), std::string::npos)
        << r.status().message();
  }
}

TEST(SocketAddressTest, ParsesIpv4) {
  Result<SocketAddress> r = SocketAddress::parse("192.168.1.10", uint16_t{4420});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->family(), AF_INET);
  EXPECT_EQ(r->port(), 4420);
  EXPECT_EQ(r->size(), sizeof(sockaddr_in));
  const auto* sin = reinterpret_cast<const sockaddr_in*>(r->get());
  EXPECT_EQ(ntohs(sin->sin_port), 4420);
  EXPECT_EQ(ntohl(sin->sin_addr.s_addr), 0xC0A8010Au);
  EXPECT_EQ(r->host(), "192.168.1.10");
  EXPECT_EQ(r->to_string(), "192.168.1.10:4420");
}

TEST(SocketAddressTest, ParsesPortText) {
  Result<SocketAddress> r = SocketAddress::parse("10.0.0.1", std::string_view("4421"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->to_string(), "10.0.0.1:4421");
  Result<SocketAddress> bad = SocketAddress::parse("10.0.0.1", std::string_view("port"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("\"port\""), std::string::npos);
}

TEST(SocketAddressTest, ParsesIpv6) {
  Result<SocketAddress> r = SocketAddress::parse("::1", uint16_t{4420});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->family(), AF_INET6);
  EXPECT_EQ(r->size(), sizeof(sockaddr_in6));
  EXPECT_EQ(r->to_string(), "[::1]:4420");
  Result<SocketAddress> bracketed = SocketAddress::parse("[fe80::1%7]", uint16_t{1});
  ASSERT_TRUE(bracketed.ok()) << bracketed.status().to_string();
  EXPECT_EQ(reinterpret_cast<const sockaddr_in6*>(bracketed->get())->sin6_scope_id, 7u);
  EXPECT_EQ(bracketed->to_string(), "[fe80::1%7]:1");
  Result<SocketAddress> lo = SocketAddress::parse("fe80::1%lo", uint16_t{1});
  ASSERT_TRUE(lo.ok()) << lo.status().to_string();
  EXPECT_NE(reinterpret_cast<const sockaddr_in6*>(lo->get())->sin6_scope_id, 0u);
}

TEST(SocketAddressTest, RejectsBadAddressesNamingThem) {
  for (const char* bad : {"", "10.0.0", "10.0.0.256", "host.example", "1.2.3.4.5", "::g",
                          "fe80::1%", "fe80::1%no-such-if0", "[::1", "10.0.0.1:4420"}) {
    Result<SocketAddress> r = SocketAddress::parse(bad, uint16_t{4420});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("\"" + std::string(bad) + "\""), std::string::npos)
        << r.status().message();
  }
}

TEST(SocketAddressTest, AnyAndFromSockaddr) {
  SocketAddress any = SocketAddress::any_ipv4(4420);
  EXPECT_EQ(any.to_string(), "0.0.0.0:4420");
  Result<SocketAddress> copy = SocketAddress::from_sockaddr(any.get());
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(copy->to_string(), "0.0.0.0:4420");
  EXPECT_FALSE(SocketAddress::from_sockaddr(nullptr).ok());
  sockaddr unix_addr{};
  unix_addr.sa_family = AF_UNIX;
  EXPECT_EQ(SocketAddress::from_sockaddr(&unix_addr).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace nvmf::verbs
