#include "server/core/known_keys.h"

#include <gtest/gtest.h>

#include "server/common/api_error.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

TEST(UnknownKey, NamesTheFirstUnknownKeyAndWhatIsKnown) {
  const json obj = json::parse(R"({"include_usage": true, "verbose": 1, "also": 2})");
  std::optional<ApiError> e = UnknownKey(obj, {"include_usage", "include_obfuscation"}, "stream_options");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->http_status, 400);
  EXPECT_EQ(e->param, "stream_options.verbose");
  EXPECT_EQ(e->code, "unknown_parameter");
  EXPECT_EQ(e->message,
            "stream_options.verbose: unknown field (stream_options has include_usage, include_obfuscation)");
}

TEST(UnknownKey, KnownKeysAndNullsPass) {
  EXPECT_FALSE(UnknownKey(json::parse(R"({"type": "x", "keep": 2})"), {"type", "keep"}, "e").has_value());
  EXPECT_FALSE(UnknownKey(json::parse(R"({"type": "x", "other": null})"), {"type"}, "e").has_value());
  EXPECT_FALSE(UnknownKey(json::object(), {"type"}, "e").has_value());
  EXPECT_TRUE(UnknownKey(json::parse(R"({"other": false})"), {"type"}, "e").has_value());
}

}  // namespace
}  // namespace pg
