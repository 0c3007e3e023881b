#include "server/core/output_constraint_request.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/core/json_body.h"
#include "server/core/request.h"
#include "server/openai/openai_request.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

std::unique_ptr<Tokenizer> SmallTokenizer() {
  VocabData v;
  v.model = "llama";
  v.tokens = {"<unk>", "<s>", "</s>"};
  for (int b = 0; b < 256; ++b) v.tokens.push_back(fmt::format("<0x{:02X}>", b));
  v.token_types.assign(v.tokens.size(), 6);
  v.token_types[0] = 2;
  v.token_types[1] = v.token_types[2] = 3;
  v.scores.assign(v.tokens.size(), 0.0f);
  auto tok = Tokenizer::FromVocab(v);
  EXPECT_TRUE(tok.ok()) << tok.status().ToString();
  return tok.ok() ? std::move(*tok) : nullptr;
}

ApiRequest Chat(const std::string& extra) {
  auto body = ParseJsonBody(R"({"messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
      "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": false}}},
      {"type": "function", "function": {"name": "g", "strict": true, "parameters": {"type": "object",
      "properties": {"s": {"type": "string", "maxLength": 2}}, "required": ["s"]}}}])" +
                            extra + "}");
  EXPECT_TRUE(body.ok()) << body.error.message;
  auto r = ParseChatRequest(body.value, 1000, 4096);
  EXPECT_TRUE(r.ok()) << r.error.message;
  return r.value;
}

bool Accepts(const CompiledConstraint& c, const std::string& text) {
  GrammarMatcher m(&c.grammar());
  return m.AdvanceBytes(text) && m.CanEnd();
}

TEST(OutputConstraintRequest, EachChoiceGetsItsGrammar) {
  auto tok = SmallTokenizer();
  ASSERT_TRUE(tok);
  // Plain chat with non-strict tools under auto: nothing to enforce.
  auto none = BuildOutputConstraint(Chat(R"(, "tools": [{"type": "function", "function": {"name": "f"}}])"), *tok, "");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none.value, nullptr);

  auto required = BuildOutputConstraint(Chat(R"(, "tool_choice": "required")"), *tok, "");
  ASSERT_TRUE(required.ok()) << required.error.message;
  EXPECT_TRUE(Accepts(*required.value, R"(<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>)"));
  EXPECT_TRUE(Accepts(*required.value, R"(<tool_call>{"name": "g", "arguments": {"s": "xy"}}</tool_call>)"));
  EXPECT_FALSE(Accepts(*required.value, R"(<tool_call>{"name": "f", "arguments": {"a": "1"}}</tool_call>)"));
  EXPECT_FALSE(Accepts(*required.value, "hello"));

  auto named =
      BuildOutputConstraint(Chat(R"(, "tool_choice": {"type": "function", "function": {"name": "g"}})"), *tok, "");
  ASSERT_TRUE(named.ok());
  EXPECT_FALSE(Accepts(*named.value, R"(<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>)"));
  EXPECT_TRUE(Accepts(*named.value, R"(<tool_call>{"name": "g", "arguments": {"s": ""}}</tool_call>)"));

  // Llama 3 templates get the bare JSON format.
  auto llama = BuildOutputConstraint(Chat(R"(, "tool_choice": "required")"), *tok, "{{ '<|python_tag|>' }}");
  ASSERT_TRUE(llama.ok());
  EXPECT_TRUE(Accepts(*llama.value, R"({"name": "f", "parameters": {"a": 2}})"));

  // auto with a strict tool: the lazy grammar.
  auto lazy = BuildOutputConstraint(Chat(""), *tok, "");
  ASSERT_TRUE(lazy.ok());
  ASSERT_NE(lazy.value, nullptr);
  EXPECT_TRUE(Accepts(*lazy.value, "no call needed"));
  EXPECT_FALSE(Accepts(*lazy.value, R"(<tool_call>{"name": "g", "arguments": {"s": "xyz"}}</tool_call>)"));

  // A parameters schema that does not say what it is means an object.
  auto loose = BuildOutputConstraint(Chat(R"(, "tool_choice": "required", "tools": [{"type": "function",
      "function": {"name": "h", "parameters": {}}}])"),
                                     *tok, "");
  ASSERT_TRUE(loose.ok()) << loose.error.message;
  EXPECT_TRUE(Accepts(*loose.value, R"(<tool_call>{"name": "h", "arguments": {"x": [1]}}</tool_call>)"));
  EXPECT_FALSE(Accepts(*loose.value, R"(<tool_call>{"name": "h", "arguments": 5}</tool_call>)"));

  auto obj =
      BuildOutputConstraint(Chat(R"(, "tool_choice": "none", "response_format": {"type": "json_object"})"), *tok, "");
  ASSERT_TRUE(obj.ok());
  EXPECT_TRUE(Accepts(*obj.value, R"({"k": [1]})"));
}

std::string ReadTemplate(const std::string& name) {
  const std::filesystem::path path =
      std::filesystem::path(PROSGROW_SHARED_DIR) / "fixtures" / "templates" / (name + ".jinja");
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Forced calls take the format the template's parser reads (issue 12: GLM and
// DeepSeek models used to get Hermes text).
TEST(OutputConstraintRequest, GlmAndDeepSeekTemplatesGetTheirOwnFormats) {
  auto tok = SmallTokenizer();
  ASSERT_TRUE(tok);
  const ApiRequest req = Chat(R"(, "tool_choice": "required")");
  // The DeepSeek markers as their templates write them (no fixture template:
  // V3 fences the arguments in ```json, V3.1 does not).
  const std::string ds_v3 =
      "{{'<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + "
      "tool['function']['name'] + '\\n' + '```json' + '\\n' + args + '\\n```'}}";
  const std::string ds_v31 =
      "{{'<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['function']['name'] + "
      "'<｜tool▁sep｜>' + args + '<｜tool▁call▁end｜>'}}";
  EXPECT_EQ(ToolCallGrammarFormatFor(ds_v3).name, "deepseek_v3");
  EXPECT_EQ(ToolCallGrammarFormatFor(ds_v31).name, "deepseek_v31");
  auto v3 = BuildOutputConstraint(req, *tok, ds_v3);
  ASSERT_TRUE(v3.ok()) << v3.error.message;
  EXPECT_EQ(v3.value->description(), "tool calls (deepseek_v3)");
  EXPECT_TRUE(Accepts(*v3.value,
                      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n"
                      "{\"a\": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"));
  EXPECT_FALSE(Accepts(*v3.value, R"(<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>)"));
  auto v31 = BuildOutputConstraint(req, *tok, ds_v31);
  ASSERT_TRUE(v31.ok()) << v31.error.message;
  EXPECT_TRUE(Accepts(*v31.value,
                      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>g<｜tool▁sep｜>{\"s\": \"x\"}"
                      "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"));

  const std::string glm = ReadTemplate("GLM-4.6");
  if (glm.empty()) {
    GTEST_SKIP() << "needs ../shared/fixtures/templates/GLM-4.6.jinja: none under " << PROSGROW_SHARED_DIR;
  }
  EXPECT_EQ(ToolCallGrammarFormatFor(glm).name, "glm45");
  EXPECT_EQ(ToolCallGrammarFormatFor(ReadTemplate("Qwen-Qwen3-0.6B")).name, "hermes");
  EXPECT_EQ(ToolCallGrammarFormatFor(ReadTemplate("meta-llama-Llama-3.1-8B-Instruct")).name, "llama3_json");
  auto forced = BuildOutputConstraint(req, *tok, glm);
  ASSERT_TRUE(forced.ok()) << forced.error.message;
  EXPECT_EQ(forced.value->description(), "tool calls (glm45)");
  EXPECT_TRUE(Accepts(*forced.value, "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>7</arg_value>\n</tool_call>"));
  EXPECT_TRUE(Accepts(*forced.value, "<tool_call>g\n<arg_key>s</arg_key>\n<arg_value>x\"</arg_value>\n</tool_call>"));
  EXPECT_FALSE(Accepts(*forced.value, R"(<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>)"));
  // Strict tools under auto: free text, a <tool_call> must be a valid GLM call.
  auto lazy = BuildOutputConstraint(Chat(""), *tok, glm);
  ASSERT_TRUE(lazy.ok());
  ASSERT_NE(lazy.value, nullptr);
  EXPECT_TRUE(
      Accepts(*lazy.value, "Sure. <tool_call>g\n<arg_key>s</arg_key>\n<arg_value>ab</arg_value>\n</tool_call>"));
  EXPECT_FALSE(Accepts(*lazy.value, "<tool_call>g\n<arg_key>s</arg_key>\n<arg_value>abc</arg_value>\n</tool_call>"));
}

TEST(OutputConstraintRequest, SchemasCompileOncePerText) {
  auto tok = SmallTokenizer();
  ASSERT_TRUE(tok);
  const std::string rf = R"(, "tool_choice": "none", "response_format": {"type": "json_schema", "json_schema":
      {"name": "n", "schema": {"type": "object", "properties": {"zz_once": {"type": "boolean"}}}}})";
  auto a = BuildOutputConstraint(Chat(rf), *tok, "");
  auto b = BuildOutputConstraint(Chat(rf), *tok, "");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value.get(), b.value.get());
  EXPECT_TRUE(Accepts(*a.value, R"({"zz_once": true})"));
}

TEST(OutputConstraintRequest, ErrorsNameTheField) {
  auto tok = SmallTokenizer();
  ASSERT_TRUE(tok);
  struct Case {
    std::string extra, param, part, code;
  };
  const Case cases[] = {
      {R"(, "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "string",
          "pattern": "a"}}})",
       "response_format.json_schema.schema", "'pattern' at #", "unsupported_parameter"},
      {R"(, "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "text"}}})",
       "response_format.json_schema.schema", "unknown type 'text'", ""},
      {R"(, "tool_choice": {"type": "function", "function": {"name": "h"}})", "tool_choice", "'h'", ""},
      {R"(, "tool_choice": "required", "response_format": {"type": "json_object"})", "response_format", "tool_choice",
       ""},
      {R"(, "tool_choice": "required", "tools": [{"type": "function", "function": {"name": "f", "parameters":
          {"type": "object", "properties": {"d": {"type": "string", "format": "date"}}}}}])",
       "tools", "'format' at #/properties/d (in tools 'f' parameters)", "unsupported_parameter"},
      {R"(, "tools": [{"type": "function", "function": {"name": "f", "strict": true, "parameters":
          {"type": "object", "properties": {"d": {"oneOf": []}}}}}])",
       "tools", "'oneOf'", "unsupported_parameter"},
      {R"(, "tool_choice": "required", "tools": [])", "tool_choice", "tools", ""},
  };
  for (const Case& c : cases) {
    auto r = BuildOutputConstraint(Chat(c.extra), *tok, "");
    ASSERT_FALSE(r.ok()) << c.extra;
    EXPECT_EQ(r.error.http_status, 400);
    EXPECT_EQ(r.error.param, c.param) << c.extra;
    EXPECT_EQ(r.error.code, c.code) << c.extra;
    EXPECT_NE(r.error.message.find(c.part), std::string::npos) << r.error.message;
  }
}

}  // namespace
}  // namespace pg
