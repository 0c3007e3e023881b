#include "chat/tool_call_stream.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "chat/tool_call_parser.h"

namespace pg {
namespace {

using ojson = nlohmann::ordered_json;

// A result as comparable text: the content, then each call's name and arguments.
std::string Show(const ParsedAssistant& p) {
  std::string s = "content=[" + p.content + "]";
  for (const ParsedToolCall& c : p.tool_calls) s += " call " + c.name + " " + c.arguments_json;
  return s;
}

ParsedAssistant Streamed(ToolCallFormat f, const ojson& tools, const std::vector<std::string_view>& pieces) {
  ToolCallStream stream(f, tools);
  ParsedAssistant out;
  std::vector<ToolCallEvent> events;
  for (std::string_view piece : pieces) {
    stream.Push(piece, &events);
    AppendToolCallEvents(events, &out);
    events.clear();
  }
  stream.Finish(&events);
  AppendToolCallEvents(events, &out);
  return out;
}

ParsedAssistant Whole(ToolCallFormat f, std::string_view text, const ojson& tools = nullptr) {
  ToolCallParseOptions opt;
  opt.format = f;
  opt.tools = tools;
  return ParseToolCalls(text, opt);
}

// The arguments of the one call parsed from `text` in one shot (when there
// is not exactly one call: how many, and the whole result).
std::string OneCallsArguments(ToolCallFormat f, std::string_view text, const ojson& tools = nullptr) {
  const ParsedAssistant p = Whole(f, text, tools);
  if (p.tool_calls.size() != 1) return std::to_string(p.tool_calls.size()) + " calls: " + Show(p);
  return p.tool_calls[0].arguments_json;
}

// Every split of `text` into two pieces, and one byte at a time, gives the
// one-shot result.
void ExpectSplitInvariant(ToolCallFormat f, std::string_view text, const ojson& tools = nullptr) {
  const std::string whole = Show(Whole(f, text, tools));
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    ASSERT_EQ(Show(Streamed(f, tools, {text.substr(0, cut), text.substr(cut)})), whole)
        << ToolCallFormatName(f) << " split at " << cut << " of: " << text;
  }
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < text.size(); ++i) bytes.push_back(text.substr(i, 1));
  ASSERT_EQ(Show(Streamed(f, tools, bytes)), whole) << ToolCallFormatName(f) << " byte by byte: " << text;
}

const ojson kTools = ojson::parse(R"([
  {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object",
    "properties": {"path": {"type": "string"}, "lines": {"type": "integer"}, "opts": {"type": "object"}}}}},
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
    "properties": {"city": {"type": "string"}}}}}])");

TEST(ToolCallStreamTest, HermesEvents) {
  ToolCallStream s(ToolCallFormat::kHermes);
  std::vector<ToolCallEvent> ev;
  s.Push("Let me check. <tool_", &ev);
  ASSERT_EQ(ev.size(), 1u);  // the marker prefix and the trailing space are held
  EXPECT_EQ(ev[0].kind, ToolCallEvent::Kind::kContent);
  EXPECT_EQ(ev[0].text, "Let me check.");
  ev.clear();
  s.Push("call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": ", &ev);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, ToolCallEvent::Kind::kCallStart);
  EXPECT_EQ(ev[0].index, 0);
  EXPECT_EQ(ev[0].text, "get_weather");
  EXPECT_EQ(ev[1].kind, ToolCallEvent::Kind::kArguments);
  EXPECT_EQ(ev[1].text, "{\"city\":");
  ev.clear();
  s.Push("\"Paris\"}}\n</tool_call>", &ev);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].text, "\"Paris\"}");
  EXPECT_EQ(ev[1].kind, ToolCallEvent::Kind::kCallEnd);
  ev.clear();
  s.Finish(&ev);
  EXPECT_TRUE(ev.empty());
  EXPECT_EQ(s.calls_started(), 1);
}

TEST(ToolCallStreamTest, Glm45) {
  const char* text =
      "Reading it.\n<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>42</arg_value>\n"
      "<arg_key>lines</arg_key>\n<arg_value>10</arg_value>\n<arg_key>opts</arg_key>\n<arg_value>{\"a\": [1]}"
      "</arg_value>\n<arg_key>note</arg_key>\n<arg_value>not json</arg_value>\n</tool_call>"
      "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris\nFrance</arg_value>\n</tool_call>";
  ParsedAssistant p = Whole(ToolCallFormat::kGlm45, text, kTools);
  ASSERT_EQ(p.tool_calls.size(), 2u) << Show(p);
  EXPECT_EQ(p.content, "Reading it.");
  EXPECT_EQ(p.tool_calls[0].name, "read_file");
  // path is a string by schema, lines and opts parse, note (no schema) is not JSON.
  EXPECT_EQ(p.tool_calls[0].arguments_json, R"({"path":"42","lines":10,"opts":{"a":[1]},"note":"not json"})");
  EXPECT_EQ(p.tool_calls[1].arguments_json, R"({"city":"Paris\nFrance"})");
  // Without tools, values are JSON when they parse.
  EXPECT_EQ(OneCallsArguments(ToolCallFormat::kGlm45,
                              "<tool_call>f\n<arg_key>n</arg_key>\n<arg_value>42</arg_value>\n</tool_call>"),
            R"({"n":42})");
  // No arguments; the closing tag right after the name.
  p = Whole(ToolCallFormat::kGlm45, "<tool_call>ping\n</tool_call><tool_call>pong</tool_call>");
  ASSERT_EQ(p.tool_calls.size(), 2u);
  EXPECT_EQ(p.tool_calls[0].arguments_json, "{}");
  EXPECT_EQ(p.tool_calls[1].name, "pong");
  EXPECT_EQ(p.content, "");
  ExpectSplitInvariant(ToolCallFormat::kGlm45, text, kTools);
}

TEST(ToolCallStreamTest, Glm45StringValuesStreamAsGenerated) {
  ToolCallStream s(ToolCallFormat::kGlm45, kTools);
  std::vector<ToolCallEvent> ev;
  std::string args;
  auto push = [&](std::string_view piece) {
    ev.clear();
    s.Push(piece, &ev);
    std::string got;
    for (const ToolCallEvent& e : ev) {
      if (e.kind == ToolCallEvent::Kind::kArguments) got += e.text;
    }
    args += got;
    return got;
  };
  push("<tool_call>read_file\n<arg_key>lines</arg_key>\n<arg_value>1");
  EXPECT_EQ(args, "{");  // an integer waits for its end
  EXPECT_EQ(push("2</arg_value>\n<arg_key>path</arg_key>\n<arg_value>src/\"a"), "\"lines\":12,\"path\":\"src/\\\"a");
  EXPECT_EQ(push(".txt</arg_v"), ".txt");  // a possible closing tag is held
  EXPECT_EQ(push("alue>\n</tool_call>"), "\"}");
  EXPECT_EQ(nlohmann::json::parse(args), nlohmann::json::parse(R"({"lines": 12, "path": "src/\"a.txt"})"));
  // Cut off inside a string value: closed.
  EXPECT_EQ(
      OneCallsArguments(ToolCallFormat::kGlm45, "<tool_call>read_file\n<arg_key>path</arg_key><arg_value>ab", kTools),
      R"({"path":"ab"})");
}

TEST(ToolCallStreamTest, Glm45MalformedAndCutOff) {
  // No name: content, byte for byte.
  const char* bad = "<tool_call>\n{\"x\": 1}</tool_call> ok";
  ParsedAssistant p = Whole(ToolCallFormat::kGlm45, bad);
  EXPECT_TRUE(p.tool_calls.empty());
  EXPECT_EQ(p.content, bad);
  // Unterminated before the name ends: content.
  p = Whole(ToolCallFormat::kGlm45, "Hi <tool_call>read_fi");
  EXPECT_TRUE(p.tool_calls.empty());
  EXPECT_EQ(p.content, "Hi <tool_call>read_fi");
  // A broken pair is dropped, the call still ends at its tag.
  p = Whole(ToolCallFormat::kGlm45, "<tool_call>f\n<arg_key>a</arg_key>oops</tool_call>after");
  ASSERT_EQ(p.tool_calls.size(), 1u);
  EXPECT_EQ(p.tool_calls[0].arguments_json, "{}");
  EXPECT_EQ(p.content, "after");
  // One call each, with these arguments.
  const std::pair<const char*, const char*> one_call[] = {
      // Cut off inside a pair: the call is closed with the complete pairs.
      {"<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n<arg_key>b</arg_k", R"({"a":1})"},
      // Stray text between pairs is dropped; the pairs after it still count.
      {"<tool_call>f<stray>x<arg_key>a</arg_key><arg_value>[1]</arg_value></tool_call>", R"({"a":[1]})"},
  };
  for (const auto& [text, args] : one_call) EXPECT_EQ(OneCallsArguments(ToolCallFormat::kGlm45, text), args) << text;
}

TEST(ToolCallStreamTest, DeepSeekV3) {
  const char* text =
      "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
      "{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n"
      "```json\n{\"path\": \"a b.txt\", \"lines\": [1, 2]}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜> Done.";
  ParsedAssistant p = Whole(ToolCallFormat::kDeepSeekV3, text);
  ASSERT_EQ(p.tool_calls.size(), 2u) << Show(p);
  EXPECT_EQ(p.tool_calls[0].name, "get_weather");
  EXPECT_EQ(p.tool_calls[0].arguments_json, R"({"city":"Paris"})");
  EXPECT_EQ(p.tool_calls[1].arguments_json, R"({"path":"a b.txt","lines":[1,2]})");
  EXPECT_EQ(p.content, "Sure. Done.");
  ExpectSplitInvariant(ToolCallFormat::kDeepSeekV3, text);
  // A call whose type is not "function" is not a call.
  const char* odd =
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>web<｜tool▁sep｜>x\n```json\n{}\n```<｜tool▁call▁end｜>";
  p = Whole(ToolCallFormat::kDeepSeekV3, odd);
  EXPECT_TRUE(p.tool_calls.empty());
  EXPECT_EQ(p.content, "<｜tool▁call▁begin｜>web<｜tool▁sep｜>x\n```json\n{}\n```<｜tool▁call▁end｜>");
}

TEST(ToolCallStreamTest, DeepSeekV31) {
  const char* text =
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜>"
      "<｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"path\": \"<x>\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
  ParsedAssistant p = Whole(ToolCallFormat::kDeepSeekV31, text);
  ASSERT_EQ(p.tool_calls.size(), 2u) << Show(p);
  EXPECT_EQ(p.tool_calls[0].name, "get_weather");
  EXPECT_EQ(p.tool_calls[1].arguments_json, R"({"path":"<x>"})");
  EXPECT_EQ(p.content, "");
  ExpectSplitInvariant(ToolCallFormat::kDeepSeekV31, text);
}

TEST(ToolCallStreamTest, Llama3Json) {
  const char* text = "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}";
  EXPECT_EQ(OneCallsArguments(ToolCallFormat::kLlama3Json, text), R"({"city":"Paris"})");
  ExpectSplitInvariant(ToolCallFormat::kLlama3Json, text);
  // <tool_call> means nothing to this format.
  ParsedAssistant p =
      Whole(ToolCallFormat::kLlama3Json, "a <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>");
  EXPECT_TRUE(p.tool_calls.empty());
}

// Every format, good and bad inputs, every split: streamed == one-shot.
TEST(ToolCallStreamTest, StreamedEqualsWholeAtEverySplit) {
  const std::pair<ToolCallFormat, std::string> cases[] = {
      {ToolCallFormat::kHermes,
       "Let me look.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {\"s\": \"}{\\\" é\"}}\n"
       "</tool_call>\n<tool_call>{\"name\": \"b\", \"arguments\": \"{\\\"k\\\": 1}\"}</tool_call>\nDone."},
      {ToolCallFormat::kHermes,
       "<tool_call>{oops}</tool_call> then <tool_call>{\"name\": \"ok\", \"arguments\": {}}</tool_call>"},
      {ToolCallFormat::kHermes, "  {\"name\": \"read_file\", \"parameters\": {\"path\": \"README.md\"}}  "},
      {ToolCallFormat::kHermes, "{\"answer\": 42}"},
      {ToolCallFormat::kHermes, "Calling <tool_call>{\"name\": \"a\", \"arguments\": {\"x\": 1"},
      {ToolCallFormat::kHermes, "<tool_call>{\"arguments\": {}, \"name\": \"late\"}</tool_call> <tool_ca"},
      {ToolCallFormat::kHermes, "a < b <tool_call>{\"name\": \"x\", \"arguments\": {\"y\": [1, {}]}}</tool_call>"},
      {ToolCallFormat::kGlm45, "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value><b></arg_value>\n</tool_call> <tool"},
      {ToolCallFormat::kGlm45, "x <tool_call>bad name\n</tool_call> y"},
      // Stray text before a pair (found by request_path_fuzz): dropped up to
      // the next tag whether or not the closing tag has arrived yet.
      {ToolCallFormat::kGlm45, "<tool_call>f<artool_call>f<arg_key>a</arg_key><arg_value>[1]</arg_value></tool_call>"},
      // A JSON header whose name is longer than a function name may be: refused
      // before and after its closing quote arrives.
      {ToolCallFormat::kHermes, "<tool_call>{\"name\": \"" + std::string(300, 'v') + "\", \"arguments\": {\"a\": 1}}"},
      {ToolCallFormat::kDeepSeekV3,
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": "},
      {ToolCallFormat::kDeepSeekV31, "t <｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜> <｜tool▁"},
      {ToolCallFormat::kLlama3Json, "  plain text, no call  "},
  };
  for (const auto& [format, text] : cases) ExpectSplitInvariant(format, text, kTools);
}

TEST(ToolCallStreamTest, GarbageNeverCrashesInAnyFormat) {
  const char* pieces[] = {"<tool_call>",
                          "</tool_call>",
                          "{",
                          "}",
                          "\"name\"",
                          ":",
                          "\xff",
                          "\"",
                          "[",
                          "x",
                          "\n",
                          "<arg_key>",
                          "</arg_value>",
                          "<｜tool▁call▁begin｜>",
                          "<｜tool▁sep｜>",
                          "```json",
                          "<｜tool▁calls▁begin｜>",
                          "<｜tool▁call▁end｜>",
                          "function",
                          "<|python_tag|>"};
  for (ToolCallFormat f : {ToolCallFormat::kHermes, ToolCallFormat::kLlama3Json, ToolCallFormat::kGlm45,
                           ToolCallFormat::kDeepSeekV3, ToolCallFormat::kDeepSeekV31}) {
    std::string s;
    uint32_t seed = 12345;
    for (int i = 0; i < 300; ++i) {
      seed = seed * 1103515245 + 12345;
      s += pieces[(seed >> 16) % 20];
      ParsedAssistant p = Whole(f, s, kTools);
      EXPECT_LE(p.content.size(), s.size());
      for (const ParsedToolCall& c : p.tool_calls) {
        EXPECT_FALSE(c.name.empty());
        ojson args = ojson::parse(c.arguments_json, nullptr, false);
        EXPECT_TRUE(args.is_object()) << ToolCallFormatName(f) << ": " << c.arguments_json << " from " << s;
      }
    }
    ExpectSplitInvariant(f, s.substr(0, 400), kTools);
  }
}

TEST(ToolCallFormatTest, DetectsFromTemplateMarkers) {
  EXPECT_EQ(DetectToolCallFormat(""), ToolCallFormat::kHermes);
  EXPECT_EQ(DetectToolCallFormat("{{ '<tool_call>' }}"), ToolCallFormat::kHermes);
  EXPECT_EQ(DetectToolCallFormat("<tool_call>{{ name }}<arg_key>"), ToolCallFormat::kGlm45);
  EXPECT_EQ(DetectToolCallFormat("'<｜tool▁calls▁begin｜>' + '```json'"), ToolCallFormat::kDeepSeekV3);
  EXPECT_EQ(DetectToolCallFormat("'<｜tool▁calls▁begin｜>' + name + '<｜tool▁sep｜>'"), ToolCallFormat::kDeepSeekV31);
  EXPECT_EQ(DetectToolCallFormat("<|start_header_id|>assistant"), ToolCallFormat::kLlama3Json);
}

std::string ReadFixture(const std::string& name) {
  std::ifstream f(std::string(PROSGROW_SHARED_DIR) + "/fixtures/templates/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(ToolCallFormatTest, DetectsTheFixtureTemplates) {
  if (ReadFixture("GLM-4.6.jinja").empty()) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  EXPECT_EQ(DetectToolCallFormat(ReadFixture("GLM-4.6.jinja")), ToolCallFormat::kGlm45);
  EXPECT_EQ(DetectToolCallFormat(ReadFixture("Qwen-Qwen3-0.6B.jinja")), ToolCallFormat::kHermes);
  EXPECT_EQ(DetectToolCallFormat(ReadFixture("Qwen-Qwen2.5-7B-Instruct.jinja")), ToolCallFormat::kHermes);
  EXPECT_EQ(DetectToolCallFormat(ReadFixture("meta-llama-Llama-3.1-8B-Instruct.jinja")), ToolCallFormat::kLlama3Json);
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

// What the arguments events carry and what kCallEnd's text adds.
struct CallTexts {
  std::string arguments, closing;
  int ends = 0;
};
CallTexts CallOf(ToolCallFormat f, std::string_view text, const ojson& tools = nullptr) {
  ToolCallStream s(f, tools);
  std::vector<ToolCallEvent> ev;
  s.Push(text, &ev);
  s.Finish(&ev);
  CallTexts c;
  for (const ToolCallEvent& e : ev) {
    if (e.kind == ToolCallEvent::Kind::kArguments) c.arguments += e.text;
    if (e.kind == ToolCallEvent::Kind::kCallEnd) {
      c.closing = e.text;
      ++c.ends;
    }
  }
  return c;
}

TEST(ToolCallStreamTest, ACallCutAtFinishKeepsItsArgumentsAndCarriesTheClosing) {
  CallTexts c = CallOf(ToolCallFormat::kHermes, "<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": [1, 2");
  EXPECT_EQ(c.arguments, "{\"x\":[1,2");
  EXPECT_EQ(c.closing, "]}");
  c = CallOf(ToolCallFormat::kDeepSeekV3,
             "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"city\": \"Par");
  EXPECT_EQ(c.arguments, "{\"city\":\"Par");
  EXPECT_EQ(c.closing, "\"}");
  // GLM: the pairs so far, a string value as far as it got.
  c = CallOf(ToolCallFormat::kGlm45,
             "<tool_call>read_file\n<arg_key>lines</arg_key><arg_value>3</arg_value>"
             "<arg_key>path</arg_key><arg_value>src/a",
             kTools);
  EXPECT_EQ(c.arguments, "{\"lines\":3,\"path\":\"src/a");
  EXPECT_EQ(c.closing, "\"}");
  c = CallOf(ToolCallFormat::kGlm45, "<tool_call>f\n<arg_key>a</arg_key><arg_value>1</arg_value><arg_k");
  EXPECT_EQ(c.arguments, "{\"a\":1");
  EXPECT_EQ(c.closing, "}");
  // A closing tag begun at the end: the value is whole (the call is still cut) ...
  c = CallOf(ToolCallFormat::kGlm45, "<tool_call>read_file\n<arg_key>path</arg_key><arg_value>a.txt</arg_val", kTools);
  EXPECT_EQ(c.arguments, "{\"path\":\"a.txt\"");
  EXPECT_EQ(c.closing, "}");
  // ... and a </tool_call> begun ends the arguments.
  c = CallOf(ToolCallFormat::kGlm45, "<tool_call>f\n<arg_key>a</arg_key><arg_value>1</arg_value></tool_ca");
  EXPECT_EQ(c.arguments, "{\"a\":1}");
  EXPECT_EQ(c.closing, "");
  // Closed by the model (or broken by markup inside): nothing to add.
  EXPECT_EQ(CallOf(ToolCallFormat::kHermes, "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>").closing, "");
  c = CallOf(ToolCallFormat::kHermes, "<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": </tool_call>");
  EXPECT_EQ(c.arguments, "{\"x\":null}");
  EXPECT_EQ(c.closing, "");
  EXPECT_EQ(c.ends, 1);
}

}  // namespace
}  // namespace pg
