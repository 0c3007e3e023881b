#include "server/responses/responses_request.h"

#include <gtest/gtest.h>

#include "server/common/api_error.h"
#include "server/core/request.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

ApiResult<ResponsesRequest> Parse(const std::string& body, bool thinking_switch = false) {
  return ParseResponsesRequest(json::parse(body), 4096, thinking_switch);
}

ApiError ParseError(const std::string& body) {
  ApiResult<ResponsesRequest> r = Parse(body);
  EXPECT_FALSE(r.ok()) << body;
  return r.error;
}

TEST(ResponsesRequest, StringInputAndInstructions) {
  auto r = Parse(R"({"model": "m", "instructions": "Be terse.", "input": "Hi", "max_output_tokens": 16,
                     "temperature": 0.5, "store": false, "stream": true, "prompt_cache_key": "sess"})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  const ApiRequest& a = r.value.api;
  EXPECT_EQ(a.messages,
            json::parse(R"([{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"}])"));
  EXPECT_EQ(r.value.input, json::parse(R"([{"role": "user", "content": "Hi"}])"));
  EXPECT_EQ(a.sampling.max_tokens, 16);
  EXPECT_TRUE(a.max_tokens_given);
  EXPECT_FLOAT_EQ(a.sampling.temperature, 0.5f);
  EXPECT_FALSE(r.value.store);
  EXPECT_TRUE(a.stream);
  EXPECT_EQ(a.user, "sess");  // the session key for the KV tiers
}

TEST(ResponsesRequest, ItemsBecomeChatMessages) {
  auto r = Parse(R"({"model": "m", "input": [
      {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
      {"role": "user", "content": [{"type": "input_text", "text": "list files"}]},
      {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}], "encrypted_content": null},
      {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": "{\"cmd\": \"ls\"}"},
      {"type": "function_call", "call_id": "call_2", "name": "shell", "arguments": "{\"cmd\": \"pwd\"}"},
      {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
      {"type": "function_call_output", "call_id": "call_2", "output": "/tmp"},
      {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value.api.messages, json::parse(R"([
      {"role": "system", "content": "rules"},
      {"role": "user", "content": "list files"},
      {"role": "assistant", "content": "", "reasoning_content": "think", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "shell", "arguments": {"cmd": "ls"}}},
        {"id": "call_2", "type": "function", "function": {"name": "shell", "arguments": {"cmd": "pwd"}}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
      {"role": "tool", "tool_call_id": "call_2", "content": "/tmp"},
      {"role": "assistant", "content": "done"}])"));
}

TEST(ResponsesRequest, FunctionToolsAndToolChoice) {
  auto r = Parse(R"({"model": "m", "input": "x", "parallel_tool_calls": false,
      "tools": [{"type": "function", "name": "get_weather", "description": "d",
                 "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "strict": false}],
      "tool_choice": {"type": "function", "name": "get_weather"}})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  const ApiRequest& a = r.value.api;
  EXPECT_EQ(a.tools, json::parse(R"([{"type": "function", "function": {"name": "get_weather", "description": "d",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "strict": false}}])"));
  EXPECT_EQ(a.tool_choice, ApiRequest::ToolChoice::kNamed);
  EXPECT_EQ(a.tool_choice_name, "get_weather");
  EXPECT_FALSE(a.parallel_tool_calls);
  EXPECT_EQ(r.value.echo["tool_choice"], json::parse(R"({"type": "function", "name": "get_weather"})"));
}

// Codex CLI declares its hosted web_search among its function tools: the
// hosted declarations are skipped (named, not offered, not echoed).
TEST(ResponsesRequest, HostedToolsAreSkippedNotOffered) {
  auto r = Parse(R"({"model": "m", "input": "x", "tools": [
      {"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
      {"type": "web_search", "external_web_access": false}, {"type": "image_generation"},
      {"type": "web_search_preview_2025_03_11"}, {"type": "code_interpreter", "container": {"type": "auto"}},
      {"type": "mcp", "server_label": "x", "server_url": "https://example.com"}, {"type": "file_search"},
      {"type": "computer_use_preview", "display_width": 1, "display_height": 1, "environment": "linux"}]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value.api.skipped_tools,
            (std::vector<std::string>{"web_search", "image_generation", "web_search_preview_2025_03_11",
                                      "code_interpreter", "mcp", "file_search", "computer_use_preview"}));
  ASSERT_EQ(r.value.api.tools.size(), 1u);
  EXPECT_EQ(r.value.api.tools[0]["function"]["name"], "exec_command");
  ASSERT_EQ(r.value.echo["tools"].size(), 1u);  // the response reports what was offered
  EXPECT_EQ(r.value.echo["tools"][0]["name"], "exec_command");
  // Only hosted tools: nothing is offered.
  auto only = Parse(R"({"model": "m", "input": "x", "tools": [{"type": "web_search"}]})");
  ASSERT_TRUE(only.ok()) << only.error.message;
  EXPECT_TRUE(only.value.api.tools.is_null());
  EXPECT_EQ(only.value.echo["tools"], json::array());
  // An unknown type is still a 400.
  ApiError e = ParseError(R"({"model": "m", "input": "x", "tools": [{"type": "teleport"}]})");
  EXPECT_EQ(e.param, "tools[0].type");
  EXPECT_EQ(e.code, "unsupported_tool");
}

// A tool_choice that forces a hosted tool cannot be honoured: 400.
TEST(ResponsesRequest, ForcingAHostedToolIsRefused) {
  ApiError e = ParseError(R"({"model": "m", "input": "x", "tools": [{"type": "web_search"}],
                              "tool_choice": {"type": "web_search"}})");
  EXPECT_EQ(e.param, "tool_choice.type");
  EXPECT_EQ(e.code, "unsupported_tool");
  EXPECT_NE(e.message.find("'web_search' forces a hosted tool"), std::string::npos) << e.message;
  e = ParseError(R"({"model": "m", "input": "x", "tool_choice": {"type": "file_search"}})");
  EXPECT_EQ(e.param, "tool_choice.type");
}

TEST(ResponsesRequest, AcceptedWithoutEffectIsNamed) {
  auto r = Parse(R"({"model": "m", "input": "x", "reasoning": {"effort": "high", "summary": "auto"},
                     "include": ["reasoning.encrypted_content"], "text": {"verbosity": "low"}, "service_tier": "auto"})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value.api.ignored_fields,
            (std::vector<std::string>{"text.verbosity", "reasoning.effort", "reasoning.summary",
                                      "include:reasoning.encrypted_content", "service_tier"}));
  // With a thinking switch, effort sets it.
  auto on = Parse(R"({"model": "m", "input": "x", "reasoning": {"effort": "minimal"}})", true);
  ASSERT_TRUE(on.ok());
  EXPECT_EQ(on.value.api.template_kwargs, json::parse(R"({"enable_thinking": false})"));
}

TEST(ResponsesRequest, BadInputIsA400ThatNamesIt) {
  EXPECT_EQ(ParseError(R"({"model": "m"})").param, "input");
  EXPECT_EQ(ParseError(R"({"model": "m", "input": "x", "frequency": 1})").param, "frequency");
  EXPECT_EQ(ParseError(R"({"model": "m", "input": [{"type": "image_generation_call"}]})").param, "input[0].type");
  EXPECT_EQ(ParseError(R"({"model": "m", "input": [{"role": "user", "content": [{"type": "input_image"}]}]})").param,
            "input[0].content[0].type");
  EXPECT_EQ(ParseError(R"({"model": "m", "input": [{"type": "function_call", "name": "f"}]})").param,
            "input[0].call_id");
  EXPECT_EQ(ParseError(R"({"model": "m", "input": "x", "max_output_tokens": 0})").param, "max_output_tokens");
  EXPECT_EQ(ParseError(R"({"model": "m", "input": "x", "background": true})").param, "background");
  EXPECT_EQ(ParseError(R"({"model": "m", "input": "x", "tool_choice": "required"})").param, "tool_choice");
}

// Fields that were accepted and then dropped or defaulted when of the wrong
// type or value (the bad-input audit).
TEST(ResponsesRequest, WrongTypesAreRefusedNotDropped) {
  const std::string fn = R"({"model": "m", "input": "x", "tools": [{"type": "function", "name": "f", )";
  EXPECT_EQ(ParseError(fn + R"("parameters": 7}]})").param, "tools[0].parameters");
  EXPECT_EQ(ParseError(fn + R"("description": 7}]})").param, "tools[0].description");
  EXPECT_EQ(ParseError(fn + R"("strict": "yes"}]})").param, "tools[0].strict");
  EXPECT_EQ(ParseError(R"({"model": "m", "input": []})").code, "empty_array");
  EXPECT_EQ(
      ParseError(R"({"model": "m", "input": "x", "text": {"format": {"type": "json_object", "schema": {}}}})").param,
      "text.format.schema");
  EXPECT_EQ(ParseError(R"({"model": "m", "input": "x", "text": {"format": {"type": "json_schema", "name": 5,
      "schema": {}}}})")
                .param,
            "text.format.name");
  EXPECT_EQ(ParseError(R"({"model": "m", "input": "x", "reasoning": {"effort": "extreme"}})").param,
            "reasoning.effort");
  EXPECT_EQ(ParseError(R"({"model": "m", "input": "x", "reasoning": {"effort": 5}})").param, "reasoning.effort");
  EXPECT_EQ(ParseError(R"({"model": "m", "input": "x", "reasoning": {"summary": true}})").param, "reasoning.summary");
  for (const char* f : {R"("service_tier": 5)", R"("stream_options": 5)", R"("max_tool_calls": "x")",
                        R"("prompt_cache_retention": 5)", R"("client_metadata": "x")"}) {
    EXPECT_EQ(ParseError(std::string(R"({"model": "m", "input": "x", )") + f + "}").code, "invalid_type") << f;
  }
  // What Codex sends stays accepted.
  auto codex = Parse(R"({"model": "m", "input": "x", "reasoning": {"effort": "xhigh", "summary": "auto"},
      "text": {"verbosity": "medium", "format": {"type": "json_schema", "name": "out", "strict": true,
      "schema": {"type": "object"}}}, "client_metadata": {}, "prompt_cache_key": "k", "max_tool_calls": 4})");
  EXPECT_TRUE(codex.ok()) << codex.error.message;
}

}  // namespace
}  // namespace pg
