// The property behind every tool-call grammar: whatever text it allows is
// read back by src/chat's parser for that format (ParseToolCalls) as calls to
// offered tools whose arguments are valid under the tools' schemas. Checked
// by random walks: over bytes (always), and over the tokens a real vocabulary
// allows (when ../shared holds the fixture).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "chat/tool_call_parser.h"
#include "constrain/constrain_test_util.h"
#include "constrain/constraint.h"
#include "constrain/grammar_matcher.h"
#include "constrain/output_grammar.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// Bounded strings so that random walks finish.
const char* kWeather = R"({"type": "object", "properties": {
    "city": {"type": "string", "minLength": 1, "maxLength": 8},
    "days": {"type": "integer"},
    "units": {"enum": ["c", "f"]},
    "detail": {"type": "boolean"},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}, "maxItems": 2},
    "where": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"],
              "additionalProperties": false},
    "note": {"type": ["string", "null"], "maxLength": 5},
    "limit": {"type": ["integer", "null"]},
    "mode": {"type": "string", "enum": ["fast", "a<b"]}},
    "required": ["city", "days"], "additionalProperties": false})";
const char* kNoop = R"({"type": "object", "properties": {}, "additionalProperties": false})";

json OpenAiTools() {
  json tools = json::array();
  tools.push_back(
      {{"type", "function"}, {"function", {{"name", "get_weather"}, {"parameters", json::parse(kWeather)}}}});
  tools.push_back({{"type", "function"}, {"function", {{"name", "noop"}, {"parameters", json::parse(kNoop)}}}});
  return tools;
}

std::vector<ToolGrammarOptions> Specs() {
  return {{"get_weather", json::parse(kWeather), true}, {"noop", json::parse(kNoop), true}};
}

size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool HasType(const json& v, const std::string& t) {
  if (t == "string") return v.is_string();
  // An integer: past 64 bits nlohmann reads it as a float.
  if (t == "integer") return v.is_number() && std::floor(v.get<double>()) == v.get<double>();
  if (t == "number") return v.is_number();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  return false;
}

// Validation for the keywords the schemas above use (independent of the grammar code).
bool Valid(const json& s, const json& v) {
  if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end()) return false;
  if (s.contains("type")) {
    bool any = false;
    if (s["type"].is_string()) any = HasType(v, s["type"]);
    for (const json& t : s["type"].is_array() ? s["type"] : json::array()) any = any || HasType(v, t);
    if (!any) return false;
  }
  if (v.is_string()) {
    if (CodePoints(v.get<std::string>()) < s.value("minLength", size_t{0})) return false;
    if (CodePoints(v.get<std::string>()) > s.value("maxLength", size_t{1} << 30)) return false;
  }
  if (v.is_array()) {
    if (v.size() > s.value("maxItems", size_t{1} << 30)) return false;
    for (const json& item : v)
      if (s.contains("items") && !Valid(s["items"], item)) return false;
  }
  if (v.is_object()) {
    for (const json& k : s.value("required", json::array()))
      if (!v.contains(k.get<std::string>())) return false;
    const json props = s.value("properties", json::object());
    for (const auto& [k, item] : v.items()) {
      if (!props.contains(k)) {
        if (s.value("additionalProperties", true) == false) return false;
      } else if (!Valid(props[k], item)) {
        return false;
      }
    }
  }
  return true;
}

struct Format {
  ToolCallGrammarFormat grammar;
  ToolCallFormat parser;
};

std::vector<Format> Formats() {
  return {{ToolCallGrammarFormat::Hermes(), ToolCallFormat::kHermes},
          {ToolCallGrammarFormat::Llama3Json(), ToolCallFormat::kLlama3Json},
          {ToolCallGrammarFormat::Glm45(), ToolCallFormat::kGlm45},
          {ToolCallGrammarFormat::DeepSeekV3(), ToolCallFormat::kDeepSeekV3},
          {ToolCallGrammarFormat::DeepSeekV31(), ToolCallFormat::kDeepSeekV31}};
}

// `text` (complete under the grammar) parses into valid calls only.
void ExpectValidCalls(const Format& f, const std::string& text) {
  const std::string shown = f.grammar.name + ": " + json(text).dump();
  ToolCallParseOptions opt;
  opt.format = f.parser;
  opt.tools = OpenAiTools();
  ParsedAssistant parsed = ParseToolCalls(text, opt);
  EXPECT_EQ(parsed.content, "") << shown;
  ASSERT_FALSE(parsed.tool_calls.empty()) << shown;
  for (const ParsedToolCall& call : parsed.tool_calls) {
    json args = json::parse(call.arguments_json, nullptr, false);
    ASSERT_TRUE(args.is_object()) << shown;
    if (call.name == "get_weather") {
      EXPECT_TRUE(Valid(json::parse(kWeather), args)) << args.dump() << " from " << shown;
    } else {
      EXPECT_EQ(call.name, "noop") << shown;
      EXPECT_EQ(args, json::object()) << shown;
    }
  }
}

TEST(ToolCallGrammar, RandomByteWalksParseAsValidCalls) {
  for (const Format& f : Formats()) {
    for (bool parallel : {false, true}) {
      Result<Grammar> g = ToolCallGrammar(f.grammar, Specs(), parallel, false, "tools");
      ASSERT_TRUE(g.ok()) << f.grammar.name << ": " << g.status().ToString();
      std::mt19937 rng(11);
      int completed = 0;
      for (int run = 0; run < 60; ++run) {
        GrammarMatcher m(&*g);
        std::string text;
        GrammarMatcher::State next;
        while (text.size() < 4000) {
          std::vector<uint8_t> allowed;
          for (int b = 0; b < 256; ++b) {
            GrammarMatcher::Step(*g, m.state(), static_cast<uint8_t>(b), &next);
            if (!next.empty()) allowed.push_back(static_cast<uint8_t>(b));
          }
          if (m.CanEnd() && (allowed.empty() || rng() % 2 == 0)) break;
          ASSERT_FALSE(allowed.empty()) << f.grammar.name << ": stuck after " << json(text).dump();
          const uint8_t b = allowed[rng() % allowed.size()];
          ASSERT_TRUE(m.Advance(b));
          text.push_back(static_cast<char>(b));
        }
        if (!m.CanEnd()) continue;
        ++completed;
        ExpectValidCalls(f, text);
      }
      EXPECT_GT(completed, 30) << f.grammar.name;
    }
  }
}

TEST(ToolCallGrammar, RandomTokenWalksParseAsValidCalls) {
  const fs::path vocab_file = fs::path(PROSGROW_SHARED_DIR) / "fixtures" / "vocab" / "ggml-vocab-gpt-2.gguf";
  auto file = GgufFile::Open(vocab_file.string());
  if (!file.ok()) {
    GTEST_SKIP() << "needs ../shared/fixtures/vocab: " << vocab_file << " absent";
  }
  auto tok = Tokenizer::FromGguf(**file);
  ASSERT_TRUE(tok.ok());
  auto vocab = std::make_shared<const TokenVocabulary>(**tok);
  for (const Format& f : Formats()) {
    Result<Grammar> g = ToolCallGrammar(f.grammar, Specs(), true, false, "tools");
    ASSERT_TRUE(g.ok());
    const std::vector<std::string> walks = testing::RandomWalks(std::move(*g), vocab, 5, 6, 600);
    for (const std::string& text : walks) ExpectValidCalls(f, text);
    EXPECT_GT(walks.size(), 0u) << f.grammar.name;
  }
}

TEST(ToolCallGrammar, GlmPairsFollowTheSchema) {
  Result<Grammar> g = ToolCallGrammar(ToolCallGrammarFormat::Glm45(), Specs(), false, false, "tools");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto accepts = [&](const std::string& text) { return testing::Accepts(*g, text); };
  const std::string head = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>";
  EXPECT_TRUE(accepts(head + "Oslo</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"));
  EXPECT_TRUE(accepts(head + "a\"b</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n"
                             "<arg_key>tags</arg_key>\n<arg_value>[\"x\"]</arg_value>\n"
                             "<arg_key>mode</arg_key>\n<arg_value>a<b</arg_value>\n</tool_call>"));
  EXPECT_TRUE(accepts("<tool_call>noop\n</tool_call>"));
  EXPECT_FALSE(accepts(head + "Oslo</arg_value>\n</tool_call>"));  // days is required
  EXPECT_FALSE(accepts(head + "Oslo</arg_value>\n<arg_key>days</arg_key>\n<arg_value>null</arg_value>\n</tool_call>"));
  EXPECT_FALSE(accepts(head + "Oslo</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n"
                              "<arg_key>limit</arg_key>\n<arg_value>null</arg_value>\n</tool_call>"));
  EXPECT_FALSE(accepts(head + "Oslo</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n"
                              "<arg_key>other</arg_key>\n<arg_value>1</arg_value>\n</tool_call>"));
  EXPECT_FALSE(accepts(head + "Oslo</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n"
                              "<arg_key>tags</arg_key>\n<arg_value>[\"<\"]</arg_value>\n</tool_call>"));
  // Lazy: free text, and a call wherever <tool_call> appears.
  Result<Grammar> lazy = ToolCallGrammar(ToolCallGrammarFormat::Glm45(), Specs(), true, true, "tools");
  ASSERT_TRUE(lazy.ok());
  GrammarMatcher m(&*lazy);
  EXPECT_TRUE(m.AdvanceBytes("Let me look. <tool_call>noop\n</tool_call> Done.") && m.CanEnd());
  GrammarMatcher bad(&*lazy);
  EXPECT_FALSE(bad.AdvanceBytes("x <tool_call>other"));
  // A required parameter that can only be null cannot be written.
  std::vector<ToolGrammarOptions> null_only = {
      {"f", json::parse(R"({"type": "object", "properties": {"n": {"type": "null"}}, "required": ["n"]})"), true}};
  Result<Grammar> refused = ToolCallGrammar(ToolCallGrammarFormat::Glm45(), null_only, false, false, "tools");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented);
}

TEST(ToolCallGrammar, DeepSeekV31HasNoFunctionPrefixOrFence) {
  Result<Grammar> g = ToolCallGrammar(ToolCallGrammarFormat::DeepSeekV31(), Specs(), true, false, "tools");
  ASSERT_TRUE(g.ok());
  GrammarMatcher m(&*g);
  EXPECT_TRUE(m.AdvanceBytes("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>noop<｜tool▁sep｜>{}<｜tool▁call▁end｜>"
                             "<｜tool▁calls▁end｜>") &&
              m.CanEnd());
  GrammarMatcher v3(&*g);
  EXPECT_FALSE(v3.AdvanceBytes("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function"));
}

}  // namespace
}  // namespace pg
