// SPDX-License-Identifier: BSD-3-Clause
// Socket addresses for rdma_cm: parsing "a.b.c.d" / IPv6 text plus a port, and printing them.
#ifndef NVMF_COMMON_VERBS_ADDRESS_H_
#define NVMF_COMMON_VERBS_ADDRESS_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace nvmf::verbs {

// An IPv4 or IPv6 address and port, stored as a sockaddr_storage that rdma_cm calls accept.
class SocketAddress {
 public:
  // Parses a numeric address (no DNS): "192.168.1.10", "::1", "[fe80::1]", "fe80::1%eth0".
  // Returns kInvalidArgument naming the bad string on anything else, including empty text.
  static Result<SocketAddress> parse(std::string_view host, uint16_t port);
  // As above with the port as text, e.g. an NVMe-oF trsvcid "4420" (decimal 0..65535).
  static Result<SocketAddress> parse(std::string_view host, std::string_view port);
  // Copies an AF_INET or AF_INET6 sockaddr (e.g. rdma_get_peer_addr()); kInvalidArgument for
  // null or another family.
  static Result<SocketAddress> from_sockaddr(const sockaddr* addr);

  // The wildcard address (0.0.0.0) on `port`, e.g. for a listener on all interfaces.
  static SocketAddress any_ipv4(uint16_t port);

  int family() const { return storage_.ss_family; }
  uint16_t port() const;
  sockaddr* get() { return reinterpret_cast<sockaddr*>(&storage_); }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage_); }
  socklen_t size() const;

  // The address without the port: "10.0.0.1", "fe80::1%2".
  std::string host() const;
  // "10.0.0.1:4420", "[fe80::1%2]:4420".
  std::string to_string() const;

 private:
  SocketAddress() = default;
  sockaddr_storage storage_{};
};

// Parses a decimal port "0".."65535" (an NVMe-oF trsvcid). kInvalidArgument names the text.
Result<uint16_t> parse_port(std::string_view text);

}  // namespace nvmf::verbs

#endif  // NVMF_COMMON_VERBS_ADDRESS_H_
