// Renders every chat template in ../shared/fixtures/templates for every case
// of its .expected.json and compares with Python Jinja2's rendering.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "chat/chat_template.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

fs::path TemplateDir() { return fs::path(PROSGROW_SHARED_DIR) / "fixtures" / "templates"; }

ChatTemplateSettings FixtureSettings() {
  ChatTemplateSettings s;
  s.now = [] {
    std::tm tm{};
    tm.tm_year = 2026 - 1900;
    tm.tm_mon = 10;  // November
    tm.tm_mday = 29;
    tm.tm_wday = 0;  // a Sunday
    tm.tm_yday = 332;
    return tm;
  };
  return s;
}

TEST(ChatTemplateFixtureTest, EveryCaseMatchesJinja2) {
  if (!fs::is_directory(TemplateDir()))
    GTEST_SKIP() << "needs ../shared/fixtures/templates: " << TemplateDir() << " absent";
  int templates = 0, cases = 0;
  for (const auto& entry : fs::directory_iterator(TemplateDir())) {
    const fs::path& p = entry.path();
    if (p.extension() != ".jinja") continue;
    fs::path expected_path = p;
    expected_path.replace_extension(".expected.json");
    ASSERT_TRUE(fs::exists(expected_path)) << expected_path;
    auto expected = nlohmann::ordered_json::parse(ReadFile(expected_path));
    Result<ChatTemplate> t = ChatTemplate::Parse(ReadFile(p));
    ASSERT_TRUE(t.ok()) << p.filename() << ": " << t.status().ToString();
    ++templates;
    for (const auto& c : expected["cases"]) {
      SCOPED_TRACE(p.filename().string() + " / " + c["name"].get<std::string>());
      Result<std::string> out = t->Render(c["inputs"], FixtureSettings());
      if (c.contains("expected_error")) {
        ASSERT_FALSE(out.ok()) << "rendered instead of raising: " << *out;
        EXPECT_NE(out.status().message().find(c["expected_error"].get<std::string>()), std::string::npos)
            << out.status().message();
      } else {
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        EXPECT_EQ(*out, c["expected"].get<std::string>());
      }
      ++cases;
    }
  }
  EXPECT_GT(templates, 0);
  EXPECT_GT(cases, 0);
}

// The same cases through the server's entry point, RenderChat.
TEST(ChatTemplateFixtureTest, RenderChatMatchesToo) {
  if (!fs::is_directory(TemplateDir()))
    GTEST_SKIP() << "needs ../shared/fixtures/templates: " << TemplateDir() << " absent";
  for (const auto& entry : fs::directory_iterator(TemplateDir())) {
    const fs::path& p = entry.path();
    if (p.extension() != ".jinja") continue;
    fs::path expected_path = p;
    expected_path.replace_extension(".expected.json");
    auto expected = nlohmann::ordered_json::parse(ReadFile(expected_path));
    Result<ChatTemplate> t = ChatTemplate::Parse(ReadFile(p));
    ASSERT_TRUE(t.ok());
    for (const auto& c : expected["cases"]) {
      SCOPED_TRACE(p.filename().string() + " / " + c["name"].get<std::string>());
      const auto& in = c["inputs"];
      ChatRenderOptions opt;
      opt.bos_token = in.value("bos_token", "");
      opt.eos_token = in.value("eos_token", "");
      opt.add_generation_prompt = in.value("add_generation_prompt", false);
      opt.date_override = "2026-11-29";
      nlohmann::ordered_json tools = in.contains("tools") ? in["tools"] : nlohmann::ordered_json();
      Result<std::string> out = RenderChat(*t, in["messages"], tools, opt);
      if (c.contains("expected_error")) {
        EXPECT_FALSE(out.ok());
      } else {
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        EXPECT_EQ(*out, c["expected"].get<std::string>());
      }
    }
  }
}

}  // namespace
}  // namespace pg
