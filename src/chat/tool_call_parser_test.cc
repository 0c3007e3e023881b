#include "chat/tool_call_parser.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/bounded_json.h"

namespace pg {
namespace {

TEST(ToolCallParserTest, PlainTextHasNoCalls) {
  ParsedAssistant p = ParseToolCalls("  Hello there.\n");
  EXPECT_EQ(p.content, "Hello there.");
  EXPECT_TRUE(p.tool_calls.empty());
}

TEST(ToolCallParserTest, HermesBlock) {
  ParsedAssistant p = ParseToolCalls(
      "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\", \"n\": 3}}\n</tool_call>");
  ASSERT_EQ(p.tool_calls.size(), 1u);
  EXPECT_EQ(p.tool_calls[0].name, "read_file");
  EXPECT_EQ(p.tool_calls[0].arguments_json, R"({"path":"README.md","n":3})");
  EXPECT_EQ(p.content, "");
}

TEST(ToolCallParserTest, TextAroundAndSeveralCalls) {
  ParsedAssistant p = ParseToolCalls(
      "Let me look.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n"
      "<tool_call>{\"name\": \"b\", \"arguments\": {\"x\": [1, {\"y\": null}], \"s\": \"é\"}}</tool_call>\nDone.");
  ASSERT_EQ(p.tool_calls.size(), 2u);
  EXPECT_EQ(p.tool_calls[0].name, "a");
  EXPECT_EQ(p.tool_calls[0].arguments_json, "{}");
  EXPECT_EQ(p.tool_calls[1].name, "b");
  EXPECT_EQ(nlohmann::json::parse(p.tool_calls[1].arguments_json),
            nlohmann::json::parse(R"({"x": [1, {"y": null}], "s": "é"})"));
  EXPECT_EQ(p.content, "Let me look.\n\n\nDone.");
}

TEST(ToolCallParserTest, ArgumentsAsStringOrParametersOrAbsent) {
  ParsedAssistant p = ParseToolCalls(
      "<tool_call>{\"name\": \"a\", \"arguments\": \"{\\\"k\\\": 1}\"}</tool_call>"
      "<tool_call>{\"name\": \"b\", \"parameters\": {\"k\": 2}}</tool_call>"
      "<tool_call>{\"name\": \"c\"}</tool_call>");
  ASSERT_EQ(p.tool_calls.size(), 3u);
  EXPECT_EQ(p.tool_calls[0].arguments_json, R"({"k":1})");
  EXPECT_EQ(p.tool_calls[1].arguments_json, R"({"k":2})");
  EXPECT_EQ(p.tool_calls[2].arguments_json, "{}");
}

TEST(ToolCallParserTest, MalformedBlocksStayInContent) {
  const char* bad[] = {
      "<tool_call>{not json}</tool_call>",
      "<tool_call>{\"arguments\": {}}</tool_call>",                    // no name
      "<tool_call>{\"name\": 3, \"arguments\": {}}</tool_call>",       // name not a string
      "<tool_call>{\"name\": \"a\", \"arguments\": [1]}</tool_call>",  // arguments not an object
      "<tool_call>{\"name\": \"a\", \"arguments\": \"nope\"}</tool_call>",
      "<tool_call>[1, 2]</tool_call>",
  };
  for (const char* text : bad) {
    ParsedAssistant p = ParseToolCalls(text);
    EXPECT_TRUE(p.tool_calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
  // A good block after a bad one is still parsed.
  ParsedAssistant p =
      ParseToolCalls("<tool_call>{oops}</tool_call> then <tool_call>{\"name\": \"ok\", \"arguments\": {}}</tool_call>");
  ASSERT_EQ(p.tool_calls.size(), 1u);
  EXPECT_EQ(p.tool_calls[0].name, "ok");
  EXPECT_EQ(p.content, "<tool_call>{oops}</tool_call> then");
}

TEST(ToolCallParserTest, UnterminatedBlockStaysInContent) {
  // Cut off before a call could start: content, byte for byte.
  for (const char* text : {"Calling <tool_call>{\"name\": \"a\"", "Calling <tool_call>{\"name\": \"a\", \"argu",
                           "Calling <tool_call>", "Calling <tool_c"}) {
    ParsedAssistant p = ParseToolCalls(text);
    EXPECT_TRUE(p.tool_calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
}

TEST(ToolCallParserTest, CallCutOffAfterItStartedKeepsItsArguments) {
  // Streaming already sent the call's start; the non-streamed answer agrees,
  // and the arguments are completed into valid JSON.
  ParsedAssistant p = ParseToolCalls("Calling <tool_call>{\"name\": \"a\", \"arguments\": {\"x\": [1, 2");
  ASSERT_EQ(p.tool_calls.size(), 1u);
  EXPECT_EQ(p.tool_calls[0].name, "a");
  EXPECT_EQ(p.tool_calls[0].arguments_json, "{\"x\":[1,2]}");
  EXPECT_EQ(p.content, "Calling");
  // Broken by markup inside the arguments: they end there, closed.
  p = ParseToolCalls("<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": </tool_call> after");
  ASSERT_EQ(p.tool_calls.size(), 1u);
  EXPECT_EQ(p.tool_calls[0].arguments_json, "{\"x\":null}");
  EXPECT_EQ(p.content, "after");
}

TEST(ToolCallParserTest, LlamaBareJson) {
  ParsedAssistant p = ParseToolCalls("  {\"name\": \"read_file\", \"parameters\": {\"path\": \"README.md\"}}  ");
  ASSERT_EQ(p.tool_calls.size(), 1u);
  EXPECT_EQ(p.tool_calls[0].name, "read_file");
  EXPECT_EQ(p.tool_calls[0].arguments_json, R"({"path":"README.md"})");
  EXPECT_EQ(p.content, "");

  p = ParseToolCalls("<|python_tag|>{\"name\": \"f\", \"parameters\": {}}");
  ASSERT_EQ(p.tool_calls.size(), 1u);
  EXPECT_EQ(p.tool_calls[0].name, "f");

  // Off when asked, and never for JSON that is not a call.
  ToolCallParseOptions no_bare;
  no_bare.bare_json = false;
  p = ParseToolCalls("{\"name\": \"f\", \"parameters\": {}}", no_bare);
  EXPECT_TRUE(p.tool_calls.empty());
  p = ParseToolCalls("{\"answer\": 42}");
  EXPECT_TRUE(p.tool_calls.empty());
  EXPECT_EQ(p.content, "{\"answer\": 42}");
  p = ParseToolCalls("Sure: {\"name\": \"f\", \"parameters\": {}}");
  EXPECT_TRUE(p.tool_calls.empty());
}

// Arguments nested as deep as the model likes still come out as JSON that a
// bounded parse (the client's, and ours on the next turn) accepts, in every
// format: streamed JSON arguments stop at the limit, a GLM value is parsed one
// level shallower than its object (found by request_path_fuzz).
TEST(ToolCallParserTest, DeeplyNestedArgumentsStayWithinTheBoundedDepth) {
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  const std::string limit = std::string(kDefaultMaxJsonDepth, '[') + std::string(kDefaultMaxJsonDepth, ']');
  const std::pair<ToolCallFormat, std::string> cases[] = {
      {ToolCallFormat::kHermes, "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": " + deep + "}}</tool_call>"},
      {ToolCallFormat::kLlama3Json, "{\"name\": \"f\", \"parameters\": {\"a\": " + deep + "}}"},
      {ToolCallFormat::kGlm45, "<tool_call>f<arg_key>a</arg_key><arg_value>" + limit + "</arg_value></tool_call>"},
      {ToolCallFormat::kDeepSeekV31, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"a\": " + deep +
                                         "}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
  };
  for (const auto& [format, text] : cases) {
    ToolCallParseOptions opt;
    opt.format = format;
    ParsedAssistant p = ParseToolCalls(text, opt);
    ASSERT_EQ(p.tool_calls.size(), 1u) << text.substr(0, 40);
    nlohmann::ordered_json args;
    EXPECT_EQ(ParseBoundedJson(p.tool_calls[0].arguments_json, kDefaultMaxJsonDepth, &args).kind,
              JsonParseError::Kind::kNone)
        << text.substr(0, 40);
    EXPECT_TRUE(args.is_object());
  }
}

// A GLM argument key is model output too: invalid UTF-8 in it becomes U+FFFD
// instead of an exception from the JSON writer (found by request_path_fuzz).
TEST(ToolCallParserTest, GlmKeyWithInvalidUtf8) {
  ToolCallParseOptions opt;
  opt.format = ToolCallFormat::kGlm45;
  ParsedAssistant p = ParseToolCalls("<tool_call>f<arg_key>a\xff</arg_key><arg_value>1</arg_value></tool_call>", opt);
  ASSERT_EQ(p.tool_calls.size(), 1u);
  EXPECT_EQ(p.tool_calls[0].arguments_json, "{\"a\xEF\xBF\xBD\":1}");
}

TEST(ToolCallParserTest, GarbageNeverCrashes) {
  std::string s;
  const char* pieces[] = {"<tool_call>", "</tool_call>", "{", "}", "\"name\"", ":", "\xff", "\"", "[", "x"};
  uint32_t seed = 12345;
  for (int i = 0; i < 2000; ++i) {
    seed = seed * 1103515245 + 12345;
    s += pieces[(seed >> 16) % 10];
    ParsedAssistant p = ParseToolCalls(s);
    EXPECT_LE(p.content.size(), s.size());
  }
}

}  // namespace
}  // namespace pg
