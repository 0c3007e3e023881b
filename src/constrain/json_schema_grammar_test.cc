#include "constrain/json_schema_grammar.h"

#include <gtest/gtest.h>

#include "constrain/constrain_test_util.h"
#include "constrain/grammar_matcher.h"
#include "constrain/output_grammar.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

Grammar Compile(const std::string& schema_text) {
  Result<Grammar> g = JsonSchemaGrammar(json::parse(schema_text), "schema");
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(*g) : Grammar{};
}

using testing::Accepts;
using testing::Prefix;

TEST(JsonSchemaGrammar, ObjectWithRequiredAndOptionalKeysInOrder) {
  Grammar g = Compile(R"({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
      "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["name", "tags"],
      "additionalProperties": false})");
  EXPECT_TRUE(Accepts(g, R"({"name": "Ann", "age": 31, "tags": []})"));
  EXPECT_TRUE(Accepts(g, R"({"name":"Ann","tags":["a","b"]})"));
  EXPECT_TRUE(Accepts(g, "{\n  \"name\": \"A\\u00e9\\n\",\n  \"tags\": [ \"x\" ]\n}"));
  EXPECT_TRUE(Accepts(g, "  {\"name\": \"\u00e9\u4e2d\", \"tags\": []}"));
  EXPECT_FALSE(Accepts(g, R"({"name": "Ann"})"));                          // tags required
  EXPECT_FALSE(Accepts(g, R"({"tags": [], "name": "Ann"})"));              // declared order
  EXPECT_FALSE(Accepts(g, R"({"name": "Ann", "age": 3.5, "tags": []})"));  // integer
  EXPECT_FALSE(Accepts(g, R"({"name": "Ann", "tags": [], "x": 1})"));      // no extra keys
  EXPECT_FALSE(Accepts(g, R"({"name": "Ann", "tags": [],})"));
  EXPECT_FALSE(Prefix(g, R"({"name": "a)"
                         "\x01"));                   // raw control character in a string
  EXPECT_FALSE(Prefix(g, R"({"name": "\q)"));        // bad escape
  EXPECT_FALSE(Prefix(g, "{\"name\": \"\xC0"));      // bad UTF-8 lead byte
  EXPECT_FALSE(Prefix(g, "{\"name\": \"\xED\xA0"));  // surrogate
  EXPECT_TRUE(Prefix(g, R"({"name": "Ann", )"));
  EXPECT_FALSE(Accepts(g, R"({"name": "Ann", "tags": []} )"));  // nothing after the value
}

TEST(JsonSchemaGrammar, WhitespaceIsBounded) {
  Grammar g = Compile(R"({"type": "array", "items": {"type": "boolean"}})");
  EXPECT_TRUE(Accepts(g, "[" + std::string(GrammarBuilder::kMaxWs, ' ') + "true]"));
  // An empty array has two gaps in a row ("[" ws ws "]"): still bounded.
  EXPECT_TRUE(Accepts(g, "[" + std::string(2 * GrammarBuilder::kMaxWs, ' ') + "]"));
  EXPECT_FALSE(Prefix(g, "[" + std::string(2 * GrammarBuilder::kMaxWs + 1, ' ')));
  EXPECT_FALSE(Prefix(g, "[true" + std::string(GrammarBuilder::kMaxWs + 1, ' ')));
}

TEST(JsonSchemaGrammar, ScalarsEnumConstAndTypeArrays) {
  Grammar num = Compile(R"({"type": "number"})");
  for (const char* ok : {"0", "-0", "12", "-3.25", "1e5", "2.5E-3", "0.0"}) EXPECT_TRUE(Accepts(num, ok)) << ok;
  EXPECT_TRUE(Accepts(num, "1e-99"));
  for (const char* bad : {"01", "-", "1.", ".5", "1e", "+1", "NaN", "1.2.3", "1e308"})
    EXPECT_FALSE(Accepts(num, bad)) << bad;
  EXPECT_FALSE(Prefix(num, std::string(GrammarBuilder::kMaxNumberBytes + 1, '1')));
  Grammar integer = Compile(R"({"type": "integer"})");
  EXPECT_TRUE(Accepts(integer, "-42"));
  EXPECT_FALSE(Accepts(integer, "4.0"));
  EXPECT_FALSE(Accepts(integer, "4e1"));
  Grammar e = Compile(R"({"enum": ["red", "green", 3, null, {"a": [1]}]})");
  for (const char* ok : {"\"red\"", "\"green\"", "3", "null", "{\"a\":[1]}"}) EXPECT_TRUE(Accepts(e, ok)) << ok;
  EXPECT_FALSE(Accepts(e, "\"blue\""));
  EXPECT_FALSE(Accepts(e, "\"re\""));
  Grammar c = Compile(R"({"type": "string", "const": "fixed"})");
  EXPECT_TRUE(Accepts(c, "\"fixed\""));
  EXPECT_FALSE(Accepts(c, "\"other\""));
  Grammar t = Compile(R"({"type": ["string", "null", "boolean"]})");
  for (const char* ok : {"\"x\"", "null", "true", "false"}) EXPECT_TRUE(Accepts(t, ok)) << ok;
  EXPECT_FALSE(Accepts(t, "1"));
}

TEST(JsonSchemaGrammar, StringLengthsCountCharacters) {
  Grammar g = Compile(R"({"type": "string", "minLength": 2, "maxLength": 3})");
  EXPECT_FALSE(Accepts(g, R"("a")"));
  EXPECT_TRUE(Accepts(g, R"("ab")"));
  EXPECT_TRUE(Accepts(g, "\"a\xc3\xa9\\n\""));  // a, e-acute (2 bytes), \n: 3 characters
  EXPECT_TRUE(Accepts(g, R"("\u00e9b")"));
  EXPECT_FALSE(Prefix(g, R"("abcd)"));
  EXPECT_FALSE(Prefix(g, "\"abc\xc3"));
  EXPECT_FALSE(Prefix(g, R"("abc\)"));
}

TEST(JsonSchemaGrammar, ArrayBounds) {
  Grammar g = Compile(R"({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 3})");
  EXPECT_FALSE(Accepts(g, "[]"));
  EXPECT_FALSE(Accepts(g, "[1]"));
  EXPECT_TRUE(Accepts(g, "[1, 2]"));
  EXPECT_TRUE(Accepts(g, "[1,2,3]"));
  EXPECT_FALSE(Prefix(g, "[1,2,3,"));
  Grammar any = Compile(R"({"type": "array"})");
  EXPECT_TRUE(Accepts(any, R"([1, "a", {"b": null}, [true]])"));
}

TEST(JsonSchemaGrammar, AnyOfRefsAndRecursion) {
  Grammar g = Compile(R"({"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
      "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["v"]}},
      "anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]})");
  EXPECT_TRUE(Accepts(g, "null"));
  EXPECT_TRUE(Accepts(g, R"({"v": 1})"));
  EXPECT_TRUE(Accepts(g, R"({"v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}]})"));
  EXPECT_FALSE(Accepts(g, R"({"v": 1, "kids": [{"w": 2}]})"));
  Grammar d = Compile(R"({"definitions": {"x": {"type": "boolean"}}, "$ref": "#/definitions/x"})");
  EXPECT_TRUE(Accepts(d, "true"));
  // Nesting deeper than the matcher's depth cap dies instead of growing.
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += R"({"v": 1, "kids": [)";
  EXPECT_FALSE(Prefix(g, deep));
  // (A $ref cycle that consumes nothing is refused: IllFoundedRefCyclesAreRefused.)
}

TEST(JsonSchemaGrammar, OpenObjectsAndAnnotations) {
  Grammar g = Compile(R"({"type": "object", "title": "T", "description": "d", "default": {}, "examples": [{}],
      "$schema": "https://json-schema.org/draft/2020-12/schema"})");
  EXPECT_TRUE(Accepts(g, R"({"any": [1, {"x": "y"}], "b": false})"));
  EXPECT_TRUE(Accepts(g, "{}"));
  EXPECT_FALSE(Accepts(g, "[]"));
  Grammar open = Compile(R"({"type": "object", "properties": {"a": {"type": "null"}}, "required": ["a", "b"]})");
  EXPECT_TRUE(Accepts(open, R"({"a": null, "b": [1]})"));
  Grammar closed_empty = Compile(R"({"type": "object", "properties": {}, "additionalProperties": false})");
  EXPECT_TRUE(Accepts(closed_empty, "{ }"));
  EXPECT_FALSE(Prefix(closed_empty, "{\""));
  Grammar anything = Compile("true");
  EXPECT_TRUE(Accepts(anything, R"("s")"));
}

TEST(JsonSchemaGrammar, EveryUnsupportedKeywordIsNamed) {
  for (const char* kw : {"pattern",
                         "format",
                         "oneOf",
                         "allOf",
                         "not",
                         "minimum",
                         "maximum",
                         "exclusiveMinimum",
                         "exclusiveMaximum",
                         "multipleOf",
                         "uniqueItems",
                         "contains",
                         "prefixItems",
                         "patternProperties",
                         "propertyNames",
                         "minProperties",
                         "maxProperties",
                         "dependentRequired",
                         "if",
                         "then",
                         "else",
                         "unevaluatedProperties"}) {
    json schema = {{"type", "object"}, {"properties", {{"x", {{"type", "string"}, {kw, 1}}}}}};
    Result<Grammar> g = JsonSchemaGrammar(schema, "response_format.json_schema.schema");
    ASSERT_FALSE(g.ok()) << kw;
    EXPECT_EQ(g.status().code(), StatusCode::kUnimplemented) << kw;
    EXPECT_NE(g.status().message().find(std::string("'") + kw + "'"), std::string::npos) << g.status().message();
    EXPECT_NE(g.status().message().find("#/properties/x"), std::string::npos) << g.status().message();
  }
  for (const char* schema : {R"({"additionalProperties": {"type": "string"}})", R"({"items": [{"type": "string"}]})",
                             R"({"$ref": "https://example.com/s.json"})",
                             R"({"$ref": "#/$defs/a", "type": "string", "$defs": {"a": {}}})"}) {
    Result<Grammar> g = JsonSchemaGrammar(json::parse(schema), "s");
    ASSERT_FALSE(g.ok()) << schema;
    EXPECT_EQ(g.status().code(), StatusCode::kUnimplemented) << schema;
  }
}

TEST(JsonSchemaGrammar, MalformedSchemasAreInvalid) {
  for (const char* schema : {R"({"type": "strin"})", R"({"type": 3})", R"({"type": []})", R"({"enum": []})",
                             R"({"anyOf": {}})", R"({"properties": []})", R"({"required": "a"})",
                             R"({"type": "string", "maxLength": 1.5})", R"({"type": "string", "minLength": 3,
                             "maxLength": 1})",
                             R"({"type": "array", "minItems": -1})", R"({"type": "array", "minItems": 3,
                             "maxItems": 2})",
                             R"({"$ref": "#/$defs/missing"})", "false", "[]", "3"}) {
    Result<Grammar> g = JsonSchemaGrammar(json::parse(schema), "s");
    ASSERT_FALSE(g.ok()) << schema;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument) << schema << ": " << g.status().ToString();
  }
}

TEST(OutputGrammar, ChoiceIsOneOfTheStringsExactly) {
  Grammar g = ChoiceGrammar({"positive", "negative", "neg", "a \"quoted\" one"});
  for (const char* ok : {"positive", "negative", "neg", "a \"quoted\" one"}) EXPECT_TRUE(Accepts(g, ok)) << ok;
  for (const char* bad : {"", "pos", "\"positive\"", " positive", "positive ", "negativ", "negatives", "x"})
    EXPECT_FALSE(Accepts(g, bad)) << bad;
  EXPECT_TRUE(Prefix(g, "ne"));
  EXPECT_FALSE(Prefix(g, "no"));
}

TEST(OutputGrammar, JsonObjectAndToolCalls) {
  Grammar obj = JsonObjectGrammar();
  EXPECT_TRUE(Accepts(obj, R"( {"a": [1, 2.5, "x", null, true]})"));
  EXPECT_FALSE(Accepts(obj, "[1]"));
  EXPECT_FALSE(Accepts(obj, "\"s\""));

  std::vector<ToolGrammarOptions> tools = {
      {"get_weather", json::parse(R"({"type": "object", "properties": {"city": {"type": "string"}},
          "required": ["city"], "additionalProperties": false})"),
       true},
      {"noop", nullptr, true}};
  Result<Grammar> one = ToolCallGrammar(ToolCallGrammarFormat::Hermes(), tools, false, false, "tools");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_TRUE(
      Accepts(*one, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>"));
  EXPECT_TRUE(Accepts(*one, R"(<tool_call>{"name":"noop","arguments":{"k":[1]}}</tool_call>)"));
  EXPECT_FALSE(Accepts(*one, R"(<tool_call>{"name":"get_weather","arguments":{"town":"x"}}</tool_call>)"));
  EXPECT_FALSE(Accepts(*one, R"(<tool_call>{"name":"other","arguments":{}}</tool_call>)"));
  EXPECT_FALSE(Prefix(*one, "Sure"));
  EXPECT_FALSE(Accepts(
      *one,
      R"(<tool_call>{"name":"noop","arguments":{}}</tool_call><tool_call>{"name":"noop","arguments":{}}</tool_call>)"));
  Result<Grammar> many = ToolCallGrammar(ToolCallGrammarFormat::Hermes(), tools, true, false, "tools");
  ASSERT_TRUE(many.ok());
  EXPECT_TRUE(Accepts(*many,
                      "<tool_call>{\"name\":\"noop\",\"arguments\":{}}</"
                      "tool_call>\n<tool_call>{\"name\":\"noop\",\"arguments\":{}}</tool_call>"));

  Result<Grammar> llama = ToolCallGrammar(ToolCallGrammarFormat::Llama3Json(), tools, true, false, "tools");
  ASSERT_TRUE(llama.ok());
  EXPECT_TRUE(Accepts(*llama, R"({"name": "get_weather", "parameters": {"city": "Oslo"}})"));
  EXPECT_FALSE(Accepts(*llama, R"({"name": "get_weather", "arguments": {"city": "Oslo"}})"));

  Result<Grammar> lazy = ToolCallGrammar(ToolCallGrammarFormat::Hermes(), tools, true, true, "tools");
  ASSERT_TRUE(lazy.ok());
  EXPECT_TRUE(Accepts(*lazy, "Let me check the weather."));
  EXPECT_TRUE(Accepts(
      *lazy, "ok <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call> done"));
  EXPECT_TRUE(Accepts(*lazy, "<tool_cal> is not a tag; <tool_call>{\"name\":\"noop\",\"arguments\":{}}</tool_call>"));
  EXPECT_FALSE(Prefix(*lazy, "x <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"town\""));
  EXPECT_FALSE(Accepts(*lazy, "x <tool_call>{\"name\": \"noop\""));  // a started call must finish

  // The name outside the JSON, calls wrapped: DeepSeek V3's pieces.
  Result<Grammar> ds = ToolCallGrammar(ToolCallGrammarFormat::DeepSeekV3(), tools, true, false, "tools");
  ASSERT_TRUE(ds.ok());
  const std::string ds_call =
      "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Oslo\"}\n```"
      "<｜tool▁call▁end｜>";
  EXPECT_TRUE(Accepts(*ds, "<｜tool▁calls▁begin｜>" + ds_call + "<｜tool▁calls▁end｜>"));
  EXPECT_TRUE(Accepts(*ds, "<｜tool▁calls▁begin｜>" + ds_call + "\n" + ds_call + "<｜tool▁calls▁end｜>"));
  EXPECT_FALSE(Accepts(*ds, "<｜tool▁calls▁begin｜>" + ds_call));
  Result<Grammar> ds_lazy = ToolCallGrammar(ToolCallGrammarFormat::DeepSeekV3(), tools, true, true, "tools");
  ASSERT_TRUE(ds_lazy.ok());
  EXPECT_TRUE(Accepts(*ds_lazy, "Checking. <｜tool▁calls▁begin｜>" + ds_call + "<｜tool▁calls▁end｜> Done."));
  EXPECT_FALSE(Prefix(*ds_lazy, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>other"));

  tools[0].parameters = json::parse(R"({"type": "object", "properties": {"d": {"type": "string", "format": "date"}}})");
  Result<Grammar> bad = ToolCallGrammar(ToolCallGrammarFormat::Hermes(), tools, true, false, "tools");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'format'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("get_weather"), std::string::npos);
}

// Issue 23: a $ref that reaches itself before any value is written is an
// ill-founded cycle, refused; recursion through an object or array is fine.
TEST(JsonSchemaGrammar, IllFoundedRefCyclesAreRefused) {
  for (const char* schema :
       {R"({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}})",
        R"({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}})",
        R"({"$ref": "#/$defs/a", "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]}}})"}) {
    Result<Grammar> g = JsonSchemaGrammar(json::parse(schema), "schema");
    ASSERT_FALSE(g.ok()) << schema;
    EXPECT_NE(g.status().message().find("ill-founded"), std::string::npos) << g.status().message();
  }
  Grammar tree = Compile(R"({"$ref": "#/$defs/node", "$defs": {"node": {"type": "object",
      "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["kids"]}}})");
  EXPECT_TRUE(Accepts(tree, R"({"kids": [{"kids": []}, {"kids": [{"kids": []}]}]})"));
}

}  // namespace
}  // namespace pg
