// SPDX-License-Identifier: BSD-3-Clause
#include "common/id_text.h"

#include <gtest/gtest.h>

namespace nvmf {
namespace {

TEST(IdTextTest, ParsesTheDashedAndTheBareFormsEitherCase) {
  const Id16 want{0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78,
                  0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0};
  for (const char* text :
       {"0F1E2D3C4B5A69788796A5B4C3D2E1F0", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}) {
    auto id = parse_id_text(text);
    ASSERT_TRUE(id.ok()) << text;
    EXPECT_EQ(*id, want) << text;
  }
}

TEST(IdTextTest, RefusesWrongLengthsAndNonHexNamingTheText) {
  for (const char* text : {"", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0ff",
                           "0f1e2d3c4b5a69788796a5b4c3d2e1f", "0f1e2d3c4b5a69788796a5b4c3d2e1fg"}) {
    auto id = parse_id_text(text);
    ASSERT_FALSE(id.ok()) << text;
    EXPECT_EQ(id.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(id.status().message().find(std::string("\"") + text + "\""), std::string::npos);
  }
}

TEST(IdTextTest, PrintsTheUuidFormAndTheUpperCaseHexFormThatParseBack) {
  const Id16 id{0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78,
                0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0};
  EXPECT_EQ(uuid_text(id), "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
  EXPECT_EQ(hex_text(id), "0F1E2D3C4B5A69788796A5B4C3D2E1F0");
  EXPECT_EQ(*parse_id_text(uuid_text(id)), id);
  EXPECT_EQ(*parse_id_text(hex_text(id)), id);
}

}  // namespace
}  // namespace nvmf
