// SPDX-License-Identifier: BSD-3-Clause
// 16-byte identifiers as text.
#include "common/id_text.h"

#include <cstdio>

namespace nvmf {

Result<Id16> parse_id_text(std::string_view text) {
  Id16 out{};
  size_t digits = 0;
  for (char c : text) {
    if (c == '-') continue;
    int v = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (v < 0 || digits >= 32) {
      return Status::invalid_argument("\"" + std::string(text) + "\" is not 32 hex digits");
    }
    out[digits / 2] = static_cast<uint8_t>(out[digits / 2] | (v << (digits % 2 == 0 ? 4 : 0)));
    ++digits;
  }
  if (digits != 32) {
    return Status::invalid_argument("\"" + std::string(text) + "\" is not 32 hex digits");
  }
  return out;
}

std::string uuid_text(const Id16& u) {
  char b[37];
  std::snprintf(b, sizeof(b),
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
                u[15]);
  return b;
}

std::string hex_text(const Id16& id) {
  std::string out;
  char b[3];
  for (uint8_t v : id) {
    std::snprintf(b, sizeof(b), "%02X", v);
    out += b;
  }
  return out;
}

}  // namespace nvmf
