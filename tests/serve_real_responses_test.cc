// Issue 24 against a real `prosgrow serve`: the Responses API through the
// official openai SDK (tests/node/openai_responses_test.mjs), the fields
// Claude Code sends on /v1/messages, the Llama 3.1 template's refusal of
// parallel tool calls (and --serialize-parallel-tool-calls), and the log
// line every request writes.
#include "serve_real_fixture.h"

namespace pg::serve_real {
namespace {

std::string Fixture(const std::string& rel) { return std::string(PROSGROW_SHARED_DIR) + "/fixtures/" + rel; }

TEST_F(ServeReal, ResponsesNodeSdk) {
  const std::string node_dir = std::string(PROSGROW_SOURCE_DIR) + "/tests/node";
  if (access((node_dir + "/node_modules/openai/package.json").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "run `npm ci` in " << node_dir << " first";
  }
  int rc = 0;
  RunShell("node --version > /dev/null 2>&1", &rc);
  if (rc != 0) GTEST_SKIP() << "node not installed";
  auto s = Serve({"--threads", "2", "--api-key", "sk-node-test"}, "responses");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::string out = RunShell("cd '" + node_dir + "' && PROSGROW_BASE_URL=" + (*s)->base_url() +
                                 "/v1 PROSGROW_API_KEY=sk-node-test node openai_responses_test.mjs 2>&1",
                             &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("openai responses test: ok"), std::string::npos) << out;
  const std::string metrics = (*s)->Metrics();
  EXPECT_GT(Metric(**s, "prosgrow_http_requests_total{endpoint=\"/v1/responses\",status=\"200\"}"), 0) << metrics;
  EXPECT_GT(Metric(**s, "prosgrow_http_requests_total{endpoint=\"/v1/responses\",status=\"400\"}"), 0) << metrics;
  // One log line per request, with its tokens and cached tokens.
  const std::string log = (*s)->Log();
  EXPECT_NE(log.find("request POST /v1/responses status=200 error=- prompt_tokens="), std::string::npos) << log;
  EXPECT_NE(log.find("request POST /v1/responses status=400 error=unsupported_tool"), std::string::npos) << log;
  // Codex's shape: the hosted tools it declared are named on the request's line and counted.
  EXPECT_NE(log.find(" skipped_tools=web_search,image_generation"), std::string::npos) << log;
  EXPECT_EQ(Metric(**s, "prosgrow_hosted_tools_skipped_total{type=\"web_search\"}"), 1) << metrics;
  EXPECT_EQ(Metric(**s, "prosgrow_hosted_tools_skipped_total{type=\"image_generation\"}"), 1) << metrics;
  EXPECT_EQ((*s)->Stop(), 0) << (*s)->Log();
}

// A request shaped like Claude Code's first one (2.1.332): accepted, what has
// no effect named in a header, the request logged.
TEST_F(ServeReal, AnthropicClaudeCodeFields) {
  const std::string body = R"({"model": "tiny", "max_tokens": 8, "stream": false,
      "thinking": {"type": "adaptive", "display": "omitted"},
      "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
      "output_config": {"effort": "medium"},
      "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}},
                {"name": "Later", "description": "deferred", "input_schema": {"type": "object", "properties": {}},
                 "defer_loading": true}],
      "system": [{"type": "text", "text": "You are an agent.", "cache_control": {"type": "ephemeral"}}],
      "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]},
                   {"role": "system", "content": [{"type": "text", "text": "# Environment", "cache_control": {"type": "ephemeral"}}]}]})";
  httplib::Headers headers = {
      {"anthropic-version", "2023-06-01"},
      {"anthropic-beta", "claude-code-20250219,context-management-2025-06-27,made-up-2099-01-01"}};
  auto res = shared_->Client()->Post("/v1/messages?beta=true", headers, body, "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json msg = json::parse(res->body);
  EXPECT_EQ(msg["type"], "message");
  // The synthetic model's template has no thinking switch: thinking and effort are named.
  const std::string ignored = res->get_header_value("x-prosgrow-ignored-fields");
  EXPECT_NE(ignored.find("thinking"), std::string::npos) << ignored;
  EXPECT_NE(ignored.find("output_config.effort"), std::string::npos) << ignored;
  EXPECT_NE(ignored.find("anthropic-beta:made-up-2099-01-01"), std::string::npos) << ignored;
  EXPECT_EQ(ignored.find("context-management"), std::string::npos) << ignored;
  EXPECT_NE(res->get_header_value("x-prosgrow-context-edits").find("clear_thinking_20251015"), std::string::npos);
  EXPECT_TRUE(WaitUntil([&] { return shared_->Log().find("accepted without effect: thinking") != std::string::npos; }));
  EXPECT_TRUE(WaitUntil([&] {
    return shared_->Log().find("request POST /v1/messages status=200 error=- prompt_tokens=") != std::string::npos;
  }));
  // count_tokens takes the same fields.
  auto count = shared_->Client()->Post("/v1/messages/count_tokens", headers, body, "application/json");
  ASSERT_TRUE(count);
  EXPECT_EQ(count->status, 400) << count->body;  // max_tokens and stream are not count_tokens fields
}

// Llama 3.1's template raises on an assistant turn with two calls: the 400
// names the turn and the flag; with the flag the same history is served.
TEST(ServeRealTemplates, ParallelToolCallsOnLlama31) {
  const std::string model = Fixture("models/tiny-llama-gpt2.gguf");
  if (!fs::exists(model)) GTEST_SKIP() << "../shared fixtures absent";
  const std::string body = R"({"max_tokens": 4, "messages": [
      {"role": "user", "content": "weather in Paris and Rome?"},
      {"role": "assistant", "content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
        {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]},
      {"role": "tool", "tool_call_id": "a", "content": "sunny"},
      {"role": "tool", "tool_call_id": "b", "content": "rain"}],
      "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]})";
  const fs::path dir = fs::temp_directory_path() / ("pg_parallel_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (bool serialize : {false, true}) {
    std::vector<std::string> args = {"--threads", "2"};
    if (serialize) args.push_back("--serialize-parallel-tool-calls");
    auto s = ServeProcess::Start(PROSGROW_BINARY, model, args, (dir / (serialize ? "on.log" : "off.log")).string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    auto res = (*s)->Client()->Post("/v1/chat/completions", body, "application/json");
    ASSERT_TRUE(res);
    if (!serialize) {
      ASSERT_EQ(res->status, 400) << res->body;
      const std::string message = json::parse(res->body)["error"]["message"];
      EXPECT_NE(message.find("turn 1 (assistant, 2 tool calls)"), std::string::npos) << message;
      EXPECT_NE(message.find("This model only supports single tool-calls at once!"), std::string::npos) << message;
      EXPECT_NE(message.find("--serialize-parallel-tool-calls"), std::string::npos) << message;
      EXPECT_TRUE(WaitUntil([&] {
        return (*s)->Log().find("request POST /v1/chat/completions status=400 error=") != std::string::npos;
      }));
    } else {
      EXPECT_EQ(res->status, 200) << res->body;
    }
    EXPECT_EQ((*s)->Stop(), 0) << (*s)->Log();
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace pg::serve_real
