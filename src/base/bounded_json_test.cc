#include "base/bounded_json.h"

#include <gtest/gtest.h>

#include <string>

namespace pg {
namespace {

std::string Nested(int depth, char open, char close) {
  return std::string(static_cast<size_t>(depth), open) + std::string(static_cast<size_t>(depth), close);
}

TEST(BoundedJson, ParsesWithinTheLimit) {
  nlohmann::ordered_json j;
  JsonParseError e = ParseBoundedJson(R"({"b": [1, {"c": null}], "a": "x"})", 3, &j);
  EXPECT_EQ(e.kind, JsonParseError::Kind::kNone) << e.message;
  EXPECT_EQ(j.dump(), R"({"b":[1,{"c":null}],"a":"x"})");  // key order kept
  EXPECT_EQ(ParseBoundedJson(Nested(64, '[', ']'), 64, &j).kind, JsonParseError::Kind::kNone);
}

TEST(BoundedJson, RefusesDeepNestingWithoutRecursing) {
  nlohmann::ordered_json j;
  JsonParseError e = ParseBoundedJson(Nested(65, '[', ']'), 64, &j);
  EXPECT_EQ(e.kind, JsonParseError::Kind::kTooDeep);
  EXPECT_NE(e.message.find("64"), std::string::npos) << e.message;
  EXPECT_TRUE(j.is_discarded());
  // The body that crashed the server: 100,000 levels inside an object.
  std::string body = R"({"messages": )" + Nested(100000, '[', ']') + "}";
  EXPECT_EQ(ParseBoundedJson(body, 64, &j).kind, JsonParseError::Kind::kTooDeep);
  // Unterminated deep input is refused for depth, not read to the end.
  EXPECT_EQ(ParseBoundedJson(std::string(1000000, '['), 64, &j).kind, JsonParseError::Kind::kTooDeep);
}

TEST(BoundedJson, SyntaxErrorsCarryAPosition) {
  nlohmann::json j;
  JsonParseError e = ParseBoundedJson(R"({"a": 1,})", 64, &j);
  EXPECT_EQ(e.kind, JsonParseError::Kind::kSyntax);
  EXPECT_NE(e.message.find("column"), std::string::npos) << e.message;
  EXPECT_TRUE(j.is_discarded());
  EXPECT_EQ(ParseBoundedJson("", 64, &j).kind, JsonParseError::Kind::kSyntax);
  EXPECT_EQ(ParseBoundedJson("[1] [2]", 64, &j).kind, JsonParseError::Kind::kSyntax);
  EXPECT_TRUE(ParseBoundedOrDiscard("{").is_discarded());
}

TEST(BoundedJson, RefusesNulBytes) {
  // nlohmann's lexer alone stops at a NUL: what follows one was dropped.
  nlohmann::json j;
  const std::string trailing("{\"a\": 1}\0{\"b\": 2}", 17);
  JsonParseError e = ParseBoundedJson(trailing, 64, &j);
  EXPECT_EQ(e.kind, JsonParseError::Kind::kSyntax);
  EXPECT_NE(e.message.find("NUL byte at offset 8"), std::string::npos) << e.message;
  EXPECT_TRUE(j.is_discarded());
  EXPECT_EQ(ParseBoundedJson(std::string("[1]\0", 4), 64, &j).kind, JsonParseError::Kind::kSyntax);
  // Escaped, it is an ordinary character.
  EXPECT_EQ(ParseBoundedJson(R"(["a\u0000b"])", 64, &j).kind, JsonParseError::Kind::kNone);
  EXPECT_EQ(j[0].get<std::string>().size(), 3u);
}

}  // namespace
}  // namespace pg
