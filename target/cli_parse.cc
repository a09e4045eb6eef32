// SPDX-License-Identifier: BSD-3-Clause
// parse_size.
#include "target/cli_parse.h"

#include <cctype>
#include <string>

namespace nvmf::target {
namespace {

Status not_a_size(std::string_view text, std::string_view option) {
  return Status::invalid_argument(std::string(option) + ": '" + std::string(text) +
                                  "' is not a byte count (e.g. 4096, 64m, 1g)");
}

// Shift for a suffix ("", "k", "kb", "kib", ...); -1 when unknown.
int suffix_shift(std::string suffix) {
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (suffix.empty()) return 0;
  if (suffix.size() == 3 && suffix.substr(1) == "ib") suffix.resize(1);
  if (suffix.size() == 2 && suffix[1] == 'b') suffix.resize(1);
  if (suffix.size() != 1) return -1;
  switch (suffix[0]) {
    case 'k':
      return 10;
    case 'm':
      return 20;
    case 'g':
      return 30;
    case 't':
      return 40;
    default:
      return -1;
  }
}

}  // namespace

Result<uint64_t> parse_size(std::string_view text, std::string_view option) {
  size_t i = 0;
  uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (UINT64_MAX - digit) / 10) {
      return Status::invalid_argument(std::string(option) + ": '" + std::string(text) +
                                      "' overflows 64 bits");
    }
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) return not_a_size(text, option);
  int shift = suffix_shift(std::string(text.substr(i)));
  if (shift < 0) return not_a_size(text, option);
  if (shift > 0 && value > (UINT64_MAX >> shift)) {
    return Status::invalid_argument(std::string(option) + ": '" + std::string(text) +
                                    "' overflows 64 bits");
  }
  return value << shift;
}

}  // namespace nvmf::target
