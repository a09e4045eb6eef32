// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for escape_wire_text / is_safe_wire_text: each class of hostile bytes, and the
// UTF-8 edge cases of RFC 3629 (overlong forms, surrogates, above U+10FFFF, truncation).
#include "common/wire_text.h"

#include <gtest/gtest.h>

#include <string>

namespace nvmf {
namespace {

TEST(WireTextTest, PrintableAsciiAndValidUtf8Pass) {
  EXPECT_EQ(escape_wire_text("nqn.2014-08.org.nvmexpress:uuid:1234"),
            "nqn.2014-08.org.nvmexpress:uuid:1234");
  EXPECT_EQ(escape_wire_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");  // é, €, an emoji
  EXPECT_EQ(escape_wire_text(""), "");
  EXPECT_EQ(escape_wire_text("a\\b"), "a\\b");  // a backslash is kept
  EXPECT_TRUE(is_safe_wire_text("caf\xc3\xa9"));
}

TEST(WireTextTest, ControlCharactersAndDelBecomeHexEscapes) {
  EXPECT_EQ(escape_wire_text(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(escape_wire_text("\n\r\t\x1b[2J\x7f"), "\\x0a\\x0d\\x09\\x1b[2J\\x7f");
  EXPECT_FALSE(is_safe_wire_text("a\nb"));
  EXPECT_FALSE(is_safe_wire_text("\x7f"));
}

TEST(WireTextTest, C1LineSeparatorsAndBidiOverridesBecomeUEscapes) {
  EXPECT_EQ(escape_wire_text("\xc2\x80\xc2\x85\xc2\x9f\xc2\xa0"), "\\u0080\\u0085\\u009f\xc2\xa0");
  EXPECT_EQ(escape_wire_text("a\xe2\x80\xa8"
                             "b\xe2\x80\xa9"),
            "a\\u2028b\\u2029");
  EXPECT_EQ(escape_wire_text("\xe2\x80\xae"
                             "evil\xe2\x81\xa6"),
            "\\u202eevil\\u2066");
  EXPECT_EQ(escape_wire_text("\xe2\x80\x8e\xe2\x80\x8f"), "\\u200e\\u200f");
  EXPECT_FALSE(is_safe_wire_text("\xe2\x80\xa8"));
  EXPECT_FALSE(is_safe_wire_text("\xc2\x85"));
}

TEST(WireTextTest, InvalidUtf8BecomesOneHexEscapePerByte) {
  EXPECT_EQ(escape_wire_text("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(escape_wire_text("\x80x"), "\\x80x");                  // lone continuation byte
  EXPECT_EQ(escape_wire_text("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(escape_wire_text("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");  // overlong, 3 bytes
  EXPECT_EQ(escape_wire_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // surrogate U+D800
  EXPECT_EQ(escape_wire_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(escape_wire_text("\xf5\x80"), "\\xf5\\x80");
  EXPECT_EQ(escape_wire_text("ab\xe2\x82"), "ab\\xe2\\x82");  // truncated at the end
  EXPECT_EQ(escape_wire_text("\xe2\x82"
                             "A"),
            "\\xe2\\x82"
            "A");  // truncated in the middle
  EXPECT_FALSE(is_safe_wire_text("\xff"));
  EXPECT_FALSE(is_safe_wire_text("\xed\xa0\x80"));
}

TEST(WireTextTest, EveryByteStringEscapesToSafeText) {
  // All 2-byte strings: the output is always safe and escaping it again changes nothing.
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      std::string in{static_cast<char>(a), static_cast<char>(b)};
      std::string out = escape_wire_text(in);
      ASSERT_TRUE(is_safe_wire_text(out)) << a << " " << b;
      ASSERT_EQ(escape_wire_text(out), out) << a << " " << b;
      ASSERT_EQ(is_safe_wire_text(in), out == in) << a << " " << b;
    }
  }
}

}  // namespace
}  // namespace nvmf
