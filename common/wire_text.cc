// SPDX-License-Identifier: BSD-3-Clause
// escape_wire_text: a strict UTF-8 decoder (RFC 3629 table of well-formed byte sequences) that
// keeps printable characters and escapes the rest.
#include "common/wire_text.h"

#include <cstdint>

namespace nvmf {
namespace {

// Length of the well-formed UTF-8 sequence at the start of `s` and its code point; 0 when the
// first byte does not start one (RFC 3629 §4).
size_t decode_utf8(std::string_view s, uint32_t* cp) {
  auto b = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  uint8_t c = b(0);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n;
  uint8_t lo = 0x80, hi = 0xBF;  // bounds of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // no overlong forms
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // no overlong forms
    if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;  // a continuation byte, C0/C1 (overlong) or F5..FF
  }
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (b(i) < 0x80 || b(i) > 0xBF) return 0;
  }
  uint32_t v = c & (0xFF >> (n + 1));
  for (size_t i = 1; i < n; ++i) v = (v << 6) | (b(i) & 0x3F);
  *cp = v;
  return n;
}

bool needs_u_escape(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 || cp == 0x200E ||
         cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// Appends `prefix` and the low `digits` hex digits of `value` (lowercase): a fixed width, so an
// escape is always 4 (\xNN) or 6 (\uNNNN) bytes, whatever the value.
void append_escape(std::string& out, const char* prefix, uint32_t value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += kHex[(value >> shift) & 0xF];
}

}  // namespace

std::string escape_wire_text(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  while (!bytes.empty()) {
    uint32_t cp = 0;
    size_t n = decode_utf8(bytes, &cp);
    if (n == 0 || cp < 0x20 || cp == 0x7F) {
      append_escape(out, "\\x", static_cast<uint8_t>(bytes[0]), 2);
      n = 1;
    } else if (needs_u_escape(cp)) {  // every such code point is below U+10000: 4 digits
      append_escape(out, "\\u", cp, 4);
    } else {
      out.append(bytes.data(), n);
    }
    bytes.remove_prefix(n);
  }
  return out;
}

bool is_safe_wire_text(std::string_view text) {
  while (!text.empty()) {
    uint32_t cp = 0;
    size_t n = decode_utf8(text, &cp);
    if (n == 0 || cp < 0x20 || cp == 0x7F || needs_u_escape(cp)) return false;
    text.remove_prefix(n);
  }
  return true;
}

}  // namespace nvmf
