#include "server/anthropic/anthropic_request.h"

#include <gtest/gtest.h>

#include "server/common/api_error.h"
#include "server/core/request.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

constexpr int64_t kCtx = 4096;

ApiResult<AnthropicRequest> Parse(const std::string& body) { return ParseAnthropicMessages(json::parse(body), kCtx); }

ApiError ParseError(const std::string& body) {
  ApiResult<AnthropicRequest> r = Parse(body);
  EXPECT_FALSE(r.ok()) << body;
  return r.error;
}

TEST(AnthropicRequest, PlainMessageAndSampling) {
  auto r = Parse(R"({"model": "m", "max_tokens": 20, "messages": [{"role": "user", "content": "Hi"}],
                     "temperature": 0.5, "top_p": 0.9, "top_k": 7, "stop_sequences": ["END"], "stream": true,
                     "metadata": {"user_id": "sess-1"}})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  const ApiRequest& a = r.value.api;
  EXPECT_TRUE(a.chat);
  EXPECT_EQ(a.model, "m");
  EXPECT_EQ(a.sampling.max_tokens, 20);
  EXPECT_TRUE(a.max_tokens_given);
  EXPECT_FLOAT_EQ(a.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(a.sampling.top_p, 0.9f);
  EXPECT_EQ(a.sampling.top_k, 7);
  EXPECT_EQ(a.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(a.stream);
  EXPECT_EQ(a.user, "sess-1");
  EXPECT_EQ(a.messages, json::parse(R"([{"role": "user", "content": "Hi"}])"));
  EXPECT_TRUE(a.tools.is_null());
  EXPECT_TRUE(r.value.breakpoints.empty());
}

TEST(AnthropicRequest, SystemBlocksAndTextBlocksAreJoined) {
  auto r = Parse(R"({"model": "m", "max_tokens": 8,
      "system": [{"type": "text", "text": "You are "}, {"type": "text", "text": "terse."}],
      "messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value.api.messages, json::parse(R"([{"role": "system", "content": "You are terse."},
                                                  {"role": "user", "content": "ab"}])"));
}

TEST(AnthropicRequest, EmptySystemAddsNoTurn) {
  for (const char* system : {R"("")", "[]"}) {
    auto r = Parse(std::string(R"({"model": "m", "max_tokens": 8, "system": )") + system +
                   R"(, "messages": [{"role": "user", "content": "Hi"}]})");
    ASSERT_TRUE(r.ok()) << r.error.message;
    EXPECT_EQ(r.value.api.messages.size(), 1u) << system;
  }
}

TEST(AnthropicRequest, ToolRoundTripBecomesToolCallsAndToolMessages) {
  auto r = Parse(R"({"model": "m", "max_tokens": 8,
      "tools": [{"name": "get_weather", "description": "Weather", "input_schema": {"type": "object"}}],
      "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true},
      "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Let me look."},
          {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [
          {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny"}]},
          {"type": "text", "text": "And tomorrow?"}]}]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  const ApiRequest& a = r.value.api;
  EXPECT_EQ(a.messages, json::parse(R"([
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "Let me look.", "tool_calls": [{"id": "toolu_1", "type": "function",
      "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "tool_call_id": "toolu_1", "content": "sunny"},
    {"role": "user", "content": "And tomorrow?"}])"));
  EXPECT_EQ(a.tools, json::parse(R"([{"type": "function", "function": {"name": "get_weather",
      "description": "Weather", "parameters": {"type": "object"}}}])"));
  EXPECT_EQ(a.tool_choice, ApiRequest::ToolChoice::kNamed);
  EXPECT_EQ(a.tool_choice_name, "get_weather");
  EXPECT_FALSE(a.parallel_tool_calls);
}

TEST(AnthropicRequest, ToolChoiceKinds) {
  const std::string tools = R"("tools": [{"name": "t", "input_schema": {"type": "object"}}], )";
  auto choice = [&](const std::string& tc) {
    auto r = Parse(R"({"model": "m", "max_tokens": 8, )" + tools + R"("tool_choice": )" + tc +
                   R"(, "messages": [{"role": "user", "content": "x"}]})");
    EXPECT_TRUE(r.ok()) << r.error.message;
    return r.value.api;
  };
  EXPECT_EQ(choice(R"({"type": "auto"})").tool_choice, ApiRequest::ToolChoice::kAuto);
  EXPECT_EQ(choice(R"({"type": "any"})").tool_choice, ApiRequest::ToolChoice::kRequired);
  ApiRequest none = choice(R"({"type": "none"})");
  EXPECT_EQ(none.tool_choice, ApiRequest::ToolChoice::kNone);
  EXPECT_TRUE(none.tools.is_null());  // neither rendered nor parsed
  EXPECT_EQ(
      ParseError(R"({"model": "m", "max_tokens": 8, )" + tools +
                 R"("tool_choice": {"type": "tool", "name": "other"}, "messages": [{"role": "user", "content": "x"}]})")
          .param,
      "tool_choice.name");
}

TEST(AnthropicRequest, ToolResultErrorIsMarked) {
  auto r = Parse(R"({"model": "m", "max_tokens": 8, "messages": [
      {"role": "user", "content": "go"},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": true}]}]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value.api.messages.back(),
            json::parse(R"({"role": "tool", "tool_call_id": "t1", "content": "Error: boom"})"));
}

TEST(AnthropicRequest, CacheControlBreakpoints) {
  auto r = Parse(R"({"model": "m", "max_tokens": 8,
      "tools": [{"name": "t", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
      "system": [{"type": "text", "text": "abc", "cache_control": {"type": "ephemeral"}}, {"type": "text", "text": "de"}],
      "messages": [{"role": "user", "content": [{"type": "text", "text": "xy", "cache_control": {"type": "ephemeral", "ttl": "5m"}},
                                                {"type": "text", "text": "z"}]},
                   {"role": "assistant", "content": [{"type": "tool_use", "id": "u", "name": "t", "input": {},
                                                      "cache_control": {"type": "ephemeral"}}]},
                   {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u", "content": "ok"}]}]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  const auto& b = r.value.breakpoints;
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].kind, CacheBreakpoint::Kind::kTool);
  EXPECT_EQ(b[0].index, 0u);
  EXPECT_EQ(b[0].ttl_s, 3600);
  EXPECT_EQ(b[1].kind, CacheBreakpoint::Kind::kContent);  // system: after "abc" of "abcde"
  EXPECT_EQ(b[1].index, 0u);
  EXPECT_EQ(b[1].offset, 3u);
  EXPECT_EQ(b[1].ttl_s, 300);
  EXPECT_EQ(b[2].kind, CacheBreakpoint::Kind::kContent);  // user: after "xy" of "xyz"
  EXPECT_EQ(b[2].index, 1u);
  EXPECT_EQ(b[2].offset, 2u);
  EXPECT_EQ(b[3].kind, CacheBreakpoint::Kind::kToolArguments);
  EXPECT_EQ(b[3].index, 2u);
  EXPECT_EQ(b[3].call, 0u);
}

TEST(AnthropicRequest, BadCacheControlIsRefused) {
  auto with = [](const std::string& cc) {
    return R"({"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": [{"type": "text", "text": "x", "cache_control": )" +
           cc + "}]}]}";
  };
  EXPECT_EQ(ParseError(with(R"({"type": "persistent"})")).param, "messages[0].content[0].cache_control.type");
  EXPECT_EQ(ParseError(with(R"({"type": "ephemeral", "ttl": "2h"})")).param,
            "messages[0].content[0].cache_control.ttl");
  EXPECT_EQ(ParseError(with(R"({"type": "ephemeral", "scope": "x"})")).param,
            "messages[0].content[0].cache_control.scope");
  std::string five = R"({"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": [)";
  for (int i = 0; i < 5; ++i)
    five += std::string(i ? "," : "") + R"({"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}})";
  EXPECT_EQ(ParseError(five + "]}]}").code, "too_many_cache_breakpoints");
}

TEST(AnthropicRequest, RequiredAndUnknownFields) {
  ApiError e = ParseError(R"({"model": "m", "messages": [{"role": "user", "content": "x"}]})");
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.param, "max_tokens");
  e = ParseError(
      R"({"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "x"}], "n": 2, "seed": 1})");
  EXPECT_NE(e.message.find("'n', 'seed'"), std::string::npos) << e.message;
  e = ParseError(R"({"max_tokens": 8, "messages": [{"role": "user", "content": "x"}]})");
  EXPECT_EQ(e.param, "model");
  e = ParseError(R"({"model": "m", "max_tokens": 8, "thinking": {"type": "sometimes"},
                     "messages": [{"role": "user", "content": "x"}]})");
  EXPECT_EQ(e.param, "thinking.type");
  EXPECT_TRUE(Parse(R"({"model": "m", "max_tokens": 8, "thinking": {"type": "disabled"},
                        "messages": [{"role": "user", "content": "x"}]})")
                  .ok());
  e = ParseError(R"({"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "x", "name": "bob"}]})");
  EXPECT_EQ(e.param, "messages[0].name");
  e = ParseError(R"({"model": "m", "max_tokens": 8, "metadata": {"user_id": "u", "tag": 1},
                     "messages": [{"role": "user", "content": "x"}]})");
  EXPECT_EQ(e.param, "metadata.tag");
}

TEST(AnthropicRequest, RangesAndTypes) {
  const std::string msgs = R"("messages": [{"role": "user", "content": "x"}])";
  EXPECT_EQ(ParseError(R"({"model": "m", "max_tokens": 0, )" + msgs + "}").param, "max_tokens");
  // Past the context is FitToContext's to refuse, in Anthropic's words with the prompt's length.
  EXPECT_TRUE(Parse(R"({"model": "m", "max_tokens": 99999, )" + msgs + "}").ok());
  EXPECT_EQ(ParseError(R"({"model": "m", "max_tokens": 8, "temperature": 1.5, )" + msgs + "}").param, "temperature");
  EXPECT_EQ(ParseError(R"({"model": "m", "max_tokens": 8, "top_p": 0, )" + msgs + "}").param, "top_p");
  EXPECT_EQ(ParseError(R"({"model": "m", "max_tokens": 8, "stop_sequences": "x", )" + msgs + "}").param,
            "stop_sequences");
  EXPECT_EQ(ParseError(R"({"model": "m", "max_tokens": 8, "messages": [{"role": "tool", "content": "x"}]})").param,
            "messages[0].role");
}

TEST(AnthropicRequest, UnsupportedContentIsRefusedByName) {
  ApiError e = ParseError(R"({"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": [
      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]}]})");
  EXPECT_EQ(e.param, "messages[0].content[0].type");
  EXPECT_NE(e.message.find("'image'"), std::string::npos);
  e = ParseError(R"({"model": "m", "max_tokens": 8, "tools": [{"type": "web_search_20250305", "name": "web_search"}],
                     "messages": [{"role": "user", "content": "x"}]})");
  EXPECT_EQ(e.code, "unsupported_tool");
  e = ParseError(R"({"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "x"},
                     {"role": "assistant", "content": "The answer is"}]})");
  EXPECT_EQ(e.code, "unsupported_prefill");
  e = ParseError(R"({"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "nope", "content": "x"}]}]})");
  EXPECT_EQ(e.code, "unknown_tool_use_id");
}

TEST(AnthropicRequest, CountTokensTakesNoGenerationFields) {
  auto r = ParseAnthropicCountTokens(json::parse(R"({"model": "m", "messages": [{"role": "user", "content": "x"}]})"));
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value.api.messages.size(), 1u);
  auto bad = ParseAnthropicCountTokens(
      json::parse(R"({"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "x"}]})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error.message.find("'max_tokens'"), std::string::npos);
}

// Every node of a body that uses every feature, replaced by a value of each
// JSON type: the parser never throws, and refuses with a 400 or accepts.
TEST(AnthropicRequest, AnyValueAnywhereIsAnsweredNotThrown) {
  const json full = json::parse(R"({"model": "m", "max_tokens": 8, "temperature": 0.5, "top_p": 0.9, "top_k": 4,
      "stop_sequences": ["x"], "stream": false, "metadata": {"user_id": "u"}, "thinking": {"type": "disabled"},
      "service_tier": "auto",
      "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral", "ttl": "5m"}}],
      "tools": [{"name": "f", "description": "d", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}],
      "tool_choice": {"type": "tool", "name": "f", "disable_parallel_tool_use": true},
      "messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "a"},
          {"type": "tool_use", "id": "t1", "name": "f", "input": {"k": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": false,
          "content": [{"type": "text", "text": "r"}], "cache_control": {"type": "ephemeral"}}]}]})");
  ASSERT_TRUE(ParseAnthropicMessages(full, kCtx).ok());
  const json values[] = {nullptr,          json(true),    json(-1),       json(1e300),
                         json("s"),        json::array(), json::object(), json::array({1, "x"}),
                         json{{"type", 5}}};
  std::vector<json::json_pointer> pointers;
  auto walk = [&](auto&& self, const json& node, const json::json_pointer& at) -> void {
    if (!at.empty()) pointers.push_back(at);
    if (node.is_object()) {
      for (auto it = node.begin(); it != node.end(); ++it) self(self, it.value(), at / it.key());
    } else if (node.is_array()) {
      for (size_t i = 0; i < node.size(); ++i) self(self, node[i], at / i);
    }
  };
  walk(walk, full, json::json_pointer());
  ASSERT_GT(pointers.size(), 50u);
  for (const auto& at : pointers) {
    for (const json& v : values) {
      json body = full;
      body[at] = v;
      ApiResult<AnthropicRequest> r = ParseAnthropicMessages(body, kCtx);  // must not throw
      EXPECT_TRUE(r.ok() || r.error.http_status == 400) << at.to_string() << " = " << v.dump();
      ApiResult<AnthropicRequest> c = ParseAnthropicCountTokens(body);
      EXPECT_TRUE(c.ok() || c.error.http_status == 400) << at.to_string() << " = " << v.dump();
    }
  }
}

// What Claude Code sends (issue 24): thinking, output_config, context_management,
// deferred tools and system turns inside the conversation.
TEST(AnthropicRequest, ThinkingMapsOntoTheTemplateSwitch) {
  const std::string msgs = R"("messages": [{"role": "user", "content": "x"}])";
  auto parse = [&](const std::string& fields, bool sw) {
    return ParseAnthropicMessages(json::parse(R"({"model": "m", "max_tokens": 8, )" + fields + ", " + msgs + "}"), kCtx,
                                  {}, sw);
  };
  for (const char* type : {"enabled", "adaptive"}) {
    auto r = parse(std::string(R"("thinking": {"type": ")") + type + R"(", "display": "omitted"})", true);
    ASSERT_TRUE(r.ok()) << r.error.message;
    EXPECT_EQ(r.value.api.template_kwargs, json::parse(R"({"enable_thinking": true})"));
    EXPECT_EQ(r.value.api.ignored_fields, std::vector<std::string>{"thinking.display"});
  }
  auto off = parse(R"("thinking": {"type": "disabled"})", true);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off.value.api.template_kwargs, json::parse(R"({"enable_thinking": false})"));
  EXPECT_TRUE(off.value.api.ignored_fields.empty());
  // No switch: answered without thinking, and said so.
  auto none = parse(R"("thinking": {"type": "adaptive"}, "output_config": {"effort": "medium"})", false);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none.value.api.template_kwargs.is_null());
  EXPECT_EQ(none.value.api.ignored_fields, (std::vector<std::string>{"thinking", "output_config.effort"}));
  // effort alone drives the switch: low = off.
  auto low = parse(R"("output_config": {"effort": "low"})", true);
  ASSERT_TRUE(low.ok());
  EXPECT_EQ(low.value.api.template_kwargs, json::parse(R"({"enable_thinking": false})"));
  EXPECT_EQ(
      ParseError(R"({"model": "m", "max_tokens": 8, "output_config": {"effort": "extreme"}, )" + msgs + "}").param,
      "output_config.effort");
  EXPECT_EQ(ParseError(R"({"model": "m", "max_tokens": 8, "output_config": {"format": {}}, )" + msgs + "}").param,
            "output_config.format.type");
  // format: Anthropic's structured outputs, the json_schema constraint.
  auto format = parse(R"("output_config": {"effort": "xhigh", "format": {"type": "json_schema",
      "schema": {"type": "object"}}})",
                      false);
  ASSERT_TRUE(format.ok()) << format.error.message;
  EXPECT_EQ(format.value.api.response_format, ApiRequest::ResponseFormat::kJsonSchema);
  EXPECT_EQ(format.value.api.response_schema, json::parse(R"({"type": "object"})"));
  EXPECT_EQ(format.value.api.response_schema_param, "output_config.format.schema");
  for (const auto& [f, param] : std::vector<std::pair<std::string, std::string>>{
           {R"({"type": "json_schema"})", "output_config.format.schema"},
           {R"({"type": "json_schema", "schema": 3})", "output_config.format.schema"},
           {R"({"type": "json_object", "schema": {}})", "output_config.format.type"},
           {R"({"type": "json_schema", "schema": {}, "name": "x"})", "output_config.format.name"},
           {R"("json")", "output_config.format"}}) {
    EXPECT_EQ(
        ParseError(R"({"model": "m", "max_tokens": 8, "output_config": {"format": )" + f + "}, " + msgs + "}").param,
        param)
        << f;
  }
  // Without effect, but still of Anthropic's types.
  for (const char* t : {R"({"type": "enabled", "budget_tokens": "lots"})", R"({"type": "enabled", "budget_tokens": 0})",
                        R"({"type": "adaptive", "display": 1})"}) {
    const ApiError e =
        ParseError(R"({"model": "m", "max_tokens": 8, "thinking": )" + std::string(t) + ", " + msgs + "}");
    EXPECT_EQ(e.code, "invalid_type") << t;
    EXPECT_EQ(e.param.rfind("thinking.", 0), 0u) << t << ": " << e.param;
  }
}

TEST(AnthropicRequest, SystemTurnsAndThinkingBlocksInTheConversation) {
  auto r = Parse(R"({"model": "m", "max_tokens": 8, "messages": [
      {"role": "user", "content": "a"},
      {"role": "system", "content": [{"type": "text", "text": "env", "cache_control": {"type": "ephemeral"}}]},
      {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "s"},
                                        {"type": "redacted_thinking", "data": "xx"}, {"type": "text", "text": "b"}]},
      {"role": "system", "content": "later"}]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value.api.messages, json::parse(R"([{"role": "user", "content": "a"},
      {"role": "system", "content": "env"}, {"role": "assistant", "content": "b", "reasoning_content": "hmm"},
      {"role": "system", "content": "later"}])"));
  ASSERT_EQ(r.value.breakpoints.size(), 1u);
  EXPECT_EQ(r.value.breakpoints[0].index, 1u);
}

TEST(AnthropicRequest, DeferredToolsAreDeclaredButNotRendered) {
  auto r = Parse(R"({"model": "m", "max_tokens": 8, "tools": [
      {"name": "Bash", "input_schema": {"type": "object"}},
      {"name": "Later", "input_schema": {"type": "object"}, "defer_loading": true},
      {"name": "Read", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}],
      "messages": [{"role": "user", "content": "x"}]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  ASSERT_EQ(r.value.api.tools.size(), 2u);
  EXPECT_EQ(r.value.api.tools[1]["function"]["name"], "Read");
  ASSERT_EQ(r.value.breakpoints.size(), 1u);
  EXPECT_EQ(r.value.breakpoints[0].index, 1u);  // the rendered tool's position
  EXPECT_EQ(ParseError(R"({"model": "m", "max_tokens": 8, "tools": [{"name": "A", "input_schema": {},
      "defer_loading": "yes"}], "messages": [{"role": "user", "content": "x"}]})")
                .param,
            "tools[0].defer_loading");
}

TEST(AnthropicRequest, ContextManagementClearsOldThinking) {
  const std::string history = R"("messages": [{"role": "user", "content": "a"},
      {"role": "assistant", "content": [{"type": "thinking", "thinking": "t1", "signature": "s"}, {"type": "text", "text": "b"}]},
      {"role": "user", "content": "c"},
      {"role": "assistant", "content": [{"type": "thinking", "thinking": "t2", "signature": "s"}, {"type": "text", "text": "d"}]},
      {"role": "user", "content": "e"}])";
  auto r = Parse(R"({"model": "m", "max_tokens": 8, "context_management": {"edits": [
      {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}}]}, )" +
                 history + "}");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_FALSE(r.value.api.messages[1].contains("reasoning_content"));
  EXPECT_EQ(r.value.api.messages[3]["reasoning_content"], "t2");
  EXPECT_EQ(r.value.applied_edits,
            nlohmann::json::parse(R"([{"type": "clear_thinking_20251015", "cleared_thinking_turns": 1}])"));
  auto all = Parse(R"({"model": "m", "max_tokens": 8, "context_management": {"edits": [
      {"type": "clear_thinking_20251015", "keep": "all"}]}, )" +
                   history + "}");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all.value.api.messages[1]["reasoning_content"], "t1");
  ApiError e = ParseError(R"({"model": "m", "max_tokens": 8, "context_management": {"edits": [
      {"type": "clear_tool_uses_20250919"}]}, )" +
                          history + "}");
  EXPECT_EQ(e.param, "context_management.edits[0].type");
  EXPECT_NE(e.message.find("clear_tool_uses_20250919"), std::string::npos);
}

}  // namespace
}  // namespace pg
