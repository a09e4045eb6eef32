// SPDX-License-Identifier: BSD-3-Clause
// SocketAddress parsing and printing (numeric IPv4/IPv6 only; no name resolution).
#include "common/verbs/address.h"

#include <arpa/inet.h>
#include <net/if.h>

#include <charconv>
#include <cstring>

namespace nvmf::verbs {
namespace {

Status bad_address(std::string_view host, std::string_view why) {
  return Status::invalid_argument("address \"" + std::string(host) + "\": " + std::string(why));
}

// Scope of "fe80::1%eth0" or "fe80::1%2": an interface name or index.
Result<uint32_t> parse_scope(std::string_view host, std::string_view scope) {
  uint32_t index = 0;
  const auto [end, ec] = std::from_chars(scope.data(), scope.data() + scope.size(), index);
  if (ec == std::errc() && end == scope.data() + scope.size()) return index;
  const std::string name(scope);
  index = if_nametoindex(name.c_str());
  if (index == 0) return bad_address(host, "unknown interface \"" + name + "\"");
  return index;
}

}  // namespace

Result<uint16_t> parse_port(std::string_view text) {
  uint32_t value = 0;
  const char* const last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(text.data(), last, value);
  if (text.empty() || ec != std::errc() || end != last || value > 65535) {
    return Status::invalid_argument("port \"" + std::string(text) +
                                    "\": expected a decimal number 0..65535");
  }
  return static_cast<uint16_t>(value);
}

Result<SocketAddress> SocketAddress::parse(std::string_view host, uint16_t port) {
  if (host.empty()) return bad_address(host, "empty");
  SocketAddress out;
  const std::string v4(host);
  auto* sin = reinterpret_cast<sockaddr_in*>(&out.storage_);
  if (inet_pton(AF_INET, v4.c_str(), &sin->sin_addr) == 1) {
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    return out;
  }
  std::string_view v6 = host;
  if (v6.size() >= 2 && v6.front() == '[' && v6.back() == ']') v6 = v6.substr(1, v6.size() - 2);
  std::string_view scope;
  if (const size_t pct = v6.find('%'); pct != std::string_view::npos) {
    scope = v6.substr(pct + 1);
    v6 = v6.substr(0, pct);
    if (scope.empty()) return bad_address(host, "empty IPv6 scope after '%'");
  }
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&out.storage_);
  if (inet_pton(AF_INET6, std::string(v6).c_str(), &sin6->sin6_addr) != 1) {
    return bad_address(host, "not a numeric IPv4 (a.b.c.d) or IPv6 address");
  }
  sin6->sin6_family = AF_INET6;
  sin6->sin6_port = htons(port);
  if (!scope.empty()) {
    NVMF_ASSIGN_OR_RETURN(sin6->sin6_scope_id, parse_scope(host, scope));
  }
  return out;
}

Result<SocketAddress> SocketAddress::parse(std::string_view host, std::string_view port) {
  NVMF_ASSIGN_OR_RETURN(const uint16_t p, parse_port(port));
  return parse(host, p);
}

Result<SocketAddress> SocketAddress::from_sockaddr(const sockaddr* addr) {
  if (addr == nullptr) return Status::invalid_argument("null sockaddr");
  SocketAddress out;
  if (addr->sa_family == AF_INET) {
    std::memcpy(&out.storage_, addr, sizeof(sockaddr_in));
  } else if (addr->sa_family == AF_INET6) {
    std::memcpy(&out.storage_, addr, sizeof(sockaddr_in6));
  } else {
    return Status::invalid_argument("sockaddr family " + std::to_string(addr->sa_family) +
                                    " is neither AF_INET nor AF_INET6");
  }
  return out;
}

SocketAddress SocketAddress::any_ipv4(uint16_t port) {
  SocketAddress out;
  auto* sin = reinterpret_cast<sockaddr_in*>(&out.storage_);
  sin->sin_family = AF_INET;
  sin->sin_addr.s_addr = htonl(INADDR_ANY);
  sin->sin_port = htons(port);
  return out;
}

uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  if (family() == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  }
  return 0;
}

socklen_t SocketAddress::size() const {
  if (family() == AF_INET) return sizeof(sockaddr_in);
  if (family() == AF_INET6) return sizeof(sockaddr_in6);
  return sizeof(storage_);
}

std::string SocketAddress::host() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, buf,
              sizeof(buf));
    return buf;
  }
  if (family() == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&storage_);
    inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof(buf));
    std::string out(buf);
    if (sin6->sin6_scope_id != 0) out += "%" + std::to_string(sin6->sin6_scope_id);
    return out;
  }
  return "(unspecified)";
}

std::string SocketAddress::to_string() const {
  const std::string port_text = std::to_string(port());
  if (family() == AF_INET6) return "[" + host() + "]:" + port_text;
  return host() + ":" + port_text;
}

}  // namespace nvmf::verbs
