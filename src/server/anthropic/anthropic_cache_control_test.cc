#include "server/anthropic/anthropic_cache_control.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/core/generation_pipeline.h"
#include "server/core/request.h"
#include "testing/fake_inference_service.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

class BreakpointPrefixesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tok = FakeInferenceService::MakeTestTokenizer();
    ASSERT_TRUE(tok.ok());
    tok_ = std::move(tok).value();
    auto chat = ChatPrompt::Create(ServiceInfo{});  // the ChatML fallback template
    ASSERT_TRUE(chat.ok());
    chat_ = std::move(chat).value();
  }

  // Parses an Anthropic body and returns each breakpoint's prefix, decoded.
  std::vector<std::string> PrefixTexts(const std::string& body, std::vector<BreakpointPrefix>* prefixes = nullptr) {
    auto parsed = ParseAnthropicMessages(json::parse(body), 4096);
    EXPECT_TRUE(parsed.ok()) << parsed.error.message;
    const ApiRequest& api = parsed.value.api;
    Result<std::string> text = chat_->Render(api.messages, api.tools);
    EXPECT_TRUE(text.ok());
    rendered_ = *text;
    prompt_ = EncodeChatText(*tok_, rendered_);
    std::vector<BreakpointPrefix> p =
        BreakpointPrefixes(*chat_, *tok_, api, parsed.value.breakpoints, rendered_, prompt_);
    std::vector<std::string> out;
    for (const BreakpointPrefix& b : p) {
      out.push_back(b.tokens < 0 ? "<none>"
                                 : tok_->Decode(std::vector<int32_t>(prompt_.begin(), prompt_.begin() + b.tokens),
                                                /*render_special=*/true));
    }
    if (prefixes) *prefixes = p;
    return out;
  }

  // The decoded prefix is the rendered prompt up to the end of `block_text`,
  // less at most a few bytes (a boundary token merged across the end).
  void ExpectEndsAt(const std::string& prefix, const std::string& block_text) {
    const size_t end = rendered_.find(block_text);
    ASSERT_NE(end, std::string::npos) << block_text;
    EXPECT_EQ(rendered_.compare(0, prefix.size(), prefix), 0) << prefix;
    EXPECT_LE(prefix.size(), end + block_text.size()) << prefix;
    EXPECT_GE(prefix.size() + 8, end + block_text.size()) << prefix;
  }

  std::unique_ptr<Tokenizer> tok_;
  std::unique_ptr<ChatPrompt> chat_;
  std::string rendered_;
  std::vector<int32_t> prompt_;
};

TEST_F(BreakpointPrefixesTest, SystemAndMessageBlocks) {
  std::vector<BreakpointPrefix> p;
  auto texts = PrefixTexts(R"({"model": "m", "max_tokens": 8,
      "system": [{"type": "text", "text": "You are a terse assistant.", "cache_control": {"type": "ephemeral"}}],
      "messages": [{"role": "user", "content": [
          {"type": "text", "text": "First part of the question. ", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
          {"type": "text", "text": "Second part."}]}]})",
                           &p);
  ASSERT_EQ(texts.size(), 2u);
  ExpectEndsAt(texts[0], "You are a terse assistant.");
  ExpectEndsAt(texts[1], "First part of the question. ");
  EXPECT_LT(p[0].tokens, p[1].tokens);
  EXPECT_LT(p[1].tokens, static_cast<int64_t>(prompt_.size()));
  EXPECT_EQ(p[1].ttl_s, 3600);
  std::vector<KvHint> hints = CacheHints(p);
  ASSERT_EQ(hints.size(), 2u);
  EXPECT_EQ(hints[0].action, KvHint::Action::kRetain);
  EXPECT_EQ(hints[0].prefix_tokens, p[0].tokens);
  EXPECT_EQ(hints[1].ttl_s, 3600);
}

TEST_F(BreakpointPrefixesTest, ToolsToolUseAndToolResult) {
  auto texts = PrefixTexts(R"({"model": "m", "max_tokens": 8,
      "tools": [{"name": "get_weather", "description": "Weather of a city", "input_schema": {"type": "object"},
                 "cache_control": {"type": "ephemeral"}}],
      "messages": [{"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                           "input": {"city": "Paris"}, "cache_control": {"type": "ephemeral"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny, 21 C",
                                      "cache_control": {"type": "ephemeral"}}]}]})");
  ASSERT_EQ(texts.size(), 3u);
  ExpectEndsAt(texts[0], R"("parameters": {"type": "object"})");
  ExpectEndsAt(texts[1], R"("Paris")");
  ExpectEndsAt(texts[2], "sunny, 21 C");
}

TEST_F(BreakpointPrefixesTest, ABlockTheTemplateDropsHasNoPrefix) {
  // tool_choice none: the tools are not rendered, so neither is the breakpoint.
  std::vector<BreakpointPrefix> p;
  auto texts = PrefixTexts(R"({"model": "m", "max_tokens": 8, "tool_choice": {"type": "none"},
      "tools": [{"name": "f", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}],
      "messages": [{"role": "user", "content": "hi"}]})",
                           &p);
  ASSERT_EQ(texts.size(), 1u);
  EXPECT_EQ(p[0].tokens, -1);
  EXPECT_TRUE(CacheHints(p).empty());
}

// The real templates of ../shared/fixtures/templates (Qwen2.5, Qwen3,
// Llama 3.1, GLM-4.6): each breakpoint's prefix is a prefix of the prompt
// that ends at its block (system and user text, which every template
// writes), or covers the arguments of the tool_use it marks.
TEST_F(BreakpointPrefixesTest, RealTemplates) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(PROSGROW_SHARED_DIR) / "fixtures" / "templates";
  if (!fs::exists(dir)) GTEST_SKIP() << "needs ../shared: " << dir << " absent";
  const std::string body = R"({"model": "m", "max_tokens": 8,
      "tools": [{"name": "get_weather", "description": "Weather of a city", "input_schema": {"type": "object",
                 "properties": {"city": {"type": "string"}}}, "cache_control": {"type": "ephemeral"}}],
      "system": [{"type": "text", "text": "You are a terse assistant.", "cache_control": {"type": "ephemeral"}}],
      "messages": [{"role": "user", "content": [{"type": "text", "text": "Weather in Paris today?",
                                                 "cache_control": {"type": "ephemeral"}}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                           "input": {"city": "Paris"}, "cache_control": {"type": "ephemeral"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny, 21 C"}]}]})";
  int templates = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".jinja") continue;
    SCOPED_TRACE(entry.path().filename().string());
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    ServiceInfo info;
    info.chat_template = text.str();
    info.bos_token = "<|begin_of_text|>";
    info.eos_token = "<|im_end|>";
    auto chat = ChatPrompt::Create(info);
    ASSERT_TRUE(chat.ok()) << chat.status().ToString();
    chat_ = std::move(chat).value();
    std::vector<BreakpointPrefix> p;
    std::vector<std::string> texts = PrefixTexts(body, &p);
    ASSERT_EQ(texts.size(), 4u);
    for (size_t i = 0; i < texts.size(); ++i) {
      if (p[i].tokens >= 0) {
        EXPECT_EQ(rendered_.compare(0, texts[i].size(), texts[i]), 0) << i << ": " << texts[i];
      }
    }
    ExpectEndsAt(texts[1], "You are a terse assistant.");
    ExpectEndsAt(texts[2], "Weather in Paris today?");
    if (p[3].tokens >= 0) {
      EXPECT_GT(p[3].tokens, p[2].tokens);
      EXPECT_NE(texts[3].find("Paris", texts[2].size()), std::string::npos) << texts[3];
    }
    ++templates;
  }
  EXPECT_GT(templates, 0);
}

}  // namespace
}  // namespace pg
