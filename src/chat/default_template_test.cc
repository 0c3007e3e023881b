// The default ChatML template of prosgrow's synthetic model, rendered and
// round-tripped through the tool-call parser.
#include <gtest/gtest.h>

#include "chat/chat_template.h"
#include "chat/tool_call_parser.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

std::string Render(const json& messages, const json& tools, bool add_generation_prompt = true) {
  Result<ChatTemplate> t = ChatTemplate::Parse(DefaultChatTemplate());
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return "";
  ChatRenderOptions opt;
  opt.add_generation_prompt = add_generation_prompt;
  Result<std::string> out = RenderChat(*t, messages, tools, opt);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : "";
}

TEST(DefaultTemplateTest, SimpleConversation) {
  json messages = json::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello!"},
    {"role": "user", "content": [{"type": "text", "text": "How "}, {"type": "text", "text": "are you?"}]}
  ])");
  EXPECT_EQ(Render(messages, nullptr),
            "<|im_start|>system\nBe brief.<|im_end|>\n"
            "<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello!<|im_end|>\n"
            "<|im_start|>user\nHow are you?<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(Render(json::parse(R"([{"role": "user", "content": "x"}])"), nullptr, false),
            "<|im_start|>user\nx<|im_end|>\n");
}

TEST(DefaultTemplateTest, ToolsAndToolCallRoundTrip) {
  json tools = json::parse(R"([{"type": "function", "function": {"name": "read_file",
      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}])");
  json messages = json::parse(R"([
    {"role": "user", "content": "Show me the README."},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"README.md\"}"}},
      {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": {"path": "b"}}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "# prosgrow"},
    {"role": "tool", "tool_call_id": "call_2", "content": "b"}
  ])");
  std::string out = Render(messages, tools);
  EXPECT_EQ(out,
            "<|im_start|>system\n# Tools\n\nYou may call the functions below. Their signatures are inside "
            "<tools></tools>:\n<tools>\n"
            "{\"name\": \"read_file\", \"parameters\": {\"type\": \"object\", \"properties\": {\"path\": {\"type\": "
            "\"string\"}}}}\n</tools>\n\n"
            "To call a function, answer with one JSON object per call, each inside <tool_call></tool_call> tags:\n"
            "<tool_call>\n{\"name\": <function-name>, \"arguments\": <arguments-object>}\n</tool_call><|im_end|>\n"
            "<|im_start|>user\nShow me the README.<|im_end|>\n"
            "<|im_start|>assistant\n"
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}}\n</tool_call>\n"
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}\n</tool_call><|im_end|>\n"
            "<|im_start|>user\n<tool_response>\n# prosgrow\n</tool_response>\n<tool_response>\nb\n"
            "</tool_response><|im_end|>\n"
            "<|im_start|>assistant\n");

  // What the model would write back parses into the same calls.
  size_t a = out.find("<|im_start|>assistant\n<tool_call>") + std::string("<|im_start|>assistant\n").size();
  size_t b = out.find("<|im_end|>", a);
  ParsedAssistant parsed = ParseToolCalls(out.substr(a, b - a));
  ASSERT_EQ(parsed.tool_calls.size(), 2u);
  EXPECT_EQ(parsed.tool_calls[0].name, "read_file");
  EXPECT_EQ(parsed.tool_calls[0].arguments_json, R"({"path":"README.md"})");
  EXPECT_EQ(parsed.tool_calls[1].arguments_json, R"({"path":"b"})");
  EXPECT_EQ(parsed.content, "");
}

TEST(DefaultTemplateTest, SystemWithToolsAndBadRole) {
  json tools = json::parse(R"([{"type": "function", "function": {"name": "f"}}])");
  std::string out =
      Render(json::parse(R"([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])"), tools);
  EXPECT_EQ(out.rfind("<|im_start|>system\nS\n\n# Tools", 0), 0u) << out;
  EXPECT_EQ(out.find("<|im_start|>system", 1), std::string::npos);

  Result<ChatTemplate> t = ChatTemplate::Parse(DefaultChatTemplate());
  ASSERT_TRUE(t.ok());
  Result<std::string> bad = RenderChat(*t, json::parse(R"([{"role": "wizard", "content": "x"}])"), nullptr, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("Unknown message role: wizard"), std::string::npos);
}

TEST(RenderChatTest, ValidatesArgumentsAndPassesExtras) {
  Result<ChatTemplate> t = ChatTemplate::Parse(
      "{{ bos_token }}{{ messages|length }}{{ tools is none }}{{ add_generation_prompt }}{{ enable_thinking }}"
      "{{ strftime_now('%Y-%m-%d') }}{{ eos_token }}");
  ASSERT_TRUE(t.ok());
  ChatRenderOptions opt;
  opt.bos_token = "<s>";
  opt.eos_token = "</s>";
  opt.date_override = "2026-02-03";
  json extra = {{"enable_thinking", false}, {"messages", "ignored"}};
  Result<std::string> out = RenderChat(*t, json::array({{{"role", "user"}, {"content", "x"}}}), nullptr, opt, extra);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "<s>1TrueTrueFalse2026-02-03</s>");

  EXPECT_FALSE(RenderChat(*t, json::object(), nullptr, opt).ok());
  EXPECT_FALSE(RenderChat(*t, json::array(), json::object(), opt).ok());
  opt.date_override = "Feb 3";
  EXPECT_FALSE(RenderChat(*t, json::array(), nullptr, opt).ok());
}

}  // namespace
}  // namespace pg
