#include "chat/json_stream_scanner.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/bounded_json.h"

namespace pg {
namespace {

// Feeds text; returns what was taken and whether it stopped (done/broken).
std::string Feed(JsonStreamScanner* s, std::string_view text, JsonStreamScanner::Step* last = nullptr) {
  std::string out;
  for (char c : text) {
    JsonStreamScanner::Step st = s->Push(c, &out);
    if (last) *last = st;
    if (st == JsonStreamScanner::Step::kBroken || st == JsonStreamScanner::Step::kDone) break;
  }
  return out;
}

TEST(JsonStreamScannerTest, TakesAValueCompactAndStopsAtItsEnd) {
  JsonStreamScanner s;
  JsonStreamScanner::Step last;
  std::string out = Feed(&s, R"({ "a" : [1, -2.5e+3, true, null, {"b": "x\"y\u00e9"}], "c": {} } trailing)", &last);
  EXPECT_EQ(last, JsonStreamScanner::Step::kDone);
  EXPECT_TRUE(s.done());
  EXPECT_EQ(out, R"({"a":[1,-2.5e+3,true,null,{"b":"x\"y\u00e9"}],"c":{}})");
  EXPECT_EQ(s.Completion(), "");
}

TEST(JsonStreamScannerTest, EveryPrefixCompletesToValidJson) {
  const char* docs[] = {
      R"({"path": "a b\\c\n", "n": -0.5E-7, "list": [[], [1, [2, {"k": false}]], "\u20ac"], "o": {"p": null}})",
      R"({"x": 10, "y": [true, false], "z": "é 世界"})",
      R"({})",
  };
  for (const char* doc : docs) {
    std::string_view d(doc);
    for (size_t n = 1; n <= d.size(); ++n) {
      // Generated text arrives in whole UTF-8 characters.
      if (n < d.size() && (static_cast<unsigned char>(d[n]) & 0xC0) == 0x80) continue;
      JsonStreamScanner s;
      std::string out = Feed(&s, d.substr(0, n));
      std::string whole = out + s.Completion();
      nlohmann::json j = nlohmann::json::parse(whole, nullptr, false);
      ASSERT_FALSE(j.is_discarded()) << "prefix " << n << ": " << whole;
      EXPECT_TRUE(j.is_object()) << whole;
    }
  }
}

// Each (text, want) case: the text fed whole, then completed, is want and a
// valid JSON document.
template <typename Cases>
void ExpectCompleted(const Cases& cases) {
  for (const auto& [text, want] : cases) {
    JsonStreamScanner s;
    std::string got = Feed(&s, text);
    got += s.Completion();
    EXPECT_EQ(got, want) << text;
    EXPECT_FALSE(nlohmann::json::parse(got, nullptr, false).is_discarded()) << got;
  }
}

TEST(JsonStreamScannerTest, StopsAtWhatCannotContinue) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"a": <b>)", R"({"a":null})"},
      {R"({"a": 01})", R"({"a":0})"},  // a leading zero ends the number; "1"
                                       // cannot follow
      {R"({"a" 1})", R"({"a":null})"},
      {R"({"a": tru })", R"({"a":true})"},
      {R"({"a": 1,})", R"({"a":1,"":null})"},
      {R"({"a": "x\q"})", R"({"a":"x"})"},  // an escape is held until complete
      {R"({"a": "x\u12")", R"({"a":"x"})"},
      {"{\"a\": 1.```", R"({"a":1.0})"},
      {R"([1, 2] x)", R"([1,2])"},
  };
  ExpectCompleted(cases);
}

// Model output nested past the bounded parser's limit ends at the level that
// would exceed it, so what the client assembles is accepted by ParseBoundedJson
// (found by request_path_fuzz: 200 nested arrays in a tool call's arguments).
TEST(JsonStreamScannerTest, NestingStopsAtTheBoundedDepth) {
  for (int depth : {kDefaultMaxJsonDepth - 1, kDefaultMaxJsonDepth, kDefaultMaxJsonDepth + 1, 200}) {
    const std::string text = "{\"a\":" + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
    JsonStreamScanner s;
    std::string got = Feed(&s, text);
    got += s.Completion();
    nlohmann::ordered_json j;
    EXPECT_EQ(ParseBoundedJson(got, kDefaultMaxJsonDepth, &j).kind, JsonParseError::Kind::kNone) << depth;
    if (depth <= kDefaultMaxJsonDepth) {
      EXPECT_EQ(got, text) << depth;  // within the limit: unchanged
    }
  }
}

// A number stops before the digit that would overflow a double, which a JSON
// parser refuses ("1e400"); small and underflowing ones pass unchanged
// (found by request_path_fuzz).
TEST(JsonStreamScannerTest, NumbersStayWithinADouble) {
  const std::pair<std::string, std::string> cases[] = {
      {"[2111e400]", "[2111e40]"}, {"[1e308, 2]", "[1e30]"},  // the arguments end at the digit that would overflow
      {"[-1e307]", "[-1e307]"},    {"[1e-400]", "[1e-400]"},
      {"[0.5e300]", "[0.5e300]"},  {"[" + std::string(400, '7') + "]", "[" + std::string(308, '7') + "]"},
  };
  for (const auto& [text, want] : cases) {
    JsonStreamScanner s;
    std::string got = Feed(&s, text);
    got += s.Completion();
    EXPECT_EQ(got, want) << text.substr(0, 30);
    EXPECT_FALSE(nlohmann::json::parse(got, nullptr, false).is_discarded()) << got.substr(0, 30);
  }
}

TEST(JsonStreamScannerTest, StringsStayValidUnicode) {
  const std::pair<std::string, std::string> cases[] = {
      {"{\"a\": \"\\ud83d\\ude00 ok\"}", "{\"a\":\"\\ud83d\\ude00 ok\"}"},  // a surrogate pair passes
      {"{\"a\": \"\\ud83dx\"}", "{\"a\":\"\\ufffdx\"}"},                    // a lone high half
      {"{\"a\": \"\\ude00\\n\"}", "{\"a\":\"\\ufffd\\n\"}"},                // a lone low half
      {"{\"a\": \"\xc3>\xff\xe2\x82\xac\"}", "{\"a\":\"\xef\xbf\xbd>\xef\xbf\xbd\xe2\x82\xac\"}"},
      {"{\"a\": \"\xed\xa0\x80\"}", "{\"a\":\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"}"},  // UTF-8 surrogate
      {"{\"a\": \"\xe2\x82", "{\"a\":\"\xef\xbf\xbd\"}"},                                 // cut inside a character
      {"{\"a\": \"\\ud83d", "{\"a\":\"\\ufffd\"}"},
  };
  ExpectCompleted(cases);
}

TEST(JsonStreamScannerTest, EscapesRawControlCharactersInStrings) {
  JsonStreamScanner s;
  std::string out = Feed(&s, "{\"code\": \"line1\nline2\ttab\"}");
  EXPECT_TRUE(s.done());
  EXPECT_EQ(out, "{\"code\":\"line1\\u000aline2\\u0009tab\"}");
  EXPECT_EQ(nlohmann::json::parse(out)["code"], "line1\nline2\ttab");
}

}  // namespace
}  // namespace pg
